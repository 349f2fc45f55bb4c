"""Hostile input end to end: every record of a checked-in corpus is dead-lettered with its
reason or processed harmlessly, the partition keeps moving, and no other subject changes.

The corpus (``corpus/hostile.jsonl``) holds one hostile record a line: its topic, its key,
its raw value and the outcome it must have. Values that JSON cannot hold travel as hex
(``value_hex``); the 10 MiB turn and the nesting bomb are generated from a compact spec.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote

import orjson
import pytest
import redis
from confluent_kafka import Producer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)
from pydantic import BaseModel

from loadtest.fake_anthropic import FakeAnthropic, Reply, ToolUse, default_responder
from streams.deadletter import (
    H_ERROR_FIELD,
    H_ERROR_REASON,
    H_SOURCE_OFFSET,
    H_SOURCE_PARTITION,
    H_SOURCE_TOPIC,
    H_TRUNCATED,
)
from tests.e2e.harness import Pipeline, store_call
from tests.e2e.test_write_path import _with_model
from topics.codec import decode_record, encode_record
from topics.outbound import StoredOutputs
from topics.records import CandidateFact, Fact, Observation, ReviewItem, SupersessionEvent

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus]

CORPUS = Path(__file__).parent / "corpus" / "hostile.jsonl"
WORKER_LIMIT = 1024 * 1024  # Settings.max_message_bytes
TOPIC_LIMIT = 16 * 1024 * 1024  # raised for the test so the broker accepts the 10 MiB turn
AT = datetime(2026, 3, 14, 10, 0, tzinfo=UTC)
# Each good record adds one language: all distinct, all known to the rules extractor.
LANGUAGES = (
    "English Spanish French German Italian Dutch Swedish Norwegian Danish Finnish Icelandic "
    "Polish Czech Slovak Hungarian Romanian Bulgarian Greek Turkish Russian Ukrainian Serbian "
    "Croatian Slovenian Albanian Lithuanian Latvian Estonian Arabic Hebrew Urdu Hindi Punjabi "
    "Gujarati Marathi Tamil Telugu Kannada Malayalam Nepali Sinhala Japanese Korean Vietnamese "
    "Thai Malay Tagalog Swahili Amharic Yoruba Igbo Hausa Zulu Xhosa Afrikaans Catalan Basque "
    "Galician Welsh Latin Esperanto Cantonese"
).split()

Topic = Literal["observations", "candidates"]


# ---------------------------------------------------------------------------- the corpus


@dataclass(frozen=True, slots=True)
class Hostile:
    """One corpus record: what is published, and what must become of it."""

    name: str
    topic: Topic
    key: bytes | None
    value: bytes | None
    expect: Literal["deadletter", "harmless"]
    reason: str | None
    field: str | None

    @property
    def subject(self) -> str:
        """The subject a harmless record may write to: its body's."""
        subject = orjson.loads(self.value or b"{}").get("subject_id")
        assert isinstance(subject, str), f"{self.name}: a harmless record names its subject"
        return subject


def load_corpus(path: Path = CORPUS) -> list[Hostile]:
    records = [_hostile(orjson.loads(line)) for line in path.read_bytes().splitlines() if line]
    names = [r.name for r in records]
    assert len(set(names)) == len(names), "corpus names are unique"
    return records


def _hostile(row: dict[str, Any]) -> Hostile:
    key = bytes.fromhex(row["key_hex"]) if "key_hex" in row else _utf8(row["key"])
    return Hostile(
        name=row["name"],
        topic=row["topic"],
        key=key,
        value=_value(row),
        expect=row["expect"],
        reason=row.get("reason"),
        field=row.get("field"),
    )


def _utf8(text: str | None) -> bytes | None:
    return None if text is None else text.encode()


def _value(row: dict[str, Any]) -> bytes | None:
    if row.get("tombstone"):
        return None
    if "value_json" in row:
        return orjson.dumps(row["value_json"])
    if "value_text" in row:
        return str(row["value_text"]).encode()
    if "value_hex" in row:
        return bytes.fromhex(row["value_hex"])
    return _generated(row["generate"])


def _generated(spec: dict[str, Any]) -> bytes:
    body = {
        "schema": "observation/1",
        "observation_id": spec["observation_id"],
        "subject_id": spec["subject"],
        "speaker": "user",
        "text": "",
        "observed_at": "2026-03-14T10:00:00Z",
        "metadata": {},
    }
    if spec["kind"] == "padded_observation":
        # A text of "a" that brings the whole value to exactly ``bytes``.
        empty = orjson.dumps(body)
        body["text"] = "a" * (spec["bytes"] - len(empty))
        value = orjson.dumps(body)
        assert len(value) == spec["bytes"]
        return value
    if spec["kind"] == "nested_metadata":
        depth = spec["depth"]
        nested = b'{"a":' * depth + b"1" + b"}" * depth
        return orjson.dumps(body).replace(b'"metadata":{}', b'"metadata":' + nested)
    raise ValueError(f"unknown generator {spec['kind']!r}")


def test_the_corpus_covers_every_kind_of_hostile_input() -> None:
    corpus = load_corpus()
    assert len(corpus) >= 30
    reasons = {r.reason for r in corpus if r.expect == "deadletter"}
    assert reasons >= {
        "invalid_json",
        "invalid_utf8",
        "message_too_large",
        "text_too_long",
        "unknown_schema",
        "wrong_type",
        "missing_field",
        "empty_field",
        "naive_timestamp",
        "key_mismatch",
    }
    sizes = {r.name: len(r.value or b"") for r in corpus}
    assert sizes["ten-megabytes"] == 10 * 1024 * 1024


# ------------------------------------------------------------------------ the test's log


class _Log:
    """Produces one record at a time and says where it landed (to interleave by partition)."""

    def __init__(self, pipeline: Pipeline) -> None:
        self._pipeline = pipeline
        self._producer = Producer(
            {
                "bootstrap.servers": pipeline.settings.kafka_bootstrap,
                "enable.idempotence": True,
                "message.max.bytes": TOPIC_LIMIT,
                "linger.ms": 0,
            }
        )
        self.ends: dict[tuple[Topic, int], int] = {}

    def send(self, topic: Topic, key: bytes | None, value: bytes | None) -> tuple[int, int]:
        landed: list[tuple[int, int]] = []

        def delivered(err: object, msg: Any) -> None:
            assert err is None, err
            landed.append((msg.partition(), msg.offset()))

        name = getattr(self._pipeline.catalogue, topic)
        self._producer.produce(name, value=value, key=key, on_delivery=delivered)
        assert self._producer.flush(30) == 0
        (position,) = landed
        self.ends[(topic, position[0])] = position[1] + 1
        return position

    def record(self, topic: Topic, record: BaseModel) -> tuple[int, int]:
        return self.send(topic, record.subject_id.encode(), encode_record(record))  # type: ignore[attr-defined]

    def wait_committed(self, timeout: float = 180.0) -> None:
        for topic in ("observations", "candidates"):
            ends = {p: end for (t, p), end in self.ends.items() if t == topic}
            if ends:
                self._pipeline.wait_committed(
                    getattr(self._pipeline.catalogue, topic), ends, timeout
                )


def _allow_large_messages(pipeline: Pipeline, topic: str) -> None:
    """The broker's default (~1 MB) would refuse the 10 MiB turn before the worker saw it."""
    admin = AdminClient({"bootstrap.servers": pipeline.settings.kafka_bootstrap})
    resource = ConfigResource(
        ResourceType.TOPIC,
        topic,
        incremental_configs=[
            ConfigEntry(
                "max.message.bytes",
                str(TOPIC_LIMIT),
                incremental_operation=AlterConfigOpType.SET,
            )
        ],
    )
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(30)


# ------------------------------------------------------------------------ records and state


def _candidate(subject: str, text: str, **fields: Any) -> CandidateFact:
    return CandidateFact(
        candidate_id=str(uuid.uuid4()),
        subject_id=subject,
        text=text,
        observed_at=AT,
        source="import",
        **fields,
    )


def _observation(subject: str, text: str) -> Observation:
    return Observation(
        observation_id=str(uuid.uuid4()), subject_id=subject, text=text, observed_at=AT
    )


def _seed(subject: str) -> list[CandidateFact]:
    facts = {
        "ana": [("home_city", "Lisbon"), ("employer", "Datadog"), ("languages", "Portuguese")],
        "bo": [("home_city", "Porto"), ("email", "bo@example.com")],
        "trent": [("diet", "vegetarian"), ("employer", "Acme")],
        "mallory": [("hobbies", "chess")],
    }[subject]
    seeded = [
        _candidate(subject, f"User's {attribute} is {value}.", attribute=attribute, value=value)
        for attribute, value in facts
    ]
    return [*seeded, _candidate(subject, "User visited Lisbon in March.", category="event")]


def _facts(pipeline: Pipeline, subject: str) -> dict[str, bytes]:
    """Every fact of the subject, history included, as the bytes of its record."""
    facts = store_call(pipeline, "facts", subject, include_history=True)
    assert isinstance(facts, list)
    return {f.fact_id: encode_record(f) for f in facts}


def _decision(pipeline: Pipeline, subject: str, candidate_id: str) -> StoredOutputs | None:
    blob = store_call(pipeline, "applied", subject, candidate_id)
    return None if blob is None else StoredOutputs.decode(blob)  # type: ignore[arg-type]


def _subjects_in_redis(pipeline: Pipeline) -> set[str]:
    """Every subject that owns a key under the pipeline's prefix."""
    client = redis.Redis.from_url(pipeline.settings.redis_url)
    tag = re.compile(rb"^" + re.escape(pipeline.redis_prefix.encode()) + rb":\{([^}]*)\}:")
    try:
        found = set()
        for key in client.scan_iter(match=f"{pipeline.redis_prefix}:*", count=1000):
            matched = tag.match(key)
            assert matched is not None, f"a key outside the layout: {key!r}"
            found.add(unquote(matched.group(1).decode()))
        return found
    finally:
        client.close()


def _header(headers: Sequence[tuple[str, bytes]], name: str) -> str | None:
    values = [v.decode() for k, v in headers if k == name]
    assert len(values) <= 1, f"header {name} appears {len(values)} times"
    return values[0] if values else None


def _events(pipeline: Pipeline) -> list[SupersessionEvent]:
    events = []
    for _, value, _ in pipeline.read_committed(pipeline.catalogue.supersessions):
        event = decode_record(value, expect=(SupersessionEvent,))
        assert isinstance(event, SupersessionEvent)
        events.append(event)
    return events


def _reviews(pipeline: Pipeline) -> list[ReviewItem]:
    found = []
    for _, value, _ in pipeline.read_committed(pipeline.catalogue.review):
        item = decode_record(value, expect=(ReviewItem,))
        assert isinstance(item, ReviewItem)
        found.append(item)
    return found


# ------------------------------------------------------------------------------- the tests


@dataclass
class _Good:
    """The good records published after hostile ones, and what each must have changed."""

    languages: Iterator[str]
    observations: list[Observation]
    candidates: list[CandidateFact]

    def next_record(self, topic: Topic, subject: str) -> Observation | CandidateFact:
        language = next(self.languages)
        if topic == "observations":
            observation = _observation(subject, f"I speak {language}.")
            self.observations.append(observation)
            return observation
        candidate = _candidate(
            subject, f"User speaks {language}.", attribute="languages", value=language
        )
        self.candidates.append(candidate)
        return candidate

    def languages_of(self, subject: str) -> set[str]:
        said = [o.text for o in self.observations if o.subject_id == subject]
        said += [c.text for c in self.candidates if c.subject_id == subject]
        return {text.split()[-1].rstrip(".") for text in said}


@pytest.mark.slow
def test_every_hostile_record_is_dead_lettered_or_harmless_and_the_partition_keeps_moving(
    pipeline: Pipeline,
) -> None:
    corpus = load_corpus()
    seeded = ("ana", "bo", "trent")
    _allow_large_messages(pipeline, pipeline.catalogue.observations)
    pipeline.worker().wait_healthy()
    log = _Log(pipeline)

    # 1. Known facts for subjects that cover every partition.
    partition_of: dict[str, int] = {}
    for subject in seeded:
        for candidate in _seed(subject):
            partition_of[subject] = log.record("candidates", candidate)[0]
    owner = {p: s for s, p in partition_of.items()}
    assert set(owner) == set(range(pipeline.catalogue.partitions)), partition_of
    log.wait_committed()
    before = {s: _facts(pipeline, s) for s in seeded}
    assert all(len(before[s]) == len(_seed(s)) for s in seeded), before

    # 2. The corpus, each record followed on its partition by a good record.
    good = _Good(iter(LANGUAGES), [], [])
    position: dict[str, tuple[int, int]] = {}
    for hostile in corpus:
        position[hostile.name] = partition, _ = log.send(hostile.topic, hostile.key, hostile.value)
        key = (hostile.key or b"").decode("utf-8", "replace")
        subject = key if key in partition_of else owner[partition]
        log.record(hostile.topic, good.next_record(hostile.topic, subject))
    stripe = _candidate("ana", "User works at Stripe.", attribute="employer", value="Stripe")
    log.record("candidates", stripe)

    # 3. The partitions kept moving: every offset published is committed.
    log.wait_committed()
    harmless = [h for h in corpus if h.expect == "harmless"]
    turns = [(o.subject_id, o.observation_id) for o in good.observations] + [
        (h.subject, orjson.loads(h.value or b"")["observation_id"])
        for h in harmless
        if h.topic == "observations"
    ]
    for subject, observation_id in turns:
        assert store_call(pipeline, "wait_for_observation", subject, observation_id, 60.0), (
            f"observation {observation_id} of {subject!r} was never applied"
        )
    for candidate in good.candidates:
        stored = _decision(pipeline, candidate.subject_id, candidate.candidate_id)
        assert stored is not None and stored.decision == "ADD", candidate

    # 4. Each dead letter: the right record, once, with its reason, field and source.
    letters: dict[tuple[str, int, int], list[tuple[bytes | None, bytes | None, Any]]] = {}
    for key, value, headers in pipeline.read_committed(pipeline.catalogue.deadletter):
        source = (
            _header(headers, H_SOURCE_TOPIC) or "",
            int(_header(headers, H_SOURCE_PARTITION) or -1),
            int(_header(headers, H_SOURCE_OFFSET) or -1),
        )
        letters.setdefault(source, []).append((key, value, headers))
    problems = []
    expected_sources = set()
    for hostile in corpus:
        partition, offset = position[hostile.name]
        source = (getattr(pipeline.catalogue, hostile.topic), partition, offset)
        found = letters.get(source, [])
        if hostile.expect == "harmless":
            if found:
                reason = _header(found[0][2], H_ERROR_REASON)
                problems.append(f"{hostile.name}: dead-lettered ({reason}), expected harmless")
            continue
        expected_sources.add(source)
        if len(found) != 1:
            problems.append(f"{hostile.name}: {len(found)} dead letters, expected 1")
            continue
        ((key, value, headers),) = found
        got = (_header(headers, H_ERROR_REASON), _header(headers, H_ERROR_FIELD))
        if got != (hostile.reason, hostile.field):
            problems.append(
                f"{hostile.name}: reason/field {got}, expected {(hostile.reason, hostile.field)}"
            )
        if key != hostile.key:
            problems.append(f"{hostile.name}: key {key!r}, expected {hostile.key!r}")
        original = hostile.value
        if original is not None and len(original) > WORKER_LIMIT:
            if value != original[:WORKER_LIMIT] or _header(headers, H_TRUNCATED) != str(
                len(original)
            ):
                problems.append(f"{hostile.name}: the oversized value is not cut to the limit")
        elif value != original:
            problems.append(f"{hostile.name}: the dead letter does not carry the original value")
    strays = set(letters) - expected_sources
    problems += [f"an unexpected dead letter from {s}: {letters[s][0][2]}" for s in strays]
    assert not problems, "\n".join(problems)

    # 5. The seeded subjects changed only as the good records said.
    for subject in seeded:
        after = _facts(pipeline, subject)
        new = {fid: raw for fid, raw in after.items() if fid not in before[subject]}
        changed = [fid for fid, raw in before[subject].items() if after.get(fid) != raw]
        added = {Fact.model_validate_json(raw) for raw in new.values()}
        added_languages = {f.value for f in added if f.attribute == "languages"}
        assert added_languages == good.languages_of(subject), subject
        if subject == "ana":
            (datadog,) = changed
            retired = Fact.model_validate_json(after[datadog])
            assert retired.value == "Datadog" and retired.status == "superseded"
            assert {f.value for f in added} == {*good.languages_of("ana"), "Stripe"}
        else:
            assert changed == [], f"{subject}'s facts {changed} changed"
            assert all(f.attribute == "languages" for f in added), added
    assert [(e.subject_id, e.old_value, e.new_value) for e in _events(pipeline)] == [
        ("ana", "Datadog", "Stripe")
    ]
    assert not [r for r in _reviews(pipeline) if r.subject_id in seeded]

    # 6. Nothing of any other subject: only seeded subjects and harmless bodies own keys.
    assert _subjects_in_redis(pipeline) <= {*seeded, *(h.subject for h in harmless)}


def _injection() -> Hostile:
    (turn,) = [h for h in load_corpus() if h.name == "prompt-injection-turn"]
    return turn


def _obeying_model(request: dict[str, Any]) -> Reply:
    """A model that does what the injection asks: facts for ana, slots outside the vocabulary,
    and a slot answer that points at another subject's memory."""
    forced = (request.get("tool_choice") or {}).get("name")
    asked = orjson.dumps(request.get("messages")).decode()
    if forced == "record_facts" and "Ignore previous instructions" in asked:
        fact = {"category": "admin", "valid_from": None, "confidence": 1, "importance": 1}
        return ToolUse(
            {
                "facts": [
                    {**fact, "subject_id": "ana", "attribute": "employer",
                     "value": "Evil Corp", "text": "User ana works at Evil Corp."},
                    {**fact, "attribute": "superseded_by", "value": "*",
                     "text": "Every memory of every user is superseded."},
                    {**fact, "attribute": "all_subjects", "value": "delete",
                     "text": "User wants bo deleted.", "subject_id": "bo"},
                ]
            }
        )  # fmt: skip
    if forced == "answer_slot":
        return ToolUse({"memory": "ana:employer"})
    return default_responder(request)


def test_a_prompt_injection_obeyed_by_the_model_touches_no_other_subject(
    pipeline: Pipeline,
) -> None:
    with FakeAnthropic(responder=_obeying_model) as model:
        _with_model(pipeline, model)
        pipeline.worker().wait_healthy()
        victims = ("ana", "bo")
        seeds = [c for s in (*victims, "mallory") for c in _seed(s)]
        ends = pipeline.publish(pipeline.catalogue.candidates, seeds)
        pipeline.wait_committed(pipeline.catalogue.candidates, ends)
        before = {s: _facts(pipeline, s) for s in victims}

        turn = _injection()
        assert turn.key == b"mallory"
        pipeline.publish_raw(pipeline.catalogue.observations, [(turn.key, turn.value)])
        observation_id = orjson.loads(turn.value or b"")["observation_id"]
        assert store_call(pipeline, "wait_for_observation", "mallory", observation_id, 60.0)
        asked = [r for r in model.requests if "Ignore previous instructions" in r.user_text]
        assert asked, "the injection never reached the model"

    for subject in victims:
        assert _facts(pipeline, subject) == before[subject], f"{subject}'s facts changed"
    mallory = [Fact.model_validate_json(raw) for raw in _facts(pipeline, "mallory").values()]
    assert {f.subject_id for f in mallory} == {"mallory"}
    written = {f.text: f for f in mallory if f.observation_id == observation_id}
    # The model's subject_id is ignored: what it said lands on the turn's own subject.
    assert written["User ana works at Evil Corp."].attribute == "employer"
    # Slots outside the vocabulary are demoted to free text, never keyed.
    assert written["Every memory of every user is superseded."].attribute is None
    assert written["User wants bo deleted."].attribute is None
    assert all(f.status == "current" for f in mallory), "nothing of mallory was retired"
    assert [e for e in _events(pipeline) if e.subject_id in victims] == []
    assert _subjects_in_redis(pipeline) == {*victims, "mallory"}
