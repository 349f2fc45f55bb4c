"""Mem0 (``mem0ai``, open source) as the peer, on the same observations, model latency and embedder.

Mem0 is configured with its Anthropic provider pointed at the local fake
Messages API (``anthropic_base_url``), a local Qdrant collection (Qdrant's
embedded mode, in memory, under a work folder), its SQLite history in memory
and, in place of its own embedder, the same :class:`~processors.ports.Embedder`
slotwise uses. Its
telemetry is switched off before it is imported: nothing leaves the machine.

Mem0 2.x writes with one model call per ``add``: it shows the model the new
turn and the user's ten nearest memories and stores whatever the model
extracts (ADD only; near-identical texts are dropped by hash). The fake model
answers that call with :func:`responder`, a perfect extractor that keeps the
user's turn as one memory, so the comparison measures the write path, not a
model's recall. What Mem0 holds afterwards is judged against the workload's
truth by :func:`~loadtest.generator.contradictory_slots`: the single-valued
slots for which a user's current memories state two different values.

    python -m slotwise.loadtest.mem0_peer --subjects 50 --count 1000 --latency-ms 320

Run against a fake in its own process (as a remote model would be), start
``python -m slotwise.loadtest.fake_anthropic --port 8765
--responder slotwise.loadtest.mem0_peer:responder``
and pass ``--base-url http://127.0.0.1:8765``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.util
import os
import re
import threading
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from slotwise.loadtest.fake_anthropic import FakeAnthropic, Reply, Text, default_responder
from slotwise.loadtest.generator import Slot, WorkloadConfig, generate
from slotwise.loadtest.results import Figure, print_summary, write_result
from slotwise.loadtest.tally import Tally, contradictory_slots, tallied
from slotwise.models.embedders import DEFAULT_EMBEDDER, embedder_named
from slotwise.processors.ports import Embedder
from slotwise.processors.schema import AttributeSchema
from slotwise.streams.config import Settings
from slotwise.topics.codec import dumps
from slotwise.topics.exceptions import SlotwiseError
from slotwise.topics.records import Observation

__all__ = ["Mem0Run", "Mem0Unavailable", "mem0_installed", "responder", "run_mem0"]

_EXTRACTOR_MARKER = "Memory Extractor"
_NEW_MESSAGES = re.compile(r"## New Messages\n(?P<turns>.*?)\n\n## ", re.DOTALL)
_ROLE = re.compile(r"^(?:user|assistant|system):\s*", re.MULTILINE)
_MEMORIES_PER_USER = 10_000


class Mem0Unavailable(SlotwiseError, RuntimeError):
    """mem0ai is not installed, or would send telemetry off the machine."""


def responder(request: dict[str, Any]) -> Reply:
    """The fake model's answer to Mem0's extraction prompt: the new turn, kept as one memory.

    Any other request gets the fake server's default answer.
    """
    system = request.get("system")
    prompt = system if isinstance(system, str) else dumps(system).decode()
    if _EXTRACTOR_MARKER not in prompt:
        return default_responder(request)
    said = "\n".join(
        block.get("text", "") if isinstance(block, dict) else str(block)
        for message in request.get("messages", [])
        if message.get("role") == "user"
        for block in (
            message["content"]
            if isinstance(message.get("content"), list)
            else [{"text": message.get("content", "")}]
        )
    )
    found = _NEW_MESSAGES.search(said + "\n\n## ")
    turns = _ROLE.sub("", found["turns"]).strip() if found else ""
    memories = [{"text": turns}] if turns else []
    return Text(dumps({"memory": memories}).decode())


@dataclass(frozen=True, slots=True)
class Mem0Run:
    """One Mem0 pass: how fast it wrote, and what each user's memory holds afterwards."""

    writes: int
    failed: int
    elapsed_s: float
    memories: dict[str, list[str]] = field(repr=False)
    errors: Counter[str] = field(default_factory=Counter)

    @property
    def writes_per_s(self) -> float:
        return self.writes / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def contradictory_slots(self, tally: Tally) -> list[Slot]:
        return contradictory_slots(self.memories, tally)

    def figures(self, tally: Tally | None = None) -> list[Figure]:
        figures = [
            Figure("mem0 writes", self.writes, "observations"),
            Figure("mem0 failed writes", self.failed, "observations"),
            Figure("mem0 throughput", self.writes_per_s, "writes/s"),
            Figure("mem0 memories", sum(len(m) for m in self.memories.values()), "memories"),
        ]
        if tally is not None:
            changed = sum(1 for values in tally.stated.values() if len(values) > 1)
            figures += [
                Figure("slots whose value changed", changed, "slots"),
                Figure(
                    "mem0 slots with 2+ current values",
                    len(self.contradictory_slots(tally)),
                    "slots",
                ),
            ]
        return figures


def run_mem0(
    observations: Iterable[Observation],
    *,
    base_url: str,
    embedder: Embedder,
    workdir: Path,
    concurrency: int = 64,
    model: str = "claude-haiku-4-5",
) -> Mem0Run:
    """Add every observation to Mem0 (each user's in order, ``concurrency`` users at once)."""
    by_user: dict[str, list[Observation]] = {}
    for observation in observations:
        by_user.setdefault(observation.subject_id, []).append(observation)
    memory = _memory(base_url=base_url, embedder=embedder, workdir=workdir, model=model)
    try:
        return asyncio.run(_drive(memory, by_user, concurrency))
    finally:
        memory.close()
        memory.vector_store.client.close()


async def _drive(memory: Any, by_user: dict[str, list[Observation]], concurrency: int) -> Mem0Run:
    # Mem0's async API runs every blocking step in the default executor: size it to the load.
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(concurrency + 4))
    gate = asyncio.Semaphore(concurrency)
    errors: Counter[str] = Counter()

    async def user(turns: Sequence[Observation]) -> None:
        for turn in turns:
            async with gate:
                try:
                    await memory.add(
                        turn.text,
                        user_id=turn.subject_id,
                        metadata={"observed_at": turn.observed_at.isoformat()},
                    )
                except Exception as exc:  # a peer's failed write is counted, not fatal
                    errors[type(exc).__name__] += 1

    started = time.monotonic()
    await asyncio.gather(*(user(turns) for turns in by_user.values()))
    elapsed = time.monotonic() - started
    memories: dict[str, list[str]] = {}
    for subject in by_user:
        listed = await memory.get_all(filters={"user_id": subject}, top_k=_MEMORIES_PER_USER)
        memories[subject] = [str(item["memory"]) for item in listed["results"]]
    failed = sum(errors.values())
    writes = sum(len(turns) for turns in by_user.values()) - failed
    return Mem0Run(
        writes=writes, failed=failed, elapsed_s=elapsed, memories=memories, errors=errors
    )


def _memory(*, base_url: str, embedder: Embedder, workdir: Path, model: str) -> Any:
    mem0 = _import_mem0(workdir)
    from mem0.configs.base import MemoryConfig  # noqa: PLC0415 -- imported after telemetry is off
    from mem0.embeddings.base import EmbeddingBase  # noqa: PLC0415

    class PortEmbedder(EmbeddingBase):  # type: ignore[misc]
        """Mem0's embedder interface over slotwise's embedder port."""

        def __init__(self) -> None:
            super().__init__()
            self._lock = threading.Lock()  # one CPU-bound model, shared by Mem0's threads

        def embed(self, text: str, memory_action: str | None = None) -> list[float]:
            return self.embed_batch([text], memory_action or "add")[0]

        def embed_batch(self, texts: list[str], memory_action: str = "add") -> list[list[float]]:
            with self._lock:
                return embedder.embed(texts)

    config = MemoryConfig(
        llm={
            "provider": "anthropic",
            "config": {
                "model": model,
                "api_key": "fake-key",
                "anthropic_base_url": base_url,
                "max_tokens": 1_000,
                # anthropic 2.x's messages.create takes no temperature/top_p/top_k.
                "enable_sampling_parameters": False,
            },
        },
        # Mem0 builds its embedder from config; it is replaced below and never called.
        embedder={
            "provider": "openai",
            "config": {
                "api_key": "unused",
                "embedding_dims": embedder.dimension,
                "openai_base_url": "http://127.0.0.1:9/v1",
            },
        },
        vector_store={
            "provider": "qdrant",
            "config": {
                "path": str(workdir / "qdrant"),
                "collection_name": "peer",
                "embedding_model_dims": embedder.dimension,
                "on_disk": False,
            },
        },
        # In memory, as slotwise's Redis is: the comparison is of write paths, not of fsyncs.
        history_db_path=":memory:",
    )
    memory = mem0.AsyncMemory(config)
    memory.embedding_model = PortEmbedder()
    # Qdrant's embedded mode is not thread-safe (concurrent upserts corrupt its arrays),
    # and Mem0 calls it from many threads: one lock, as a single-process store would have.
    memory.vector_store = _Serialized(memory.vector_store)
    return memory


class _Serialized:
    """Every method call on the wrapped object under one lock."""

    def __init__(self, target: Any) -> None:
        self._target = target
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._target, name)
        if not callable(attribute):
            return attribute

        def locked(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return attribute(*args, **kwargs)

        return locked


def mem0_installed() -> bool:
    """Whether mem0ai is importable, without importing it (which would fix its telemetry flag)."""
    return importlib.util.find_spec("mem0") is not None


def _import_mem0(workdir: Path) -> Any:
    # Both are read once, when mem0 is first imported.
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ["MEM0_DIR"] = str(workdir / "mem0-home")
    try:
        mem0 = importlib.import_module("mem0")
        telemetry = importlib.import_module("mem0.memory.telemetry")
    except ImportError as exc:
        raise Mem0Unavailable(
            f"mem0ai is not installed ({exc}); pip install --no-deps mem0ai, then its "
            "dependencies qdrant-client posthog sqlalchemy pytz openai"
        ) from None
    if telemetry.MEM0_TELEMETRY:
        raise Mem0Unavailable("mem0 was imported earlier with telemetry on; run in a fresh process")
    return mem0


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m slotwise.loadtest.mem0_peer", description=__doc__
    )
    parser.add_argument("--subjects", type=int, default=50)
    parser.add_argument("--count", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--latency-ms", type=float, default=320.0)
    parser.add_argument(
        "--base-url",
        help="a fake Messages API already running with "
        "--responder slotwise.loadtest.mem0_peer:responder "
        "(default: one in this process, with --latency-ms)",
    )
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--json", type=Path, help="write the result here")
    args = parser.parse_args(argv)
    schema = AttributeSchema.load()
    tally = Tally()
    config = WorkloadConfig(subjects=args.subjects, count=args.count, seed=args.seed)
    observations = [w.observation() for w in tallied(generate(config, schema), schema, tally)]
    embedder = embedder_named(Settings().embedder or DEFAULT_EMBEDDER)
    with ExitStack() as stack:
        base_url = args.base_url
        if base_url is None:
            fake = FakeAnthropic(
                responder=responder, latency_s=args.latency_ms / 1000, record_limit=0
            )
            base_url = stack.enter_context(fake).base_url
        workdir = Path(stack.enter_context(TemporaryDirectory(prefix="mem0-peer-")))
        run = run_mem0(
            observations,
            base_url=base_url,
            embedder=embedder,
            workdir=workdir,
            concurrency=args.concurrency,
        )
    figures = run.figures(tally)
    print_summary(f"Mem0 {args.count} observations, {args.subjects} users", figures)
    if args.json:
        write_result(args.json, "mem0_peer", figures, config=vars(args) | {"json": str(args.json)})


if __name__ == "__main__":
    main()
