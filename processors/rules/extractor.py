"""The rules extractor: each clause of a user's turn through the head, else the tail.

Findings become candidates with the schema's category and importance, a
``valid_from`` from the clause's date, and a stable id per observation.
"""

from __future__ import annotations

from processors.dates import find_date
from processors.model import stable_id
from processors.rules.clauses import NEGATION, Clause, split_clauses
from processors.rules.findings import Finding
from processors.rules.head import NEGATION_RULES, RULES
from processors.rules.tail import read_free_text
from processors.rules.wording import absolute_dates
from processors.schema import AttributeSchema
from topics.records import CandidateFact, Observation

__all__ = ["MAX_CLAUSES", "RulesExtractor", "extract_candidates"]

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


class RulesExtractor:
    """The :class:`~processors.ports.Extractor` used when no model is configured."""

    def __init__(self, schema: AttributeSchema) -> None:
        self._schema = schema

    async def extract(self, observation: Observation) -> list[CandidateFact]:
        return extract_candidates(observation, self._schema)


def extract_candidates(observation: Observation, schema: AttributeSchema) -> list[CandidateFact]:
    """The facts about the subject stated in one observation (pure and deterministic)."""
    if observation.speaker.strip().lower() in NON_USER_SPEAKERS:
        return []
    text = observation.text.replace("\u2019", "'").replace("\u2018", "'")
    candidates: list[CandidateFact] = []
    said: set[tuple[str | None, object, str]] = set()
    for count, clause in enumerate(split_clauses(text)):
        if count >= MAX_CLAUSES:
            break
        for finding in _read(clause):
            spec = schema.get(finding.attribute)
            key = (finding.attribute, finding.value, finding.text)
            if (finding.attribute is not None and spec is None) or key in said:
                continue
            said.add(key)
            category = spec.category if spec is not None else FREE_TEXT_CATEGORY
            mention = find_date(clause.text, observation.observed_at, tense=clause.tense)
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
                    valid_from=observation.observed_at if mention is None else mention.when,
                    source=observation.source,
                    confidence=finding.confidence,
                    importance=IMPORTANCE.get(category, DEFAULT_IMPORTANCE),
                    observation_id=observation.observation_id,
                )
            )
    return candidates


def _read(clause: Clause) -> list[Finding]:
    rules = NEGATION_RULES if NEGATION.search(clause.text) else RULES
    for rule in rules:
        findings = rule(clause)
        if findings:
            return findings
    return [] if rules is NEGATION_RULES else read_free_text(clause)
