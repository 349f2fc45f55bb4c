"""The gate before model extraction: a turn that states nothing about its speaker skips the call.

Most chat carries no durable fact about the user (greetings, thanks, questions
put to the other person, talk about someone else), and each of those turns
would still cost an extraction call. The gate reads the turn offline, with the
rules' own readers, and lets the model see it unless it is sure there is
nothing to find. It is built for recall, not for savings: a turn it skips is a
fact lost for good, a turn it passes costs one call. So a turn goes to the
model when any of these holds:

* the speaker is not the user (an assistant may report what the user said);
* the speaker speaks of themself: "I", "my", "we", "our"… outside the phrases
  that only react to the other person ("I think so", "I'm so happy for you",
  "let me know");
* a clause has dropped its "I", as chat does ("work at zalando", "married w 2
  kids"): :func:`~processors.rules.chat.restore_subject` puts it back;
* the rules find a fact or an erase request in it;
* it is neither addressed to the other person ("you", "your") nor a question:
  a bare fragment ("nurse, 12 hr shifts, icu") may well be the speaker's bio.

What is left is a turn about the listener or the world, put to the listener:
"Sounds great, Jo! Did you take photos?", "Thanks, Melanie! Your kind words
mean a lot." Its recall on the labelled turns' fact-bearing ones (README,
Evaluation) is what decides whether it runs by default.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Literal

from slotwise.processors.ports import Extractor
from slotwise.processors.rules.chat import expand, restore_subject
from slotwise.processors.rules.extractor import NON_USER_SPEAKERS, extract_records
from slotwise.processors.schema import AttributeSchema
from slotwise.topics.records import CandidateFact, Command, Observation

__all__ = ["Decision", "GatedExtractor", "TurnGate"]

Decision = Literal["ask", "skip"]

_FIRST_PERSON = re.compile(
    r"\b(?:I|I'm|I've|I'll|I'd)\b"
    r"|\b(?:me|my|mine|myself|we|we're|we've|we'll|we'd|us|our|ours|ourselves)\b",
    re.IGNORECASE,
)
_SECOND_PERSON = re.compile(
    r"\b(?:you|your|yours|yourself|yourselves|you're|you've|you'll|you'd|y'all)\b", re.IGNORECASE
)
_ADVERBS = r"(?:(?:really|totally|so|just|also|too|still|definitely|absolutely|truly|very)\s+)*"
# First person that only reacts to the other person: no statement about the speaker.
_REACTION = re.compile(
    rf"\bI\s+{_ADVERBS}(?:think|bet|guess|mean|agree|know|see|hope|believe|suppose|understand|"
    r"appreciate|admire|love|like|adore|miss|remember|wonder|can't\s+wait|can't\s+imagine|"
    r"can\s+imagine)\s+(?:that|it|this|those|these|you|your|yours|the\s+way|how|what|so|too)\b"
    rf"|\bI'm\s+{_ADVERBS}(?:happy|glad|proud|sorry|excited|thrilled|impressed|curious|sure|"
    r"thankful|grateful|stoked|inspired|touched|moved)\s+(?:for|of|to\s+hear|to\s+see|about|"
    r"that|you)\b"
    r"|\bI\s+(?:agree|see|bet|know|hope|think|can't\s+wait)\b"
    r"|\blet\s+me\s+know\b|\bthank\s+you\b|\bme\s+too\b",
    re.IGNORECASE,
)
_PIECES = re.compile(r"[.!?;,\n]+|\s+(?:and|but|so|plus)\s+", re.IGNORECASE)


class TurnGate:
    """Whether a turn may state something about its speaker (see the module's notes)."""

    def __init__(self, schema: AttributeSchema) -> None:
        self._schema = schema

    def decide(self, observation: Observation) -> Decision:
        if observation.speaker.strip().lower() in NON_USER_SPEAKERS:
            return "ask"
        text = expand(observation.text.replace("\u2019", "'").replace("\u2018", "'"))
        if _FIRST_PERSON.search(_REACTION.sub(" ", text)):
            return "ask"
        if any(_dropped_subject(piece.strip()) for piece in _PIECES.split(text)):
            return "ask"
        if extract_records(observation, self._schema):
            return "ask"
        if _SECOND_PERSON.search(text) or text.rstrip().endswith("?"):
            return "skip"
        return "ask"


def _dropped_subject(clause: str) -> bool:
    return bool(clause) and restore_subject(clause) != clause


class GatedExtractor:
    """An :class:`~processors.ports.Extractor` that asks ``inner`` only about turns the gate
    passes; ``count`` hears every decision (the worker's metric)."""

    def __init__(
        self,
        inner: Extractor,
        gate: TurnGate,
        count: Callable[[Decision], None] | None = None,
    ) -> None:
        self._inner = inner
        self._gate = gate
        self._count = count

    async def extract(self, observation: Observation) -> Sequence[CandidateFact | Command]:
        if not observation.text.strip():
            return await self._inner.extract(observation)
        decision = self._gate.decide(observation)
        if self._count is not None:
            self._count(decision)
        if decision == "skip":
            return []
        return await self._inner.extract(observation)
