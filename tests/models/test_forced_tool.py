"""The shared forced-tool adapter: one cached prefix for every call kind, usage counted per kind.

Through the real SDK against the local fake Messages API, whose ``usage``
honours the prompt cache as the API does (a floor per model, writes then reads).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime
from typing import TypeVar

import anthropic
import pytest
from prometheus_client import REGISTRY

from slotwise.loadtest.fake_anthropic import FakeAnthropic, Text, ToolUse
from slotwise.models.extractor import AnthropicExtractor
from slotwise.models.forced_tool import ForcedTool
from slotwise.models.llm import ModelClient
from slotwise.models.pricing import Prices, card
from slotwise.models.prompt import ANSWER_SLOT, Prefix, memory_prefix
from slotwise.models.rederive import AnthropicRederiver
from slotwise.models.resilience import RetryPolicy
from slotwise.models.slot_filler import AnthropicSlotFiller
from slotwise.models.slot_matcher import AnthropicSlotMatcher
from slotwise.models.usage import Usage
from slotwise.processors.model import Neighbour
from slotwise.processors.schema import AttributeSchema
from slotwise.streams.config import Settings
from slotwise.topics.records import CandidateFact, Fact, Observation

T = TypeVar("T")
SHIPPED = AttributeSchema.load()
MODEL = "claude-haiku-4-5"
AT = datetime(2026, 3, 14, 10, 0, tzinfo=UTC)
HOME_CITY = SHIPPED.get("home_city")
assert HOME_CITY is not None


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def run(fake: FakeAnthropic, scenario: Callable[[ModelClient], Awaitable[T]]) -> T:
    async def main() -> T:
        sdk = anthropic.AsyncAnthropic(api_key="k", base_url=fake.base_url, max_retries=0)
        client = ModelClient(
            sdk, model=MODEL, retry=RetryPolicy(max_retries=0), rng=random.Random(1)
        )
        try:
            return await scenario(client)
        finally:
            await client.aclose()

    return asyncio.run(main())


def tokens(kind: str, direction: str) -> float:
    labels = {"kind": kind, "direction": direction}
    return REGISTRY.get_sample_value("slotwise_model_tokens_total", labels) or 0.0


def calls(kind: str) -> float:
    return REGISTRY.get_sample_value("slotwise_model_calls_total", {"kind": kind}) or 0.0


def spent(kind: str) -> Usage:
    return Usage(*(int(tokens(kind, d)) for d in ("input", "output", "cache_read", "cache_write")))


def observation(text: str) -> Observation:
    return Observation(observation_id="o-1", subject_id="u-1", text=text, observed_at=AT)


def fact(fact_id: str, text: str) -> Fact:
    return Fact.model_validate(
        {
            "schema": "fact/1", "fact_id": fact_id, "subject_id": "u-1", "text": text,
            "attribute": None, "value": None, "category": "home",
            "status": "current", "valid_from": AT.isoformat(), "observed_at": AT.isoformat(),
            "recorded_at": AT.isoformat(), "source": "chat", "confidence": 0.9,
            "importance": 0.5, "candidate_id": f"c-{fact_id}",
        }
    )  # fmt: skip


def candidate(text: str) -> CandidateFact:
    return CandidateFact(candidate_id="c-1", subject_id="u-1", text=text, observed_at=AT)


def minus(after: Usage, before: Usage) -> Usage:
    return Usage(
        after.input - before.input,
        after.output - before.output,
        after.cache_read - before.cache_read,
        after.cache_write - before.cache_write,
    )


def test_the_shared_prefix_is_over_the_configured_models_cache_floor() -> None:
    # Under the floor the API ignores cache_control without a word: every call would
    # pay the whole prompt at the input rate.
    floor = card(Settings().llm_model).min_cacheable_tokens
    assert memory_prefix(SHIPPED).estimated_tokens() >= floor


def test_extraction_writes_the_prefix_once_then_reads_it(fake: FakeAnthropic) -> None:
    fake.script(ToolUse({"facts": []}), ToolUse({"facts": []}))
    before, calls_before = spent("extract"), calls("extract")

    async def twice(client: ModelClient) -> None:
        extractor = AnthropicExtractor(client, SHIPPED)
        await extractor.extract(observation("I live in Lisbon."))
        before_second.append(spent("extract"))
        await extractor.extract(observation("I work at Stripe."))

    before_second: list[Usage] = []
    run(fake, twice)

    first = minus(before_second[0], before)
    second = minus(spent("extract"), before_second[0])
    assert calls("extract") == calls_before + 2
    prefix = memory_prefix(SHIPPED).estimated_tokens()
    assert first.cache_write == prefix and first.cache_read == 0
    assert second.cache_read == prefix and second.cache_write == 0
    assert 0 < second.input < prefix / 10  # only the message is billed at the full rate
    assert first.output > 0 and second.output > 0


def test_every_call_kind_shares_one_cache_entry(fake: FakeAnthropic) -> None:
    fake.script(
        ToolUse({"facts": []}),
        ToolUse({"memory": "NONE"}),
        ToolUse({"memory": 1}),
        ToolUse({"verdict": "no"}),
        ToolUse({"verdict": "keep"}),
    )
    kinds = ("extract", "slot_match", "consolidation", "reslot", "rederive")
    before = {kind: spent(kind) for kind in kinds}
    neighbours = [Neighbour(fact=fact("f-1", "User lives in Lisbon."), similarity=0.7)]

    async def each(client: ModelClient) -> None:
        await AnthropicExtractor(client, SHIPPED).extract(observation("I live in Porto."))
        await AnthropicSlotMatcher(client, SHIPPED).match(
            candidate("User lives in Porto."), neighbours
        )
        await AnthropicSlotMatcher(client, SHIPPED, kind="consolidation").match(
            candidate("User lives in Porto."), neighbours
        )
        await AnthropicSlotFiller(client, SHIPPED).fill(
            fact("f-2", "User drives a Civic."), HOME_CITY
        )
        await AnthropicRederiver(client, SHIPPED).rederive(
            fact("f-3", "User lives in Lisbon."), [fact("f-1", "User lives in Lisbon.")]
        )

    run(fake, each)

    requests = fake.requests
    assert [r.forced_tool for r in requests] == [
        "record_facts", "answer_slot", "answer_slot", "fill_attribute", "revalidate"
    ]  # fmt: skip
    assert all(r.body["tools"] == requests[0].body["tools"] for r in requests)
    assert all(r.body["system"] == requests[0].body["system"] for r in requests)
    used = {kind: minus(spent(kind), before[kind]) for kind in kinds}
    assert used["extract"].cache_write > 0
    for kind in kinds[1:]:
        assert used[kind].cache_write == 0
        assert used[kind].cache_read == used["extract"].cache_write


def test_the_fake_caches_nothing_under_the_models_floor(fake: FakeAnthropic) -> None:
    # A task's own short prompt, as each adapter sent before they shared one prefix.
    slot_tool = next(t for t in memory_prefix(SHIPPED).tools if t["name"] == ANSWER_SLOT)
    prefix = Prefix(
        system=({"type": "text", "text": "Match slots.", "cache_control": {"type": "ephemeral"}},),
        tools=(slot_tool,),
    )
    fake.script(ToolUse({"memory": "NONE"}), ToolUse({"memory": "NONE"}))
    usages = []

    async def twice(client: ModelClient) -> None:
        ask = ForcedTool(client, kind="slot_match", prefix=prefix, tool=ANSWER_SLOT, max_tokens=8)
        usages.append((await ask.ask("1. User works at Stripe.")).usage)
        usages.append((await ask.ask("1. User works at Stripe.")).usage)

    run(fake, twice)

    for usage in usages:
        assert usage.cache_read == usage.cache_write == 0
        assert usage.input >= prefix.estimated_tokens()


def test_a_verdict_off_the_list_counts_as_malformed_for_every_adapter(fake: FakeAnthropic) -> None:
    fake.script(ToolUse({"verdict": "perhaps"}), ToolUse({"verdict": "maybe"}))

    def errors(kind: str) -> float:
        labels = {"purpose": kind, "kind": "malformed"}
        return REGISTRY.get_sample_value("slotwise_llm_errors_total", labels) or 0.0

    before = (errors("reslot"), errors("rederive"))

    async def both(client: ModelClient) -> tuple[str, str]:
        filled = await AnthropicSlotFiller(client, SHIPPED).fill(
            fact("f-2", "User drives a Civic."), HOME_CITY
        )
        kept = await AnthropicRederiver(client, SHIPPED).rederive(
            fact("f-3", "User lives in Lisbon."), [fact("f-1", "User lives in Lisbon.")]
        )
        return filled.verdict, kept.verdict

    assert run(fake, both) == ("ambiguous", "unsure")
    assert (errors("reslot"), errors("rederive")) == (before[0] + 1, before[1] + 1)


def test_a_text_answer_is_read_as_text(fake: FakeAnthropic) -> None:
    fake.script(Text("Memory 1, I think."))
    prefix = memory_prefix(SHIPPED)

    async def once(client: ModelClient) -> tuple[bool, str]:
        ask = ForcedTool(client, kind="slot_match", prefix=prefix, tool=ANSWER_SLOT, max_tokens=8)
        answer = await ask.ask("question")
        return answer.called, answer.text

    assert run(fake, once) == (False, "Memory 1, I think.")


def test_a_tool_the_prefix_lacks_is_refused() -> None:
    async def build() -> None:
        sdk = anthropic.AsyncAnthropic(api_key="k", base_url="http://127.0.0.1:9", max_retries=0)
        client = ModelClient(sdk, model=MODEL)
        try:
            ForcedTool(client, kind="x", prefix=memory_prefix(SHIPPED), tool="nope", max_tokens=8)
        finally:
            await client.aclose()

    with pytest.raises(ValueError, match="no tool 'nope'"):
        asyncio.run(build())


def test_cost_at_list_prices() -> None:
    haiku = card("claude-haiku-4-5-20251001").prices
    assert haiku == Prices(input=1.0, output=5.0, cache_read=0.1, cache_write=1.25)
    usage = Usage(input=1_000_000, output=100_000, cache_read=2_000_000, cache_write=400_000)
    assert haiku.cost(usage) == pytest.approx(1.0 + 0.5 + 0.2 + 0.5)
    assert card("claude-opus-4-5").min_cacheable_tokens == 4096
    assert card("claude-sonnet-4-5").min_cacheable_tokens == 1024
