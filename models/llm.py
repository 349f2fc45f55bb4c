"""Calls to the Anthropic Messages API: retries, a concurrency cap, a circuit breaker.

The SDK's own retries are off (``max_retries=0``) so that one loop decides:
capped exponential backoff with full jitter, ``retry-after`` honoured, retries
on 429, 529, other 5xx, timeouts and connection errors, never on another 4xx.
A semaphore caps the requests in flight per process; a breaker stops a failing
provider from being hammered and makes calls fail fast while it recovers (both in
``resilience.py``).

Failures are raised as :mod:`slotwise.models.exceptions` describes.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

import anthropic
import httpx2
from anthropic import AsyncAPIResponse
from anthropic.types import Message, MessageParam, TextBlockParam, ToolChoiceParam, ToolParam
from opentelemetry import trace
from prometheus_client import Counter, Gauge, Histogram
from pydantic import SecretStr, ValidationError

from slotwise.models.exceptions import (
    CircuitOpen,
    MalformedOutput,
    ModelNotConfigured,
    ModelRejected,
    ModelUnavailable,
)
from slotwise.models.resilience import CircuitBreaker, RetryPolicy

__all__ = ["ModelClient", "ModelRequest", "sdk_telemetry"]

Sleep = Callable[[float], Awaitable[None]]

CALLS = Counter(
    "slotwise_llm_calls_total", "Model calls by purpose and final outcome", ["purpose", "outcome"]
)
RETRIES = Counter(
    "slotwise_llm_retries_total",
    "Attempts retried, by the failure that caused it",
    ["purpose", "kind"],
)
ERRORS = Counter(
    "slotwise_llm_errors_total",
    "Failed attempts and unusable answers, by kind",
    ["purpose", "kind"],
)
REQUEST_SECONDS = Histogram(
    "slotwise_llm_request_seconds",
    "One HTTP attempt, by purpose",
    ["purpose"],
    buckets=(0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 2, 5, 10, 20, 60),
)
IN_FLIGHT = Gauge("slotwise_llm_in_flight", "Model requests in flight in this process")


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One Messages API request as :meth:`ModelClient._send` sends it."""

    system: list[TextBlockParam]
    messages: list[MessageParam]
    max_tokens: int
    tools: list[ToolParam]
    tool_choice: ToolChoiceParam


@dataclass(frozen=True, slots=True)
class _Failure:
    kind: str
    retryable: bool
    counts_against_provider: bool
    retry_after: float | None = None
    status: int | None = None


_TIMEOUT = _Failure("timeout", retryable=True, counts_against_provider=True)
_CONNECTION = _Failure("connection", retryable=True, counts_against_provider=True)


class ModelClient:
    """One process's gateway to the model: every adapter shares its semaphore and breaker."""

    def __init__(
        self,
        client: anthropic.AsyncAnthropic,
        *,
        model: str,
        max_concurrency: int = 32,
        retry: RetryPolicy | None = None,
        breaker: CircuitBreaker | None = None,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self._client = client
        self._model = model
        self._semaphore = asyncio.Semaphore(max_concurrency)
        self._retry = retry or RetryPolicy()
        self._breaker = breaker or CircuitBreaker()
        self._sleep = sleep
        self._rng = rng or random.Random()

    @classmethod
    def connect(
        cls,
        api_key: SecretStr | None,
        *,
        model: str,
        base_url: str | None = None,
        timeout_s: float = 20.0,
        max_concurrency: int = 32,
        max_retries: int = 4,
        breaker: CircuitBreaker | None = None,
        sleep: Sleep = asyncio.sleep,
        http_client: httpx2.AsyncClient | None = None,
    ) -> ModelClient:
        """A client on the SDK's aiohttp transport (or ``http_client``); raises
        :class:`ModelNotConfigured` without a key (the offline providers run then)."""
        if api_key is None:
            raise ModelNotConfigured("no anthropic_api_key configured")
        client = anthropic.AsyncAnthropic(
            api_key=api_key.get_secret_value(),
            base_url=base_url,
            timeout=timeout_s,
            max_retries=0,
            # The SDK's aiohttp transport: httpx's connection pool costs the event
            # loop 8 ms per call with hundreds of calls in flight, aiohttp's 3 ms
            # (docs/performance.md, the cascade scenario).
            http_client=http_client or anthropic.DefaultAioHttpClient(timeout=timeout_s),
            open_telemetry=sdk_telemetry(trace.get_tracer_provider()),
        )
        return cls(
            client,
            model=model,
            max_concurrency=max_concurrency,
            retry=RetryPolicy(max_retries=max_retries),
            breaker=breaker,
            sleep=sleep,
        )

    @property
    def model(self) -> str:
        return self._model

    @property
    def breaker(self) -> CircuitBreaker:
        return self._breaker

    async def create(
        self,
        purpose: str,
        *,
        system: Iterable[TextBlockParam],
        messages: Iterable[MessageParam],
        max_tokens: int,
        tools: Iterable[ToolParam],
        tool_choice: ToolChoiceParam,
    ) -> Message:
        """One Messages call within the retry budget; raises a :class:`ModelError`."""
        request = ModelRequest(list(system), list(messages), max_tokens, list(tools), tool_choice)
        retries = 0
        call = object()
        while True:
            try:
                probe = self._breaker.admit()
            except CircuitOpen:
                ERRORS.labels(purpose, CircuitOpen.kind).inc()
                CALLS.labels(purpose, CircuitOpen.kind).inc()
                raise
            outcome = await self._attempt(purpose, probe, request, call)
            if isinstance(outcome, Message):
                return outcome
            if retries >= self._retry.max_retries:
                CALLS.labels(purpose, ModelUnavailable.kind).inc()
                raise ModelUnavailable(
                    f"no answer after {retries + 1} attempts; last failure: {outcome.kind}",
                    attempts=retries + 1,
                    last_failure=outcome.kind,
                )
            RETRIES.labels(purpose, outcome.kind).inc()
            await self._sleep(self._retry.delay(retries, self._rng, outcome.retry_after))
            retries += 1

    async def _attempt(
        self, purpose: str, probe: bool, request: ModelRequest, call: object
    ) -> Message | _Failure:
        """One HTTP request: the message, or a retryable failure (anything else raises)."""
        try:
            message = await self._send(purpose, request)
        except anthropic.APIStatusError as exc:
            return self._failed(purpose, probe, _classify_status(exc), call)
        except anthropic.APITimeoutError:
            return self._failed(purpose, probe, _TIMEOUT, call)
        except anthropic.APIConnectionError:
            return self._failed(purpose, probe, _CONNECTION, call)
        except (anthropic.APIResponseValidationError, json.JSONDecodeError) as exc:
            self._breaker.succeeded(probe)  # the provider answered, however badly
            raise self._malformed(purpose, str(exc)) from None
        except BaseException:
            self._breaker.released(probe)
            raise
        self._breaker.succeeded(probe)
        if not _well_formed(message):
            raise self._malformed(purpose, repr(message))
        CALLS.labels(purpose, "ok").inc()
        return message

    async def _send(self, purpose: str, request: ModelRequest) -> Message:
        async with self._semaphore:
            IN_FLIGHT.inc()
            started = time.perf_counter()
            try:
                raw = await self._client.messages.with_raw_response.create(
                    model=self._model,
                    system=request.system,
                    messages=request.messages,
                    max_tokens=request.max_tokens,
                    tools=request.tools,
                    tool_choice=request.tool_choice,
                )
                return await _read(raw)
            finally:
                IN_FLIGHT.dec()
                REQUEST_SECONDS.labels(purpose).observe(time.perf_counter() - started)

    def _failed(self, purpose: str, probe: bool, failure: _Failure, call: object) -> _Failure:
        """Count a failed attempt; raise :class:`ModelRejected` if retrying cannot help."""
        ERRORS.labels(purpose, failure.kind).inc()
        if failure.counts_against_provider:
            self._breaker.failed(probe, call)
        elif failure.retryable:
            self._breaker.released(probe)
        else:
            self._breaker.succeeded(probe)  # the provider is up; it refused our request
            CALLS.labels(purpose, ModelRejected.kind).inc()
            raise ModelRejected(
                f"provider refused the request ({failure.kind})", status=failure.status or 0
            )
        return failure

    def _malformed(self, purpose: str, detail: str) -> MalformedOutput:
        ERRORS.labels(purpose, MalformedOutput.kind).inc()
        CALLS.labels(purpose, MalformedOutput.kind).inc()
        return MalformedOutput(f"unreadable Messages response: {detail[:200]}")

    def note_malformed(self, purpose: str) -> None:
        """An adapter found the answer unusable (counted with the transport's errors)."""
        ERRORS.labels(purpose, MalformedOutput.kind).inc()

    async def aclose(self) -> None:
        await self._client.close()


def sdk_telemetry(provider: trace.TracerProvider) -> anthropic.OpenTelemetryOptions | None:
    """The SDK's ``open_telemetry`` option: its spans off unless ``provider`` records them.

    The SDK gathers a span's attributes on every call before it asks whether the span
    records; with the API's no-op provider that is a tenth of the SDK's CPU per call
    for nothing (docs/performance.md). With an OpenTelemetry SDK installed (set before
    the worker starts, as ``opentelemetry-instrument`` does) the SDK's defaults and its
    ``ANTHROPIC_OPEN_TELEMETRY*`` variables apply, and each call is a span under the
    record's.
    """
    if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        return {"traces": False}
    return None


async def _read(raw: AsyncAPIResponse[Message]) -> Message:
    """The reply, validated by pydantic-core in one pass when it has the shape this SDK
    knows; otherwise read as the SDK reads it, leniently.

    The SDK's own reading walks the JSON in Python, field by field: a fifth of its
    CPU per call (docs/performance.md). A reply it does not fully know (a content
    block type or a stop reason newer than the installed SDK) fails the strict pass
    and still reads as before, so an API that grows never makes answers unreadable.
    """
    body = await raw.read()
    try:
        return Message.model_validate_json(body)
    except ValidationError:
        return await raw.parse()


def _classify_status(exc: anthropic.APIStatusError) -> _Failure:
    status = exc.status_code
    retry_after = _retry_after(exc.response.headers)
    if status == 429:
        return _Failure(
            "rate_limited", retryable=True, counts_against_provider=False, retry_after=retry_after
        )
    if status == 529:
        return _Failure(
            "overloaded", retryable=True, counts_against_provider=True, retry_after=retry_after
        )
    if status >= 500:
        return _Failure(
            "server_error", retryable=True, counts_against_provider=True, retry_after=retry_after
        )
    return _Failure(
        f"status_{status}", retryable=False, counts_against_provider=False, status=status
    )


def _retry_after(headers: object) -> float | None:
    """Seconds from ``retry-after-ms``, ``retry-after`` in seconds, or an HTTP date."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    millis = get("retry-after-ms")
    try:
        if millis is not None:
            return max(0.0, float(millis) / 1000)
    except ValueError:
        pass
    value = get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _well_formed(message: object) -> bool:
    """The SDK reads leniently: a body of the wrong shape still becomes a "Message"."""
    return (
        isinstance(message, Message)
        and isinstance(message.content, list)
        and message.usage is not None
    )
