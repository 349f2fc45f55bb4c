import asyncio

from slotwise.streams.runtime.scheduling import KeyedScheduler


async def _run_jobs(plan: list[tuple[str, float]]) -> tuple[list[str], int]:
    scheduler = KeyedScheduler()
    done: list[str] = []
    running: dict[str, int] = {}
    max_parallel_keys = 0

    def job(key: str, tag: str, delay: float):  # type: ignore[no-untyped-def]
        async def run() -> None:
            nonlocal max_parallel_keys
            running[key] = running.get(key, 0) + 1
            assert running[key] == 1, f"two jobs of {key} ran at once"
            max_parallel_keys = max(max_parallel_keys, sum(1 for v in running.values() if v))
            await asyncio.sleep(delay)
            running[key] -= 1
            done.append(tag)

        return run

    for i, (key, delay) in enumerate(plan):
        scheduler.submit(key, job(key, f"{key}{i}", delay))
    assert await scheduler.drain(timeout=5)
    assert scheduler.pending == 0
    return done, max_parallel_keys


def test_one_key_runs_in_submission_order_and_keys_run_concurrently() -> None:
    plan = [("a", 0.03), ("b", 0.0), ("a", 0.0), ("c", 0.01), ("a", 0.0), ("b", 0.02)]
    done, parallel = asyncio.run(_run_jobs(plan))
    assert [t for t in done if t.startswith("a")] == ["a0", "a2", "a4"]
    assert [t for t in done if t.startswith("b")] == ["b1", "b5"]
    assert parallel >= 2


def test_a_failing_job_does_not_stop_its_key() -> None:
    async def scenario() -> list[str]:
        scheduler = KeyedScheduler()
        seen: list[str] = []

        async def boom() -> None:
            raise RuntimeError("bug")

        async def ok() -> None:
            seen.append("ok")

        scheduler.submit("k", boom)
        scheduler.submit("k", ok)
        await scheduler.drain(timeout=5)
        return seen

    assert asyncio.run(scenario()) == ["ok"]


def test_wait_below_returns_when_pending_drops() -> None:
    async def scenario() -> int:
        scheduler = KeyedScheduler()
        gate = asyncio.Event()

        async def blocked() -> None:
            await gate.wait()

        for key in "abc":
            scheduler.submit(key, blocked)
        assert scheduler.pending == 3
        waiter = asyncio.create_task(scheduler.wait_below(3))
        await asyncio.sleep(0.01)
        assert not waiter.done()
        gate.set()
        await asyncio.wait_for(waiter, 5)
        await scheduler.drain(timeout=5)
        return scheduler.pending

    assert asyncio.run(scenario()) == 0


def test_cancel_forgets_queued_jobs_of_the_key() -> None:
    async def scenario() -> tuple[int, list[str]]:
        scheduler = KeyedScheduler()
        seen: list[str] = []

        async def slow() -> None:
            await asyncio.sleep(10)

        async def later() -> None:
            seen.append("later")

        scheduler.submit("k", slow)
        scheduler.submit("k", later)
        await asyncio.sleep(0)
        await scheduler.cancel(["k"])
        return scheduler.pending, seen

    assert asyncio.run(scenario()) == (0, [])


def test_a_key_cancelled_before_its_runner_started_takes_new_jobs() -> None:
    # A rebalance can revoke a partition right after its records were submitted,
    # before the event loop ran their runners once.
    async def scenario() -> tuple[int, list[str], int]:
        scheduler = KeyedScheduler()
        seen: list[str] = []

        async def job(tag: str) -> None:
            seen.append(tag)

        scheduler.submit("k", lambda: job("revoked"))
        await scheduler.cancel(["k"])
        pending_after_cancel = scheduler.pending
        scheduler.submit("k", lambda: job("reassigned"))
        assert await scheduler.drain(timeout=5)
        return pending_after_cancel, seen, scheduler.pending

    assert asyncio.run(scenario()) == (0, ["reassigned"], 0)


def test_a_job_submitted_while_its_key_is_being_cancelled_runs() -> None:
    async def scenario() -> list[str]:
        scheduler = KeyedScheduler()
        seen: list[str] = []
        started = asyncio.Event()

        async def stuck() -> None:
            started.set()
            try:
                await asyncio.sleep(10)
            finally:
                await asyncio.sleep(0.01)  # cleanup that yields while cancelled

        async def fresh() -> None:
            seen.append("fresh")

        scheduler.submit("k", stuck)
        await started.wait()
        cancelling = asyncio.create_task(scheduler.cancel(["k"]))
        await asyncio.sleep(0)
        scheduler.submit("k", fresh)
        await cancelling
        assert await scheduler.drain(timeout=5)
        assert scheduler.pending == 0
        return seen

    assert asyncio.run(scenario()) == ["fresh"]


def test_cancel_returns_even_when_a_job_swallows_the_first_cancellation() -> None:
    """As a client library can: the job goes on as if its call had failed."""

    async def scenario() -> int:
        scheduler = KeyedScheduler()
        swallowed = 0

        async def stubborn() -> None:
            nonlocal swallowed
            while True:
                try:
                    await asyncio.sleep(0.05)
                except asyncio.CancelledError:
                    if swallowed:
                        raise
                    swallowed += 1

        scheduler.submit("k", stubborn)
        await asyncio.sleep(0.01)
        await asyncio.wait_for(scheduler.cancel(["k"]), timeout=10)
        return swallowed

    assert asyncio.run(scenario()) == 1
