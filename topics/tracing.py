"""W3C trace context through the pipeline, and a span per stage when an SDK is configured.

A producer that publishes an observation with a ``traceparent`` header (the
client does, from the caller's current OpenTelemetry context) sees that trace
continue on everything the observation causes: its candidates and watermark,
and the fact, supersession and review messages those candidates cause. The
worker opens a span per consumed record (``slotwise <Kind>``) as the child of
the incoming context, a span per stage inside it (``slotwise.extract``,
``.lookup``, ``.resolve``, ``.apply``), and writes the context current at the
end into every output's headers (:func:`carry`, applied in one place: the
worker's ``_process``).

Only ``opentelemetry-api`` is needed. With no SDK configured its tracer is a
no-op whose spans carry the incoming context unchanged, so the outputs get the
producer's ``traceparent`` as is; a record without one starts no trace (none is
invented: a trace begins where the producer begins it) and costs one scan of
its headers. With an SDK (``opentelemetry-sdk`` and a tracer provider set by
the process, e.g. ``opentelemetry-instrument``) the spans are recorded and the
outputs carry the worker's span as their parent.

Dead letters are left alone: they copy the original record's headers,
``traceparent`` included. A replay re-consumes the same record, so it carries
the same context again; nothing about tracing is stored with the outputs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace

from opentelemetry import trace
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from slotwise.topics.outbound import Outbound

__all__ = ["TRACE_HEADERS", "carried", "carry", "outgoing", "record_span", "stage"]

TRACE_HEADERS = ("traceparent", "tracestate")
_PROPAGATOR = TraceContextTextMapPropagator()
_TRACER = trace.get_tracer("slotwise")


def carried(headers: Sequence[tuple[str, bytes]]) -> dict[str, str]:
    """The trace headers among a Kafka record's headers, decoded."""
    return {
        name: value.decode("ascii", "replace")
        for name, value in headers
        if name in TRACE_HEADERS and value
    }


def _sdk_configured() -> bool:
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


@contextmanager
def record_span(name: str, headers: Sequence[tuple[str, bytes]]) -> Iterator[None]:
    """Process one consumed record inside a span continuing its producer's trace."""
    incoming = carried(headers)
    if not incoming and not _sdk_configured():
        yield
        return
    parent = _PROPAGATOR.extract(incoming)
    with _TRACER.start_as_current_span(name, context=parent, kind=trace.SpanKind.CONSUMER):
        yield


@contextmanager
def stage(name: str) -> Iterator[None]:
    """One stage of the write path, a child of the record's span (a no-op without an SDK)."""
    if not trace.get_current_span().is_recording():
        # Outside a recorded span (no SDK) a stage's span would only repeat the record's
        # context, which nothing inside a stage reads: four cost ~2 % of the exact path.
        yield
        return
    with _TRACER.start_as_current_span(f"slotwise.{name}"):
        yield


def outgoing() -> tuple[tuple[str, bytes], ...]:
    """The current trace context as Kafka headers; empty outside any trace."""
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier)
    return tuple((name, value.encode()) for name, value in carrier.items())


def carry(outputs: Sequence[Outbound]) -> tuple[Outbound, ...]:
    """The outputs with the current trace context in their headers; dead letters as they are."""
    context = outgoing()
    if not context:
        return tuple(outputs)
    return tuple(
        message
        if message.topic == "deadletter"
        else replace(
            message,
            headers=(*(h for h in message.headers if h[0] not in TRACE_HEADERS), *context),
        )
        for message in outputs
    )
