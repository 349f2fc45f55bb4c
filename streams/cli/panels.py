"""The help panels of ``slotwise --help``, one per job; every command names its own."""

from __future__ import annotations

__all__ = ["GOVERN", "MAINTAIN", "MIGRATE", "OPERATE", "READ", "RUN"]

RUN = "Run"  # the long-running processes: worker, serve, demo
READ = "Read"  # a subject's facts, a topic's records, read-your-writes
GOVERN = "Govern"  # what people decide about memory: erasure, review, tokens
MAINTAIN = "Maintain"  # passes over stored facts: archive, consolidate, calibrate
MIGRATE = "Migrate"  # embedding-model upgrades
OPERATE = "Operate"  # the services, the topics, rebuilds, evaluation, benchmarks
