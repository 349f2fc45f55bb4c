"""Revalidation by the model: does a derived memory still follow from its sources?

One forced ``revalidate`` call per flagged fact (``needs_revalidation``: a fact
it was derived from was superseded). The model sees the derived memory and its
sources as they stand now, numbered, never ids, and answers ``keep`` (the
claim still follows), ``rewrite`` with the claim in new words, or ``unsure``
(a person decides). Anything else counts as unsure, and as a malformed answer.
"""

from __future__ import annotations

from collections.abc import Sequence

from slotwise.models.exceptions import ModelError
from slotwise.models.forced_tool import ForcedTool
from slotwise.models.llm import ModelClient
from slotwise.models.prompt import REVALIDATE, memory_prefix
from slotwise.processors.provenance import Rederivation
from slotwise.processors.schema import AttributeSchema
from slotwise.topics.records import Fact

__all__ = ["PURPOSE", "TOOL_NAME", "AnthropicRederiver"]

TOOL_NAME = REVALIDATE
PURPOSE = "rederive"
_VERDICTS = ("keep", "rewrite", "unsure")


class AnthropicRederiver:
    """The :class:`~slotwise.processors.provenance.Rederiver` backed by the model."""

    def __init__(
        self, client: ModelClient, schema: AttributeSchema | None = None, *, max_tokens: int = 256
    ) -> None:
        self._ask = ForcedTool(
            client,
            kind=PURPOSE,
            prefix=memory_prefix(schema or AttributeSchema.load()),
            tool=TOOL_NAME,
            max_tokens=max_tokens,
        )

    async def rederive(self, derived: Fact, sources: Sequence[Fact]) -> Rederivation:
        listing = "\n".join(f"  {i}. {s.text}" for i, s in enumerate(sources, start=1))
        question = (
            f'Derived memory:\n  "{derived.text}"\n\nIts sources now:\n{listing}\n\n'
            "Does the derived memory still follow from them?"
        )
        try:
            answer = await self._ask.ask(question)
        except ModelError as exc:
            return Rederivation("unsure", error=f"{exc.kind}: {exc}")
        verdict, text = self._ask.choice(answer, "verdict", _VERDICTS), answer.input.get("text")
        raw = repr(answer.input)[:200]
        if verdict == "keep":
            return Rederivation("keep", raw=raw)
        if verdict == "rewrite" and isinstance(text, str) and text.strip():
            return Rederivation("rewrite", text=text.strip(), raw=raw)
        return Rederivation("unsure", raw=raw)
