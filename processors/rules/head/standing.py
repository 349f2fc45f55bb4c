"""Standing preferences and arrangements said the way chat says them.

Work arrangement, billing cycle, payment method, preferred contact method,
pronouns and programming languages have small closed vocabularies, so a
clause is read for a known value word in a frame that ties it to the speaker
("hybrid now", "we pay by invoice", "text me, don't call", "she/they",
"I write go and a bit of python"). Each rule needs the clause to be the
speaker's own (:func:`own`): a clause about a colleague, a partner or a
named person yields nothing, whatever words it contains.
"""

from __future__ import annotations

import re

from slotwise.processors.rules.clauses import Clause
from slotwise.processors.rules.findings import Finding
from slotwise.processors.rules.values import split_items

__all__ = [
    "own",
    "read_billing",
    "read_contact_method",
    "read_payment",
    "read_programming",
    "read_pronouns",
    "read_work_arrangement",
]

_I = re.IGNORECASE

# The Spanish and Portuguese first person carries the "I" in its verb: "trabajo", "trabalho".
_OWN = re.compile(r"^(?:I|I'm|I've|I'd|we|we're|we've|our|us|my|me|trabajo|trabalho)\b", _I)
_OTHERS = re.compile(
    r"^(?:my|our)\s+(?:\w+\s+)?(?:brother|sister|mum|mom|mother|dad|father|parents?|husband|wife|"
    r"partner|boyfriend|girlfriend|fianc\w*|son|daughter|kids?|children|child|friend|friends|"
    r"boss|manager|colleague|coworker|co-worker|team|company|neighbou?r|uncle|aunt|cousin|"
    r"grand\w+|roommate|flatmate|landlord|director|client|dog|cat|doctor)\b",
    _I,
)


def own(clause: Clause) -> bool:
    """The clause is the speaker's statement about themselves (or their household)."""
    return bool(_OWN.match(clause.text)) and not _OTHERS.match(clause.text)


_REMOTE = re.compile(
    r"\b(?:fully\s+|full[- ]time\s+|100%\s+|permanently\s+)?remote(?:ly)?\b|"
    r"\bworking\s+from\s+home\b|\bwork\s+from\s+home\b|"
    # "trabajo en remoto", "trabajo desde casa", "trabalho remoto", "trabalho de casa".
    r"^(?:trabajo|trabalho)\s+(?:en\s+remoto|remoto|a\s+distancia|desde\s+casa|de\s+casa|em\s+casa|"
    r"(?:em\s+)?home\s+office)\b",
    _I,
)
# "hybrid", "two days a week in the office", "I'm in two days a week", "3 days from home".
_HYBRID = re.compile(
    r"\bhybrid\b|\b(?:two|three|2|3)\s+days\s+(?:a\s+week\s+)?in\s+(?:the\s+)?office\b|"
    r"\bI(?:'m|\s+am|\s+go)\s+in(?:\s+to\s+the\s+office|\s+the\s+office)?\s+(?:two|three|2|3)\s+"
    r"days\s+a\s+week\b|\b(?:two|three|2|3)\s+days\s+(?:a\s+week\s+)?(?:from|at)\s+home\b|"
    r"\bin\s+(?:to\s+)?the\s+office\s+(?:two|three|four|2|3|4)\s+days\b",
    _I,
)
_OFFICE = re.compile(
    r"\b(?:(?:from|in|at)\s+the\s+office|office)\s+(?:every\s+day|full[- ]time|5\s+days|"
    r"five\s+days|mon-fri|monday\s+to\s+friday)|\b(?:5|five)\s+days\s+in\s+the\s+office\b|"
    r"\bback\s+in\s+the\s+office\b(?!\s+(?:one|two|three|four|[1-4])\s+days)",
    _I,
)
_WORK_CONTEXT = re.compile(
    r"\b(?:work|working|job|office|wfh|remote|hybrid|commute|team|trabajo|trabalho)\b", _I
)


def read_work_arrangement(clause: Clause) -> list[Finding]:
    text = clause.text
    if not own(clause) or not _WORK_CONTEXT.search(text):
        return []
    if re.search(r"\b(?:today|tonight|tomorrow|this\s+(?:morning|afternoon|week))\b", text, _I):
        return []  # one day at home is not the arrangement
    found = [
        value
        for value, pattern in (("hybrid", _HYBRID), ("office", _OFFICE), ("remote", _REMOTE))
        if pattern.search(text)
    ]
    return [] if len(found) != 1 else [_arrangement(found[0])]


def _arrangement(value: str) -> Finding:
    words = {
        "remote": "works remotely",
        "hybrid": "works hybrid",
        "office": "works from the office",
    }
    return Finding("work_arrangement", value, f"User {words[value]}.")


_CYCLE = re.compile(
    r"\b(?:pay|paying|paid|billed|billing|bill|charged|renew|renews|plan|subscription|contract|"
    r"invoiced)\b.*?\b(?P<cycle>monthly|annually|annual|yearly|per\s+month|per\s+year|every\s+month|"
    r"every\s+year|a\s+year|a\s+month)\b|"
    r"\b(?P<cycle2>monthly|annual|yearly)\s+(?:billing|plan|contract|subscription)\b|"
    r"^(?:I|we)(?:'re|'m|\s+are|\s+am)\s+(?P<cycle3>monthly|annual|yearly)\b",
    _I,
)


def read_billing(clause: Clause) -> list[Finding]:
    # "update my billing to monthly pls": the speaker asks for their own cycle.
    asked = re.match(
        r"^(?:(?:pls|please|can\s+you|could\s+you)\s+)?(?:update|change|switch|set|move|put)\s+"
        r"(?:my|our|me|us)\b",
        clause.text,
        _I,
    )
    if not (own(clause) or asked or re.match(r"^(?:billing|billed)\b", clause.text, _I)):
        return []
    found = _CYCLE.search(clause.text)
    if found is None:
        return []
    raw = (found["cycle"] or found["cycle2"] or found["cycle3"]).lower()
    value = "monthly" if "month" in raw else "annual"
    return [
        Finding(
            "billing_cycle", value, f"User is billed {value if value == 'monthly' else 'annually'}."
        )
    ]


_METHODS = {
    "card": "card",
    "credit card": "card",
    "debit card": "card",
    "the card": "card",
    "a card": "card",
    "invoice": "invoice",
    "paypal": "paypal",
    "bank transfer": "bank transfer",
    "direct debit": "direct debit",
    "sepa": "direct debit",
    "wire": "bank transfer",
    "wire transfer": "bank transfer",
    "apple pay": "apple pay",
    "google pay": "google pay",
}
_PAY = re.compile(
    r"\b(?:pay|paying|pays|paid)\s+(?:\w+\s+)?(?:by|with|via|through|using)\s+(?P<method>"
    r"(?:credit\s+|debit\s+|the\s+|a\s+)?card|invoice|paypal|bank\s+transfer|direct\s+debit|"
    r"sepa|wire(?:\s+transfer)?|apple\s+pay|google\s+pay)\b|\b(?P<invoiced>invoiced)\s+to\b",
    _I,
)


# "please switch my payment to invoice", "change my payment method to paypal": the request
# names the method from now on, as "switch me to annual billing" names the cycle.
_PAY_REQUEST = re.compile(
    r"^(?:please\s+|I\s+)?(?:change|switch|update|move|set|changed|switched|updated|moved)\s+my\s+"
    r"(?:payment|billing|card)(?:\s+method)?"
    r"\s+(?:over\s+)?to\s+(?P<method>(?:credit\s+|debit\s+|a\s+)?card|invoice|paypal|"
    r"bank\s+transfer|direct\s+debit|sepa|apple\s+pay|google\s+pay)\b"
    r"(?:\s+(?:please|now|instead|from\s+now\s+on))*"
    # "changed my card to paypal, easier": a remark may follow, not a plan or a question.
    r"(?:\s*,(?![^?]*(?:\?|\b(?:next|later|soon|maybe|tomorrow|if)\b))[^?]*)?$",
    _I,
)


def read_payment(clause: Clause) -> list[Finding]:
    requested = _PAY_REQUEST.match(clause.text)
    if requested is not None:
        return _payment(" ".join(requested["method"].lower().split()))
    if not own(clause) and not re.match(r"^(?:paying|switched|moved)\b", clause.text, _I):
        return []
    if re.search(r"\bno\s+cards?\b|\bnot\s+(?:by|with)\b", clause.text, _I):
        found = re.search(
            r"\b(?:pay|paying)\s+(?:with|by|via)\s+(?P<method>paypal|invoice)\b", clause.text, _I
        )
        if found is None:
            return []
    else:
        found = _PAY.search(clause.text)
    if found is None:
        return []
    raw = (
        "invoice"
        if found.groupdict().get("invoiced")
        else " ".join(found["method"].lower().split())
    )
    return _payment(raw)


def _payment(raw: str) -> list[Finding]:
    value = _METHODS.get(raw)
    if value is None:
        return []
    return [Finding("payment_method", value, f"User pays by {value}.")]


_CONTACT = (
    # "message me on signal" names the app, not a text.
    (
        re.compile(
            r"\b(?:text|sms|message)\s+me\b(?!\s+(?:the|a|your|when|on|via|over|through)\b)"
            # "text is better than calling": the way to reach me, said as the best one.
            r"|^(?:a\s+)?(?:texts?|texting|sms)\s+(?:is|works)\s+(?:much\s+|way\s+)?(?:best|better|"
            r"easier|easiest)\b(?!\s+(?:for|with)\s+(?:my|his|her|their|our|your)\b)",
            _I,
        ),
        "text",
    ),
    (
        re.compile(
            r"\b(?:e-?mail)\s+me\b(?!\s+(?:the|a|your)\b)|\bcontact(?:ed)?\s+(?:me\s+)?by\s+e-?mail\b|\be-?mail\s+(?:is\s+best|only)\b",
            _I,
        ),
        "email",
    ),
    (
        re.compile(
            r"\bwhats\s?app\s+(?:me|only)\b|\bwhats\s?app\s+is\s+(?:still\s+)?(?:the\s+)?best\b"
            # "whatsapp is best for the group chat" is about a chat, not about reaching me.
            r"(?!\s+for\s+(?:the|a|our|group|sharing|photos|videos)\b)",
            _I,
        ),
        "whatsapp",
    ),
    (re.compile(r"\bsignal\s+(?:me|only)\b", _I), "signal"),
    (
        re.compile(
            r"\b(?:rather|prefer)\s+(?:you\s+)?(?P<how>text|email|call|phone)\b"
            # "i'd rather you call me Sam": a name to call the speaker by, not a way to reach them.
            r"(?!\s+me\s+(?!(?:on|at|instead|rather|please|pls|back|than|first|now)\b)\w)",
            _I,
        ),
        "",
    ),
)


def read_contact_method(clause: Clause) -> list[Finding]:
    text = clause.text
    if re.match(r"^(?:can|could|will|would)\b", text, _I):
        return []
    opening = own(clause) or bool(
        re.match(
            r"^(?:please\s+|just\s+)?(?:text(?:ing)?|e-?mail|whatsapp|signal|message|contact)\b",
            text,
            _I,
        )
    )
    if not opening:
        return []
    if re.search(r"\bme\s+(?:at|on)\s+\S*[@\d]", text, _I) and not re.search(
        r"\b(?:instead|only|rather|prefer)\b", text, _I
    ):
        return []  # "email me at ana@…" gives an address, not a preference
    found = [value for pattern, value in _CONTACT if value and pattern.search(text)]
    prefer = _CONTACT[-1][0].search(text)
    if prefer is not None:
        how = prefer["how"].lower()
        found.append({"call": "phone"}.get(how, how))
    values = list(dict.fromkeys(found))
    if len(values) != 1:
        return []
    value = values[0]
    return [Finding("preferred_contact_method", value, f"User prefers to be contacted by {value}.")]


_PRONOUNS = re.compile(
    r"(?<![\w/])(?P<set>(?:he|she|they|xe|ze|it)/(?:him|her|them|they|she|he|xem|hir|his|hers|"
    r"theirs|it)|any\s+pronouns)(?![\w/])",
    _I,
)
_PRONOUN_FRAME = re.compile(
    r"^(?:(?:my\s+)?pronouns(?:\s+(?:are|is|r)\b|\s*[:=-])|I\s+(?:now\s+)?(?:use|go\s+by)\s+(?:he|she|they)/|I(?:'m|\s+am)\s+(?:\w+\s*,?\s*)?\(?(?:he|she|they)/|"
    r"(?:it's\s+|its\s+)?(?:he|she|they)/\w+\s+(?:for\s+me\s+)?(?:these\s+days|now|please|thanks|pls)|"
    # "could you use she/her for me from now on": asked of the speaker, about the speaker.
    r".*\b(?:use|call\s+me)\s+(?:he|she|they)/\w+\s+(?:for|with)\s+me\b|"
    r"(?:\w+\s+)?(?:badge|profile|bio|email\s+signature)\s+(?:now\s+)?says\b|"
    # "my pronouns changed, it's they/them now", "changed my pronouns to she/her".
    r"(?:my\s+)?pronouns\s+(?:have\s+)?changed\W+(?:it's\s+|its\s+|they're\s+|now\s+|to\s+)?"
    r"(?:he|she|they)/|(?:I\s+)?(?:changed|switched|updated)\s+my\s+pronouns\s+to\s+(?:he|she|they)/)",
    _I,
)


def read_pronouns(clause: Clause) -> list[Finding]:
    found = _PRONOUNS.search(clause.text)
    if found is None:
        return []
    text = clause.text
    intro = re.match(
        r"^(?:I(?:'m|\s+am)|it's|its|this\s+is)\s+\w+\s*[,(]?\s*$", text[: found.start()], _I
    )
    fragment = found.start() == 0 and not re.search(r"\b(?:is|are|was|will|said)\b", text, _I)
    if not (_PRONOUN_FRAME.match(text) or intro or fragment or (clause.greeting and own(clause))):
        return []
    value = " ".join(found["set"].lower().split())
    value = "any" if value.startswith("any") else value
    return [Finding("pronouns", value, f"User's pronouns are {value}.")]


_LANGS = {
    "python": "Python", "go": "Go", "golang": "Go", "rust": "Rust", "java": "Java",
    "javascript": "JavaScript", "js": "JavaScript", "typescript": "TypeScript", "ts": "TypeScript",
    "kotlin": "Kotlin", "swift": "Swift", "c": "C", "c++": "C++", "cpp": "C++", "c#": "C#",
    "csharp": "C#", "ruby": "Ruby", "php": "PHP", "scala": "Scala", "elixir": "Elixir",
    "erlang": "Erlang", "haskell": "Haskell", "clojure": "Clojure", "julia": "Julia", "r": "R",
    "sql": "SQL", "dart": "Dart", "lua": "Lua", "perl": "Perl", "ocaml": "OCaml", "f#": "F#",
    "zig": "Zig", "nim": "Nim", "fortran": "Fortran", "cobol": "COBOL", "matlab": "MATLAB",
    "objective-c": "Objective-C", "bash": "Bash", "groovy": "Groovy", "solidity": "Solidity",
}  # fmt: skip
_CODE_LEAD = re.compile(
    r"^(?:I|we)(?:'m|\s+am|\s+mostly|\s+mainly|\s+also|\s+do|\s+now)*\s+(?:write|writing|code|coding|"
    r"program|programming|work|working|develop)\s+(?:mostly\s+|mainly\s+|primarily\s+|all\s+)?"
    r"(?:in\s+|with\s+)?(?P<rest>.+)$|"
    r"^(?:I|we)(?:'ve|\s+have)?\s+(?:switched|moved|migrated)\s+(?:\w+\s+){0,3}?to\s+(?P<rest2>.+)$|"
    r"^(?:I|we)\s+do\s+(?P<rest3>.+)$",
    _I,
)
_CODE_WORDS = re.compile(
    r"^(?:a\s+)?(?:little\s+|bit\s+of\s+|lil\s+|some\s+|mostly\s+|mainly\s+)*", _I
)


def read_programming(clause: Clause) -> list[Finding]:
    found = _CODE_LEAD.match(clause.text)
    if found is None:
        return []
    rest = found["rest"] or found["rest2"] or found["rest3"]
    rest = re.split(
        r"\s+(?:all\s+day|these\s+days|at\s+work|for\s+work|now|every|because|since)\b",
        rest,
        flags=_I,
    )[0]
    items = split_items(rest.replace("+", ",") if "c++" not in rest.lower() else rest)
    languages: list[str] = []
    for item in items:
        word = _CODE_WORDS.sub("", item.lower()).strip()
        if word.startswith("bit of "):
            word = word[len("bit of ") :]
        name = _LANGS.get(word)
        if name is None:
            if found["rest3"] and not languages:
                return []  # "I do bjj and surf": no language at all
            continue
        if name not in languages:
            languages.append(name)
    if found["rest3"] and len(languages) < len(items):
        return []
    if (
        languages
        and found["rest"] is None
        and found["rest3"] is None
        and len(items) != len(languages)
    ):
        return []
    return [Finding("programming_languages", n, f"User programs in {n}.") for n in languages]
