"""Deletion intent: "forget where I live" is a request of the memory, never a new fact.

A turn that asks the assistant to forget, delete, remove or stop keeping what
the speaker told it becomes an ``erase`` :class:`~topics.records.Command`
(DESIGN §7), ordered with the subject's writes on the candidates topic, and
yields no fact. Precision first, because an erase destroys: the request must
name the memory ("what you know about", "from your memory", "my data") or a
thing the schema keeps about the speaker ("my job", "my email", "my
diagnosis"). "I forgot my password", "forget it, never mind", "delete the
meeting from my calendar", "remove the last paragraph" yield nothing. A
whole-subject erase needs an explicit "everything" about the speaker.

Which attribute a request names is read from a small table of how people name
them ("where I live" → ``home_city``, "my meds" → ``medications``); a request
that names no attribute and not everything ("forget the last thing I said")
yields nothing rather than a guess, since an erase without an attribute would
be an erase of everything.
"""

from __future__ import annotations

import re

__all__ = ["ErasureRequest", "read_erasure"]

_I = re.IGNORECASE

_VERB = (
    r"(?:forget|delete|erase|remove|wipe|clear|drop|scratch|purge|unlearn|reset|stop\s+using|"
    r"stop\s+(?:remembering|storing|keeping|saving)|don't\s+(?:store|keep|save|remember)|"
    r"do\s+not\s+(?:store|keep|save|remember))"
)
_REQUEST = re.compile(
    rf"^(?:(?:please|pls|plz|can\s+you|could\s+you|i\s+want\s+you\s+to|i'd\s+like\s+you\s+to|"
    rf"you\s+can|just|and|also|"
    rf"ok|okay|changed\s+my\s+mind,?)\s+)*{_VERB}\b(?P<rest>.*)$"
    rf"|^I\s+want\s+(?P<all>all\s+my\s+(?:personal\s+)?(?:data|information|info|details))\s+"
    r"(?:deleted|removed|erased|wiped)\b(?P<rest2>.*)$",
    _I,
)
# What makes it a request of the memory rather than of a calendar, a draft or a file.
_MEMORY = re.compile(
    r"\b(?:about\s+me|you\s+(?:know|remember|have|think|stored|saved)|i\s+(?:just\s+)?(?:told|said|mentioned|"
    r"gave|shared)|i\s+ever\s+(?:told|said|mentioned)|your\s+(?:memory|notes|records|files)|"
    r"from\s+(?:your\s+)?memory|on\s+file|my\s+(?:memory\s+)?profile|my\s+(?:personal\s+)?"
    r"(?:data|info|information|details)|stored|anymore|for\s+now|it's\s+private|forget\s+it\b(?!,))",
    _I,
)
_EVERYTHING = re.compile(
    r"\b(?:everything|all)\s+(?:you\s+(?:know|have|remember|stored)|about\s+me|of\s+my|my\s+"
    r"(?:personal\s+)?(?:data|info|information|details))|\ball\s+my\s+(?:personal\s+)?"
    r"(?:data|info|information|details)\b|\b(?:my\s+)?memory\s+profile\s+completely\b|"
    r"\bwipe\s+my\s+(?:memory|profile)\b|\breset\s+everything\b|\bstart\s+(?:fresh|over)\s+"
    r"(?:with\s+)?(?:my\s+)?(?:memory|profile)?",
    _I,
)
# How people name an attribute in a request, most specific first.
_NAMED: tuple[tuple[str, str], ...] = (
    (
        r"home\s+city|city\s+i\s+live\s+in|what\s+city|where\s+i\s+live|my\s+city|i\s+live\s+in",
        "home_city",
    ),
    (r"postal\s+address|my\s+address|home\s+address|mailing\s+address", "postal_address"),
    (
        r"where\s+i\s+(?:am|'m)|wherever\s+you\s+think\s+i\s+am|my\s+location|where\s+i'm\s+staying",
        "current_location",
    ),
    (r"date\s+of\s+birth|birthday|\bdob\b|my\s+age|how\s+old", "date_of_birth"),
    (r"birthplace|where\s+i\s+was\s+born", "birthplace"),
    (r"hometown|where\s+i\s+grew\s+up", "hometown"),
    (r"nationality|citizenship", "nationality"),
    (r"nickname|preferred\s+name|what\s+to\s+call\s+me", "preferred_name"),
    (r"pronouns", "pronouns"),
    (r"my\s+(?:full\s+|real\s+|legal\s+)?name\b", "name"),
    (r"e-?mail", "email"),
    (r"phone|number|mobile", "phone"),
    (
        r"contact\s+(?:preference|method)s?|how\s+to\s+(?:reach|contact)\s+me",
        "preferred_contact_method",
    ),
    (r"timezone|time\s+zone", "timezone"),
    (
        r"job\s+title|my\s+title|my\s+role|what\s+i\s+do\s+for\s+(?:a\s+)?(?:living|work)",
        "job_title",
    ),
    (r"my\s+job|employer|where\s+i\s+work|my\s+company|my\s+work\b", "employer"),
    (r"my\s+team", "team"),
    (r"my\s+(?:school|university|uni|degree|education)", "education"),
    (r"payment\s+(?:info|method|details)|my\s+card|how\s+i\s+pay", "payment_method"),
    (r"billing", "billing_cycle"),
    (r"my\s+plan|subscription", "plan"),
    (r"diet", "diet"),
    (r"allerg", "allergies"),
    (r"\bmeds\b|medication|prescription|pills", "medications"),
    (r"diagnosis|health\s+condition|medical\s+condition|condition|illness", "medical_conditions"),
    (r"relationship|marital|partner|married|divorce", "relationship_status"),
    (r"\bkids?\b|children|child", "children_count"),
    (r"\bdog\b|\bcat\b|\bpets?\b", "pets"),
    (r"hobb", "hobbies"),
    (r"languages?\s+i\s+speak|languages", "languages"),
    (r"religion|faith", "religion"),
)
_NAMED_RE = tuple((re.compile(rf"\b(?:{p})", _I), a) for p, a in _NAMED)
# Things of the speaker's that are not memories: asking to delete them is a task.
_NOT_MEMORY = re.compile(
    r"\b(?:password|login|calendar|meeting|appointment|standup|event|reminder|photo|"
    r"attachment|draft|email\s+you\s+drafted|message\s+i\s+sent|paragraph|line|sentence|recipe|"
    r"(?:the|a|that)\s+file|files|"
    r"onions|cilantro|chat|conversation\s+history|whiteboard|cart|basket|mailing\s+list|"
    r"newsletter|account|app|hotel|restaurant|flight|booking|dinner|plans?\b(?!\s+(?:info|details))|"
    r"tab|browser|cache|folder|document|slide|task|todo|alarm|timer)\b",
    _I,
)


class ErasureRequest(tuple[tuple[str | None, ...], str]):
    """``(attributes, reason)``: the attributes to erase (one ``None``: everything)."""

    __slots__ = ()

    @property
    def attributes(self) -> tuple[str | None, ...]:
        return self[0]

    @property
    def reason(self) -> str:
        return self[1]


def read_erasure(text: str) -> ErasureRequest | None:
    """The erase the turn asks for, or None when it asks for none (or is ambiguous)."""
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text.strip()):
        found = _REQUEST.match(sentence.strip().rstrip(".!"))
        if found is None:
            continue
        rest = (
            found["rest"] if found["rest"] is not None else f"{found['all']} {found['rest2'] or ''}"
        )
        quote = sentence.strip()[:120]
        if _EVERYTHING.search(sentence):
            return ErasureRequest(((None,), quote))
        if _NOT_MEMORY.search(rest):
            continue
        named = [a for pattern, a in _NAMED_RE if pattern.search(rest)]
        if not named:
            continue
        personal = re.search(r"\b(?:my|i|me|i'm|mine)\b", rest, _I)
        if not (
            personal
            and (_MEMORY.search(sentence) or re.match(r"^\s*(?:my|about\s+my)\b", rest, _I))
        ):
            continue
        return ErasureRequest(((named[0],), quote))
    return None
