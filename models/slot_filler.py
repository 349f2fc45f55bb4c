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

from anthropic.types import TextBlockParam, ToolParam

from slotwise.models.exceptions import ModelError
from slotwise.models.llm import ModelClient
from slotwise.processors.reslot import Fill
from slotwise.processors.schema import AttributeSpec
from slotwise.topics.records import Fact

__all__ = ["PURPOSE", "TOOL_NAME", "AnthropicSlotFiller"]

TOOL_NAME = "fill_attribute"
PURPOSE = "reslot"

_SYSTEM = """\
You keep an AI assistant's long-term memory about one person, "the user". Its
vocabulary of attributes has grown, and memories stored as free text before may
state one of the new attributes. For the memory shown, decide whether it states
the user's value of the named attribute.

Call fill_attribute exactly once: "fills" with the value when the memory states
it plainly, "no" when it does not state it (a related topic is not enough), and
"ambiguous" when it might but a person should decide (hedged, several values,
about someone else).
"""

_TOOL: ToolParam = {
    "name": TOOL_NAME,
    "description": "Say whether the memory states the attribute, and its value.",
    "input_schema": {
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": ["fills", "no", "ambiguous"]},
            "value": {"type": ["string", "null"], "description": "The value, for fills."},
        },
        "required": ["verdict"],
    },
}


class AnthropicSlotFiller:
    """The :class:`~slotwise.processors.reslot.SlotFiller` backed by the model."""

    def __init__(self, client: ModelClient, *, max_tokens: int = 128) -> None:
        self._client = client
        self._max_tokens = max_tokens
        self._system: list[TextBlockParam] = [
            {"type": "text", "text": _SYSTEM, "cache_control": {"type": "ephemeral"}}
        ]

    async def fill(self, fact: Fact, spec: AttributeSpec) -> Fill:
        question = (
            f'Memory about the user:\n  "{fact.text}"\n\n'
            f"Attribute: {spec.name} ({spec.cardinality}-valued) - {spec.description}\n\n"
            f"Does the memory state the user's {spec.name}?"
        )
        try:
            answer = await self._client.forced_tool(
                PURPOSE,
                system=self._system,
                question=question,
                tool=_TOOL,
                max_tokens=self._max_tokens,
            )
        except ModelError as exc:
            return Fill("no", error=f"{exc.kind}: {exc}")
        verdict, value = answer.get("verdict"), answer.get("value")
        raw = repr(answer)[:200]
        if verdict == "fills" and isinstance(value, str) and value.strip():
            return Fill("fills", value=value.strip(), raw=raw)
        if verdict == "no":
            return Fill("no", raw=raw)
        if verdict not in ("fills", "ambiguous"):
            self._client.note_malformed(PURPOSE)
        return Fill("ambiguous", raw=raw)
