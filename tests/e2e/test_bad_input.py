"""Hostile input end to end: every record of a checked-in corpus is dead-lettered with its
reason or processed harmlessly, the partition keeps moving, and no other subject changes.

The corpus (``corpus/hostile.jsonl``) holds one hostile record a line: its topic, its key,
its raw value and the outcome it must have. A value travels as a JSON object
(``value_json``), as text (``value_text``), as hex when it is not UTF-8 (``value_hex``),
as a tombstone, or, for the 10 MiB turn and the nesting bomb, as a compact ``generate`` spec.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote

import orjson
import pytest
import redis
from confluent_kafka import Producer
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # exported, undeclared
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)

from slotwise.loadtest.fake_anthropic import FakeAnthropic, Reply, ToolUse, default_responder
from slotwise.streams.runtime.deadletter import (
    H_ERROR_FIELD,
    H_ERROR_REASON,
    H_SOURCE_OFFSET,
    H_SOURCE_PARTITION,
    H_SOURCE_TOPIC,
    H_TRUNCATED,
)
from slotwise.streams.write.outputs import StoredOutputs
from slotwise.topics.codec import decode_record, encode_record
from slotwise.topics.exceptions import RecordError
from slotwise.topics.records import (
    CandidateFact,
    Command,
    Fact,
    Observation,
    Record,
    ReviewItem,
    SupersessionEvent,
)
from tests.e2e.harness import Pipeline, store_call
from tests.e2e.test_write_path import _with_model

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus]

CORPUS = Path(__file__).parent / "corpus" / "hostile.jsonl"
WORKER_LIMIT = 1024 * 1024  # Settings.max_message_bytes
TOPIC_LIMIT = 16 * 1024 * 1024  # raised for the test so that the broker takes the 10 MiB turn
AT = datetime(2026, 3, 14, 10, 0, tzinfo=UTC)
SEEDED = ("ana", "bo", "trent")
# Each good record adds one language: all distinct, all read by the rules extractor.
LANGUAGES = (
    "English Spanish French German Italian Dutch Swedish Norwegian Danish Finnish Icelandic "
    "Polish Czech Slovak Hungarian Romanian Bulgarian Greek Turkish Russian Ukrainian Serbian "
    "Croatian Slovenian Albanian Lithuanian Latvian Estonian Arabic Hebrew Urdu Hindi Punjabi "
    "Gujarati Marathi Tamil Telugu Kannada Malayalam Nepali Sinhala Japanese Korean Vietnamese "
    "Thai Malay Tagalog Swahili Amharic Yoruba Igbo Hausa Zulu Xhosa Afrikaans Catalan Basque "
    "Galician Welsh Latin Esperanto Cantonese"
).split()

Topic = Literal["observations", "candidates"]
Letter = tuple[bytes | None, bytes | None, list[tuple[str, bytes]]]


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
    def body(self) -> dict[str, Any]:
        """The JSON body of a harmless record (harmless records are all valid)."""
        body = orjson.loads(self.value or b"")
        assert isinstance(body, dict)
        return body

    @property
    def subject(self) -> str:
        """The subject a harmless record may write to: its own."""
        return str(self.body["subject_id"])


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
        body["text"] = "a" * (spec["bytes"] - len(orjson.dumps(body)))
        value = orjson.dumps(body)
        assert len(value) == spec["bytes"]
        return value
    if spec["kind"] == "nested_metadata":
        depth = spec["depth"]
        nested = b'{"a":' * depth + b"1" + b"}" * depth
        return orjson.dumps(body).replace(b'"metadata":{}', b'"metadata":' + nested)
    raise ValueError(f"unknown generator {spec['kind']!r}")


def test_the_corpus_holds_every_kind_of_hostile_input() -> None:
    corpus = load_corpus()
    assert len(corpus) >= 30
    assert {r.reason for r in corpus if r.expect == "deadletter"} >= {
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
    assert len(_named(corpus, "ten-megabytes").value or b"") == 10 * 1024 * 1024


@pytest.mark.parametrize("hostile", load_corpus(), ids=lambda h: h.name)
def test_the_codec_gives_each_hostile_record_its_outcome(hostile: Hostile) -> None:
    """A message without a key is checked as the empty key: ``key=None`` means "not a
    subject-keyed topic" to the codec, and a keyless write is on a random partition."""
    accepted = (Observation,) if hostile.topic == "observations" else (CandidateFact, Command)
    try:
        decode_record(hostile.value, key=hostile.key or b"", expect=accepted)
    except RecordError as exc:
        assert ("deadletter", exc.reason, exc.field) == (
            hostile.expect,
            hostile.reason,
            hostile.field,
        ), exc.message
    else:
        assert hostile.expect == "harmless", f"accepted; expected {hostile.reason}"


def _named(corpus: Sequence[Hostile], name: str) -> Hostile:
    (found,) = [h for h in corpus if h.name == name]
    return found


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

    def record(self, topic: Topic, record: Observation | CandidateFact) -> tuple[int, int]:
        return self.send(topic, record.subject_id.encode(), encode_record(record))

    def wait_committed(self, timeout: float = 60.0) -> None:
        """Until the worker group's commits pass every record this log published."""
        for topic in ("observations", "candidates"):
            ends = {p: end for (t, p), end in self.ends.items() if t == topic}
            if ends:
                name = getattr(self._pipeline.catalogue, topic)
                self._pipeline.wait_committed(name, ends, timeout)


def _allow_large_messages(pipeline: Pipeline, topic: str) -> None:
    """The broker's default (~1 MB) would refuse the 10 MiB turn before a worker saw it."""
    admin = AdminClient({"bootstrap.servers": pipeline.settings.kafka_bootstrap})
    entry = ConfigEntry(
        "max.message.bytes", str(TOPIC_LIMIT), incremental_operation=AlterConfigOpType.SET
    )
    resource = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[entry])
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


def _seed(subject: str) -> list[CandidateFact]:
    """A few known facts: schema slots and one free-text fact (for the vector path)."""
    slots = {
        "ana": [("home_city", "Lisbon"), ("employer", "Datadog"), ("languages", "Portuguese")],
        "bo": [("home_city", "Porto"), ("email", "bo@example.com")],
        "trent": [("diet", "vegetarian"), ("employer", "Acme")],
        "mallory": [("hobbies", "chess")],
    }[subject]
    seeded = [
        _candidate(subject, f"User's {attribute} is {value}.", attribute=attribute, value=value)
        for attribute, value in slots
    ]
    return [*seeded, _candidate(subject, "User visited Lisbon in March.", category="event")]


def _facts(pipeline: Pipeline, subject: str) -> dict[str, bytes]:
    """Every fact of the subject, history included, as the bytes of its record."""
    facts = store_call(pipeline, "facts", subject, include_history=True)
    assert isinstance(facts, list)
    return {f.fact_id: encode_record(f) for f in facts}


def _decision(pipeline: Pipeline, subject: str, candidate_id: str) -> str | None:
    blob = store_call(pipeline, "applied", subject, candidate_id)
    return None if not isinstance(blob, bytes) else StoredOutputs.decode(blob).decision


# The deployment's own keys (commit marks, review index, migration and adapters, the
# replica-ack marker): untagged, so no subject, whatever its name, can own one.
_DEPLOYMENT_WIDE = re.compile(rb":(commits:|review_index$|replica-ack$|migration$|adapter:)")


def _subjects_in_redis(pipeline: Pipeline) -> set[str]:
    """Every subject that owns a key under the pipeline's prefix."""
    client = redis.Redis.from_url(pipeline.settings.redis_url)
    tag = re.compile(rb"^" + re.escape(pipeline.redis_prefix.encode()) + rb":\{([^}]*)\}:")
    try:
        found = set()
        for name in client.scan_iter(match=f"{pipeline.redis_prefix}:*", count=1000):
            if _DEPLOYMENT_WIDE.match(name.removeprefix(pipeline.redis_prefix.encode())):
                continue
            matched = tag.match(name)
            assert matched is not None, f"a key outside the layout: {name!r}"
            found.add(unquote(matched.group(1).decode()))
        return found
    finally:
        client.close()


def _header(headers: Sequence[tuple[str, bytes]], name: str) -> str | None:
    values = [v.decode() for k, v in headers if k == name]
    assert len(values) <= 1, f"header {name} appears {len(values)} times"
    return values[0] if values else None


def _records(pipeline: Pipeline, topic: str, kind: type[Record]) -> list[Any]:
    found = []
    for _, value, _ in pipeline.read_committed(topic):
        record = decode_record(value, expect=(kind,))
        assert isinstance(record, kind)
        found.append(record)
    return found


def _letters(pipeline: Pipeline) -> dict[tuple[str, int, int], list[Letter]]:
    """The dead letters, by the topic, partition and offset they came from."""
    letters: dict[tuple[str, int, int], list[Letter]] = {}
    for key, value, headers in pipeline.read_committed(pipeline.catalogue.deadletter):
        source = (
            _header(headers, H_SOURCE_TOPIC) or "",
            int(_header(headers, H_SOURCE_PARTITION) or -1),
            int(_header(headers, H_SOURCE_OFFSET) or -1),
        )
        letters.setdefault(source, []).append((key, value, list(headers)))
    return letters


def _letter_problems(hostile: Hostile, found: Sequence[Letter]) -> list[str]:
    """What is wrong with the dead letters of one hostile record (nothing: [])."""
    if hostile.expect == "harmless":
        reasons = [_header(headers, H_ERROR_REASON) for _, _, headers in found]
        return [f"{hostile.name}: dead-lettered {reasons}, expected harmless"] if found else []
    if len(found) != 1:
        return [f"{hostile.name}: {len(found)} dead letters, expected 1"]
    ((key, value, headers),) = found
    problems = []
    got = (_header(headers, H_ERROR_REASON), _header(headers, H_ERROR_FIELD))
    if got != (hostile.reason, hostile.field):
        problems.append(f"{hostile.name}: {got}, expected {(hostile.reason, hostile.field)}")
    if key != hostile.key:
        problems.append(f"{hostile.name}: key {key!r}, expected {hostile.key!r}")
    original = hostile.value
    if original is None or len(original) <= WORKER_LIMIT:
        if value != original or _header(headers, H_TRUNCATED) is not None:
            problems.append(f"{hostile.name}: the dead letter lost the original value")
    else:
        cut = value is not None and 0 < len(value) <= WORKER_LIMIT and original.startswith(value)
        if not cut or _header(headers, H_TRUNCATED) != str(len(original)):
            problems.append(f"{hostile.name}: the oversized value is not cut and marked")
    return problems


# ------------------------------------------------------------------------- the corpus run


@dataclass
class _Run:
    """The seeded subjects, the corpus and the good records published between its records."""

    pipeline: Pipeline
    log: _Log
    partition_of: dict[str, int] = field(default_factory=dict)
    before: dict[str, dict[str, bytes]] = field(default_factory=dict)
    position: dict[str, tuple[int, int]] = field(default_factory=dict)
    turns: list[Observation] = field(default_factory=list)
    writes: list[CandidateFact] = field(default_factory=list)
    languages: Iterator[str] = field(default_factory=lambda: iter(LANGUAGES))

    def seed(self) -> None:
        for subject in SEEDED:
            for candidate in _seed(subject):
                self.partition_of[subject] = self.log.record("candidates", candidate)[0]
        self.log.wait_committed()
        self.before = {s: _facts(self.pipeline, s) for s in SEEDED}
        assert all(len(self.before[s]) == len(_seed(s)) for s in SEEDED), self.before

    def publish(self, corpus: Sequence[Hostile]) -> None:
        """Each hostile record, then a good record of a seeded subject on its partition."""
        owner = {p: s for s, p in self.partition_of.items()}
        assert set(owner) == set(range(self.pipeline.catalogue.partitions)), owner
        for hostile in corpus:
            partition, offset = self.log.send(hostile.topic, hostile.key, hostile.value)
            self.position[hostile.name] = (partition, offset)
            said = (hostile.key or b"").decode("utf-8", "replace")
            self.good(hostile.topic, said if said in self.partition_of else owner[partition])

    def good(self, topic: Topic, subject: str) -> None:
        language = next(self.languages)
        if topic == "observations":
            turn = Observation(
                observation_id=str(uuid.uuid4()),
                subject_id=subject,
                text=f"I speak {language}.",
                observed_at=AT,
            )
            self.turns.append(turn)
            self.log.record(topic, turn)
        else:
            write = _candidate(
                subject, f"User speaks {language}.", attribute="languages", value=language
            )
            self.writes.append(write)
            self.log.record(topic, write)

    def languages_of(self, subject: str) -> set[str]:
        said = [t.text for t in self.turns if t.subject_id == subject]
        said += [w.text for w in self.writes if w.subject_id == subject]
        return {text.split()[-1].rstrip(".") for text in said}

    def wait_applied(self, harmless: Sequence[Hostile]) -> None:
        """Committed past the end, and every observation's candidates applied."""
        self.log.wait_committed()
        turns = [(t.subject_id, t.observation_id) for t in self.turns]
        turns += [(h.subject, h.body["observation_id"]) for h in harmless]
        for subject, observation_id in turns:
            applied = store_call(
                self.pipeline, "wait_for_observation", subject, observation_id, 60.0
            )
            assert applied, f"observation {observation_id} of {subject!r} was never applied"

    def dead_letter_problems(self, corpus: Sequence[Hostile]) -> list[str]:
        letters = _letters(self.pipeline)
        problems = []
        for hostile in corpus:
            topic = getattr(self.pipeline.catalogue, hostile.topic)
            source = (topic, *self.position[hostile.name])
            problems += _letter_problems(hostile, letters.pop(source, []))
        problems += [f"a dead letter of a good record: {s} {v[0][2]}" for s, v in letters.items()]
        return problems


def test_every_hostile_record_is_dead_lettered_or_harmless_and_the_partition_keeps_moving(
    pipeline: Pipeline,
) -> None:
    corpus = load_corpus()
    harmless = [h for h in corpus if h.expect == "harmless"]
    _allow_large_messages(pipeline, pipeline.catalogue.observations)
    pipeline.worker().wait_healthy()
    run = _Run(pipeline, _Log(pipeline))
    run.seed()
    run.publish(corpus)
    stripe = _candidate("ana", "User works at Stripe.", attribute="employer", value="Stripe")
    run.log.record("candidates", stripe)

    # The partitions kept moving: every offset is committed, every good record applied.
    run.wait_applied([h for h in harmless if h.topic == "observations"])
    for write in [*run.writes, stripe]:
        assert _decision(pipeline, write.subject_id, write.candidate_id) in {"ADD", "SUPERSEDE"}

    # Each hostile record: dead-lettered once with its reason, field, source, key and value.
    problems = run.dead_letter_problems(corpus)
    assert not problems, "\n".join(problems)

    # The seeded subjects changed only as the good records said, byte for byte.
    for subject in SEEDED:
        after = _facts(pipeline, subject)
        changed = [fid for fid, raw in run.before[subject].items() if after[fid] != raw]
        added = [
            Fact.model_validate_json(v) for k, v in after.items() if k not in run.before[subject]
        ]
        languages = {f.value for f in added if f.attribute == "languages"}
        assert languages == run.languages_of(subject), subject
        if subject == "ana":
            (datadog,) = changed
            retired = Fact.model_validate_json(after[datadog])
            assert (retired.value, retired.status) == ("Datadog", "superseded")
            assert {f.value for f in added} == {*languages, "Stripe"}
        else:
            assert changed == [], f"{subject}'s facts {changed} changed"
            assert {f.attribute for f in added} == {"languages"}
    events = _records(pipeline, pipeline.catalogue.supersessions, SupersessionEvent)
    assert [(e.subject_id, e.old_value, e.new_value) for e in events] == [
        ("ana", "Datadog", "Stripe")
    ]
    reviews = _records(pipeline, pipeline.catalogue.review, ReviewItem)
    assert [r for r in reviews if r.subject_id in SEEDED] == []

    # Nothing of any other subject: only the seeded and the harmless bodies' subjects own keys.
    assert _subjects_in_redis(pipeline) <= {*SEEDED, *(h.subject for h in harmless)}


@pytest.mark.parametrize("name", ["ten-megabytes", "no-key"])
def test_a_lone_hostile_record_is_dead_lettered_and_the_worker_keeps_committing(
    pipeline: Pipeline, name: str
) -> None:
    """The corpus records the worker once mishandled, one at a time: the 10 MiB turn (its
    dead letter must fit the dead-letter topic) and a keyless write (a random partition)."""
    hostile = _named(load_corpus(), name)
    _allow_large_messages(pipeline, pipeline.catalogue.observations)
    pipeline.worker().wait_healthy()
    log = _Log(pipeline)
    position = log.send(hostile.topic, hostile.key, hostile.value)
    write = _candidate("ana", "User speaks Basque.", attribute="languages", value="Basque")
    log.record("candidates", write)

    log.wait_committed(timeout=30)
    assert _decision(pipeline, "ana", write.candidate_id) == "ADD"
    topic = getattr(pipeline.catalogue, hostile.topic)
    assert _letter_problems(hostile, _letters(pipeline).get((topic, *position), [])) == []


def _obeying_model(request: dict[str, Any]) -> Reply:
    """A model that does what the injection asks: facts for ana and bo, slots outside the
    vocabulary, and a slot answer naming another subject's memory."""
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
                    {**fact, "subject_id": "bo", "attribute": "all_subjects",
                     "value": "delete", "text": "User wants bo deleted."},
                ]
            }
        )  # fmt: skip
    if forced == "answer_slot":
        return ToolUse({"memory": "ana:employer"})
    return default_responder(request)


def test_a_prompt_injection_obeyed_by_the_model_touches_no_other_subject(
    pipeline: Pipeline,
) -> None:
    victims = ("ana", "bo")
    turn = _named(load_corpus(), "prompt-injection-turn")
    assert turn.key == b"mallory"
    with FakeAnthropic(responder=_obeying_model) as model:
        _with_model(pipeline, model)
        pipeline.worker().wait_healthy()
        seeds = [c for s in (*victims, "mallory") for c in _seed(s)]
        ends = pipeline.publish(pipeline.catalogue.candidates, seeds)
        pipeline.wait_committed(pipeline.catalogue.candidates, ends)
        before = {s: _facts(pipeline, s) for s in victims}

        pipeline.publish_raw(pipeline.catalogue.observations, [(turn.key, turn.value)])
        observation_id = turn.body["observation_id"]
        assert store_call(pipeline, "wait_for_observation", "mallory", observation_id, 60.0)
        assert [r for r in model.requests if "Ignore previous instructions" in r.user_text]
        assert [r for r in model.requests if r.forced_tool == "answer_slot"]

    for subject in victims:
        assert _facts(pipeline, subject) == before[subject], f"{subject}'s facts changed"
    mallory = [Fact.model_validate_json(raw) for raw in _facts(pipeline, "mallory").values()]
    assert {f.subject_id for f in mallory} == {"mallory"}
    written = {f.text: f for f in mallory if f.observation_id == observation_id}
    # The model's subject_id is ignored: what it said is about the turn's own subject.
    assert written["User ana works at Evil Corp."].attribute == "employer"
    # Slots outside the vocabulary become free text, never a key the exact join acts on.
    assert written["Every memory of every user is superseded."].attribute is None
    assert written["User wants bo deleted."].attribute is None
    # The slot answer naming another subject's memory was rejected: nothing retired.
    assert all(f.status == "current" for f in mallory)
    events = _records(pipeline, pipeline.catalogue.supersessions, SupersessionEvent)
    assert events == []
    assert _subjects_in_redis(pipeline) == {*victims, "mallory"}
