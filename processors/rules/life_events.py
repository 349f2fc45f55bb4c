"""Events that are a change of a slot in themselves, and names a slot's change may carry.

"we're expecting", "the divorce is final", "got the keys", "finished my degree",
"demoted back to analyst", "downgraded to basic": the event is the change, so no
"now" or "new" need stand beside it for the uncertain middle to ask about the slot.
A removal among them ("the cat went to live with my mum") takes a value away from a
slot that holds several, which is a change of what is held.

People also name what changed by a brand or a diagnosis the drug and condition families
of ``slot_talk`` do not cover ("no more ozempic", "turns out it's crohn's"); those names
need a plain change marker in the clause, as the slot's cue words do.

Both only ever make a question, which the cascade asks only while the slot holds a fact;
the guards of ``unsure`` still keep them to the speaker's own present.
"""

from __future__ import annotations

import re

from slotwise.processors.rules.words import SPECIES

__all__ = ["ALTERED", "PERFORCE", "REMOVALS", "changes_told", "names_told"]

_I = re.IGNORECASE

_PET = "|".join(sorted((re.escape(s) for s in SPECIES), key=len, reverse=True))
_WE = r"(?:we|i)(?:'ve|\s+have|\s+just|\s+finally|\s+officially)?"
_DEGREE = (
    r"degree|masters?|master's|ph\.?d|doctorate|thesis|dissertation|diploma|bachelor'?s|"
    r"\bmba\b|finals|viva|a-?levels|apprenticeship"
)

# Each is a change of its slot as said; the guards still drop someone else's, a plan's,
# a question's or a time long gone.
_EVENTS: dict[str, str] = {
    "children_count": (
        # "we're expecting", not "expecting a parcel" nor "expecting rain".
        r"\b(?:we're|we\s+are|i'm|im|i\s+am)\s+expecting\b(?!\s+(?:a|an|the|some|it|that|"
        r"you|them|him|her|more|less|too|rain|snow|guests?|visitors|company|delivery)\b)|"
        r"\b(?:our|my)\s+(?:second|third|fourth|fifth|youngest|newest|rainbow\s+baby)\s+"
        r"(?:arrived|is\s+here|came|was\s+born|made\s+(?:an?\s+|his\s+|her\s+)?(?:early\s+)?"
        r"(?:appearance|entrance))|"
        r"^(?:it's\s+)?twins$|"
        r"\b(?:we're|we\s+are|i'm|im|i\s+am)\s+pregnant\b|\bbun\s+in\s+the\s+oven\b|"
        r"\bbaby\s+(?:#\s*|no\.?\s*|number\s+)?(?:\d|two|three|four|five)?\s*(?:is\s+)?on\s+the\s+way\b"
    ),
    "relationship_status": (
        rf"\b{_WE}\s+(?:separated|divorced|eloped)\b|"
        r"\bdivorce\s+(?:is|was|went|came|got)\s+(?:final|through|official|finali[sz]ed|"
        r"done|granted)|\bdecree\s+absolute\b|"
        r"\bwe(?:'re|\s+are)\s+(?:officially\s+)?(?:separated|separating|divorcing|divorced)\b|"
        # "me and jake are a thing now": a couple said as such, the speaker one of it.
        r"\b(?:we're|we\s+are|me\s+and\s+\w+\s+are)\s+(?:officially\s+|now\s+)?"
        r"(?:a\s+thing|an\s+item|exclusive|official)\b"
    ),
    "home_city": (
        r"\b(?:got|picked\s+up|collected|have)\s+(?:the|our|my)\s+(?:new\s+|house\s+|flat\s+)?"
        r"keys\b(?!\s+(?:to|for)\s+(?:the|my|his|her|their)\s+(?:car|van|office|shop|"
        r"studio|locker))|"
        r"\b(?:completed|closed)\s+on\s+(?:the|our|a|my)\s+(?:new\s+)?(?:house|flat|place|"
        r"home|condo|apartment|purchase)\b|"
        r"\b(?:home\s*owners?|first[-\s]time\s+buyers?)\s*(?:now\s*)?$"
    ),
    "pets": (
        rf"\b(?:{_PET})\s+(?:went\s+to\s+live|now\s+lives|is\s+living|has\s+gone\s+to\s+live)\s+"
        r"with\b|\bcrossed\s+the\s+rainbow\s+bridge\b"
    ),
    "education": (
        r"\b(?:got|earned|received|was\s+awarded)\s+my\s+(?:\w+\s+)?(?:degree|masters?|master's|"
        r"ph\.?d|doctorate|diploma|bachelor'?s|mba)\b(?!\s+(?:results|certificate|transcript))|"
        r"\b(?:finished|completed|passed|failed|quit|left|dropped|submitted|handed\s+in|"
        r"defended|done\s+with)\s+(?:my|the|our)\s+(?:\w+\s+)?(?:" + _DEGREE + r")\b"
    ),
    "job_title": (
        r"\bdemoted\b|\bstepped\s+down\s+(?:as|from)\b|"
        r"\b(?:bumped|moved)\s+(?:me\s+)?up\s+to\s+(?:a\s+)?(?:senior|lead|principal|staff|"
        r"head|manager|director|partner|supervisor)\b"
    ),
    # A dose changed by name: "doc cut my levothyroxine in half"; not caffeine nor wine.
    "medications": (
        r"\b(?:cut|halved|doubled|upped|raised|lowered)\s+my\s+(?:\w+\s+)?(?:dose|dosage|"
        r"(?!(?:caffeine|nicotine|routine|wine|online|machine|magazine|cuisine|discipline|"
        r"medicine)\b)\w+(?:ine|pam|olol|statin|pril|pram))\b"
    ),
    "plan": (
        r"\b(?:upgraded|downgraded)\s+(?:\w+\s+){0,2}(?:to|from)\s+(?:the\s+)?(?:free|basic|"
        r"starter|pro|premium|team|business|enterprise|plus|paid)\b|"
        r"\b(?:upgraded|downgraded)\s+(?:our|my|the)\s+(?:plan|account|subscription|tier)\b"
    ),
}
# A value of a slot that holds several altered by someone acting on the speaker: "gp put
# me on statins", "doc cut my levothyroxine in half". Not a rota, a call or a shift.
ALTERED = re.compile(
    r"\b(?:put|started|starting|switched|moved)\s+me\s+(?:on|onto)\s+(?!(?:the\s+|a\s+)?"
    r"(?:rota|team|squad|project|call|list|hold|speaker|nights|days|earlies|lates|shift|case|"
    r"account)\b)|"
    r"\b(?:cut|halved|doubled|upped|raised|lowered|dropped)\s+my\s+(?:\w+\s+)?"
    r"(?:dose|dosage|meds|medication|\w+(?:ine|pam|olol|statin|pril|xetine|pram|xine))\b",
    _I,
)
# What the speaker had to do is done: "we had to rehome the cat", "had to come off the pill".
PERFORCE = re.compile(
    r"\bhad\s+to\s+(?:rehome|put|give\s+up|quit|leave|sell|move|come\s+off|stop|drop|cancel|"
    r"switch|change|downgrade|let\s+\w+\s+go)\b",
    _I,
)
# Events that take a value away from a slot that holds several.
REMOVALS = frozenset({"pets"})

_NAMES: dict[str, str] = {
    "medications": (
        # Brands and the drug-name endings the suffix family leaves out.
        r"\b(?:ozempic|wegovy|mounjaro|zepbound|adderall|ritalin|vyvanse|concerta|xanax|"
        r"zoloft|prozac|lexapro|wellbutrin|cymbalta|effexor|abilify|seroquel|lamictal|"
        r"humira|lipitor|synthroid|eliquis|xarelto|keppra|accutane|roaccutane|"
        r"\w+(?:pram|glutide|tide|patide|zepam|thiazide))\b"
    ),
    "medical_conditions": (
        r"\b(?:pre-?)?diabet\w*|\bcrohn'?s\b|\bcolitis\b|\bibs\b|\bpcos\b|endometriosis|"
        r"\blupus\b|arthritis|hypertension|high\s+blood\s+pressure|\bhypo-?thyroid\w*|"
        r"\bhyper-?thyroid\w*|\ban(?:a)?emi[ac]\b|epilep\w*|psoriasis|fibromyalgia|"
        r"sleep\s+apn(?:o)?ea|\bgout\b|long\s+covid|coeliac|celiac"
    ),
}

_EVENT_WORDS = {slot: re.compile(p, _I) for slot, p in _EVENTS.items()}
_NAME_WORDS = {slot: re.compile(p, _I) for slot, p in _NAMES.items()}


def changes_told(text: str) -> list[str]:
    """The slots the clause tells a change of by an event that is a change in itself."""
    return [slot for slot, words in _EVENT_WORDS.items() if words.search(text.strip())]


def names_told(text: str) -> list[str]:
    """The slots the clause names by a drug's brand or a condition's name."""
    return [slot for slot, words in _NAME_WORDS.items() if words.search(text)]
