"""What each model call cost: the API's ``usage``, counted per call kind.

Every answered call is one ``slotwise_model_calls_total{kind}`` and four token
counts, ``slotwise_model_tokens_total{kind,direction}``: ``input`` (billed at
the full rate), ``cache_write`` (the prefix written to the prompt cache, billed
a little above the full rate), ``cache_read`` (the prefix read back, a tenth of
it) and ``output``. A failed attempt bills nothing and is counted by the
client's error metrics instead. ``kind`` names what the call was for:
``extract``, ``slot_match``, ``consolidation``, ``rederive``, ``reslot``.
"""

from __future__ import annotations

from dataclasses import dataclass

from anthropic.types import Usage as ApiUsage
from prometheus_client import Counter

__all__ = ["DIRECTIONS", "MODEL_CALLS", "MODEL_TOKENS", "Usage", "record"]

DIRECTIONS = ("input", "output", "cache_read", "cache_write")

MODEL_CALLS = Counter(
    "slotwise_model_calls_total", "Model calls answered (and billed), by call kind", ["kind"]
)
MODEL_TOKENS = Counter(
    "slotwise_model_tokens_total",
    "Tokens billed, by call kind and direction (input, output, cache_read, cache_write)",
    ["kind", "direction"],
)
# The older per-purpose series; dashboards built on it keep working.
_LLM_TOKENS = Counter(
    "slotwise_llm_tokens_total", "Tokens billed, by kind (cache_read is cheap)", ["purpose", "kind"]
)


@dataclass(frozen=True, slots=True)
class Usage:
    """One call's tokens; ``input`` excludes the cached prefix, as the API reports it."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    @classmethod
    def of(cls, usage: ApiUsage) -> Usage:
        return cls(
            input=usage.input_tokens,
            output=usage.output_tokens,
            cache_read=usage.cache_read_input_tokens or 0,
            cache_write=usage.cache_creation_input_tokens or 0,
        )

    def by_direction(self) -> dict[str, int]:
        return {
            "input": self.input,
            "output": self.output,
            "cache_read": self.cache_read,
            "cache_write": self.cache_write,
        }


def record(kind: str, usage: ApiUsage) -> Usage:
    """Count one answered call of ``kind``; its usage, read once."""
    counted = Usage.of(usage)
    MODEL_CALLS.labels(kind).inc()
    for direction, tokens in counted.by_direction().items():
        MODEL_TOKENS.labels(kind, direction).inc(tokens)
        _LLM_TOKENS.labels(kind, direction).inc(tokens)
    return counted
