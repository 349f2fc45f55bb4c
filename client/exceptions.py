"""Errors of the agent-side client: the only ones its caller needs to catch.

    ClientError                 every error the client raises (a SlotwiseError)
    ├── InvalidRequest          an argument slotwise refuses: a subject id, a naive time,
    │                           a record of a kind that is not published, a topic; ``field``
    ├── Unavailable             Kafka, Redis, Milvus or the embedder failed; ``service``
    │   └── AccessDenied        Kafka refused this principal: its login, its CA, or an ACL
    ├── PublishFailed           the broker did not acknowledge a record in time
    ├── WaitTimeout             the observation was not applied within the timeout
    └── UnreadableRecord        a subscribed record does not decode; ``topic``/``partition``/
                                ``offset`` (the subscription moves past it)

No exception of confluent-kafka, redis-py or pymilvus leaves the client: they
arrive as ``Unavailable`` or ``PublishFailed`` with the cause chained.
"""

from __future__ import annotations

from slotwise.topics.exceptions import SlotwiseError

__all__ = [
    "AccessDenied",
    "ClientError",
    "InvalidRequest",
    "PublishFailed",
    "Unavailable",
    "UnreadableRecord",
    "WaitTimeout",
]


class ClientError(SlotwiseError):
    pass


class InvalidRequest(ClientError, ValueError):
    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class Unavailable(ClientError, ConnectionError):
    def __init__(self, message: str, *, service: str) -> None:
        super().__init__(message)
        self.service = service


class AccessDenied(Unavailable, PermissionError):
    """Retrying will not help: the credentials, the CA or the ACLs must change."""


class PublishFailed(ClientError):
    pass


class WaitTimeout(ClientError, TimeoutError):
    pass


class UnreadableRecord(ClientError):
    def __init__(self, message: str, *, topic: str, partition: int, offset: int) -> None:
        super().__init__(message)
        self.topic = topic
        self.partition = partition
        self.offset = offset
