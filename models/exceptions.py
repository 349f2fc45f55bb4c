"""Errors of the model clients and the embedders.

SlotwiseError
├── ModelError                  a call produced no usable answer; ``kind`` names why
│   ├── ModelNotConfigured      no API key: the offline providers should run instead
│   ├── ModelUnavailable        the provider failed every attempt of the retry budget
│   │   └── CircuitOpen         the breaker is open: failed fast, nothing was sent
│   ├── ModelRejected           the provider refused the request (4xx other than 429)
│   └── MalformedOutput         the model answered, but not in the shape its tool demands
└── EmbedderError               the embedder cannot be built or cannot embed
    ├── EmbedderUnavailable     the model weights are not installed
    └── EmbedderMisconfigured   the ``embedder`` setting names nothing usable
"""

from __future__ import annotations

from slotwise.topics.exceptions import SlotwiseError

__all__ = [
    "CircuitOpen",
    "EmbedderError",
    "EmbedderMisconfigured",
    "EmbedderUnavailable",
    "MalformedOutput",
    "ModelError",
    "ModelNotConfigured",
    "ModelRejected",
    "ModelUnavailable",
]


class ModelError(SlotwiseError):
    kind = "model_error"


class ModelNotConfigured(ModelError):
    kind = "not_configured"


class ModelUnavailable(ModelError):
    kind = "unavailable"

    def __init__(self, message: str, *, attempts: int = 0, last_failure: str | None = None) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.last_failure = last_failure


class CircuitOpen(ModelUnavailable):
    kind = "circuit_open"

    def __init__(self, retry_in_s: float) -> None:
        super().__init__(
            f"circuit open: provider failing, next probe in {retry_in_s:.1f}s",
            last_failure=self.kind,
        )
        self.retry_in_s = retry_in_s


class ModelRejected(ModelError):
    kind = "rejected"

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


class MalformedOutput(ModelError):
    kind = "malformed"


class EmbedderError(SlotwiseError, RuntimeError):
    pass


class EmbedderUnavailable(EmbedderError):
    pass


class EmbedderMisconfigured(EmbedderError):
    pass
