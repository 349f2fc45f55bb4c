"""The retry policy does what the classifier's verdict says; no provider is named here."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from slotwise.streams.runtime.health import Health
from slotwise.streams.runtime.retry import GiveUp, RetryPolicy, Verdict


class Down(Exception):
    pass


class Unusable(Exception):
    pass


class Broken(Exception):
    pass


class ProviderDown(Exception):
    pass


class BreakerOpen(Exception):
    pass


def classify(exc: BaseException) -> Verdict:
    verdicts = {
        Down: Verdict("outage", dependency="redis"),
        Unusable: Verdict("unusable", reason="model_malformed"),
        ProviderDown: Verdict("provider_outage", dependency="model"),
        BreakerOpen: Verdict("provider_outage", dependency="model", counted=False),
    }
    return verdicts.get(type(exc), Verdict("unknown"))


async def _no_sleep(_: float) -> None:
    await asyncio.sleep(0)


def policy(health: Health | None = None) -> RetryPolicy:
    return RetryPolicy(classify, health or Health(), sleep=_no_sleep)


def failing(*errors: BaseException, then: str = "done") -> Callable[[], Awaitable[str]]:
    pending = list(errors)

    async def attempt() -> str:
        if pending:
            raise pending.pop(0)
        return then

    return attempt


def run(coroutine: Awaitable[object]) -> object:
    async def main() -> object:
        return await coroutine

    return asyncio.run(main())


def test_an_outage_is_waited_out_however_long_it_lasts() -> None:
    result = run(policy().run(failing(*[Down()] * 50), where="t[0]@1", kind="CandidateFact"))
    assert result == "done"


def test_an_outage_marks_its_dependency_unhealthy_until_a_success() -> None:
    health = Health(grace_s=0)
    seen: list[bool] = []

    async def attempt() -> str:
        seen.append(health.report()[1]["failing"] != {})
        if len(seen) < 3:
            raise Down()
        return "done"

    health.started()
    assert run(policy(health).run(attempt, where="w", kind="k")) == "done"
    assert seen == [False, True, True] and health.report()[0]


def test_an_unusable_answer_is_given_up_at_once_with_its_reason() -> None:
    result = run(policy().run(failing(Unusable("no tool call")), where="w", kind="k"))
    assert result == GiveUp("model_malformed", "no tool call")


def test_an_unknown_failure_gets_a_few_attempts_then_processing_failed() -> None:
    calls = 0

    async def attempt() -> str:
        nonlocal calls
        calls += 1
        raise Broken("bug")

    result = run(policy().run(attempt, where="w", kind="k"))
    assert isinstance(result, GiveUp) and result.reason == "processing_failed"
    assert calls == 5


def test_a_provider_outage_is_this_records_fault_only_once_others_progress() -> None:
    retry = policy()

    async def scenario() -> tuple[object, object]:
        # Alone, the record keeps retrying: the provider, not the record, is failing.
        alone = await retry.run(failing(*[ProviderDown()] * 6), where="a", kind="Observation")
        # Another record succeeds meanwhile: after three counted failures this one gives up.
        stuck = asyncio.ensure_future(
            retry.run(failing(*[ProviderDown()] * 100), where="b", kind="Observation")
        )
        await asyncio.sleep(0)
        await retry.run(failing(), where="c", kind="Observation", marks_progress=True)
        return alone, await stuck

    alone, stuck = asyncio.run(scenario())
    assert alone == "done"
    assert isinstance(stuck, GiveUp) and stuck.reason == "model_unavailable"


def test_an_open_breaker_sends_nothing_and_counts_no_attempt() -> None:
    retry = policy()

    async def scenario() -> object:
        await retry.run(failing(), where="c", kind="Observation", marks_progress=True)
        errors = [BreakerOpen()] * 10 + [ProviderDown()] * 2
        return await retry.run(failing(*errors), where="b", kind="Observation")

    # Began after the last progress, and only two counted failures: it goes on.
    assert asyncio.run(scenario()) == "done"
