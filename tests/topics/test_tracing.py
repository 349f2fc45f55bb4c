"""Trace context from a consumed record to every output it causes, with or without an SDK."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from slotwise.topics import tracing
from slotwise.topics.outbound import Outbound

TRACE = "0af7651916cd43dd8448eb211c80319c"
PARENT = f"00-{TRACE}-b7ad6b7169203331-01"


def _outputs() -> tuple[Outbound, ...]:
    return (
        Outbound("candidates", b"ana", b"{}", (("content-type", b"application/json"),)),
        Outbound("supersessions", b"ana", b"{}", (("traceparent", b"00-stale"),)),
        Outbound("deadletter", b"ana", b"{}", (("traceparent", b"original"),)),
    )


def _trace(message: Outbound) -> bytes | None:
    return dict(message.headers).get("traceparent")


def test_without_an_sdk_the_producers_traceparent_is_carried_unchanged() -> None:
    with tracing.record_span("slotwise Observation", (("traceparent", PARENT.encode()),)):
        carried = tracing.carry(_outputs())
    assert [_trace(m) for m in carried] == [PARENT.encode(), PARENT.encode(), b"original"]
    assert carried[0].headers[0] == ("content-type", b"application/json")
    assert [h for h, _ in carried[1].headers].count("traceparent") == 1


def test_a_record_without_trace_context_starts_no_trace() -> None:
    with tracing.record_span("slotwise CandidateFact", (("content-type", b"x"),)):
        carried = tracing.carry(_outputs())
    assert carried == _outputs()


def test_with_an_sdk_spans_are_recorded_per_record_and_stage(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(tracing, "_TRACER", provider.get_tracer("slotwise"))
    with tracing.record_span("slotwise CandidateFact", (("traceparent", PARENT.encode()),)):
        with tracing.stage("resolve"):
            pass
        carried = tracing.carry(_outputs())
    spans = {span.name: span for span in exporter.get_finished_spans()}
    assert set(spans) == {"slotwise CandidateFact", "slotwise.resolve"}
    record = spans["slotwise CandidateFact"]
    assert f"{record.context.trace_id:032x}" == TRACE
    assert spans["slotwise.resolve"].parent.span_id == record.context.span_id  # type: ignore[union-attr]
    # The outputs name the worker's span as their parent, in the producer's trace.
    outgoing = _trace(carried[0])
    assert outgoing is not None
    assert outgoing.decode().split("-")[1:3] == [TRACE, f"{record.context.span_id:016x}"]
