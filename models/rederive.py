"""Revalidation by the model: does a derived memory still follow from its sources?

One forced ``revalidate`` call per flagged fact (``needs_revalidation``: a fact
it was derived from was superseded). The model sees the derived memory and its
sources as they stand now, numbered, never ids, and answers ``keep`` (the
claim still follows), ``rewrite`` with the claim in new words, or ``unsure``
(a person decides). Anything else counts as unsure.
"""

from __future__ import annotations

from collections.abc import Sequence

from anthropic.types import TextBlockParam, ToolParam

from slotwise.models.exceptions import ModelError
from slotwise.models.llm import ModelClient
from slotwise.processors.provenance import Rederivation
from slotwise.topics.records import Fact

__all__ = ["PURPOSE", "TOOL_NAME", "AnthropicRederiver"]

TOOL_NAME = "revalidate"
PURPOSE = "revalidate"

_SYSTEM = """\
You keep an AI assistant's long-term memory about one person, "the user". Some
memories were derived from others (a summary, an inference). One of the sources of
the derived memory shown has since been replaced by a newer fact. Given the sources
as they stand now, decide whether the derived memory still follows from them.

Call revalidate exactly once: "keep" when it still follows as written, "rewrite"
with the corrected memory (one sentence about the user) when it follows only in
other words, "unsure" when a person should decide.
"""

_TOOL: ToolParam = {
    "name": TOOL_NAME,
    "description": "Keep, rewrite or refer the derived memory.",
    "input_schema": {
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": ["keep", "rewrite", "unsure"]},
            "text": {"type": ["string", "null"], "description": "The memory, for rewrite."},
        },
        "required": ["verdict"],
    },
}


class AnthropicRederiver:
    """The :class:`~slotwise.processors.provenance.Rederiver` backed by the model."""

    def __init__(self, client: ModelClient, *, max_tokens: int = 256) -> None:
        self._client = client
        self._max_tokens = max_tokens
        self._system: list[TextBlockParam] = [
            {"type": "text", "text": _SYSTEM, "cache_control": {"type": "ephemeral"}}
        ]

    async def rederive(self, derived: Fact, sources: Sequence[Fact]) -> Rederivation:
        listing = "\n".join(f"  {i}. {s.text}" for i, s in enumerate(sources, start=1))
        question = (
            f'Derived memory:\n  "{derived.text}"\n\nIts sources now:\n{listing}\n\n'
            "Does the derived memory still follow from them?"
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
            return Rederivation("unsure", error=f"{exc.kind}: {exc}")
        verdict, text = answer.get("verdict"), answer.get("text")
        raw = repr(answer)[:200]
        if verdict == "keep":
            return Rederivation("keep", raw=raw)
        if verdict == "rewrite" and isinstance(text, str) and text.strip():
            return Rederivation("rewrite", text=text.strip(), raw=raw)
        return Rederivation("unsure", raw=raw)
