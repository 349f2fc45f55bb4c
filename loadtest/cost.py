"""What the model cost a run, from the workers' usage counters.

Figures per observation (the unit a user pays for): model calls, input tokens
(billed at the full rate, written to the prompt cache and read from it, all
together; then the cache reads and the rest apart), output tokens, the cached
share of the input, and dollars per 1,000 observations at the given per-token
prices (by default the configured model's list prices, :mod:`models.pricing`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from slotwise.loadtest.results import Figure
from slotwise.loadtest.runner import metric_total
from slotwise.models.pricing import Prices
from slotwise.models.usage import DIRECTIONS, Usage
from slotwise.processors.slot_match import FOLD_OUTCOMES

__all__ = ["KINDS", "cost_figures", "extracted_answer_figures", "gate_figures", "usage_of"]

KINDS = ("extract", "slot_match")
"""The call kinds the write path makes, reported one by one."""


def usage_of(metrics: Mapping[str, float], **labels: str) -> Usage:
    """The tokens ``slotwise_model_tokens_total`` counted, over the samples with ``labels``."""
    by_direction = {
        d: int(metric_total(metrics, "slotwise_model_tokens_total", direction=d, **labels))
        for d in DIRECTIONS
    }
    return Usage(**by_direction)


def cost_figures(metrics: Mapping[str, float], observations: int, prices: Prices) -> list[Figure]:
    """Calls, tokens, cache share and cost per observation, overall then per call kind."""
    if observations <= 0:
        return []
    usage = usage_of(metrics)
    calls = metric_total(metrics, "slotwise_model_calls_total")
    billed_input = usage.input + usage.cache_read + usage.cache_write
    figures = [
        Figure("model calls per observation", calls / observations, "calls"),
        Figure("input tokens per observation", billed_input / observations, "tokens"),
        # The two parts of it, billed a tenth apart: the cached prefix read back, and
        # the rest (each call's own question, and the prefix when it is written).
        Figure("cached input tokens per observation", usage.cache_read / observations, "tokens"),
        Figure(
            "uncached input tokens per observation",
            (usage.input + usage.cache_write) / observations,
            "tokens",
        ),
        Figure("output tokens per observation", usage.output / observations, "tokens"),
        Figure(
            "cached input share",
            usage.cache_read / billed_input if billed_input else math.nan,
            "ratio",
        ),
        Figure(
            "model cost per 1,000 observations",
            prices.cost(usage) / observations * 1000,
            "USD",
        ),
    ]
    for kind in KINDS:
        kind_calls = metric_total(metrics, "slotwise_model_calls_total", kind=kind)
        figures.append(
            Figure(f"model calls per observation: {kind}", kind_calls / observations, "calls")
        )
    return figures


def gate_figures(metrics: Mapping[str, float]) -> list[Figure]:
    """The share of turns the extraction gate kept from the model (0 without the gate)."""
    asked = metric_total(metrics, "slotwise_extract_gate_total", decision="ask")
    skipped = metric_total(metrics, "slotwise_extract_gate_total", decision="skip")
    seen = asked + skipped
    return [Figure("extraction gate skip rate", skipped / seen if seen else 0.0, "ratio")]


def extracted_answer_figures(metrics: Mapping[str, float], observations: int) -> list[Figure]:
    """Per observation: slot questions extraction answered and the cascade used, and those
    asked after all (a neighbour stored after extraction read the store, or the named fact
    no current neighbour by then)."""
    if observations <= 0:
        return []
    return [
        Figure(
            f"extracted slot answers per observation: {outcome}",
            metric_total(metrics, "slotwise_extracted_slot_answers_total", outcome=outcome)
            / observations,
            "answers",
        )
        for outcome in FOLD_OUTCOMES
    ]
