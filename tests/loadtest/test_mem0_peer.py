from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from pathlib import Path

import pytest

from slotwise.loadtest.fake_anthropic import FakeAnthropic, Text
from slotwise.loadtest.generator import WorkloadConfig, generate
from slotwise.loadtest.mem0_peer import mem0_installed, responder, run_mem0
from slotwise.loadtest.tally import Tally, tallied
from slotwise.processors.schema import AttributeSchema

SCHEMA = AttributeSchema.load()


class HashingEmbedder:
    """Bag of hashed words: deterministic, instant, enough for Mem0's top-10 search."""

    model_name = "hashing-64"
    dimension = 64

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = []
        for text in texts:
            vector = [0.0] * self.dimension
            for word in text.lower().split():
                vector[int(hashlib.sha1(word.encode()).hexdigest(), 16) % self.dimension] += 1.0
            norm = math.sqrt(sum(x * x for x in vector)) or 1.0
            vectors.append([x / norm for x in vector])
        return vectors


def _mem0_request(new_messages: str) -> dict[str, object]:
    prompt = (
        "## Summary\n\n\n## Last k Messages\n[]\n\n## Existing Memories\n[]\n\n"
        f"## New Messages\n{new_messages}\n\n## Observation Date\n2026-03-14\n\n# Output:"
    )
    return {
        "model": "claude-haiku-4-5",
        "system": "# ROLE\n\nYou are a Memory Extractor — a precise, evidence-bound processor",
        "messages": [{"role": "user", "content": prompt}],
    }


def test_responder_keeps_the_new_turn_as_one_memory() -> None:
    reply = responder(_mem0_request("user: I start at Stripe on Monday.\n"))
    assert isinstance(reply, Text)
    assert json.loads(reply.text) == {"memory": [{"text": "I start at Stripe on Monday."}]}


def test_responder_leaves_other_requests_to_the_default() -> None:
    reply = responder({"system": "something else", "messages": [{"role": "user", "content": "x"}]})
    assert reply == Text("OK")
    assert json.loads(responder(_mem0_request("")).text) == {"memory": []}  # type: ignore[union-attr]


def test_mem0_keeps_both_values_of_a_changed_slot(tmp_path: Path) -> None:
    if not mem0_installed():
        pytest.skip("the Mem0 peer needs mem0ai: pip install --no-deps mem0ai")
    tally = Tally()
    config = WorkloadConfig(subjects=4, count=80, seed=11, contradiction_rate=0.3)
    observations = [w.observation() for w in tallied(generate(config, SCHEMA), SCHEMA, tally)]
    with FakeAnthropic(responder=responder) as fake:
        run = run_mem0(
            observations,
            base_url=fake.base_url,
            embedder=HashingEmbedder(),
            workdir=tmp_path,
            concurrency=4,
        )
        asked = fake.requests
    assert (run.writes, run.failed) == (80, 0), run.errors
    assert len(asked) == 80 and all("Memory Extractor" in str(r.body["system"]) for r in asked)
    assert set(run.memories) == {o.subject_id for o in observations}
    changed = sorted(slot for slot, values in tally.stated.items() if len(values) > 1)
    assert changed
    # Mem0 2.x only adds: every slot whose value changed holds both values as current.
    assert run.contradictory_slots(tally) == changed
