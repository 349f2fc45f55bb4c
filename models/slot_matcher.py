"""Slot matching by the model: which numbered neighbour, if any, fills the candidate's slot.

One forced ``answer_slot`` call per candidate that has neighbours. The model
sees the candidate and the neighbours' texts numbered 1..n
(:func:`processors.slot_match.render_question`), never an id. The answer is
read by :func:`processors.slot_match.parse_answer`: a number off the list,
prose or an id is rejected and counts as NONE. When the model cannot be asked
(retry budget spent, breaker open, request refused), the answer carries
``error`` and the cascade turns it into a review item, so nothing is dropped.

The worker asks as ``slot_match``; the consolidation pass builds its own with
``kind="consolidation"``, so its cost is counted apart.
"""

from __future__ import annotations

from collections.abc import Sequence

from prometheus_client import Counter

from slotwise.models.exceptions import ModelError
from slotwise.models.forced_tool import ForcedTool, ToolAnswer
from slotwise.models.llm import ModelClient
from slotwise.models.prompt import ANSWER_SLOT, memory_prefix
from slotwise.processors.model import Neighbour, SlotAnswer
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.slot_match import parse_answer, render_question
from slotwise.topics.records import CandidateFact

__all__ = ["TOOL_NAME", "AnthropicSlotMatcher"]

TOOL_NAME = ANSWER_SLOT
PURPOSE = "slot_match"

REJECTED = Counter(
    "slotwise_slot_answers_rejected_total",
    "Slot-match answers that were neither NONE nor a number on the list",
)


class AnthropicSlotMatcher:
    """The :class:`~processors.ports.SlotMatcher` backed by the model.

    ``schema`` is the deployment's vocabulary: it is part of the prefix every call
    shares, so the matcher must send the one the extractor sends (the shipped one
    when not given).
    """

    def __init__(
        self,
        client: ModelClient,
        schema: AttributeSchema | None = None,
        *,
        kind: str = PURPOSE,
        max_tokens: int = 64,
    ) -> None:
        self._ask = ForcedTool(
            client,
            kind=kind,
            prefix=memory_prefix(schema or AttributeSchema.load()),
            tool=TOOL_NAME,
            max_tokens=max_tokens,
        )

    async def match(self, candidate: CandidateFact, neighbours: Sequence[Neighbour]) -> SlotAnswer:
        if not neighbours:
            return SlotAnswer(index=None, raw="")
        try:
            answer = await self._ask.ask(render_question(candidate, neighbours))
        except ModelError as exc:
            return SlotAnswer(index=None, error=f"{exc.kind}: {exc}")
        memory = _memory(answer)
        raw = "" if memory is None else str(memory)
        try:
            index = parse_answer(memory, len(neighbours))
        except ValueError:
            REJECTED.inc()
            self._ask.malformed()
            return SlotAnswer(index=None, raw=raw[:200])
        return SlotAnswer(index=index, raw=raw)


def _memory(answer: ToolAnswer) -> str | int | None:
    """The tool's ``memory`` argument, or the text the model wrote instead of calling it."""
    if not answer.called:
        return answer.text or None
    memory = answer.input.get("memory")
    if isinstance(memory, str | int):
        return memory
    return None if memory is None else repr(memory)
