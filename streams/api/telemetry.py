"""The memory operations as OpenTelemetry GenAI memory spans, beside the trace context.

Reads and searches are ``search_memory``, writes (observations, candidates,
forget, restore, review decisions) ``update_memory``, erasures
``delete_memory``, each with the GenAI attributes: ``gen_ai.operation.name``,
``gen_ai.provider.name`` (``slotwise``), ``gen_ai.memory.store.id`` (the
subject: a per-user store, as the conventions suggest for per-user memory),
``gen_ai.memory.record.id`` when one fact is named and
``gen_ai.memory.record.count`` (facts returned, records written). The query
text and the records' content are opt-in in the conventions (they carry
personal data) and are not recorded.

Only ``opentelemetry-api`` is needed: with no SDK configured the spans are
no-ops; with one (``opentelemetry-instrument``) they are children of the
request's span, so an agent's trace shows what its memory did.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

from opentelemetry import trace
from opentelemetry.trace import Span, StatusCode

__all__ = ["MemoryOperation", "memory_span"]

MemoryOperation = Literal["search_memory", "update_memory", "delete_memory"]
_TRACER = trace.get_tracer("slotwise.memory")


@contextmanager
def memory_span(
    operation: MemoryOperation, subject_id: str, *, record_id: str | None = None
) -> Iterator[Span]:
    """A span for one memory operation; set ``gen_ai.memory.record.count`` on it when known."""
    attributes: dict[str, str] = {
        "gen_ai.operation.name": operation,
        "gen_ai.provider.name": "slotwise",
        "gen_ai.memory.store.id": subject_id,
    }
    if record_id is not None:
        attributes["gen_ai.memory.record.id"] = record_id
    with _TRACER.start_as_current_span(operation, attributes=attributes) as span:
        try:
            yield span
        except Exception as exc:
            span.set_attribute("error.type", type(exc).__name__)
            span.set_status(StatusCode.ERROR, str(exc))
            raise
