"""The rules extractor: each clause of a user's turn through the head, else the tail.

Findings become candidates with the schema's category and importance, a
``valid_from`` from the clause's date, and a stable id per observation.
"""

from __future__ import annotations

import asyncio
import re
from itertools import islice

from slotwise.processors.dates import find_date
from slotwise.processors.model import ERASURE_QUESTION, stable_id
from slotwise.processors.ports import Embedder
from slotwise.processors.rules.asides import read_asides
from slotwise.processors.rules.changed import read_changed
from slotwise.processors.rules.chat import expand
from slotwise.processors.rules.civil import read_civil
from slotwise.processors.rules.classifier import ExemplarClassifier
from slotwise.processors.rules.clauses import (
    NEGATION,
    Clause,
    split_clauses,
)
from slotwise.processors.rules.corrections import read_correction, read_replacement
from slotwise.processors.rules.derived import implied_timezone, native_spoken
from slotwise.processors.rules.erasure import ErasureRequest, read_erasure
from slotwise.processors.rules.findings import Finding
from slotwise.processors.rules.head import ALSO_RULES, NEGATION_RULES, RULES
from slotwise.processors.rules.head.household import read_pets_in_passing, spouse_in_turn
from slotwise.processors.rules.head.labelled import read_labelled
from slotwise.processors.rules.head.standing import read_contact_method
from slotwise.processors.rules.markers import states_change, taken_back
from slotwise.processors.rules.pursuits import read_pursuit
from slotwise.processors.rules.remarks import without_denying_remark
from slotwise.processors.rules.tail import read_free_text
from slotwise.processors.rules.town_talk import read_town_in_turn
from slotwise.processors.rules.undated import read_undated
from slotwise.processors.rules.unsure import unsure_questions
from slotwise.processors.rules.validity import began, not_yet, planned, still_holds
from slotwise.processors.rules.wording import absolute_dates
from slotwise.processors.schema import AttributeSchema
from slotwise.topics.records import CandidateFact, Command, Observation

__all__ = ["INJECTION", "MAX_CLAUSES", "RulesExtractor", "extract_candidates", "extract_records"]

NON_USER_SPEAKERS = frozenset({"assistant", "system", "bot"})

FREE_TEXT_CATEGORY = "event"
IMPORTANCE = {
    "identity": 0.9,
    "health": 0.9,
    "contact": 0.8,
    "work": 0.7,
    "home": 0.7,
    "plan": 0.6,
    "family": 0.6,
    "education": 0.5,
    "languages": 0.5,
    "preferences": 0.5,
    "event": 0.3,
}
DEFAULT_IMPORTANCE = 0.5

# A bound on work per turn: a pasted document is not a chat statement about the user.
MAX_CLAUSES = 200


# Text that tries to instruct the memory rather than tell it something: nothing in such a
# turn is taken as a statement of the speaker, not even a deletion it imitates.
INJECTION = re.compile(
    r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+|my\s+)*(?:previous|prior|"
    r"above|earlier|preceding|system|rules|instructions)\b|\b(?:system|developer|admin)\s*(?:prompt|"
    r"message|note|mode)?\s*:|\[\s*(?:system|note|admin|developer)\b|\bnote\s+from\s+the\b|"
    r"\bpretend\s+(?:you(?:'re|\s+are)|to\s+be)\b|\bgod\s+mode\b|\bjailbreak|\bdan\s+mode\b|"
    r"\bmemory\.\w+\s*\(|\{\s*\"(?:set|update|attribute|plan|email)\"|\breveal\s+your\b|"
    r"\bthe\s+admin\s+of\s+this\b|\byou\s+must\s+(?:change|set|record|update|store)\b|"
    r"\b(?:record|set|save|store|mark)\s+my\s+\w+(?:\s+\w+)?\s+as\b|<-\s*apply\b|"
    r"\bignore\s+the\s+rest\b|\bfrom\s+now\s+on\s+you\b|\bassistant\s*:|"
    r"\bsystem\s+(?:update|override|command)\b|\buser\.\w+\s*=",
    re.IGNORECASE,
)


# Words in quotation marks are someone's words, a label or a line: never the speaker's
# statement about themselves ("my mug says 'world's okayest runner'").
QUOTED = re.compile(
    r"(?:(?<=^)|(?<=[\s:(\[]))(?P<q>['\"\u201c\u2018])(?=\S)(?:(?!(?P=q)).|(?P=q)(?=\w))*?\S"
    r"[\"'\u201d\u2019](?=$|[\s.,;:!?)\]\u2014-])"
)

# Where a quotation stood, the rules see an ellipsis and a private-use character that
# numbers it: nothing reads the words, and a fact around them ("User reread …") gets them
# back, so its text is never cut where the title was.
_MASK = re.compile("\u2026([\ue000-\uf8ff])")


def _masked(text: str) -> tuple[str, list[str]]:
    """``text`` with each quotation replaced by its numbered mark, and the quotations."""
    quotes: list[str] = []

    def mark(found: re.Match[str]) -> str:
        quotes.append(found.group(0))
        return f" \u2026{chr(0xE000 + len(quotes) - 1)} "

    return QUOTED.sub(mark, text), quotes


def _unmasked(finding: Finding, quotes: list[str]) -> Finding:
    """The finding with the quotations its text stands beside written back in."""
    if not quotes or not _MASK.search(finding.text):
        return finding
    text = _MASK.sub(lambda m: quotes[ord(m.group(1)) - 0xE000], finding.text)
    return Finding(finding.attribute, finding.value, text, finding.confidence)


class RulesExtractor:
    """The :class:`~processors.ports.Extractor` used when no model is configured."""

    def __init__(self, schema: AttributeSchema, embedder: Embedder | None = None) -> None:
        self._schema = schema
        # Optional: without an embedder only the rules run (pure, as the unit tests use it).
        self._classifier = ExemplarClassifier(embedder) if embedder is not None else None

    async def extract(self, observation: Observation) -> list[CandidateFact | Command]:
        if self._classifier is None:
            return extract_records(observation, self._schema, ask=True)
        # The embedder is CPU-bound: off the event loop.
        return await asyncio.to_thread(
            extract_records, observation, self._schema, self._classifier, ask=True
        )


def extract_records(
    observation: Observation,
    schema: AttributeSchema,
    classifier: ExemplarClassifier | None = None,
    *,
    ask: bool = False,
) -> list[CandidateFact | Command]:
    """The facts a turn states about the subject, or the erase it asks for (never both).
    With ``ask`` (the extractor the worker runs), also a question for each slot the turn
    speaks about whose new value the rules could not read (``processors.rules.unsure``)."""
    if observation.speaker.strip().lower() in NON_USER_SPEAKERS:
        return []
    text = observation.text.replace("\u2019", "'").replace("\u2018", "'")
    if INJECTION.search(text):
        return []
    request = read_erasure(text, schema)
    if request is not None:
        return _erasure(request, observation, schema)
    stated, clauses = _read_turn(observation, schema, classifier)
    if not ask:
        return [c for c in stated if c.question is None]
    placer = classifier.classify if classifier is not None else None
    return [*stated, *unsure_questions(observation, clauses, stated, placer)]


def _erasure(
    request: ErasureRequest, observation: Observation, schema: AttributeSchema
) -> list[CandidateFact | Command]:
    """The erase commands a request scopes; a statement it quotes ("forget that I'm
    vegan") read for its slots; a human asked when the scope cannot be read."""
    attributes = request.attributes
    if request.kind == "read" and request.said is not None:
        quoted = observation.model_copy(update={"text": request.said})
        stated = {c.attribute for c in extract_candidates(quoted, schema) if c.attribute}
        attributes = tuple(spec.name for spec in schema if spec.name in stated)
    if not attributes:
        return [_deletion_question(request, observation)]
    return [
        Command(
            schema="command/1",
            command_id=stable_id("erase", observation.observation_id, str(i)),
            subject_id=observation.subject_id,
            command="erase",
            issued_at=observation.observed_at,
            observation_id=observation.observation_id,
            reason=request.reason,
            attribute=attribute,
        )
        for i, attribute in enumerate(attributes)
    ]


def _deletion_question(request: ErasureRequest, observation: Observation) -> CandidateFact:
    """A deletion request whose scope cannot be read: nothing is erased (a guess could
    erase more than was asked), a human is asked which facts it means."""
    return CandidateFact(
        schema="candidate/1",
        candidate_id=stable_id("rules-erase-question", observation.observation_id),
        subject_id=observation.subject_id,
        text=f"User asked to forget something: {request.reason!r}",
        category=ERASURE_QUESTION,
        observed_at=observation.observed_at,
        source=observation.source,
        confidence=1.0,
        importance=IMPORTANCE["identity"],
        observation_id=observation.observation_id,
        question=f"deletion request whose scope cannot be read ({request.reason!r}): "
        "erase what it means, or close this",
    )


def extract_candidates(
    observation: Observation,
    schema: AttributeSchema,
    classifier: ExemplarClassifier | None = None,
) -> list[CandidateFact]:
    """The facts about the subject stated in one observation (deterministic; pure without
    a ``classifier``, which places what the rules could not)."""
    return [c for c in _read_turn(observation, schema, classifier)[0] if c.question is None]


def _read_turn(
    observation: Observation,
    schema: AttributeSchema,
    classifier: ExemplarClassifier | None,
) -> tuple[list[CandidateFact], list[Clause]]:
    """The facts the turn states, and the clauses they were read from."""
    if observation.speaker.strip().lower() in NON_USER_SPEAKERS:
        return [], []
    raw = observation.text.replace("\u2019", "'").replace("\u2018", "'")
    if INJECTION.search(raw) or read_erasure(raw, schema) is not None:
        return [], []
    cased = any(ch.isupper() for ch in raw)
    text, quotes = _masked(raw)
    text = expand(taken_back(text))
    clauses = list(islice(split_clauses(text, cased=cased), MAX_CLAUSES))
    readings = _lapsed([read_undated(_read, clause) for clause in clauses], clauses)
    if classifier is not None:
        readings = _classified(classifier, clauses, readings)
    # A value read from a quotation's place was never said as the speaker's own.
    readings = [
        [_unmasked(f, quotes) for f in found if not _MASK.search(str(f.value))]
        for found in readings
    ]
    read = list(zip(clauses, readings, strict=True))
    if not any(f.attribute == "relationship_status" for found in readings for f in found):
        read += spouse_in_turn(text, cased)
    # "as a vegan, is honey ok??": an aside read from the whole turn, questions included.
    held = {f.attribute for _, found in read for f in found}
    # "new number - 07700 900123": a value under a label, which the clause splitter cuts.
    told = (*read_asides(text), *read_labelled(text, cased), *read_town_in_turn(text))
    asides = [f for f in told if f.attribute not in held]
    if asides:
        read.append((Clause(text, cased, None), asides))
    # Dated by the turn, not by the date it states: a birth date is no start of validity.
    read.append((Clause("", cased, None), read_civil(text, observation.observed_at)))
    candidates: list[CandidateFact] = []
    said: set[tuple[str | None, object, str]] = set()
    for clause, findings in read:
        for finding in findings:
            spec = schema.get(finding.attribute)
            key = (finding.attribute, finding.value, finding.text)
            if (finding.attribute is not None and spec is None) or key in said:
                continue
            said.add(key)
            category = spec.category if spec is not None else FREE_TEXT_CATEGORY
            mention = find_date(clause.text, observation.observed_at, tense=clause.tense)
            valid_from = began(finding, clause, mention, observation)
            if finding.attribute is not None and not_yet(mention, observation):
                candidates += planned(observation, finding.attribute, clause.text, len(candidates))
                continue
            candidates.append(
                CandidateFact(
                    schema="candidate/1",
                    candidate_id=stable_id(
                        "rules", observation.observation_id, str(len(candidates))
                    ),
                    subject_id=observation.subject_id,
                    attribute=finding.attribute,
                    value=finding.value,
                    text=absolute_dates(finding.text, observation.observed_at, clause.tense),
                    category=category,
                    observed_at=observation.observed_at,
                    valid_from=valid_from,
                    source=observation.source,
                    confidence=finding.confidence,
                    importance=IMPORTANCE.get(category, DEFAULT_IMPORTANCE),
                    observation_id=observation.observation_id,
                    stated_change=finding.corrected or states_change(clause.text, text),
                    ongoing=still_holds(finding, clause, valid_from, observation),
                )
            )
    zone, tongues = schema.get("timezone"), schema.get("languages")
    candidates += native_spoken(candidates, tongues.category if tongues else None)
    return candidates + implied_timezone(candidates, text, zone.category if zone else None), clauses


def _classified(
    classifier: ExemplarClassifier, clauses: list[Clause], readings: list[list[Finding]]
) -> list[list[Finding]]:
    """The readings with each clause the rules left unplaced (nothing, or free text only)
    read by the classifier instead, when it places it and reads a value."""
    open_ = [
        i
        for i, found in enumerate(readings)
        if all(f.attribute is None for f in found) and not _BYGONE.search(clauses[i].text)
    ]
    if not open_:
        return readings
    placed = classifier.read([clauses[i] for i in open_])
    out = list(readings)
    for i, found in zip(open_, placed, strict=True):
        if found:
            out[i] = found
    return out


# A clause about the speaker's childhood or a stopped habit says nothing about now: only
# the attributes that are about the past by definition may come from it.
_BYGONE = re.compile(
    r"\b(?:as\s+a\s+(?:kid|child|teen|teenager|boy|girl|student)|when\s+I\s+was\s+"
    r"(?:little|young|small|a\s+kid|a\s+child|a\s+teen|a\s+baby|\d+|in\s+\w+)|growing\s+up|"
    r"in\s+(?:primary|high|middle|grade|elementary)\s+school|through\s+(?:primary|high|middle)\s+"
    r"school|in\s+my\s+(?:teens|twenties|thirties|20s|30s|childhood|youth)|back\s+then|"
    r"used\s+to|as\s+a\s+youngster|at\s+(?:age\s+)?\d{1,2}\b(?!\s*(?:am|pm|:)))",
    re.IGNORECASE,
)
_PAST_BY_DEFINITION = frozenset({"birthplace", "hometown", "education", "native_language"})


# "I love sailing, but it's been years since I last went out": the pastime has lapsed.
_LAPSED_AFTER = re.compile(
    r"^(?:it's|it\s+has|it\s+had)\s+been\s+(?:ages|years|forever|a\s+(?:long\s+)?while|"
    r"a\s+long\s+time)(?:\s+since\b|$)|^I\s+(?:haven't|have\s+not|hardly|never)\s+(?:\w+\s+){0,3}"
    r"(?:in\s+(?:ages|years|a\s+while)|anymore|any\s+more|lately|these\s+days)\b",
    re.IGNORECASE,
)
_PASTIMES = frozenset({"hobbies"})


def _lapsed(readings: list[list[Finding]], clauses: list[Clause]) -> list[list[Finding]]:
    """The readings without a pastime the next clause says has lapsed."""
    out = list(readings)
    for i in range(len(clauses) - 1):
        if _LAPSED_AFTER.search(clauses[i + 1].text):
            out[i] = [f for f in out[i] if f.attribute not in _PASTIMES]
    return out


def _read(clause: Clause) -> list[Finding]:
    if _BYGONE.search(clause.text):
        return [f for f in _read_now(clause) if f.attribute in _PAST_BY_DEFINITION]
    found = _read_now(clause)
    placed = {_family(f.attribute) or "" for f in found} | {f.attribute or "" for f in found}
    # "vegan three months now and don't miss cheese": the change is heard in the statement
    # the remark leaves, as _read_now reads it.
    stated = without_denying_remark(clause) if NEGATION.search(clause.text) else None
    changed = read_changed(stated or clause, placed)
    # A slot's new value read beside the free-text tail: the slot is what the clause says.
    return [f for f in found if f.attribute is not None or not changed] + changed


def _read_now(clause: Clause) -> list[Finding]:
    negated = bool(NEGATION.search(clause.text))
    corrected = (
        read_correction(clause, _affirmed) or read_replacement(clause, _affirmed) if negated else []
    )
    if corrected:
        return corrected
    kept = without_denying_remark(clause) if negated else None
    if kept is not None:
        clause, negated = kept, False
    found = _head(clause, negated)
    if not negated:
        seen = {_family(f.attribute) for f in found}
        for rule in ALSO_RULES:
            found += [f for f in rule(clause) if _family(f.attribute) not in seen]
            seen |= {_family(f.attribute) for f in found}
    else:
        # "text me, don't call": a preference is often said against its alternative; "my
        # snakes can't talk": a negation about a pet still names the speaker's pet.
        found += [
            f
            for f in (*read_contact_method(clause), *read_pets_in_passing(clause))
            if f.attribute not in {x.attribute for x in found}
        ]
    if found or negated:
        return found
    return read_free_text(clause) or read_pursuit(clause)


# Attributes one reading of a clause fills together: a second rule must not add its own
# reading of the same place ("the States" is a country, not a city called "States").
_FAMILIES = {"home_city": "home", "home_country": "home", "home_region": "home"}


def _family(attribute: str | None) -> str | None:
    return _FAMILIES.get(attribute or "", attribute)


def _affirmed(clause: Clause) -> list[Finding]:
    return _head(clause, negated=False)


def _head(clause: Clause, negated: bool) -> list[Finding]:
    for rule in NEGATION_RULES if negated else RULES:
        findings = rule(clause)
        if findings:
            return findings
    return []
