"""Script calls of concurrent records, sent to Redis together as one pipeline.

The worker decides records of different subjects concurrently, and each one's
read and its write are one Lua script call. Sent one by one, every call paid its
own connection checkout, socket write and reply wait: with a thousand records in
flight, redis-py's per-command path and the write syscalls under it were a
quarter of the worker's CPU (docs/performance.md). A :class:`ScriptBatch`
collects the calls issued in one turn of the event loop and sends them in one
non-transactional pipeline. Redis runs each script atomically whatever else the
pipeline holds, so batching changes when a call is sent, never what it does:
a call whose script fails fails alone, and a lost connection fails every call
of its pipeline, as it would have failed each of them.

One subject's calls are never in one batch together: the worker issues a
subject's next call only after the reply to its last one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError

from slotwise.sinks.turn_batch import TurnBatch, settle

__all__ = ["ScriptBatch"]


@dataclass(frozen=True, slots=True)
class _Call:
    script: AsyncScript
    keys: Sequence[Any]
    args: Sequence[Any]
    reply: asyncio.Future[Any]


class ScriptBatch:
    """Sends the script calls of one event-loop turn as pipelines of at most ``max_calls``."""

    def __init__(self, client: aioredis.Redis, *, max_calls: int = 256) -> None:
        if max_calls < 1:
            raise ValueError("max_calls must be at least 1")
        self._client = client
        self._turn = TurnBatch(
            lambda calls: (calls[i : i + max_calls] for i in range(0, len(calls), max_calls)),
            self._pipeline,
            name="slotwise-redis-batch",
        )

    async def call(self, script: AsyncScript, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        """The script's reply, as ``script(keys=keys, args=args)`` would return it."""
        reply: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._turn.put(_Call(script, keys, args, reply))
        return await reply

    async def _pipeline(self, calls: list[_Call]) -> None:
        try:
            async with self._client.pipeline(transaction=False) as pipe:
                for call in calls:
                    pipe.evalsha(call.script.sha, len(call.keys), *call.keys, *call.args)
                replies = await pipe.execute(raise_on_error=False)
        except BaseException as exc:
            for call in calls:
                settle(call.reply, exc)
            if not isinstance(exc, Exception):
                raise
            return
        for call, reply in zip(calls, replies, strict=True):
            if isinstance(reply, NoScriptError):
                # The server lost its scripts (a restart, a failover): the script's own
                # call loads it and runs it again; the others of the batch then find it.
                await self._alone(call)
            elif isinstance(reply, Exception):
                settle(call.reply, reply)
            elif not call.reply.done():
                call.reply.set_result(reply)

    async def _alone(self, call: _Call) -> None:
        try:
            reply = await call.script(keys=call.keys, args=call.args)
        except Exception as exc:
            settle(call.reply, exc)
        else:
            if not call.reply.done():
                call.reply.set_result(reply)
