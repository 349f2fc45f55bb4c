"""Topic retention read from the real broker, as an erasure's attestation reports it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from slotwise.sinks.kafka.retention import RetentionReader
from slotwise.topics.catalogue import Catalogue

pytestmark = pytest.mark.kafka

DAY_MS = 24 * 3600 * 1000


def test_the_catalogues_retention_is_read_back_from_the_broker(
    kafka_bootstrap: str, catalogue: Catalogue
) -> None:
    names = [spec.name for spec in catalogue.specs()]
    retention = RetentionReader(kafka_bootstrap, names).read()
    assert set(retention.topics) == set(names)
    candidates = retention.topics[catalogue.candidates]
    assert (candidates.cleanup_policy, candidates.retention_ms) == ("delete", 7 * DAY_MS)
    facts = retention.topics[catalogue.facts]
    # The catalogue bounds how long a value stays readable behind a tombstone.
    assert (facts.cleanup_policy, facts.max_compaction_lag_ms) == ("compact", DAY_MS)
    moment = datetime(2026, 3, 1, tzinfo=UTC)
    bound = retention.expires_by(catalogue.facts, moment)
    assert bound is not None and moment < bound <= moment + timedelta(days=1, minutes=5)
    assert retention.check_interval_ms > 0
