"""The candidate the uncertain middle makes of a turn it cannot read: a slot (or none), no
value or only a tentative one, and the question a human answers."""

from __future__ import annotations

from slotwise.processors.model import stable_id
from slotwise.topics.records import CandidateFact, Observation

__all__ = ["question"]


def question(
    observation: Observation, attribute: str | None, said: str, n: int, tentative: str | None = None
) -> CandidateFact:
    """The question; ``tentative`` is a value the turn implies but does not state (the zone
    of a new home city), for the resolver to weigh against what the slot holds."""
    if attribute is None:
        text = f"User may have corrected or withdrawn something: {said[:300]}"
        question = f"the turn corrects or denies something but no slot was read: {said[:160]!r}"
    else:
        text = f"User may have changed their {attribute.replace('_', ' ')}: {said[:160]}"
        question = (
            f"the turn speaks about {attribute} with a change in view, but its new value "
            f"was not read: {said[:160]!r}"
        )
    return CandidateFact(
        schema="candidate/1",
        candidate_id=stable_id("rules-unsure", observation.observation_id, str(n)),
        subject_id=observation.subject_id,
        attribute=attribute,
        value=tentative,
        text=text,
        observed_at=observation.observed_at,
        source=observation.source,
        confidence=0.5,
        observation_id=observation.observation_id,
        question=question,
    )
