"""Consolidation end to end: what the write-time top-K missed, found and superseded once.

A contradiction is planted beyond the write-time top-K: "User is a backend
engineer at Datadog." (cosine 0.19 to the newcomer), then six facts closer to
the newcomer than it ("User starts … on Monday.", 0.47-0.50), then "User starts
at Stripe on Monday.". At write time the slot matcher sees the six only and
answers NONE; the scripted model knows that Stripe fills Datadog's slot, so a
consolidation pass that asks about the pairs the write path never compared
finds it. Also here: a pass racing writes for the same subject loses none of
them, a kill -9 during a pass leaves the state of a run without one, and a
superseded source marks its derived facts at depth 1..3 and not beyond.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from slotwise.loadtest.fake_anthropic import FakeAnthropic
from slotwise.processors.resolve import fact_id_for
from slotwise.streams.write.outputs import StoredOutputs
from slotwise.topics.records import CandidateFact
from tests.e2e.conftest import PipelineFactory
from tests.e2e.harness import Pipeline, store_call
from tests.e2e.lifecycle import (
    Rules,
    apply,
    by_text,
    candidate,
    cli,
    events,
    facts,
    popen,
    settle,
    wait_for,
    with_model,
)

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus]

DATADOG = "User is a backend engineer at Datadog."
STRIPE = "User starts at Stripe on Monday."
RELATED = [
    "User starts a pottery class on Monday.",
    "User starts Spanish lessons on Monday.",
    "User starts a new gym routine on Monday.",
    "User starts therapy on Monday.",
    "User starts volunteering at the shelter on Monday.",
    "User starts a cooking course on Monday.",
]
# The passes' clock, which is their commands' Kafka timestamp: recent, as every record's
# must be. The candidates topic keeps 7 days by record time, and the broker deletes older
# records at its next retention check whether a worker has read them or not.
AS_OF_TIME = datetime.now(UTC).replace(microsecond=0)
AS_OF = AS_OF_TIME.isoformat()


@pytest.fixture
def rules() -> Rules:
    return Rules(slot=[("Google", "Stripe"), ("Stripe", "Datadog")])


@pytest.fixture
def model(rules: Rules) -> Iterator[FakeAnthropic]:
    with FakeAnthropic(responder=rules) as fake:
        yield fake


def _planted(subject: str) -> list[CandidateFact]:
    texts = [DATADOG, *RELATED, STRIPE]
    return [candidate(subject, text, day=1 + i) for i, text in enumerate(texts)]


def _consolidate(pipeline: Pipeline, *args: str) -> dict[str, object]:
    out = cli(pipeline, "consolidate", "--as-of", AS_OF, "--json", *args, timeout=300).stdout
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _started(pipeline: Pipeline, model: FakeAnthropic) -> Pipeline:
    with_model(pipeline, model)
    pipeline.worker().wait_healthy()
    return pipeline


def test_a_contradiction_beyond_the_top_k_is_found_and_superseded_once(
    pipeline: Pipeline, model: FakeAnthropic, rules: Rules
) -> None:
    _started(pipeline, model)
    subject = f"planted-{uuid.uuid4().hex[:6]}"
    apply(pipeline, _planted(subject))
    found = by_text(pipeline, subject)
    assert found[DATADOG].status == "current" and found[STRIPE].status == "current"
    assert events(pipeline, subject) == [], "the write path missed it"

    report = _consolidate(pipeline, "--subject", subject)
    assert report["matches"] == 1 and report["commands"] == 1
    assert report["calls"] == report["questions"] and report["pairs_seen_at_write"] > 0
    settle(pipeline)
    found = by_text(pipeline, subject)
    assert found[DATADOG].status == "superseded"
    assert found[DATADOG].superseded_by == found[STRIPE].fact_id
    (event,) = events(pipeline, subject)
    assert (event.decided_by, event.old_text, event.new_text) == ("consolidation", DATADOG, STRIPE)

    # A later write supersedes Stripe: Datadog → Stripe → Google reads as Google in one step.
    google = candidate(subject, "User starts at Google on Monday.", day=40)
    apply(pipeline, [google])
    head = cli(pipeline, "facts", subject, "--fact", found[DATADOG].fact_id, "--json").stdout
    assert [json.loads(line)["text"] for line in head.splitlines()] == [google.text]
    chain = cli(pipeline, "facts", subject, "--fact", found[DATADOG].fact_id, "--history",
                "--json").stdout  # fmt: skip
    assert [json.loads(line)["text"] for line in chain.splitlines()] == [
        DATADOG,
        STRIPE,
        google.text,
    ]

    # A match leaves the rest of its question open (another neighbour may fill the slot
    # too), and Google's write compared it with five facts only: the next pass asks about
    # what is left once, and then nothing is left to ask.
    again = _consolidate(pipeline, "--subject", subject)
    assert again["matches"] == 0
    settle(pipeline)
    assert _consolidate(pipeline, "--subject", subject)["calls"] == 0
    settle(pipeline)
    assert [e.decided_by for e in events(pipeline, subject)] == ["consolidation", "llm"]


def test_a_pass_racing_writes_for_the_same_subject_loses_none_of_them(
    pipeline: Pipeline, model: FakeAnthropic, rules: Rules
) -> None:
    _started(pipeline, model)
    subject = f"race-{uuid.uuid4().hex[:6]}"
    apply(pipeline, _planted(subject))
    released = threading.Event()
    rules.hold["Stripe"] = released  # the pass's question about Stripe waits for the writes
    passing = popen(pipeline, pipeline.log_dir / "race-pass.log", "consolidate", "--subject",
                    subject, "--as-of", AS_OF, "--json")  # fmt: skip
    try:
        wait_for(rules.holding.is_set, 120, "the pass's question about Stripe")
        racing = [
            candidate(
                subject,
                f"User speaks language {i}.",
                day=30,
                attribute="languages",
                value=f"lang-{i}",
                category="languages",
            )
            for i in range(30)
        ]
        google = candidate(subject, "User starts at Google on Monday.", day=31)
        del rules.hold["Stripe"]
        apply(pipeline, [*racing, google])  # Google supersedes Stripe at write time
    finally:
        released.set()
    assert passing.wait(180) == 0
    settle(pipeline)

    for record in [*racing, google]:
        assert store_call(pipeline, "applied", subject, record.candidate_id) is not None
    current = {f.text for f in facts(pipeline, subject) if f.status == "current"}
    shown = [(e.old_text, e.new_text, e.decided_by) for e in events(pipeline, subject)]
    assert {r.text for r in racing} | {google.text, DATADOG} <= current, shown
    assert STRIPE not in current
    stripe = by_text(pipeline, subject)[STRIPE]
    assert stripe.superseded_by == fact_id_for(google), "the write's supersession stands"
    consolidations = [e for e in events(pipeline, subject) if e.decided_by == "consolidation"]
    assert consolidations == [], "the finding about Stripe was decided against a changed fact"
    blobs = [StoredOutputs.decode(b) for b in _applied_commands(pipeline, subject)]
    assert any("1 dropped" in (o.reason or "") for o in blobs)


def _applied_commands(pipeline: Pipeline, subject: str) -> list[bytes]:
    import redis  # noqa: PLC0415

    client = redis.Redis.from_url(pipeline.settings.redis_url)
    try:
        key = f"{pipeline.redis_prefix}:{{{subject}}}:applied"
        return [v for v in client.hvals(key) if b"consolidation" in v]
    finally:
        client.close()


def test_superseding_a_source_marks_derived_facts_at_depth_1_to_3_and_not_beyond(
    pipeline: Pipeline, model: FakeAnthropic, rules: Rules
) -> None:
    _started(pipeline, model)
    subject = f"derived-{uuid.uuid4().hex[:6]}"
    source = candidate(subject, "User lives in Lisbon.", attribute="home_city", value="Lisbon",
                       category="home")  # fmt: skip
    chain = [source]
    for depth in range(1, 5):
        chain.append(
            candidate(
                subject,
                f"Summary level {depth} of where the user lives.",
                day=1 + depth,
                derived_from=(fact_id_for(chain[-1]),),
            )
        )
    apply(pipeline, chain)
    apply(pipeline, [candidate(subject, "User lives in Porto.", day=10, attribute="home_city",
                               value="Porto", category="home")])  # fmt: skip
    flagged = {f.text: f.needs_revalidation for f in facts(pipeline, subject) if f.derived_from}
    assert [flagged[c.text] for c in chain[1:]] == [True, True, True, False]
    shown = cli(pipeline, "facts", subject, "--json").stdout
    assert sum(json.loads(line)["needs_revalidation"] for line in shown.splitlines()) == 3

    rules.rederive["level 3"] = {"verdict": "rewrite", "text": "User lives in Porto (summary)."}
    report = _consolidate(pipeline, "--subject", subject)
    assert report["revalidated"] == 3
    settle(pipeline)
    now = {f.text: f for f in facts(pipeline, subject)}
    rewritten = now["User lives in Porto (summary)."]
    assert rewritten.status == "current" and rewritten.supersedes == fact_id_for(chain[3])
    assert rewritten.derived_from == (fact_id_for(chain[2]),)
    still = [f.text for f in now.values() if f.status == "current" and f.needs_revalidation]
    assert still == [chain[4].text], "built on the rewritten fact: asked next pass"
    assert _consolidate(pipeline, "--subject", subject)["revalidated"] == 1
    settle(pipeline)
    assert not any(f.needs_revalidation for f in facts(pipeline, subject) if f.status == "current")


@pytest.mark.slow
def test_kill_9_during_a_consolidation_pass_leaves_the_state_of_a_clean_run(
    pipeline_factory: PipelineFactory, rules: Rules
) -> None:
    subjects = [f"k{i:02d}-{uuid.uuid4().hex[:4]}" for i in range(12)]
    records = [c for s in subjects for c in _planted(s)]
    base_ms = int((AS_OF_TIME - timedelta(hours=1)).timestamp() * 1000)  # both runs alike
    with FakeAnthropic(responder=rules, latency_s=0.15) as fake:
        clean, crashed = pipeline_factory(), pipeline_factory()
        for run in (clean, crashed):
            _started(run, fake)
            ends = run.publish(run.catalogue.candidates, records, base_timestamp_ms=base_ms)
            run.wait_committed(run.catalogue.candidates, ends, 300)
        _consolidate(clean, "--all")
        settle(clean)

        log = crashed.log_dir / "crash-pass.log"
        first = popen(crashed, log, "consolidate", "--all", "--as-of", AS_OF)
        wait_for(lambda: _consolidated(crashed, subjects) >= 2, 240, "a few subjects consolidated")
        crashed.workers[-1].kill()  # kill -9 the worker while commands are being applied
        first.kill()  # and the pass, half-way
        assert first.wait(10) == -9, "the pass was still running when it was killed"
        assert _consolidated(crashed, subjects) < len(subjects)
        crashed.worker().wait_healthy()
        settle(crashed, timeout=240)
        _consolidate(crashed, "--all")  # run again: it asks only about what is still open
        settle(crashed, timeout=240)

    for subject in subjects:
        assert facts(crashed, subject) == facts(clean, subject), subject
    ids = [e.event_id for e in events(crashed)]
    assert len(ids) == len(set(ids)) == len(subjects), "each supersession published once"
    assert sorted(ids) == sorted(e.event_id for e in events(clean))


def _consolidated(pipeline: Pipeline, subjects: list[str]) -> int:
    return sum(1 for s in subjects if by_text(pipeline, s)[DATADOG].status == "superseded")
