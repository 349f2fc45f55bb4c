"""The MiniLM attribute classifier: clauses no rule placed, read by nearest exemplars.

The rules anchor on fixed leads ("I'm allergic to …"); people also say the same
thing in words no lead knows ("nuts give me hives"). For those, a clause the rules
could not place, that passed the cheap filters (the speaker's own, not negated,
not a question, plan, quote or injection — the extractor and the clause splitter
drop those before anything is embedded), is embedded once with the shipped
MiniLM and compared with a few exemplar sentences per attribute
(``processors/exemplars.v1.json``, written for this, not taken from the
evaluation data). It is placed only when the nearest attribute is close enough
(:data:`THRESHOLD`) and clearly nearer than the runner-up (:data:`MARGIN`); a
``_none`` class of first-person small talk absorbs what merely sounds like a
slot.

The attribute is only half of a fact: the value is then read from the clause with
the closed vocabularies the rules use. No readable value → nothing is emitted.
Both steps bias to not extracting: a missed fact costs recall, a wrong one a
user's truth.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from importlib import resources

from slotwise.processors.ports import Embedder
from slotwise.processors.rules.clauses import NEGATION, Clause
from slotwise.processors.rules.evidence import supported
from slotwise.processors.rules.findings import INFERRED, Finding
from slotwise.processors.rules.head.matching import say
from slotwise.processors.rules.head.standing import own
from slotwise.processors.rules.words import ALLERGENS, CONDITIONS, DATABASES, DIETS

__all__ = [
    "MARGIN",
    "THRESHOLD",
    "ExemplarClassifier",
    "candidate_clause",
    "mentions_in",
    "read_value",
    "value_mentions",
]

# Chosen on the dev split for precision >= 0.97 of the placed clauses (README, Evaluation).
THRESHOLD = 0.45
MARGIN = 0.06
NONE = "_none"
# A bound on work per turn: a pasted document is not a chat statement about the user.
MAX_CLAUSES_PER_TURN = 8

_I = re.IGNORECASE


# A state the speaker left or swapped away from: its words name the old value.
_CEASED = re.compile(
    r"\b(?:quit|quitting|stopped|gave\s+up|give\s+up|used\s+to|ex-?|former|formerly|"
    r"swapped|switched\s+from|instead\s+of|was|were|had|until|till|til|up\s+to|cancell?ed|"
    r"dropped(?!\s+(?:down\s+)?to\b)|ditched|left|lapsed?|got\s+rid\s+of|(?:up|down)graded\s+from|moved\s+(?:away\s+)?"
    r"from)\b",
    _I,
)


# The speaker as the subject: "my …"/"our …" opens on a thing ("our netflix is on the
# premium plan"), which may be someone else's or another service's.
_SPEAKER = re.compile(r"^(?:I|I'm|I've|we|we're|we've)\b", _I)


def candidate_clause(clause: Clause) -> bool:
    """Worth embedding: the speaker's own, affirmative, short, current statement."""
    text = clause.text
    return (
        own(clause)
        and bool(_SPEAKER.match(text))
        and not NEGATION.search(text)
        and not re.search(r"\byou\b|\?", text, _I)
        and not _CEASED.search(text)
        and 2 <= len(text.split()) <= 30
    )


class ExemplarClassifier:
    """Nearest-exemplar attribute classification over an injected embedder.

    The exemplars are embedded once, on first use; each turn's clauses in one batch.
    """

    def __init__(
        self,
        embedder: Embedder,
        *,
        threshold: float = THRESHOLD,
        margin: float = MARGIN,
        exemplars: dict[str, list[str]] | None = None,
    ) -> None:
        self._embedder = embedder
        self._threshold = threshold
        self._margin = margin
        self._exemplars = exemplars if exemplars is not None else load_exemplars()

    @cached_property
    def _bank(self) -> list[tuple[str, list[float]]]:
        labels = [a for a, texts in self._exemplars.items() for _ in texts]
        texts = [t for texts in self._exemplars.values() for t in texts]
        return list(zip(labels, self._embedder.embed(texts), strict=True))

    def scores(self, texts: Sequence[str]) -> list[list[tuple[float, str]]]:
        """Per text, each attribute's best cosine to its exemplars, best first."""
        if not texts:
            return []
        bank = self._bank
        vectors = self._embedder.embed(list(texts))
        # A clause is not a stored fact: it must not outlive the turn in a shared vector
        # cache, which verified erasure counts (CachedEmbedder.forget).
        forget = getattr(self._embedder, "forget", None)
        if callable(forget):
            forget(list(texts))
        out = []
        for vector in vectors:
            best: dict[str, float] = {}
            for label, exemplar in bank:
                cosine = sum(a * b for a, b in zip(vector, exemplar, strict=True))
                best[label] = max(best.get(label, -1.0), cosine)
            out.append(sorted(((s, a) for a, s in best.items()), reverse=True))
        return out

    def classify(self, texts: Sequence[str]) -> list[str | None]:
        """The attribute of each text, or None when no attribute is clearly nearest."""
        placed: list[str | None] = []
        for ranked in self.scores(texts):
            (top, attribute), (second, _) = ranked[0], ranked[1] if len(ranked) > 1 else (-1.0, "")
            ok = attribute != NONE and top >= self._threshold and top - second >= self._margin
            placed.append(attribute if ok else None)
        return placed

    def read(self, clauses: Sequence[Clause]) -> list[list[Finding]]:
        """Findings per clause: a classified attribute with a value read from the clause."""
        chosen = [c for c in clauses if candidate_clause(c)][:MAX_CLAUSES_PER_TURN]
        texts = [c.text for c in chosen]
        attributes = dict(zip(texts, self.classify(texts), strict=True))
        out: list[list[Finding]] = []
        for clause in clauses:
            attribute = attributes.get(clause.text)
            # Near an exemplar is not evidence: the clause must also say what the slot is about.
            if attribute is not None and not supported(attribute, clause.text):
                attribute = None
            values = read_value(attribute, clause.text) if attribute else []
            out.append([Finding(attribute, v, say(clause), INFERRED) for v in values if attribute])
        return out


def load_exemplars() -> dict[str, list[str]]:
    raw = resources.files("slotwise.processors").joinpath("exemplars.v1.json").read_text("utf-8")
    data: dict[str, object] = json.loads(raw)
    return {k: [str(t) for t in v] for k, v in data.items() if isinstance(v, list)}


# The values the datasets' convention writes, keyed by what people type.
_DIET_VALUES = {**DIETS, "veggie": "vegetarian", "omnivore": "omnivore"}
_CONDITION_VALUES = {**CONDITIONS, "coeliac": "coeliac disease", "anaemic": "anaemia",
                     "anaemia": "anaemia", "anemia": "anaemia", "anemic": "anaemia"}  # fmt: skip
_RELATIONSHIP = {"married": "married", "engaged": "engaged", "single": "single",
                 "divorced": "divorced", "widowed": "widowed", "husband": "married",
                 "wife": "married", "boyfriend": "in a relationship",
                 "girlfriend": "in a relationship", "fiance": "engaged",
                 "fiancee": "engaged"}  # fmt: skip
_CODE = {"python": "Python", "rust": "Rust", "typescript": "TypeScript", "java": "Java",
         "kotlin": "Kotlin", "golang": "Go", "ruby": "Ruby", "elixir": "Elixir",
         "javascript": "JavaScript", "swift": "Swift", "scala": "Scala", "haskell": "Haskell",
         "julia": "Julia", "php": "PHP", "c++": "C++", "c#": "C#", "sql": "SQL"}  # fmt: skip
_PLANS = {"free": "Free", "pro": "Pro", "team": "Team", "business": "Business",
          "enterprise": "Enterprise", "premium": "Premium", "basic": "Basic"}  # fmt: skip
_CYCLES = {"monthly": "monthly", "annual": "annual", "annually": "annual", "yearly": "annual"}
_ARRANGEMENTS = {"remote": "remote", "remotely": "remote", "hybrid": "hybrid"}
_CONTACT = {"email": "email", "e-mail": "email", "text": "text", "texts": "text",
            "whatsapp": "whatsapp", "sms": "text"}  # fmt: skip

_TABLES: dict[str, dict[str, str]] = {
    "diet": _DIET_VALUES,
    "allergies": ALLERGENS,
    "medical_conditions": _CONDITION_VALUES,
    "relationship_status": _RELATIONSHIP,
    "database": DATABASES,
    "programming_languages": _CODE,
    "billing_cycle": _CYCLES,
    "work_arrangement": _ARRANGEMENTS,
    "preferred_contact_method": _CONTACT,
}
_MANY = frozenset({"allergies", "medical_conditions"})
_WORDS = re.compile(r"[\w+#'-]+")


def _plan(text: str) -> list[str]:
    found = re.findall(r"\b(\w+)\s+(?:plan|tier|subscription)\b", text, _I)
    return [_PLANS[w.lower()] for w in found if w.lower() in _PLANS]


_READERS: dict[str, Callable[[str], list[str]]] = {"plan": _plan}


def value_mentions(attribute: str, text: str) -> list[tuple[int, int, str]]:
    """Each value of ``attribute``'s closed vocabulary the text names, as ``(start, end,
    value)``, in order; [] for a slot with no table."""
    table = _TABLES.get(attribute)
    return [] if table is None else mentions_in(table, text)


def mentions_in(table: Mapping[str, str], text: str) -> list[tuple[int, int, str]]:
    """Each wording of ``table`` (lower case, up to three words) the text names, as
    ``(start, end, value)``, the longest wording first, in order."""
    words = list(_WORDS.finditer(text))
    found: list[tuple[int, int, str]] = []
    i = 0
    while i < len(words):
        for size in (3, 2, 1):
            key = " ".join(w.group().lower() for w in words[i : i + size])
            if len(words) - i >= size and key in table:
                found.append((words[i].start(), words[i + size - 1].end(), table[key]))
                i += size
                break
        else:
            i += 1
    return found


def read_value(attribute: str, text: str) -> list[str]:
    """The values of ``attribute`` the clause names; [] unless the reading is clear (one
    value for a single-valued slot)."""
    reader = _READERS.get(attribute)
    if reader is not None:
        found = reader(text)
    else:
        found = [value for _, _, value in value_mentions(attribute, text)]
    distinct = list(dict.fromkeys(found))
    if attribute in _MANY:
        return distinct
    return distinct if len(distinct) == 1 else []
