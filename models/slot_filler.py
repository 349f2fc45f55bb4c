"""Re-slotting by the model: does a free-text memory state a (new) attribute, and its value.

One forced ``fill_attribute`` call per fact. The model sees the memory's text
and the attribute's name and description, never an id; it answers ``fills``
with the value, ``no``, or ``ambiguous`` (the memory may state it, but a
person should say how). An answer of any other shape counts as ambiguous —
the safe error for a backfill: a person looks, nothing is moved wrongly. When
the model cannot be asked the answer carries ``error`` and the pass reports
the fact as not done (the next pass asks again).
"""

from __future__ import annotations

from slotwise.models.exceptions import ModelError
from slotwise.models.forced_tool import ForcedTool
from slotwise.models.llm import ModelClient
from slotwise.models.prompt import FILL_ATTRIBUTE, memory_prefix
from slotwise.processors.reslot import Fill
from slotwise.processors.schema import AttributeSchema, AttributeSpec
from slotwise.topics.records import Fact

__all__ = ["PURPOSE", "TOOL_NAME", "AnthropicSlotFiller"]

TOOL_NAME = FILL_ATTRIBUTE
PURPOSE = "reslot"
_VERDICTS = ("fills", "no", "ambiguous")


class AnthropicSlotFiller:
    """The :class:`~slotwise.processors.reslot.SlotFiller` backed by the model."""

    def __init__(
        self, client: ModelClient, schema: AttributeSchema | None = None, *, max_tokens: int = 128
    ) -> None:
        self._ask = ForcedTool(
            client,
            kind=PURPOSE,
            prefix=memory_prefix(schema or AttributeSchema.load()),
            tool=TOOL_NAME,
            max_tokens=max_tokens,
        )

    async def fill(self, fact: Fact, spec: AttributeSpec) -> Fill:
        question = (
            f'Memory about the user:\n  "{fact.text}"\n\n'
            f"Attribute: {spec.name} ({spec.cardinality}-valued) - {spec.description}\n\n"
            f"Does the memory state the user's {spec.name}?"
        )
        try:
            answer = await self._ask.ask(question)
        except ModelError as exc:
            return Fill("no", error=f"{exc.kind}: {exc}")
        verdict, value = self._ask.choice(answer, "verdict", _VERDICTS), answer.input.get("value")
        raw = repr(answer.input)[:200]
        if verdict == "fills" and isinstance(value, str) and value.strip():
            return Fill("fills", value=value.strip(), raw=raw)
        if verdict == "no":
            return Fill("no", raw=raw)
        return Fill("ambiguous", raw=raw)
