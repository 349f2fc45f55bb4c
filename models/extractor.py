"""Extraction by the model: one forced ``record_facts`` tool call per observation.

The fixed part of the prompt (instructions, the attribute vocabulary, the tool)
is identical for every call and marked for prompt caching; the per-call part
is the observation's time, speaker and text.

The tool's output is validated item by item, because one bad item should not
cost the others:

* an item that is not an object, has no usable ``text``, or has a field of the
  wrong type (a list for ``value``, a string for ``confidence``…) is dropped;
* an ``attribute`` outside the vocabulary, or a known attribute with no value,
  becomes ``attribute=None``: the fact is kept and takes the vector and
  slot-match path, which is where facts the schema cannot place belong. The
  exact key join must never act on a key the vocabulary does not define;
* an unparseable ``valid_from`` becomes None (the observation time applies).

An output that is not a ``record_facts`` call with a ``facts`` list at all is
malformed: the call is made once more, then :class:`MalformedOutput` propagates.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from anthropic.types import Message, MessageParam, TextBlockParam, ToolParam
from prometheus_client import Counter
from pydantic import ValidationError

from slotwise.models.exceptions import MalformedOutput
from slotwise.models.llm import ModelClient
from slotwise.processors.model import stable_id
from slotwise.processors.schema import AttributeSchema
from slotwise.topics.records import CandidateFact, Command, Observation

__all__ = [
    "TOOL_NAME",
    "AnthropicExtractor",
    "erase_commands",
    "extraction_tool",
    "system_prompt",
]

TOOL_NAME = "record_facts"
PURPOSE = "extract"
MAX_FACTS = 20
MAX_TEXT_CHARS = 1_000

FACT_ITEMS = Counter(
    "slotwise_llm_fact_items_total",
    "Items of extraction output, by what validation did with them",
    ["outcome"],
)

_INSTRUCTIONS = """\
You maintain the long-term memory of an AI assistant about one person, "the user".
Each request shows one message from a conversation with the time it was sent.
Record the durable facts the message states about the user by calling record_facts
exactly once. If there is nothing to record, call it with an empty list.

Rules:
- Only facts about the user themself. A fact about someone else is not a fact about
  the user ("my sister lives in Paris" records nothing; "I have a sister" does).
- Nothing for questions, requests, hypotheticals, wishes, jokes, quotes, or what the
  user may do ("I might move to Berlin" records nothing). Firm plans count
  ("I start at Stripe on Monday" records the new employer, valid from that Monday).
- If the speaker is not the user, record only what it reports the user saying.
- text: one short, self-contained, third-person sentence that starts with "User"
  ("User works at Stripe."). Never "I" or "you".
- attribute: the vocabulary name below when the fact fills exactly that slot,
  otherwise null. Never invent a name.
- value: the slot's value, short and canonical ("Stripe", "Lisbon", "vegetarian"): one
  string, number or boolean, never a list. An attribute with several values
  (languages, allergies) is recorded as one fact per value. null when there is none.
- category: for a vocabulary attribute, its category; otherwise one lowercase word
  naming the topic (one of the vocabulary's categories when one fits).
- valid_from: when the fact became or becomes true, as ISO-8601 with a timezone.
  Resolve relative dates ("on Monday", "last March", "two years ago") against the
  observation time given in the message. null when the message does not say.
- confidence: how firmly the message states it (plain statement 0.9, hedged 0.5).
- importance: how useful the fact is for future conversations (0 to 1).
- stated_change: true when the user says the value changed or corrects it ("my email
  changed, it's ... now", "oops typo, it's ..."), otherwise false.
- erase: only when the user asks you to forget or delete what they told you ("forget
  where I live", "delete everything you know about me"): one item per thing to forget,
  with the vocabulary attribute it names, or everything true (and attribute null) for an
  explicit request to forget everything about them; then facts is empty. Nothing for
  "I forgot my password", "forget it, never mind", calendar entries, files, drafts.

Examples (observation time 2026-03-14T10:00:00+00:00, a Saturday):
- "I start at Stripe on Monday." -> employer "Stripe", valid_from 2026-03-16,
  text "User works at Stripe."
- "We moved to Porto last month, my wife and I." -> home_city "Porto", valid_from
  2026-02-01, text "User lives in Porto."; and "User is married." (relationship_status).
- "My sister lives in Paris." -> a fact about the sister only: record nothing unless
  the message also says something about the user ("User has a sister.").
- "Should I learn Rust?" / "If I were vegan I'd..." / "Maybe I'll quit." -> nothing.
- "I speak Portuguese and Spanish." -> two facts, languages "Portuguese" and
  languages "Spanish".
- "I'm allergic to peanuts, by the way" -> allergies "peanuts", confidence 0.9.
"""


def system_prompt(schema: AttributeSchema) -> str:
    """Instructions and vocabulary: the fixed, cacheable part of every extraction call."""
    lines = [
        f"- {spec.name} ({spec.cardinality} value{'s' if spec.cardinality == 'many' else ''}; "
        f"category {spec.category}): {spec.description}"
        for spec in schema
    ]
    return f"{_INSTRUCTIONS}\nAttribute vocabulary (version {schema.version}):\n" + "\n".join(lines)


def extraction_tool(schema: AttributeSchema) -> ToolParam:
    names: list[str | None] = [spec.name for spec in schema]
    item = {
        "type": "object",
        "properties": {
            "attribute": {"type": ["string", "null"], "enum": [*names, None]},
            "value": {"type": ["string", "number", "boolean", "null"]},
            "text": {"type": "string", "description": "Third-person sentence starting 'User'."},
            "category": {"type": ["string", "null"]},
            "valid_from": {"type": ["string", "null"], "description": "ISO-8601 or null."},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "importance": {"type": "number", "minimum": 0, "maximum": 1},
        },
        "required": [
            "attribute",
            "value",
            "text",
            "category",
            "valid_from",
            "confidence",
            "importance",
        ],
    }
    item["properties"]["stated_change"] = {"type": "boolean"}  # type: ignore[index]
    erase = {
        "type": "object",
        "properties": {
            "attribute": {"type": ["string", "null"], "enum": [*names, None]},
            "everything": {"type": "boolean"},
            "quote": {"type": "string", "description": "The user's words asking for it."},
        },
        "required": ["attribute", "everything", "quote"],
    }
    return {
        "name": TOOL_NAME,
        "description": "Record the facts the message states about the user (possibly none), "
        "or what the user asks you to forget.",
        "input_schema": {
            "type": "object",
            "properties": {
                "facts": {"type": "array", "items": item, "maxItems": MAX_FACTS},
                "erase": {"type": "array", "items": erase, "maxItems": MAX_FACTS},
            },
            "required": ["facts"],
        },
    }


class AnthropicExtractor:
    """The :class:`~processors.ports.Extractor` backed by the model."""

    def __init__(
        self, client: ModelClient, schema: AttributeSchema, *, max_tokens: int = 1024
    ) -> None:
        self._client = client
        self._schema = schema
        self._max_tokens = max_tokens
        self._system: list[TextBlockParam] = [
            {
                "type": "text",
                "text": system_prompt(schema),
                "cache_control": {"type": "ephemeral"},
            }
        ]
        self._tools = [extraction_tool(schema)]

    async def extract(self, observation: Observation) -> list[CandidateFact | Command]:
        if not observation.text.strip():
            return []
        items, erase = await self._facts([{"role": "user", "content": _render(observation)}])
        commands = erase_commands(observation, erase, self._schema)
        if commands:
            return list(commands)  # a request of the memory is never also a new fact
        if len(items) > MAX_FACTS:
            FACT_ITEMS.labels("dropped").inc(len(items) - MAX_FACTS)
        candidates = (
            self._candidate(observation, i, item) for i, item in enumerate(items[:MAX_FACTS])
        )
        return [c for c in candidates if c is not None]

    async def _facts(self, messages: list[MessageParam]) -> tuple[list[Any], list[Any]]:
        malformed_retries = 1
        while True:
            try:
                reply = await self._client.create(
                    PURPOSE,
                    system=self._system,
                    messages=messages,
                    max_tokens=self._max_tokens,
                    tools=self._tools,
                    tool_choice={"type": "tool", "name": TOOL_NAME},
                )
                return self._facts_list(reply)
            except MalformedOutput:
                if malformed_retries == 0:
                    raise
                malformed_retries -= 1

    def _facts_list(self, reply: Message) -> tuple[list[Any], list[Any]]:
        try:
            return _facts_list(reply)
        except MalformedOutput:
            self._client.note_malformed(PURPOSE)
            raise

    def _candidate(self, observation: Observation, i: int, item: Any) -> CandidateFact | None:
        fields = _typed_fields(item)
        if fields is None:
            FACT_ITEMS.labels("dropped").inc()
            return None
        attribute, value, text, category, valid_from, confidence, importance = fields
        stated_change = item.get("stated_change") is True
        spec = self._schema.get(attribute)
        if spec is None or value is None:
            outcome = "kept" if attribute is None else "demoted"
            attribute = None
        else:
            outcome = "kept"
            category = spec.category
        try:
            candidate = CandidateFact(
                schema="candidate/1",
                candidate_id=stable_id("llm", observation.observation_id, str(i)),
                subject_id=observation.subject_id,
                attribute=attribute,
                value=value,
                text=text,
                category=category,
                observed_at=observation.observed_at,
                valid_from=_instant(valid_from, observation.observed_at),
                source=observation.source,
                confidence=0.8 if confidence is None else confidence,
                importance=0.5 if importance is None else importance,
                observation_id=observation.observation_id,
                stated_change=stated_change,
            )
        except ValidationError:
            FACT_ITEMS.labels("dropped").inc()
            return None
        FACT_ITEMS.labels(outcome).inc()
        return candidate


def _render(observation: Observation) -> str:
    at = observation.observed_at
    return (
        f"Observation time: {at.isoformat()} ({at.strftime('%A')})\n"
        f"Speaker: {observation.speaker}\n"
        f"Message:\n{observation.text}"
    )


def _facts_list(reply: Message) -> tuple[list[Any], list[Any]]:
    calls = [b for b in reply.content if b.type == "tool_use" and b.name == TOOL_NAME]
    if not calls:
        raise MalformedOutput(f"the model did not call {TOOL_NAME} (stop: {reply.stop_reason})")
    arguments: object = calls[0].input
    facts = arguments.get("facts") if isinstance(arguments, dict) else None
    if not isinstance(facts, list):
        raise MalformedOutput(f"{TOOL_NAME} input has no 'facts' list")
    erase = arguments.get("erase") if isinstance(arguments, dict) else None
    # A malformed erase list is no request at all: an erase destroys, so it must be clear.
    return facts, erase if isinstance(erase, list) else []


def erase_commands(
    observation: Observation, items: list[Any], schema: AttributeSchema
) -> tuple[Command, ...]:
    """The erase commands of the tool's ``erase`` items, read strictly.

    An item names a vocabulary attribute, or says ``everything`` with no attribute;
    anything else (an unknown attribute, both, neither, a wrong type) drops the whole
    request, since a half-understood erase is the one output that cannot be undone.
    """
    wanted: list[str | None] = []
    for item in items[:MAX_FACTS]:
        if not isinstance(item, dict):
            return ()
        attribute, everything = item.get("attribute"), item.get("everything", False)
        if not isinstance(everything, bool) or not isinstance(attribute, str | None):
            return ()
        if everything == (attribute is not None) or (
            attribute is not None and schema.get(attribute) is None
        ):
            return ()
        if attribute not in wanted:
            wanted.append(attribute)
    quote = next(
        (
            str(i["quote"])[:200]
            for i in items
            if isinstance(i, dict) and isinstance(i.get("quote"), str)
        ),
        observation.text[:200],
    )
    if None in wanted:
        wanted = [None]
    return tuple(
        Command(
            schema="command/1",
            command_id=stable_id("erase", observation.observation_id, str(i)),
            subject_id=observation.subject_id,
            command="erase",
            issued_at=observation.observed_at,
            observation_id=observation.observation_id,
            reason=quote,
            attribute=attribute,
        )
        for i, attribute in enumerate(wanted)
    )


_Fields = tuple[
    str | None,
    str | int | float | bool | None,
    str,
    str | None,
    str | None,
    float | None,
    float | None,
]


class _Invalid(ValueError):
    """The item has a field of the wrong type: drop it."""


def _typed_fields(item: Any) -> _Fields | None:
    """The item's fields with their types checked, or None when the item must be dropped."""
    if not isinstance(item, dict):
        return None
    text = item.get("text")
    attribute, category, valid_from = (item.get(k) for k in ("attribute", "category", "valid_from"))
    value = item.get("value")
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_TEXT_CHARS:
        return None
    if not all(isinstance(v, str | None) for v in (attribute, category, valid_from)):
        return None
    if not isinstance(value, str | int | float | bool | None) or (
        isinstance(value, float) and not math.isfinite(value)
    ):
        return None
    try:
        confidence, importance = _unit(item.get("confidence")), _unit(item.get("importance"))
    except _Invalid:
        return None
    if isinstance(value, str):
        value = value.strip() or None
    category = (category or "").strip().lower() or None
    return (attribute or None, value, text.strip(), category, valid_from, confidence, importance)


def _unit(score: Any) -> float | None:
    """A 0..1 score, clamped; None when absent."""
    if score is None:
        return None
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        raise _Invalid(f"score {score!r} is not a number")
    return min(1.0, max(0.0, float(score)))


def _instant(value: str | None, observed_at: datetime) -> datetime | None:
    """An ISO date or time; a date or a naive time is read in the observation's zone."""
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=observed_at.tzinfo)
    return parsed
