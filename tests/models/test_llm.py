"""The Anthropic adapters through the real SDK against the local fake Messages API."""

from __future__ import annotations

import asyncio
import json
import random
import socket
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime
from typing import Any, TypeVar

import anthropic
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from prometheus_client import REGISTRY
from pydantic import SecretStr

from slotwise.loadtest.fake_anthropic import (
    Delay,
    Failure,
    FakeAnthropic,
    Raw,
    Text,
    ToolUse,
    overloaded,
    rate_limited,
    server_error,
)
from slotwise.models.exceptions import (
    CircuitOpen,
    MalformedOutput,
    ModelNotConfigured,
    ModelRejected,
    ModelUnavailable,
)
from slotwise.models.extractor import AnthropicExtractor, system_prompt
from slotwise.models.llm import ModelClient, sdk_telemetry
from slotwise.models.resilience import BreakerState, CircuitBreaker, RetryPolicy
from slotwise.models.slot_matcher import AnthropicSlotMatcher
from slotwise.processors.model import Neighbour, SlotAnswer, stable_id
from slotwise.processors.schema import AttributeSchema
from slotwise.streams.config import Settings
from slotwise.streams.wiring.app import model_client
from slotwise.topics.records import CandidateFact, Fact, Observation

T = TypeVar("T")

SCHEMA = AttributeSchema.parse(
    {
        "version": "test-1",
        "attributes": {
            "employer": {
                "cardinality": "one",
                "category": "work",
                "half_life_days": 720,
                "stakes": "normal",
                "description": "organisation the user works for",
            },
            "home_city": {
                "cardinality": "one",
                "category": "location",
                "half_life_days": 1000,
                "description": "city the user lives in",
            },
            "allergies": {
                "cardinality": "many",
                "category": "health",
                "half_life_days": None,
                "stakes": "high",
                "description": "things the user is allergic to",
            },
        },
    }
)
OBSERVED = datetime(2026, 3, 14, 10, 0, tzinfo=UTC)


class Sleeps:
    """Records backoff delays instead of waiting them."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        await asyncio.sleep(0)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def run(
    fake: FakeAnthropic,
    scenario: Callable[[ModelClient], Awaitable[T]],
    *,
    sleeps: Sleeps | None = None,
    timeout_s: float = 5.0,
    max_retries: int = 4,
    max_concurrency: int = 32,
    breaker: CircuitBreaker | None = None,
    base_url: str | None = None,
) -> T:
    async def main() -> T:
        sdk = anthropic.AsyncAnthropic(
            api_key="test-key", base_url=base_url or fake.base_url, timeout=timeout_s, max_retries=0
        )
        client = ModelClient(
            sdk,
            model="claude-haiku-4-5",
            max_concurrency=max_concurrency,
            retry=RetryPolicy(max_retries=max_retries),
            breaker=breaker,
            sleep=sleeps or Sleeps(),
            rng=random.Random(7),
        )
        try:
            return await scenario(client)
        finally:
            await client.aclose()

    return asyncio.run(main())


def metric(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def observation(text: str = "I start at Stripe on Monday.") -> Observation:
    return Observation.model_validate(
        {
            "schema": "observation/1",
            "observation_id": "obs-1",
            "subject_id": "user-42",
            "session_id": "s-9",
            "speaker": "user",
            "text": text,
            "observed_at": OBSERVED.isoformat(),
        }
    )


def candidate(text: str = "User works at Stripe.") -> CandidateFact:
    return CandidateFact.model_validate(
        {
            "schema": "candidate/1",
            "candidate_id": "cand-1",
            "subject_id": "user-42",
            "text": text,
            "observed_at": OBSERVED.isoformat(),
        }
    )


def neighbour(fact_id: str, text: str, similarity: float = 0.6) -> Neighbour:
    fact = Fact.model_validate(
        {
            "schema": "fact/1",
            "fact_id": fact_id,
            "subject_id": "user-42",
            "attribute": None,
            "value": None,
            "text": text,
            "category": "work",
            "status": "current",
            "valid_from": OBSERVED.isoformat(),
            "observed_at": OBSERVED.isoformat(),
            "recorded_at": OBSERVED.isoformat(),
            "source": "chat",
            "confidence": 0.9,
            "importance": 0.5,
            "candidate_id": f"cand-of-{fact_id}",
        }
    )
    return Neighbour(fact=fact, similarity=similarity)


NEIGHBOURS = (
    neighbour("fact-7f3c9a1e-0b2d", "User is a backend engineer at Datadog."),
    neighbour("fact-91aa04c2-55e1", "User lives in Lisbon."),
    neighbour("fact-c0ffee00-1234", "User is allergic to peanuts."),
)


def match(client: ModelClient) -> Awaitable[SlotAnswer]:
    return AnthropicSlotMatcher(client).match(candidate(), NEIGHBOURS)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# --- retries -------------------------------------------------------------------------------


def test_rate_limit_honours_retry_after_then_succeeds(fake: FakeAnthropic) -> None:
    fake.script(rate_limited(retry_after=7), ToolUse({"memory": 1}))
    sleeps = Sleeps()
    before = metric("slotwise_llm_retries_total", purpose="slot_match", kind="rate_limited")

    answer = run(fake, match, sleeps=sleeps)

    assert answer == SlotAnswer(index=0, raw="1")
    assert len(fake.requests) == 2
    assert sleeps.delays == [7.0]
    after = metric("slotwise_llm_retries_total", purpose="slot_match", kind="rate_limited")
    assert after == before + 1


@pytest.mark.parametrize(
    "failure", [overloaded(), server_error(), Failure(503, "api_error")], ids=["529", "500", "503"]
)
def test_provider_failure_is_retried_with_jittered_backoff(
    fake: FakeAnthropic, failure: Failure
) -> None:
    fake.script(failure, failure, ToolUse({"memory": "NONE"}))
    sleeps = Sleeps()

    answer = run(fake, match, sleeps=sleeps)

    assert answer == SlotAnswer(index=None, raw="NONE")
    assert len(fake.requests) == 3
    assert len(sleeps.delays) == 2
    assert 0 <= sleeps.delays[0] <= 0.5 and 0 <= sleeps.delays[1] <= 1.0


def test_timeout_is_retried(fake: FakeAnthropic) -> None:
    fake.script(Delay(3.0, then=ToolUse({"memory": 2})), ToolUse({"memory": 3}))
    before = metric("slotwise_llm_errors_total", purpose="slot_match", kind="timeout")

    answer = run(fake, match, timeout_s=0.3)

    assert answer == SlotAnswer(index=2, raw="3")
    assert metric("slotwise_llm_errors_total", purpose="slot_match", kind="timeout") == before + 1


def test_exhausted_budget_raises_unavailable(fake: FakeAnthropic) -> None:
    fake.script(server_error(), overloaded(), server_error())
    sleeps = Sleeps()

    async def call(client: ModelClient) -> None:
        await AnthropicExtractor(client, SCHEMA).extract(observation())

    with pytest.raises(ModelUnavailable) as caught:
        run(fake, call, sleeps=sleeps, max_retries=2)

    assert caught.value.attempts == 3
    assert caught.value.last_failure == "server_error"
    assert len(fake.requests) == 3 and len(sleeps.delays) == 2


def test_exhausted_budget_becomes_an_answer_with_error(fake: FakeAnthropic) -> None:
    fake.script(overloaded(), overloaded())

    answer = run(fake, match, max_retries=1)

    assert answer.index is None
    assert answer.error is not None and answer.error.startswith("unavailable")


def test_unreachable_provider_is_a_connection_failure(fake: FakeAnthropic) -> None:
    async def call(client: ModelClient) -> SlotAnswer:
        return await match(client)

    answer = run(fake, call, max_retries=1, base_url=f"http://127.0.0.1:{free_port()}")

    assert answer.index is None
    assert answer.error is not None and "connection" in answer.error


@pytest.mark.parametrize(
    ("status", "kind"), [(400, "invalid_request_error"), (401, "authentication_error")]
)
def test_client_errors_are_not_retried(fake: FakeAnthropic, status: int, kind: str) -> None:
    fake.script(Failure(status, kind), ToolUse({"memory": 1}))
    sleeps = Sleeps()

    async def call(client: ModelClient) -> list[CandidateFact]:
        return await AnthropicExtractor(client, SCHEMA).extract(observation())

    with pytest.raises(ModelRejected) as caught:
        run(fake, call, sleeps=sleeps)

    assert caught.value.status == status
    assert len(fake.requests) == 1 and sleeps.delays == []


# --- circuit breaker -----------------------------------------------------------------------


def test_breaker_opens_fails_fast_then_half_opens(fake: FakeAnthropic) -> None:
    clock = Clock()
    breaker = CircuitBreaker(failure_threshold=3, cooldown_s=30, clock=clock)
    fake.script(server_error(), server_error(), server_error(), ToolUse({"memory": 1}))

    async def scenario(client: ModelClient) -> list[SlotAnswer]:
        answers = [await match(client) for _ in range(4)]
        assert breaker.state is BreakerState.OPEN
        assert len(fake.requests) == 3  # the fourth call sent nothing
        clock.now += 30
        answers.append(await match(client))  # the probe
        return answers

    answers = run(fake, scenario, max_retries=0, breaker=breaker)

    assert [a.error is not None for a in answers] == [True, True, True, True, False]
    assert answers[3].error is not None and answers[3].error.startswith("circuit_open")
    assert answers[4] == SlotAnswer(index=0, raw="1")
    assert breaker.state is BreakerState.CLOSED


def test_failed_probe_reopens_the_breaker(fake: FakeAnthropic) -> None:
    clock = Clock()
    breaker = CircuitBreaker(failure_threshold=1, cooldown_s=10, clock=clock)
    fake.script(server_error(), server_error())

    async def scenario(client: ModelClient) -> None:
        await match(client)
        clock.now += 10
        await match(client)  # the probe fails
        assert breaker.state is BreakerState.OPEN
        with pytest.raises(CircuitOpen):
            await client.create(
                "probe",
                system=[],
                messages=[],
                max_tokens=1,
                tools=[],
                tool_choice={"type": "auto"},
            )

    run(fake, scenario, max_retries=0, breaker=breaker)
    assert len(fake.requests) == 2


def test_half_open_admits_one_probe_and_ignores_rate_limits() -> None:
    clock = Clock()
    breaker = CircuitBreaker(failure_threshold=2, cooldown_s=5, clock=clock)
    states = []
    breaker.failed(probe=breaker.admit())
    breaker.released(probe=breaker.admit())  # a 429 neither fails nor heals
    states.append(breaker.state)
    breaker.failed(probe=breaker.admit())
    states.append(breaker.state)
    clock.now += 5
    assert breaker.admit() is True
    states.append(breaker.state)
    with pytest.raises(CircuitOpen):
        breaker.admit()  # a second caller while the probe is out
    breaker.succeeded(probe=True)
    states.append(breaker.state)

    assert states == [
        BreakerState.CLOSED,
        BreakerState.OPEN,
        BreakerState.HALF_OPEN,
        BreakerState.CLOSED,
    ]
    assert breaker.admit() is False


# --- concurrency ---------------------------------------------------------------------------


def test_semaphore_bounds_requests_in_flight() -> None:
    with FakeAnthropic(latency_s=0.15) as fake:

        async def scenario(client: ModelClient) -> list[SlotAnswer]:
            return await asyncio.gather(*(match(client) for _ in range(12)))

        answers = run(fake, scenario, max_concurrency=3)

    assert all(a == SlotAnswer(index=None, raw="NONE") for a in answers)
    assert len(fake.requests) == 12
    assert fake.max_concurrent == 3


# --- slot matching -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        ToolUse({"memory": 7}),
        ToolUse({"memory": 0}),
        ToolUse({"memory": "fact-7f3c9a1e-0b2d"}),
        ToolUse({"memory": "Memory 1, probably"}),
        ToolUse({"answer": 1}),
        ToolUse({"memory": True}),
        Text("I think it is memory 1."),
    ],
    ids=["off-list", "zero", "id", "prose", "wrong-key", "bool", "text"],
)
def test_rejected_answers_count_as_none(fake: FakeAnthropic, reply: ToolUse | Text) -> None:
    fake.script(reply)
    before = metric("slotwise_slot_answers_rejected_total")

    answer = run(fake, match)

    assert answer.index is None and answer.error is None
    assert metric("slotwise_slot_answers_rejected_total") == before + 1


@pytest.mark.parametrize(("memory", "index"), [(2, 1), ("3", 2), ("NONE", None), ("none", None)])
def test_accepted_answers(fake: FakeAnthropic, memory: int | str, index: int | None) -> None:
    fake.script(ToolUse({"memory": memory}))
    before = metric("slotwise_slot_answers_rejected_total")

    answer = run(fake, match)

    assert answer == SlotAnswer(index=index, raw=str(memory))
    assert metric("slotwise_slot_answers_rejected_total") == before


def test_match_prompt_numbers_neighbours_and_hides_ids(fake: FakeAnthropic) -> None:
    fake.script(ToolUse({"memory": "NONE"}))

    run(fake, match)

    [request] = fake.requests
    for n in NEIGHBOURS:
        assert n.fact.fact_id not in request.raw
        assert n.fact.candidate_id not in request.raw
    assert "user-42" not in request.raw and "cand-1" not in request.raw
    assert "1. User is a backend engineer at Datadog." in request.user_text
    assert "3. User is allergic to peanuts." in request.user_text
    assert request.forced_tool == "answer_slot"
    assert request.system_blocks[-1]["cache_control"] == {"type": "ephemeral"}


def test_no_neighbours_no_call(fake: FakeAnthropic) -> None:
    async def call(client: ModelClient) -> SlotAnswer:
        return await AnthropicSlotMatcher(client).match(candidate(), [])

    assert run(fake, call) == SlotAnswer(index=None, raw="")
    assert fake.requests == []


# --- extraction ----------------------------------------------------------------------------


def extract(client: ModelClient) -> Awaitable[list[CandidateFact]]:
    return AnthropicExtractor(client, SCHEMA).extract(observation())


def fact(**overrides: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "attribute": "employer",
        "value": "Stripe",
        "text": "User works at Stripe.",
        "category": "job",
        "valid_from": "2026-03-16",
        "confidence": 0.9,
        "importance": 0.8,
    }
    return {**item, **overrides}


def test_extraction_request_caches_the_fixed_prompt(fake: FakeAnthropic) -> None:
    fake.script(ToolUse({"facts": []}), ToolUse({"facts": []}))

    async def twice(client: ModelClient) -> None:
        await extract(client)
        await extract(client)

    run(fake, twice)

    first, second = fake.requests
    [system] = first.system_blocks
    assert system["cache_control"] == {"type": "ephemeral"}
    assert all(name in system["text"] for name in ("employer", "home_city", "allergies"))
    assert first.forced_tool == "record_facts"
    schema = first.body["tools"][0]["input_schema"]["properties"]["facts"]["items"]
    assert schema["properties"]["attribute"]["enum"] == ["employer", "home_city", "allergies", None]
    assert "Observation time: 2026-03-14T10:00:00+00:00 (Saturday)" in first.user_text
    assert "I start at Stripe on Monday." in first.user_text
    assert "user-42" not in first.raw
    assert second.system_blocks == first.system_blocks  # byte-identical prefix: a cache hit


def test_extraction_validates_items(fake: FakeAnthropic) -> None:
    fake.script(
        ToolUse(
            {
                "facts": [
                    fact(),  # 0 kept
                    fact(
                        attribute="shoe_size", value="44", text="User wears size 44."
                    ),  # 1 demoted
                    fact(value=["Stripe", "Datadog"]),  # 2 dropped
                    fact(confidence="high"),  # 3 dropped
                    "User works at Stripe.",  # 4 dropped
                    fact(
                        attribute="home_city", value=None, text="User lives somewhere sunny."
                    ),  # 5 demoted
                    fact(text="  "),  # 6 dropped
                    fact(
                        attribute=None,
                        value=None,
                        text="User likes long walks.",
                        category="Leisure",
                        valid_from="not a date",
                        confidence=1.7,
                        importance=None,
                    ),  # 7 kept, repaired
                ]
            }
        )
    )

    candidates = run(fake, extract)

    assert [c.candidate_id for c in candidates] == [
        stable_id("llm", "obs-1", str(i)) for i in (0, 1, 5, 7)
    ]
    stripe, shoe, sunny, walks = candidates
    assert (stripe.attribute, stripe.value, stripe.category) == ("employer", "Stripe", "work")
    assert stripe.valid_from == datetime(2026, 3, 16, tzinfo=UTC)
    assert stripe.observed_at == OBSERVED and stripe.observation_id == "obs-1"
    assert stripe.subject_id == "user-42" and stripe.source == "chat"
    assert (shoe.attribute, shoe.value) == (None, "44")
    assert sunny.attribute is None
    assert walks.category == "leisure" and walks.valid_from is None
    assert walks.confidence == 1.0 and walks.importance == 0.5


def test_malformed_output_is_retried_once(fake: FakeAnthropic) -> None:
    fake.script(ToolUse({"fact": "User works at Stripe."}), ToolUse({"facts": [fact()]}))

    candidates = run(fake, extract)

    assert [c.value for c in candidates] == ["Stripe"]
    assert len(fake.requests) == 2


@pytest.mark.parametrize(
    "bad",
    [
        ToolUse({"facts": "Stripe"}),
        Text("User works at Stripe."),
        Raw(200, b"{not json"),
        Raw(200, b'{"surprise": true}'),
    ],
    ids=["facts-not-list", "text", "not-json", "not-a-message"],
)
def test_malformed_twice_propagates(fake: FakeAnthropic, bad: ToolUse | Text | Raw) -> None:
    fake.script(bad, bad, ToolUse({"facts": [fact()]}))
    before = metric("slotwise_llm_errors_total", purpose="extract", kind="malformed")

    with pytest.raises(MalformedOutput):
        run(fake, extract)

    assert len(fake.requests) == 2
    assert metric("slotwise_llm_errors_total", purpose="extract", kind="malformed") == before + 2


def test_a_reply_newer_than_the_sdk_still_reads(fake: FakeAnthropic) -> None:
    # A block type and a stop reason the installed SDK does not know: the strict
    # one-pass reading refuses them, the SDK's lenient one must still find the answer.
    reply = {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
        "stop_reason": "a_reason_from_a_newer_api", "stop_sequence": None,
        "usage": {"input_tokens": 40, "output_tokens": 5},
        "content": [
            {"type": "a_block_from_a_newer_api", "data": {"anything": 1}},
            {"type": "tool_use", "id": "toolu_1", "name": "answer_slot", "input": {"memory": 1}},
        ],
    }  # fmt: skip
    fake.script(Raw(200, json.dumps(reply).encode()))

    assert run(fake, match) == SlotAnswer(index=0, raw="1")
    assert len(fake.requests) == 1


def test_blank_observation_makes_no_call(fake: FakeAnthropic) -> None:
    async def call(client: ModelClient) -> list[CandidateFact]:
        return await AnthropicExtractor(client, SCHEMA).extract(observation("   "))

    assert run(fake, call) == []
    assert fake.requests == []


# --- construction from settings ------------------------------------------------------------


def test_client_from_settings(fake: FakeAnthropic) -> None:
    with pytest.raises(ModelNotConfigured):
        model_client(Settings(anthropic_api_key=None))
    settings = Settings(
        anthropic_api_key=SecretStr("test-key"),
        anthropic_base_url=fake.base_url,
        llm_model="claude-haiku-4-5",
        llm_max_concurrency=2,
        llm_timeout_s=5,
    )
    fake.script(rate_limited(retry_after=0.01), ToolUse({"memory": 1}))

    async def call() -> SlotAnswer:
        client = model_client(settings)
        try:
            return await match(client)
        finally:
            await client.aclose()

    assert asyncio.run(call()) == SlotAnswer(index=0, raw="1")
    assert fake.requests[0].body["model"] == "claude-haiku-4-5"


def test_the_sdks_spans_are_off_unless_a_tracer_provider_records_them() -> None:
    assert sdk_telemetry(trace.ProxyTracerProvider()) == {"traces": False}
    assert sdk_telemetry(trace.NoOpTracerProvider()) == {"traces": False}
    assert sdk_telemetry(TracerProvider()) is None  # the SDK's own defaults


def test_with_an_sdk_installed_each_model_call_is_a_span(
    fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    # What opentelemetry-instrument does before the worker starts, without touching
    # the process-wide provider the other tests share.
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
    fake.script(ToolUse({"memory": 1}))

    async def call() -> SlotAnswer:
        client = ModelClient.connect(SecretStr("test-key"), model="m", base_url=fake.base_url)
        try:
            return await match(client)
        finally:
            await client.aclose()

    assert asyncio.run(call()) == SlotAnswer(index=0, raw="1")
    assert [span.name for span in exporter.get_finished_spans()] == ["anthropic.messages.create"]


def test_prompt_examples_use_names_of_the_shipped_vocabulary() -> None:
    shipped = AttributeSchema.load()
    prompt = system_prompt(shipped)
    examples = prompt.split("Examples", 1)[1].split("Attribute vocabulary", 1)[0]
    for name in ("employer", "home_city", "relationship_status", "languages", "allergies"):
        assert name in examples and shipped.get(name) is not None


def test_default_responder_echoes_one_free_text_fact() -> None:
    with FakeAnthropic() as fake:
        candidates = run(fake, extract)
        answer = run(fake, match)

    [echo] = candidates
    assert echo.attribute is None and echo.text == "User said: I start at Stripe on Monday."
    assert answer == SlotAnswer(index=None, raw="NONE")
