"""The models' list prices and prompt-cache floors, for the cost the benchmarks report.

Prices are dollars per million tokens as Anthropic lists them (5-minute cache
writes). The floor is the shortest prefix the API caches for the model: a
``cache_control`` breakpoint on a shorter prefix is ignored without an error,
and every call then pays the whole prompt at the input rate.
"""

from __future__ import annotations

from dataclasses import dataclass

from slotwise.models.usage import Usage

__all__ = ["ModelCard", "Prices", "card"]


@dataclass(frozen=True, slots=True)
class Prices:
    """Dollars per million tokens, by direction."""

    input: float
    output: float
    cache_read: float
    cache_write: float

    def cost(self, usage: Usage) -> float:
        """Dollars for ``usage``."""
        return (
            usage.input * self.input
            + usage.output * self.output
            + usage.cache_read * self.cache_read
            + usage.cache_write * self.cache_write
        ) / 1e6


@dataclass(frozen=True, slots=True)
class ModelCard:
    prices: Prices
    min_cacheable_tokens: int


_HAIKU_4_5 = ModelCard(Prices(1.00, 5.00, 0.10, 1.25), 4096)
# Most specific first: "claude-opus-4-5" must not read as "claude-opus-4".
_CARDS: tuple[tuple[str, ModelCard], ...] = (
    ("claude-haiku-4-5", _HAIKU_4_5),
    ("claude-3-5-haiku", ModelCard(Prices(0.80, 4.00, 0.08, 1.00), 2048)),
    ("claude-haiku-3-5", ModelCard(Prices(0.80, 4.00, 0.08, 1.00), 2048)),
    ("claude-sonnet-4-5", ModelCard(Prices(3.00, 15.00, 0.30, 3.75), 1024)),
    ("claude-sonnet-4", ModelCard(Prices(3.00, 15.00, 0.30, 3.75), 1024)),
    ("claude-opus-4-5", ModelCard(Prices(5.00, 25.00, 0.50, 6.25), 4096)),
    ("claude-opus-4", ModelCard(Prices(15.00, 75.00, 1.50, 18.75), 1024)),
)


def card(model: str) -> ModelCard:
    """The card of ``model`` (a dated id reads as its family); Haiku 4.5's when unknown."""
    for prefix, known in _CARDS:
        if model.startswith(prefix):
            return known
    return _HAIKU_4_5
