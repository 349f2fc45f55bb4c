"""Errors of the worker itself.

SlotwiseError
└── WorkerError             the worker cannot go on with an event or at all
    ├── StateMoved          a subject's state kept moving under a decision
    └── ConsumerFailed      the consumer hit a fatal error and will never fetch again
"""

from __future__ import annotations

from slotwise.topics.exceptions import SlotwiseError

__all__ = ["ConsumerFailed", "StateMoved", "UnsupportedCommand", "WorkerError"]


class WorkerError(SlotwiseError, RuntimeError):
    pass


class StateMoved(WorkerError):
    """Another writer is active on the subject: the decision is computed again later."""


class UnsupportedCommand(WorkerError):
    """The record is valid but this build cannot apply it: it is dead-lettered, not retried."""


class ConsumerFailed(WorkerError):
    """Say, fenced by a replica with the same instance id: the worker stops rather than
    idle as a zombie, for the orchestrator to restart it."""
