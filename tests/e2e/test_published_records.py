"""Every record a real worker publishes validates against the published JSON Schemas."""

from __future__ import annotations

import uuid

import jsonschema
import pytest

from slotwise.streams.dev.demo import observations
from slotwise.topics.codec import loads
from slotwise.topics.contracts import MODELS, load
from tests.e2e.harness import Pipeline, store_call

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus]

_BY_SCHEMA = {f"{name}/1": name for name in MODELS}


def test_the_demo_conversations_records_all_validate(pipeline: Pipeline) -> None:
    subject = f"ana-{uuid.uuid4().hex[:6]}"
    turns = observations(subject)
    pipeline.worker().wait_healthy()
    pipeline.publish(pipeline.catalogue.observations, turns)
    assert store_call(pipeline, "wait_for_observation", subject, turns[-1].observation_id, 120.0)

    validators = {
        name: jsonschema.validators.validator_for(load(name))(load(name)) for name in MODELS
    }
    seen: dict[str, int] = {}
    catalogue = pipeline.catalogue
    for topic in (
        catalogue.observations,
        catalogue.candidates,
        catalogue.facts,
        catalogue.supersessions,
        catalogue.review,
    ):
        for _, value, _ in pipeline.read_committed(topic):
            assert value is not None
            body = loads(value)
            name = _BY_SCHEMA[body["schema"]]
            errors = [e.message for e in validators[name].iter_errors(body)]
            assert errors == [], f"{topic}: {body}"
            seen[body["schema"]] = seen.get(body["schema"], 0) + 1
    # The demo makes every record kind the worker publishes today.
    assert set(seen) >= {"observation/1", "candidate/1", "command/1", "fact/1",
                         "supersession/1", "review/1"}, seen  # fmt: skip
