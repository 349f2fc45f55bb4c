"""The one way a model adapter asks the model: a question answered through a forced tool.

Every adapter (extraction, slot matching, re-slotting, re-derivation) sends the
shared cached prefix (:mod:`models.prompt`), one user turn with its question,
and forces its own tool. This is also where every answered call's ``usage`` is
counted (:mod:`models.usage`) under the adapter's call kind, and where an
answer the adapter cannot use is counted as malformed, so no adapter can
forget either.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass, field

from anthropic.types import Message, TextBlockParam

from slotwise.models.llm import ModelClient
from slotwise.models.pricing import card
from slotwise.models.prompt import Prefix
from slotwise.models.usage import Usage, record

__all__ = ["ForcedTool", "ToolAnswer"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ToolAnswer:
    """What the model answered: the tool's input when it called the tool, else its text."""

    called: bool
    input: dict[str, object] = field(default_factory=dict)
    text: str = ""
    stop_reason: str | None = None
    usage: Usage = field(default_factory=Usage)


class ForcedTool:
    """Ask questions of ``kind`` through the tool named ``tool`` of ``prefix``."""

    def __init__(
        self, client: ModelClient, *, kind: str, prefix: Prefix, tool: str, max_tokens: int
    ) -> None:
        if tool not in {t["name"] for t in prefix.tools}:
            raise ValueError(f"the prefix has no tool {tool!r}")
        self._client = client
        self._prefix = prefix
        self.kind = kind
        self.tool = tool
        self._max_tokens = max_tokens
        floor = card(client.model).min_cacheable_tokens
        if prefix.estimated_tokens() < floor:
            # The API ignores the breakpoint then, silently: every call pays the whole prompt.
            log.warning(
                "the prompt prefix (~%d tokens) is under %s's cache floor of %d: %s calls "
                "will not be cached",
                prefix.estimated_tokens(), client.model, floor, kind,
            )  # fmt: skip

    async def ask(self, question: str, *, answers: int = 1, context: str = "") -> ToolAnswer:
        """One call; raises a :class:`~models.exceptions.ModelError` when there is no answer.

        ``answers``: how many questions the call asks at once (several turns read
        together), each given the adapter's ``max_tokens``; so many separate calls
        would have reserved as many. ``context`` opens the user turn as a block of
        its own, cached too: one subject's stored facts, the same bytes on its next
        calls until they change, are then read back at the cache rate (a second
        breakpoint after the shared prefix's, which is read as before).
        """
        content: str | list[TextBlockParam] = question
        if context:
            content = [
                {"type": "text", "text": context, "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": question},
            ]
        reply = await self._client.create(
            self.kind,
            system=self._prefix.system,
            messages=[{"role": "user", "content": content}],
            max_tokens=self._max_tokens * answers,
            tools=self._prefix.tools,
            tool_choice={"type": "tool", "name": self.tool},
        )
        return self._answer(reply, record(self.kind, reply.usage))

    def choice(self, answer: ToolAnswer, key: str, allowed: Collection[str]) -> str | None:
        """``answer``'s ``key`` when it is one of ``allowed``; None, counted malformed, if not."""
        value = answer.input.get(key)
        if isinstance(value, str) and value in allowed:
            return value
        self.malformed()
        return None

    def malformed(self) -> None:
        """The model answered, but not in a shape the adapter can use."""
        self._client.note_malformed(self.kind)

    def _answer(self, reply: Message, usage: Usage) -> ToolAnswer:
        for block in reply.content:
            if block.type == "tool_use" and block.name == self.tool:
                arguments = block.input
                return ToolAnswer(
                    called=True,
                    input=dict(arguments) if isinstance(arguments, dict) else {},
                    stop_reason=reply.stop_reason,
                    usage=usage,
                )
        text = " ".join(b.text for b in reply.content if b.type == "text").strip()
        return ToolAnswer(called=False, text=text, stop_reason=reply.stop_reason, usage=usage)
