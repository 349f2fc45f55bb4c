"""Slot matching by the model: which numbered neighbour, if any, fills the candidate's slot.

One forced ``answer_slot`` call per candidate that has neighbours. The model
sees the candidate and the neighbours' texts numbered 1..n
(:func:`processors.slot_match.render_question`), never an id. The answer is
read by :func:`processors.slot_match.parse_answer`: a number off the list,
prose or an id is rejected and counts as NONE. When the model cannot be asked
(retry budget spent, breaker open, request refused), the answer carries
``error`` and the cascade turns it into a review item, so nothing is dropped.
"""

from __future__ import annotations

from collections.abc import Sequence

from anthropic.types import Message, MessageParam, TextBlockParam, ToolParam
from prometheus_client import Counter

from slotwise.models.exceptions import ModelError
from slotwise.models.llm import ModelClient
from slotwise.processors.model import Neighbour, SlotAnswer
from slotwise.processors.slot_match import parse_answer, render_question
from slotwise.topics.records import CandidateFact

__all__ = ["TOOL_NAME", "AnthropicSlotMatcher"]

TOOL_NAME = "answer_slot"
PURPOSE = "slot_match"

REJECTED = Counter(
    "slotwise_slot_answers_rejected_total",
    "Slot-match answers that were neither NONE nor a number on the list",
)

_SYSTEM = """\
You keep an AI assistant's long-term memory about one person, "the user", free of
contradictions. Each request shows a new observation about the user and a numbered
list of memories already stored about them. Decide which memory, if any, records the
SAME property of the user as the observation (the same slot: employer, home city,
diet...), so that both could not be true at once unless that property allows several
values. Related topics are not the same slot: "lives in Lisbon" and "visited Lisbon"
are different slots.

Answer by calling answer_slot exactly once with the memory's number from the list,
or with "NONE" when no memory fills the same slot. Use only numbers shown in the list.
"""

_TOOL: ToolParam = {
    "name": TOOL_NAME,
    "description": "Give the number of the memory that fills the observation's slot, or NONE.",
    "input_schema": {
        "type": "object",
        "properties": {
            "memory": {
                "anyOf": [{"type": "integer", "minimum": 1}, {"type": "string", "enum": ["NONE"]}],
                "description": 'A number from the list, or "NONE".',
            },
        },
        "required": ["memory"],
    },
}


class AnthropicSlotMatcher:
    """The :class:`~processors.ports.SlotMatcher` backed by the model."""

    def __init__(self, client: ModelClient, *, max_tokens: int = 64) -> None:
        self._client = client
        self._max_tokens = max_tokens
        self._system: list[TextBlockParam] = [
            {
                "type": "text",
                "text": _SYSTEM,
                "cache_control": {"type": "ephemeral"},
            }
        ]

    async def match(self, candidate: CandidateFact, neighbours: Sequence[Neighbour]) -> SlotAnswer:
        if not neighbours:
            return SlotAnswer(index=None, raw="")
        messages: list[MessageParam] = [
            {"role": "user", "content": render_question(candidate, neighbours)},
        ]
        try:
            reply = await self._client.create(
                PURPOSE,
                system=self._system,
                messages=messages,
                max_tokens=self._max_tokens,
                tools=[_TOOL],
                tool_choice={"type": "tool", "name": TOOL_NAME},
            )
        except ModelError as exc:
            return SlotAnswer(index=None, error=f"{exc.kind}: {exc}")
        answer = _answer(reply)
        raw = "" if answer is None else str(answer)
        try:
            index = parse_answer(answer, len(neighbours))
        except ValueError:
            REJECTED.inc()
            self._client.note_malformed(PURPOSE)
            return SlotAnswer(index=None, raw=raw[:200])
        return SlotAnswer(index=index, raw=raw)


def _answer(reply: Message) -> str | int | None:
    """The tool's ``memory`` argument, or the text the model wrote instead of calling it."""
    for block in reply.content:
        if block.type == "tool_use" and block.name == TOOL_NAME:
            arguments: object = block.input
            memory = arguments.get("memory") if isinstance(arguments, dict) else None
            if isinstance(memory, str | int):
                return memory
            return None if memory is None else repr(memory)
    text = " ".join(b.text for b in reply.content if b.type == "text").strip()
    return text or None
