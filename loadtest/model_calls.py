"""The worker's CPU per model call, the network and the model left out.

    python -m slotwise.loadtest.model_calls [--calls 1500] [--rounds 21]

Runs extraction calls (:class:`models.extractor.AnthropicExtractor`, the
worker's own prompt, tool and parsing) over the ``anthropic`` SDK whose HTTP
client answers from memory with one canned ``record_facts`` reply, and reports
the process CPU per call, median of the rounds (min-max). Two request paths
are timed in shuffled order each round, so that drift on a shared machine
falls on both:

* ``plain SDK`` — ``messages.create`` called as the SDK documents it, on a
  client built with the SDK's defaults;
* ``ModelClient`` — what the worker runs (``ModelClient.connect``'s SDK
  options, and its reading of the reply).

The cascade scenario measures the same code under load, among everything
else the worker does; this isolates the per-call part, which at one or two
tenths of a millisecond is below the cascade's run-to-run spread.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import random
import statistics
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

import anthropic
import httpx2
from anthropic.types import Message
from pydantic import SecretStr

from slotwise.models.extractor import AnthropicExtractor
from slotwise.models.llm import ModelClient, ModelRequest
from slotwise.processors.schema import AttributeSchema
from slotwise.topics.records import Observation

__all__ = ["main", "measure"]

_REPLY = json.dumps(
    {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5",
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 1_900,
            "output_tokens": 60,
            "cache_read_input_tokens": 1_800,
            "cache_creation_input_tokens": 0,
        },
        "content": [
            {
                "type": "tool_use",
                "id": "toolu_bench",
                "name": "record_facts",
                "input": {
                    "facts": [
                        {
                            "attribute": "home_city",
                            "value": "Lisbon",
                            "text": "User lives in Lisbon.",
                            "category": "home",
                            "valid_from": None,
                            "confidence": 0.9,
                            "importance": 0.7,
                            "stated_change": True,
                        }
                    ]
                },
            }
        ],
    }
).encode()

_BASE_URL = "http://model.invalid"
_MODEL = "claude-haiku-4-5"


def _answer(request: httpx2.Request) -> httpx2.Response:
    return httpx2.Response(200, content=_REPLY, headers={"content-type": "application/json"})


def _in_memory() -> httpx2.AsyncClient:
    # The SDK's own HTTP client class (httpx2) with a transport that never leaves
    # the process: what is timed is the SDK's and the worker's work per call.
    return httpx2.AsyncClient(transport=httpx2.MockTransport(_answer))


class _PlainSdk(ModelClient):
    """The reference: the SDK's ``messages.create`` and its own reply reading, on a
    client with the SDK's defaults; the retries, breaker and parsing are the worker's."""

    async def _send(self, purpose: str, request: ModelRequest) -> Message:
        return await self._client.messages.create(
            model=self.model,
            system=request.system,
            messages=request.messages,
            max_tokens=request.max_tokens,
            tools=request.tools,
            tool_choice=request.tool_choice,
        )


def _plain() -> ModelClient:
    sdk = anthropic.AsyncAnthropic(
        api_key="bench", base_url=_BASE_URL, max_retries=0, http_client=_in_memory()
    )
    return _PlainSdk(sdk, model=_MODEL)


def _worker() -> ModelClient:
    return ModelClient.connect(
        SecretStr("bench"), model=_MODEL, base_url=_BASE_URL, http_client=_in_memory()
    )


PATHS: dict[str, Callable[[], ModelClient]] = {"plain SDK": _plain, "ModelClient": _worker}


def _observations(count: int) -> list[Observation]:
    at = datetime(2024, 5, 1, 9, 30, tzinfo=UTC)
    return [
        Observation(observation_id=f"bench-{i}", subject_id="bench", speaker="user",
                    text=f"I moved to Lisbon last month, turn {i}.", observed_at=at)
        for i in range(count)
    ]  # fmt: skip


async def _cpu_per_call(make: Callable[[], ModelClient], turns: Sequence[Observation]) -> float:
    client = make()
    extractor = AnthropicExtractor(client, AttributeSchema.load())
    try:
        for turn in turns[:100]:  # the first calls build the SDK's caches
            await extractor.extract(turn)
        gc.collect()
        started = time.process_time()
        for turn in turns:
            found = await extractor.extract(turn)
        spent = time.process_time() - started
        if [c.value for c in found] != ["Lisbon"]:
            raise AssertionError(f"the canned reply read as {found!r}")
        return spent / len(turns) * 1e6
    finally:
        await client.aclose()


async def measure(calls: int, rounds: int, seed: int = 7) -> dict[str, list[float]]:
    """Microseconds of CPU per call, one figure per round, for each request path."""
    turns = _observations(calls)
    order = list(PATHS)
    shuffle = random.Random(seed).shuffle
    runs: dict[str, list[float]] = {name: [] for name in order}
    for _ in range(rounds):
        shuffle(order)
        for name in order:
            runs[name].append(await _cpu_per_call(PATHS[name], turns))
    return runs


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m slotwise.loadtest.model_calls")
    parser.add_argument("--calls", type=int, default=1_500, help="extraction calls per round")
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args(argv)
    runs = asyncio.run(measure(args.calls, args.rounds))
    reference = statistics.median(runs["plain SDK"])
    print(f"CPU per extraction call, median of {args.rounds} rounds of {args.calls} (min-max):")
    for name, figures in runs.items():
        median = statistics.median(figures)
        print(
            f"  {name:12s} {median:6.0f} us ({min(figures):.0f}-{max(figures):.0f})"
            f"  {median / reference:.2f} of the plain SDK"
        )


if __name__ == "__main__":
    main()
