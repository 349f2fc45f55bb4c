"""A subject's newest records from its partition: the worker's partitioner, committed only."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from slotwise.streams.read.subject_log import SubjectLog, partition_for
from slotwise.topics.catalogue import Catalogue
from slotwise.topics.codec import encode_record
from slotwise.topics.records import CandidateFact, ReviewItem
from tests.conftest import ProducerFactory

pytestmark = [pytest.mark.kafka]

_AT = datetime(2026, 3, 1, tzinfo=UTC)


def _item(subject: str, n: int) -> ReviewItem:
    return ReviewItem(
        review_id=f"r-{subject}-{n}",
        subject_id=subject,
        kind="high_stakes",
        reason=f"item {n}",
        candidate=CandidateFact(
            candidate_id=f"c{n}", subject_id=subject, text="t", observed_at=_AT
        ),
        created_at=_AT,
    )


def test_newest_first_bounded_and_only_committed_records_of_the_subject(
    catalogue: Catalogue, producer_factory: ProducerFactory, kafka_bootstrap: str
) -> None:
    topic = catalogue.review
    # Two subjects on the same partition, so the filter by key is what keeps them apart.
    ana = "ana"
    bob = next(
        f"bob-{i}"
        for i in range(1000)
        if partition_for(f"bob-{i}".encode(), catalogue.partitions)
        == partition_for(ana.encode(), catalogue.partitions)
    )
    plain = producer_factory()
    partitions: set[int] = set()

    def delivered(err: object, msg: object) -> None:
        assert err is None
        partitions.add(msg.partition())  # type: ignore[attr-defined]

    for n in range(1200):  # past the first scan window of 500 offsets
        subject = ana if n % 300 == 0 else bob
        plain.produce(topic, key=subject.encode(), value=encode_record(_item(subject, n)),
                      on_delivery=delivered)  # fmt: skip
    assert plain.flush(30) == 0
    assert partitions == {partition_for(ana.encode(), catalogue.partitions)}

    aborted = producer_factory({"transactional.id": f"tx-{catalogue.prefix}"})
    aborted.init_transactions(30)
    aborted.begin_transaction()
    aborted.produce(topic, key=ana.encode(), value=encode_record(_item(ana, 9999)))
    aborted.flush(30)
    aborted.abort_transaction(30)

    log = SubjectLog({"bootstrap.servers": kafka_bootstrap})
    try:
        page = log.newest(topic, ana, 1, (ReviewItem,))
        # Found in the first window from the end: the rest of the partition is not read.
        assert [r.review_id for r in page.records] == ["r-ana-900"]  # type: ignore[attr-defined]
        assert not page.complete and page.scanned == 500
        page = log.newest(topic, ana, 3, (ReviewItem,))
        assert [r.review_id for r in page.records] == ["r-ana-900", "r-ana-600", "r-ana-300"]  # type: ignore[attr-defined]
        page = log.newest(topic, ana, 10, (ReviewItem,))
        assert [r.review_id for r in page.records][-1] == "r-ana-0"  # type: ignore[attr-defined]
        assert page.complete and len(page.records) == 4
        assert log.newest(topic, "carol", 5, (ReviewItem,)).records == ()
    finally:
        log.close()
