"""Extraction by the model: one forced ``record_facts`` tool call per observation,
or one per run of a session's turns (:meth:`AnthropicExtractor.extract_turns`).

The fixed part of the prompt is the prefix every model call shares
(:mod:`models.prompt`: instructions, the attribute vocabulary, the tools),
cached; the per-call part is the observation's time, speaker and text, or
several turns', numbered. Each turn's records carry its own observation id,
time and source, whichever call read it. Given the subject's store, the per-call
part opens with the subject's current facts, and each free-text fact carries
extraction's answer to its slot question (:mod:`models.incumbents`).

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

import json
import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from prometheus_client import Counter
from pydantic import ValidationError

from slotwise.models.exceptions import MalformedOutput
from slotwise.models.forced_tool import ForcedTool, ToolAnswer
from slotwise.models.incumbents import Incumbency, Incumbents, Listed
from slotwise.models.llm import ModelClient
from slotwise.models.prompt import (
    MAX_FACTS,
    MAX_TURNS,
    RECORD_FACTS,
    extraction_tool,
    memory_prefix,
    system_prompt,
)
from slotwise.processors.model import stable_id
from slotwise.processors.resolve import fact_id_for
from slotwise.processors.schema import AttributeSchema
from slotwise.topics.records import CandidateFact, Command, Observation

__all__ = [
    "TOOL_NAME",
    "AnthropicExtractor",
    "erase_commands",
    "extraction_tool",
    "render_turns",
    "system_prompt",
]

TOOL_NAME = RECORD_FACTS
PURPOSE = "extract"
MAX_TEXT_CHARS = 1_000

FACT_ITEMS = Counter(
    "slotwise_llm_fact_items_total",
    "Items of extraction output, by what validation did with them",
    ["outcome"],
)


class AnthropicExtractor:
    """The :class:`~processors.ports.Extractor` backed by the model.

    With an ``incumbency``, a call lists the subject's facts it names and answers
    each free-text fact's slot question; without, the cascade asks it.
    """

    def __init__(
        self,
        client: ModelClient,
        schema: AttributeSchema,
        *,
        max_tokens: int = 1024,
        incumbency: Incumbency | None = None,
    ) -> None:
        self._schema = schema
        self._incumbency = incumbency
        self._ask = ForcedTool(
            client,
            kind=PURPOSE,
            prefix=memory_prefix(schema),
            tool=TOOL_NAME,
            max_tokens=max_tokens,
        )

    async def extract(self, observation: Observation) -> list[CandidateFact | Command]:
        return (await self.extract_turns([observation]))[0]

    async def extract_turns(
        self, observations: Sequence[Observation]
    ) -> list[list[CandidateFact | Command]]:
        """Each observation's records, the turns with text read in one call.

        One turn is asked as :meth:`extract` always did; several are numbered, and
        each item of the answer goes to the turn its ``turn`` names (an item naming
        no turn of the call is dropped: it belongs to none).
        """
        spoken = [i for i, o in enumerate(observations) if o.text.strip()]
        if len(spoken) > MAX_TURNS:
            raise ValueError(f"{len(spoken)} turns in one call; at most {MAX_TURNS}")
        if self._incumbency is None:
            return await self._turns(observations, spoken, None)
        async with self._incumbency.extraction([observations[i] for i in spoken]) as listed:
            found = await self._turns(observations, spoken, listed)
            for observation, records in zip(observations, found, strict=True):
                facts = [
                    Listed(fact_id_for(r), r.text) for r in records if isinstance(r, CandidateFact)
                ]
                self._incumbency.emitted(observation.subject_id, facts)
            return found

    async def _turns(
        self, observations: Sequence[Observation], spoken: list[int], listed: Incumbents | None
    ) -> list[list[CandidateFact | Command]]:
        answers: dict[int, tuple[list[Any], list[Any]]] = {}
        context = listed.render() if listed is not None else ""
        if len(spoken) == 1:
            answers[spoken[0]] = await self._facts(_render(observations[spoken[0]]), context)
        elif spoken:
            question = render_turns([observations[i] for i in spoken])
            items, erase = await self._facts(question, context, len(spoken))
            answers = dict(zip(spoken, _by_turn(len(spoken), items, erase), strict=True))
        return [
            self._records(o, *answers.get(i, ([], [])), listed) for i, o in enumerate(observations)
        ]

    def _records(
        self,
        observation: Observation,
        items: list[Any],
        erase: list[Any],
        listed: Incumbents | None,
    ) -> list[CandidateFact | Command]:
        commands = erase_commands(observation, erase, self._schema)
        if commands:
            return list(commands)  # a request of the memory is never also a new fact
        if len(items) > MAX_FACTS:
            FACT_ITEMS.labels("dropped").inc(len(items) - MAX_FACTS)
        found = [
            (candidate, item)
            for i, item in enumerate(items[:MAX_FACTS])
            if (candidate := self._candidate(observation, i, item)) is not None
        ]
        if listed is None:
            return [candidate for candidate, _ in found]
        turn = [fact_id_for(candidate) for candidate, _ in found]
        return [_matched(candidate, item, listed, turn) for candidate, item in found]

    async def _facts(
        self, question: str, context: str, turns: int = 1
    ) -> tuple[list[Any], list[Any]]:
        malformed_retries = 1
        while True:
            try:
                answer = await self._ask.ask(question, answers=turns, context=context)
                return self._facts_list(answer)
            except MalformedOutput:
                if malformed_retries == 0:
                    raise
                malformed_retries -= 1

    def _facts_list(self, answer: ToolAnswer) -> tuple[list[Any], list[Any]]:
        try:
            return _facts_list(answer)
        except MalformedOutput:
            self._ask.malformed()
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


def _matched(
    candidate: CandidateFact, item: Any, listed: Incumbents, turn: Sequence[str]
) -> CandidateFact:
    """The candidate with extraction's answer to its slot question, when it has one.

    Only a free-text fact has the question: a slotted one is decided by the key.
    """
    if candidate.attribute is not None:
        return candidate
    own = fact_id_for(candidate)
    match = listed.match(item, [fact_id for fact_id in turn if fact_id != own])
    if match is None:
        return candidate
    return candidate.model_copy(update={"incumbent_match": match})


def _render(observation: Observation) -> str:
    at = observation.observed_at
    return (
        f"Observation time: {at.isoformat()} ({at.strftime('%A')})\n"
        f"Speaker: {observation.speaker}\n"
        f"Message:\n{observation.text}"
    )


def render_turns(observations: Sequence[Observation]) -> str:
    """Several turns, numbered from 1, a line each, the message one JSON string.

    JSON keeps a message on its line: a message containing a line that looks like
    the next turn cannot pass for one. One line a turn is also what keeps the part
    of the prompt billed at the full rate short.
    """
    lines = [
        f"Turn {number}. {o.observed_at.isoformat()} ({o.observed_at.strftime('%A')}), "
        f"{o.speaker}: {json.dumps(o.text, ensure_ascii=False)}"
        for number, o in enumerate(observations, start=1)
    ]
    head = f"{len(observations)} consecutive turns (number. observation time, speaker: message):"
    return "\n".join((head, *lines))


def _by_turn(turns: int, items: list[Any], erase: list[Any]) -> list[tuple[list[Any], list[Any]]]:
    """The answer's facts and erase items, per turn, by the number each names."""
    per_turn: list[tuple[list[Any], list[Any]]] = [([], []) for _ in range(turns)]
    for kind, found in ((0, items), (1, erase)):
        for item in found:
            turn = item.get("turn") if isinstance(item, dict) else None
            if isinstance(turn, bool) or not isinstance(turn, int) or not 1 <= turn <= turns:
                if kind == 0:
                    FACT_ITEMS.labels("dropped").inc()
                continue
            per_turn[turn - 1][kind].append(item)
    return per_turn


def _facts_list(answer: ToolAnswer) -> tuple[list[Any], list[Any]]:
    if not answer.called:
        raise MalformedOutput(f"the model did not call {TOOL_NAME} (stop: {answer.stop_reason})")
    facts = answer.input.get("facts")
    if not isinstance(facts, list):
        raise MalformedOutput(f"{TOOL_NAME} input has no 'facts' list")
    erase = answer.input.get("erase")
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
