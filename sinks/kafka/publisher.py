"""Kafka output: the transactional publisher of the worker and a plain idempotent one.

The worker's outputs and its consumed offsets commit atomically in one Kafka
transaction (KIP-447: one transactional producer serves every input partition
of the process, fenced by the consumer group's metadata). A reader with
``isolation.level=read_committed`` therefore sees each event's messages
exactly once, whatever crashes and replays happen in between.

    PublishError            the root
    ├── TransactionAborted  the transaction was aborted; retry the same batch
    └── PublisherFenced     fatal (fenced by a newer instance, or broken): restart

librdkafka's ``send_offsets_to_transaction`` can block past its timeout, for good,
when the group coordinator went away during the call (librdkafka issues #5456 and
#5511, open in 2.16; seen here while a broker stayed down for longer than a
restart). It runs on a daemon thread of its own and is waited for with a deadline:
a call past it leaves its producer broken, the transaction it was in never commits,
and its thread does not hold up the process's exit.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer, TopicPartition

from slotwise.topics.catalogue import Catalogue
from slotwise.topics.connection import Connection, client_config
from slotwise.topics.exceptions import SlotwiseError
from slotwise.topics.outbound import Outbound

__all__ = [
    "TRANSACTION_TIMEOUT_MS",
    "PublishError",
    "PublisherFenced",
    "TransactionAborted",
    "TransactionalPublisher",
    "idempotent_producer",
]

log = logging.getLogger(__name__)

# Another producer with this transactional id has taken over: this process is a zombie.
_FENCED_CODES = frozenset(
    {KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH}
)


class PublishError(SlotwiseError, RuntimeError):
    pass


class TransactionAborted(PublishError):
    pass


class PublisherFenced(PublishError):
    """The producer is unusable. ``by_another`` when a newer instance with the same
    transactional id took over: then this process must stop, not start a new producer."""

    def __init__(self, message: str, *, error: KafkaError | None = None) -> None:
        super().__init__(message)
        self.by_another = error is not None and error.code() in _FENCED_CODES


def idempotent_producer(connection: Connection, **overrides: Any) -> Producer:
    defaults = {"enable.idempotence": True, "linger.ms": 5, "compression.type": "lz4"}
    return Producer(client_config(connection, {**defaults, **overrides}))


# How much longer than its own timeout ``send_offsets_to_transaction`` is given.
_OFFSETS_GRACE_S = 15.0

# How many more timeouts a commit that timed out is resumed for before the producer is
# renewed: long enough for a broker's restart or a leader's election, short enough that
# the worker reports a longer outage on /healthz within a minute.
_COMMIT_RESUMES = 3

# How long a transaction may stay open: a producer killed inside one holds its
# offsets, for every reader of the group's committed offsets, until the broker aborts
# it this long after it began (streams/runtime/positions.py waits that out).
TRANSACTION_TIMEOUT_MS = 60_000


class TransactionalPublisher:
    def __init__(
        self,
        connection: Connection,
        transactional_id: str,
        catalogue: Catalogue,
        *,
        timeout_s: float = 30.0,
    ) -> None:
        self._catalogue = catalogue
        self._timeout = timeout_s
        self._config: dict[str, Any] = {
            "transactional.id": transactional_id,
            "transaction.timeout.ms": TRANSACTION_TIMEOUT_MS,
            "message.timeout.ms": 50_000,
        }
        self._connection = connection
        self._producer = idempotent_producer(connection, **self._config)
        self._ready = False
        self._aborting = False

    def renew(self) -> None:
        """Replace a producer that failed fatally (say, in a broker restart) with a new one
        of the same transactional id, whose ``init`` aborts whatever the old one left open."""
        self._producer.purge(blocking=False)  # a call may still be stuck inside it
        self._producer = idempotent_producer(self._connection, **self._config)
        self._ready = False
        self._aborting = False
        self.init()

    def init(self) -> None:
        """Fence older instances with the same transactional id; blocking."""
        self._call(self._producer.init_transactions, self._timeout)
        self._ready = True

    def commit(
        self,
        messages: Sequence[Outbound],
        offsets: Sequence[TopicPartition],
        group_metadata: object,
    ) -> None:
        """Publish ``messages`` and commit ``offsets`` for the group, all or nothing; blocking."""
        if not self._ready:
            self.init()
        if self._aborting:
            self._finish_abort("an earlier transaction")
        self._call(self._producer.begin_transaction)
        try:
            for message in messages:
                self._produce(message)
            if offsets:
                self._send_offsets(list(offsets), group_metadata)
            self._commit_transaction()
        except KafkaException as exc:
            self._abort(exc)

    def _commit_transaction(self) -> None:
        """Commit the open transaction, resuming a commit that timed out.

        A timed-out commit (its flush waiting on a partition below min ISR, say) is
        still under way inside librdkafka, which refuses an abort meanwhile as a
        conflicting call, for good: it must be called again to finish, one way or the
        other. It is resumed for up to ``_COMMIT_RESUMES`` more timeouts, so a short
        outage costs no replay; past them the producer is given up (the caller reports
        Kafka failing and renews it: the new producer's init ends the transaction).
        """
        deadline = time.monotonic() + _COMMIT_RESUMES * self._timeout
        while True:
            try:
                self._producer.commit_transaction(self._timeout)
                return
            except KafkaException as exc:
                error: KafkaError = exc.args[0]
                if error.fatal() or error.txn_requires_abort() or not error.retriable():
                    raise
                if time.monotonic() > deadline:
                    raise PublisherFenced(f"the commit did not finish: {error}") from exc
                log.warning("commit not finished (%s); resuming it", error)

    def _send_offsets(self, offsets: list[TopicPartition], group_metadata: object) -> None:
        """Add the consumed offsets to the open transaction, within a deadline (see the
        module's docstring): past it, the producer is broken and must be renewed."""
        call = _on_daemon_thread(
            self._producer.send_offsets_to_transaction, offsets, group_metadata, self._timeout
        )
        try:
            call.result(self._timeout + _OFFSETS_GRACE_S)
        except TimeoutError:  # concurrent.futures' is the builtin since 3.11
            # Whatever the stuck call does later stays inside a transaction the renewed
            # producer's init aborts.
            raise PublisherFenced(
                f"adding the consumed offsets to the transaction did not return within "
                f"{self._timeout + _OFFSETS_GRACE_S:.0f} s"
            ) from None

    def _produce(self, message: Outbound) -> None:
        while True:
            try:
                self._producer.produce(
                    message.topic_name(self._catalogue),
                    value=message.value,
                    key=message.key,
                    headers=list(message.headers),
                )
                self._producer.poll(0)  # serve delivery reports as they come
                return
            except BufferError:
                # The local queue is full: serve delivery reports to make room.
                self._producer.poll(0.05)

    def _abort(self, exc: KafkaException) -> None:
        error: KafkaError = exc.args[0]
        if error.fatal():
            raise PublisherFenced(
                f"transactional producer failed fatally: {error}", error=error
            ) from exc
        self._aborting = True
        self._finish_abort(str(error))
        raise TransactionAborted(f"transaction aborted: {error}") from exc

    def _finish_abort(self, cause: str) -> None:
        """Abort the open transaction; while the broker is away, leave it for the next try."""
        deadline = time.monotonic() + self._timeout
        while True:
            try:
                self._producer.abort_transaction(1.0)
                self._aborting = False
                return
            except KafkaException as abort_exc:
                abort_error: KafkaError = abort_exc.args[0]
                if abort_error.fatal():
                    raise PublisherFenced(
                        f"abort failed after {cause}: {abort_exc}", error=abort_error
                    ) from abort_exc
                if abort_error.code() == KafkaError._CONFLICT:
                    # Another transactional call is under way in this producer: the
                    # abort would be refused at every try. A new producer's init ends it.
                    raise PublisherFenced(
                        f"abort refused after {cause}: {abort_exc}"
                    ) from abort_exc
                if time.monotonic() > deadline:
                    raise TransactionAborted(f"abort pending after {cause}: {abort_exc}") from None
                # The abort waits for the purged messages' delivery reports: serve them.
                self._producer.poll(0.1)

    def _call(self, method: Any, *args: Any) -> None:
        try:
            method(*args)
        except KafkaException as exc:
            error: KafkaError = exc.args[0]
            if error.fatal():
                raise PublisherFenced(str(error), error=error) from exc
            raise TransactionAborted(str(error)) from exc

    def probe(self, topic: str, timeout_s: float) -> None:
        """Ask the broker for a topic's metadata; KafkaException if it does not answer."""
        self._producer.list_topics(topic, timeout_s)

    def close(self) -> None:
        self._producer.flush(self._timeout)


def _on_daemon_thread(fn: Callable[..., object], *args: object) -> Future[object]:
    """``fn(*args)`` on a new daemon thread: a call that never returns is left behind."""
    future: Future[object] = Future()

    def run() -> None:
        future.set_running_or_notify_cancel()
        try:
            future.set_result(fn(*args))
        except BaseException as exc:
            future.set_exception(exc)

    threading.Thread(target=run, name="slotwise-txn-offsets", daemon=True).start()
    return future
