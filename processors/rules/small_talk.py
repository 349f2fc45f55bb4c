"""Small talk that names a slot without changing the speaker's own.

Long conversations between two people are mostly about the listener ("sorry
your cats have been off their food"), about things in general ("pets make us
so much happier"), about a dish ("this dairy-free cheesecake finally came
out right") or a pastime shared ("we love cooking together lately"). Each of
them names a slot, and a change word is never far away in chat; a question
raised by every one of them would bury the human's review queue under
questions nobody can answer. The uncertain middle asks only about a clause
that is the speaker's own.
"""

from __future__ import annotations

import re

from slotwise.processors.rules.evidence import food_only

__all__ = ["small_talk", "to_listener"]

_I = re.IGNORECASE

# The listener's life, a gift or advice to them; a request to the assistant about the
# speaker ("could you call me Sam from now on") says "me" or "my" as well.
_LISTENER = re.compile(
    r"\byour\b|\byou're\b|\bfor\s+you\b|^(?:\w+\s+){0,2}you\b(?!'d\s+rather)|\bu\s+(?:have|got)\b",
    _I,
)
_SPEAKER_TOO = re.compile(r"\b(?:me|my|mine|myself)\b", _I)
# The speaker in the clause. "Us" is left out: "pets make us happier" is everyone.
_FIRST_PERSON = re.compile(
    r"\b(?:i|i'm|im|i've|ive|i'd|i'll|my|me|mine|myself|we|we're|we've|our|ours)\b", _I
)
# A clause opening on a subject of its own and a verb of saying how things are:
# "pets make…", "meeting new puppies must be…", "dogs really do know…".
_GENERAL = re.compile(
    r"^(?:[\w'-]+\s+){1,12}?(?:really\s+)?(?:is|are|was|were|make|makes|must|can|could|should|"
    r"seem|seems|do|does|bring|brings|need|needs|always|never)\b",
    _I,
)
_DIET_SLOTS = frozenset({"diet", "allergies"})
# A thing described, not a person: "it's dairy-free and a new recipe", "they're vegan".
_A_THING = re.compile(
    r"(?:^|[,;]\s*)(?:it|this|that|they)(?:'s|'re|\s+is|\s+was|\s+are|\s+were)\s+"
    r"(?:[\w-]+,?\s+){0,3}?(?:vegan|vegetarian|veggie|pescatarian|keto|halal|kosher|"
    r"plant-based|[\w]+-free)\b",
    _I,
)
# People in general, or a topic talked about: "some people hate pets", "a class about dogs".
_A_TOPIC = re.compile(
    r"\b(?:some|other|many|most|a\s+lot\s+of)\s+people\b|"
    r"\b(?:workshop|class|course|seminar|talk|book|article|video|podcast|documentary|show)\s+"
    r"(?:about|on)\b",
    _I,
)
# A likeness or a memory, not a change: "it's like being a kid again", "it reminds me of
# when I had a dog", and a place described by what happened there ("that's where we got
# engaged"), but not one the speaker lives in now ("that's where we moved").
_FIGURATIVE = re.compile(
    r"\blike\s+being\b|\bas\s+(?:if|though)\b|\breminds?\s+me\s+of\b|\breminded\s+me\s+of\b|"
    r"(?:\b(?:is|was)|'s)\s+where\s+(?:i|we)\s+"
    r"(?!(?:moved|relocated|live|living)\b)(?:got|was|were|met|had|\w+ed)\b",
    _I,
)
# Someone else's death, not the speaker's partner's: "when my grandad passed" makes no
# widow of the speaker.
_KIN_DEATH = re.compile(
    r"\b(?:my|our|his|her|their)\s+(?!(?:husband|wife|hubby|partner|spouse|fianc\w*|girlfriend|"
    r"boyfriend)\b)[\w'-]+\s+(?:passed(?:\s+away|\s+on)?|died)\b",
    _I,
)


def small_talk(attribute: str, text: str, *, many: bool) -> bool:
    """Whether the clause names ``attribute`` in talk that cannot change the speaker's
    own: the listener's, a likeness or a memory, someone else's death, everyone's or a
    topic's (for a slot that holds several values, where only the speaker's own adds or
    takes away one), or a dish or a thing described."""
    if to_listener(text) or _FIGURATIVE.search(text):
        return True
    if attribute == "relationship_status" and _KIN_DEATH.search(text):
        return True
    if many and (
        _A_TOPIC.search(text) or (not _FIRST_PERSON.search(text) and _GENERAL.match(text))
    ):
        return True
    if attribute in _DIET_SLOTS and _A_THING.search(text):
        return True
    return attribute in _DIET_SLOTS and food_only(text)


def to_listener(text: str) -> bool:
    """The clause is about the listener, or given or advised to them, not the speaker."""
    return bool(_LISTENER.search(text)) and not _SPEAKER_TOO.search(text)
