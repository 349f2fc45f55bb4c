"""Prometheus metrics of the worker (names are ``slotwise_*``)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

__all__ = [
    "COMMITS",
    "COMMIT_FAILURES",
    "DEADLETTERS",
    "DECISIONS",
    "EVENTS_APPLIED",
    "EVENTS_IN",
    "INDEX_HEALS",
    "IN_FLIGHT",
    "LAG",
    "LAST_COMMIT",
    "OLDEST_UNFINISHED",
    "REDELIVERED",
    "REPLAYED",
    "RETRIES",
    "STAGE_SECONDS",
    "STORE_REWINDS",
]

EVENTS_IN = Counter("slotwise_events_in_total", "Records consumed", ["topic"])
EVENTS_APPLIED = Counter("slotwise_events_applied_total", "Records fully applied", ["kind"])
DECISIONS = Counter(
    "slotwise_decisions_total",
    "Candidates applied, by decision and deciding stage",
    ["decision", "decided_by"],
)
DEADLETTERS = Counter(
    "slotwise_deadletters_total", "Records sent to the dead-letter topic", ["reason"]
)
RETRIES = Counter("slotwise_retries_total", "Transient failures retried", ["stage"])
EXTRACT_GATE = Counter(
    "slotwise_extract_gate_total", "Turns the gate asked the model about or skipped", ["decision"]
)
EXTRACTED_SLOT_ANSWERS = Counter(
    "slotwise_extracted_slot_answers_total",
    "Extraction's answers to a free-text fact's slot question, by what the cascade did "
    "with them (used, or the question asked after all)",
    ["outcome"],
)
STAGE_SECONDS = Histogram(
    "slotwise_stage_seconds",
    "Time spent per stage",
    ["stage"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
IN_FLIGHT = Gauge(
    "slotwise_in_flight", "Events consumed and not yet committed", ["topic", "partition"]
)
LAG = Gauge(
    "slotwise_committed_lag", "High watermark minus committed offset", ["topic", "partition"]
)
COMMITS = Counter("slotwise_commits_total", "Kafka transactions committed")
COMMIT_FAILURES = Counter(
    "slotwise_commit_failures_total", "Kafka transactions aborted", ["reason"]
)
LAST_COMMIT = Gauge(
    "slotwise_last_commit_timestamp_seconds", "Wall time of the last committed transaction"
)
OLDEST_UNFINISHED = Gauge(
    "slotwise_oldest_unfinished_seconds",
    "How long the lowest unfinished event of the partition has been holding its commits",
    ["topic", "partition"],
)
REDELIVERED = Counter(
    "slotwise_redelivered_total",
    "Records the consumer delivered again after later ones; dropped, the partition sent back",
    ["topic", "partition"],
)
REPLAYED = Counter(
    "slotwise_store_regression_replayed_total",
    "Committed events replayed because the store had come back without them",
    ["topic", "partition"],
)
INDEX_HEALS = Counter(
    "slotwise_index_heals_total",
    "Subjects whose vector rows were checked against the store before a healing replay",
    ["outcome"],
)
STORE_REWINDS = Counter(
    "slotwise_store_rewinds_total",
    "Commits refused because the Redis server changed under them; their events replayed",
)
