"""A session's turns extracted in one model call, when the worker fetched them together.

Every extraction call re-reads the ~4,400-token cached prefix; a subject's
turns that arrive in one fetch (a backlog, a burst, a replay) can share it.
:class:`WindowedExtractor` queues each observation's extraction for the rest
of the event loop's turn (:class:`~sinks.turn_batch.TurnBatch`): the worker
starts every observation of one poll in the same turn, so those are what it
sees. :func:`turn_batches` groups them: the turns of one subject and one
session whose ``observed_at`` falls in the same window of ``span`` (windows
counted from the epoch, not from the first turn), in the order the worker
started them (the log's), at most ``max_turns`` a call.

The boundary is chosen from the records themselves, never from a clock: a
turn is not held back for batch-mates that have not been fetched, so the
window costs no waiting, only a longer call. Two runs over the same log that
fetch it in different slices (a restart replaying from the last commit) can
only split a window's turns differently, never join turns of two windows.
Each turn's records are its own (its observation id, time, source and
candidate ids), whichever call read it. A call that fails for want of the
provider fails every turn of it, and each one's retry is batched again with
what is waiting then; an answer that cannot be used sends its turns back to
the model one by one, so that it costs only the turn that causes it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

from slotwise.models.exceptions import ModelError
from slotwise.sinks.turn_batch import TurnBatch, settle
from slotwise.streams.runtime.failures import is_transient
from slotwise.topics.records import CandidateFact, Command, Observation

__all__ = ["ExtractWindow", "TurnsExtractor", "WindowedExtractor", "turn_batches"]

Records = list[CandidateFact | Command]
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class TurnsExtractor(Protocol):
    """An extractor that reads several turns in one call (``models/extractor.py``)."""

    async def extract(self, observation: Observation) -> Sequence[CandidateFact | Command]: ...

    async def extract_turns(self, observations: Sequence[Observation]) -> list[Records]: ...


@dataclass(frozen=True, slots=True)
class ExtractWindow:
    """Turns observed within one ``span`` of each other share a call, ``max_turns`` at most."""

    span: timedelta
    max_turns: int

    def __post_init__(self) -> None:
        if self.span <= timedelta(0) or self.max_turns < 1:
            raise ValueError("a window needs a positive span and at least one turn")

    def of(self, observation: Observation) -> tuple[str, str | None, int]:
        """The window a turn belongs to: its subject, its session, its slice of time."""
        slice_ = (observation.observed_at - _EPOCH) // self.span
        return observation.subject_id, observation.session_id, slice_


def turn_batches(observations: Sequence[Observation], window: ExtractWindow) -> list[list[int]]:
    """The positions of ``observations`` grouped into calls, each in the given order.

    Calls come in the order of their first turn; a window's turns beyond
    ``max_turns`` start a new call.
    """
    open_calls: dict[tuple[str, str | None, int], list[int]] = {}
    calls: list[list[int]] = []
    for position, observation in enumerate(observations):
        key = window.of(observation)
        call = open_calls.get(key)
        if call is None or len(call) == window.max_turns:
            call = open_calls[key] = []
            calls.append(call)
        call.append(position)
    return calls


@dataclass(frozen=True, slots=True)
class _Ask:
    observation: Observation
    reply: asyncio.Future[Records]


class WindowedExtractor:
    """An :class:`~processors.ports.Extractor` that batches turns as :func:`turn_batches` says."""

    def __init__(self, inner: TurnsExtractor, window: ExtractWindow) -> None:
        self._inner = inner
        self._window = window
        self._batch: TurnBatch[_Ask] = TurnBatch(
            self._calls, self._send, name="slotwise-extract-window"
        )

    async def extract(self, observation: Observation) -> Sequence[CandidateFact | Command]:
        if not observation.text.strip():
            return await self._inner.extract(observation)  # nothing to ask about
        reply: asyncio.Future[Records] = asyncio.get_running_loop().create_future()
        self._batch.put(_Ask(observation, reply))
        return await reply

    def _calls(self, asks: list[_Ask]) -> Iterator[list[_Ask]]:
        for positions in turn_batches([a.observation for a in asks], self._window):
            yield [asks[p] for p in positions]

    async def _send(self, asks: list[_Ask]) -> None:
        try:
            found = await self._inner.extract_turns([a.observation for a in asks])
        except ModelError as exc:
            if len(asks) == 1 or is_transient(exc):
                _fail(asks, exc)
                return
            # An answer the model gave but that cannot be used (malformed, refused) is
            # dead-lettered with its turn: each turn is asked alone, so that only the
            # turn that causes it is, as with a call per turn.
            await asyncio.gather(*(self._alone(ask) for ask in asks))
            return
        except BaseException as exc:
            _fail(asks, exc)
            if not isinstance(exc, Exception):
                raise
            return
        for ask, records in zip(asks, found, strict=True):
            if not ask.reply.done():  # its caller may have been cancelled meanwhile
                ask.reply.set_result(records)

    async def _alone(self, ask: _Ask) -> None:
        try:
            records = await self._inner.extract(ask.observation)
        except BaseException as exc:
            _fail([ask], exc)
            if not isinstance(exc, Exception):
                raise
            return
        if not ask.reply.done():
            ask.reply.set_result(list(records))


def _fail(asks: Sequence[_Ask], exc: BaseException) -> None:
    for ask in asks:
        settle(ask.reply, exc)
