"""A local HTTP server that plays the Anthropic Messages API for tests and benchmarks.

The real ``anthropic`` SDK is pointed at it with ``base_url``. It answers
``POST /v1/messages`` with proper Messages responses (text and tool_use
blocks, ``stop_reason``, ``usage`` with the prompt-cache fields) or with
Anthropic-style errors, and records every request so tests can assert on
prompts, ``cache_control`` and tool choice.

``usage`` is what the API would bill, counted from the request at about four
characters a token: a ``cache_control`` breakpoint (on a tool, a system block
or a message block) caches the prompt up to it, in the API's order (tools,
system, messages), when that prefix is at least the model's floor long
(:mod:`models.pricing`); the first request writes it
(``cache_creation_input_tokens``), later ones within five minutes of its last
use read it (``cache_read_input_tokens``), and ``input_tokens`` is the rest.

Replies come from a per-test script first (a FIFO of :data:`Reply` values),
then from a default responder ``(request_json) -> Reply`` with a fixed
latency. Run it standalone for benchmarks::

    python -m slotwise.loadtest.fake_anthropic --port 8765 --latency-ms 320
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import hashlib
import importlib
import itertools
import json
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from types import TracebackType
from typing import Any

import uvloop
from aiohttp import web

from slotwise.models.pricing import card

__all__ = [
    "Delay",
    "Failure",
    "FakeAnthropic",
    "Raw",
    "RecordedRequest",
    "Reply",
    "Responder",
    "Text",
    "ToolUse",
    "default_responder",
    "main",
    "overloaded",
    "rate_limited",
    "server_error",
]

_MESSAGES_PATH = "/v1/messages"
_MESSAGE_MARKER = "\nMessage:\n"
_CHARS_PER_TOKEN = 4
_CACHE_TTL_S = 300.0


@dataclass(frozen=True, slots=True)
class ToolUse:
    """A ``tool_use`` block; ``name`` defaults to the tool the request forced."""

    input: Any
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Text:
    """A plain text answer (what a model does when it ignores the tool)."""

    text: str


@dataclass(frozen=True, slots=True)
class Failure:
    """An HTTP error with an Anthropic error body and an optional ``retry-after``."""

    status: int
    error_type: str
    message: str = "scripted failure"
    retry_after: float | None = None


@dataclass(frozen=True, slots=True)
class Raw:
    """Bytes sent as they are: for answers the SDK cannot read."""

    status: int
    body: bytes
    content_type: str = "application/json"


@dataclass(frozen=True, slots=True)
class Delay:
    """Wait ``seconds`` (longer than a client timeout, say), then send ``then``."""

    seconds: float
    then: Reply | None = None


Reply = ToolUse | Text | Failure | Raw | Delay
Responder = Callable[[dict[str, Any]], Reply]


def rate_limited(retry_after: float | None = None) -> Failure:
    return Failure(
        429, "rate_limit_error", "Number of requests has exceeded your rate limit", retry_after
    )


def overloaded() -> Failure:
    return Failure(529, "overloaded_error", "Overloaded")


def server_error() -> Failure:
    return Failure(500, "api_error", "Internal server error")


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request as the server received it."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    raw: str
    received_at: float

    @property
    def system_blocks(self) -> list[dict[str, Any]]:
        system = self.body.get("system")
        if isinstance(system, str):
            return [{"type": "text", "text": system}]
        return list(system or [])

    @property
    def user_text(self) -> str:
        """The text of every user turn, joined: what the per-call prompt said."""
        return "\n".join(
            _texts(m.get("content"))
            for m in self.body.get("messages", [])
            if m.get("role") == "user"
        )

    @property
    def forced_tool(self) -> str | None:
        choice = self.body.get("tool_choice") or {}
        return choice.get("name") if choice.get("type") == "tool" else None


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


def default_responder(request: dict[str, Any]) -> Reply:
    """Deterministic answers for load: no slot ever matches; extraction echoes the message.

    The echo takes what follows a ``Message:`` line of the last user turn (the
    extractor's layout) so that each observation yields one free-text fact.
    """
    forced = (request.get("tool_choice") or {}).get("name")
    if forced == "answer_slot":
        return ToolUse({"memory": "NONE"})
    if forced == "record_facts":
        turns = [m for m in request.get("messages", []) if m.get("role") == "user"]
        said = _texts(turns[-1].get("content")) if turns else ""
        said = said.split(_MESSAGE_MARKER, 1)[-1].strip()
        if not said:
            return ToolUse({"facts": []})
        return ToolUse(
            {
                "facts": [
                    {
                        "attribute": None,
                        "value": None,
                        "text": f"User said: {said[:200]}",
                        "category": "misc",
                        "valid_from": None,
                        "confidence": 0.5,
                        "importance": 0.3,
                    }
                ]
            }
        )
    if forced:
        return ToolUse({})
    return Text("OK")


@dataclass
class _State:
    responder: Responder
    latency_s: float
    script: deque[Reply] = field(default_factory=deque)
    requests: deque[RecordedRequest] = field(default_factory=deque)
    # Taken by the server's loop and by the test's thread (script, requests), never held
    # across an await.
    lock: threading.Lock = field(default_factory=threading.Lock)
    ids: itertools.count[int] = field(default_factory=itertools.count)
    # A cached prefix's digest, and when it expires (five minutes after its last use).
    cache: dict[str, float] = field(default_factory=dict)
    in_flight: int = 0
    max_concurrent: int = 0


class FakeAnthropic:
    """The fake Messages API on 127.0.0.1, started and stopped as a context manager.

    It serves from an event loop on a thread of its own: a request waiting out the
    latency is a sleeping coroutine, not a thread, so a benchmark's hundreds of calls
    in flight cost the machine next to nothing while they wait (docs/performance.md).
    """

    def __init__(
        self,
        *,
        responder: Responder = default_responder,
        latency_s: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        record_limit: int | None = 10_000,
    ) -> None:
        self._state = _State(
            responder=responder, latency_s=latency_s, requests=deque(maxlen=record_limit)
        )
        self._address = (host, port)
        self._bound_address: tuple[str, int] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._bound()
        return f"http://{host}:{port}"

    @property
    def port(self) -> int:
        return self._bound()[1]

    def script(self, *replies: Reply) -> None:
        """Queue replies; each request takes the next one before the responder is asked."""
        with self._state.lock:
            self._state.script.extend(replies)

    @property
    def pending(self) -> int:
        with self._state.lock:
            return len(self._state.script)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._state.lock:
            return list(self._state.requests)

    @property
    def max_concurrent(self) -> int:
        """The most requests the server was handling at one moment."""
        with self._state.lock:
            return self._state.max_concurrent

    def start(self) -> FakeAnthropic:
        started: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._loop = uvloop.new_event_loop()
        self._thread = threading.Thread(
            target=self._serve, args=(started,), name="fake-anthropic", daemon=True
        )
        self._thread.start()
        started.result(timeout=30)
        return self

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None and thread.is_alive():
            loop.call_soon_threadsafe(self._stop_serving)
            thread.join(timeout=10)
        self._loop = self._thread = None
        self._bound_address = None

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _bound(self) -> tuple[str, int]:
        if self._bound_address is None:
            raise RuntimeError("the fake Anthropic server is not running")
        return self._bound_address

    # -- the server's thread ------------------------------------------------------

    def _serve(self, started: concurrent.futures.Future[None]) -> None:
        loop = self._loop
        assert loop is not None
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._run(started))
        except BaseException as exc:
            if started.done():
                raise
            started.set_exception(exc)  # start() raises it
        finally:
            loop.close()

    async def _run(self, started: concurrent.futures.Future[None]) -> None:
        self._stopping = asyncio.Event()
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post(_MESSAGES_PATH, self._messages)
        app.router.add_route("*", "/{tail:.*}", self._not_found)
        # Quiet: a benchmark sends tens of thousands of requests.
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        # A benchmark opens hundreds of connections at once; a short listen backlog
        # drops their SYNs and costs each one a 1 s retransmission.
        site = web.TCPSite(runner, *self._address, backlog=1024)
        await site.start()
        host, port = runner.addresses[0][:2]
        self._bound_address = (str(host), int(port))
        started.set_result(None)
        try:
            await self._stopping.wait()
        finally:
            await runner.cleanup()

    def _stop_serving(self) -> None:
        if self._stopping is not None:
            self._stopping.set()

    async def _pause(self, seconds: float) -> None:
        """Sleep ``seconds``, or less once the server is stopping."""
        assert self._stopping is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)

    async def _not_found(self, request: web.Request) -> web.Response:
        return self._error(Failure(404, "not_found_error", f"no route {request.path}"))

    async def _messages(self, request: web.Request) -> web.Response:
        raw = (await request.read()).decode("utf-8", "replace")
        if not (request.headers.get("x-api-key") or request.headers.get("authorization")):
            return self._error(Failure(401, "authentication_error", "x-api-key header is required"))
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            return self._error(Failure(400, "invalid_request_error", "body is not JSON"))
        if not isinstance(body, dict):
            return self._error(Failure(400, "invalid_request_error", "body is not an object"))
        missing = [k for k in ("model", "max_tokens", "messages") if k not in body]
        if missing:
            return self._error(Failure(400, "invalid_request_error", f"missing {missing}"))
        state = self._state
        with state.lock:
            state.requests.append(
                RecordedRequest(
                    path=request.path_qs,
                    headers={k.lower(): v for k, v in request.headers.items()},
                    body=body,
                    raw=raw,
                    received_at=time.monotonic(),
                )
            )
            state.in_flight += 1
            state.max_concurrent = max(state.max_concurrent, state.in_flight)
            scripted = state.script.popleft() if state.script else None
        try:
            reply = scripted if scripted is not None else await self._default(body)
            while isinstance(reply, Delay):
                await self._pause(reply.seconds)
                reply = reply.then if reply.then is not None else await self._default(body)
            return self._reply(reply, body)
        finally:
            with state.lock:
                state.in_flight -= 1

    async def _default(self, body: dict[str, Any]) -> Reply:
        if self._state.latency_s > 0:
            await self._pause(self._state.latency_s)
        return self._state.responder(body)

    def _reply(self, reply: Reply, body: dict[str, Any]) -> web.Response:
        if isinstance(reply, Failure):
            return self._error(reply)
        if isinstance(reply, Raw):
            return self._response(reply.status, reply.body, reply.content_type)
        assert not isinstance(reply, Delay)  # waited out by the caller
        return self._response(200, json.dumps(self._message(reply, body)).encode())

    def _message(self, reply: ToolUse | Text, body: dict[str, Any]) -> dict[str, Any]:
        serial = next(self._state.ids)
        if isinstance(reply, ToolUse):
            name = reply.name or (body.get("tool_choice") or {}).get("name") or _first_tool(body)
            content: list[dict[str, Any]] = [
                {
                    "type": "tool_use",
                    "id": f"toolu_fake{serial:08d}",
                    "name": name,
                    "input": reply.input,
                }
            ]
            stop_reason = "tool_use"
        else:
            content = [{"type": "text", "text": reply.text}]
            stop_reason = "end_turn"
        return {
            "id": f"msg_fake{serial:08d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": self._usage(body, content),
        }

    def _usage(self, body: dict[str, Any], content: list[dict[str, Any]]) -> dict[str, Any]:
        """The tokens the API would bill, with its prompt cache (see the module's notes)."""
        total, breakpoints = _prompt_tokens(body)
        floor = card(str(body.get("model", ""))).min_cacheable_tokens
        cacheable = [(digest, tokens) for digest, tokens in breakpoints if tokens >= floor]
        read = created = 0
        now = time.monotonic()
        with self._state.lock:
            cache = self._state.cache
            for digest, tokens in reversed(cacheable):
                if cache.get(digest, 0.0) > now:
                    read = tokens
                    break
            for digest, tokens in cacheable:
                cache[digest] = now + _CACHE_TTL_S  # written, or refreshed by this use
                created = max(created, tokens - read)
        return {
            "input_tokens": total - read - created,
            "output_tokens": max(1, len(json.dumps(content)) // _CHARS_PER_TOKEN),
            "cache_creation_input_tokens": created,
            "cache_read_input_tokens": read,
        }

    def _error(self, failure: Failure) -> web.Response:
        payload = {
            "type": "error",
            "error": {"type": failure.error_type, "message": failure.message},
            "request_id": f"req_fake{next(self._state.ids):08d}",
        }
        headers = {}
        if failure.retry_after is not None:
            headers["retry-after"] = f"{failure.retry_after:g}"
        return self._response(failure.status, json.dumps(payload).encode(), headers=headers)

    def _response(
        self,
        status: int,
        payload: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> web.Response:
        return web.Response(
            status=status,
            reason=_phrase(status),
            body=payload,
            headers={
                "content-type": content_type,
                "request-id": f"req_fake{next(self._state.ids):08d}",
                **(headers or {}),
            },
        )


def _prompt_tokens(body: dict[str, Any]) -> tuple[int, list[tuple[str, int]]]:
    """The prompt's tokens, and ``(digest of the prefix, its tokens)`` at each breakpoint.

    The prompt is read in the API's order: tools, then system, then messages.
    """
    system = body.get("system")
    blocks: list[Any] = list(body.get("tools") or [])
    blocks += [{"type": "text", "text": system}] if isinstance(system, str) else list(system or [])
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        blocks += [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    digest = hashlib.sha256(str(body.get("model")).encode())
    chars = 0
    breakpoints: list[tuple[str, int]] = []
    for block in blocks:
        text = json.dumps(block, sort_keys=True)
        digest.update(text.encode())
        is_text = isinstance(block, dict) and block.get("type") == "text"
        chars += len(str(block.get("text", ""))) if is_text else len(text)
        if isinstance(block, dict) and "cache_control" in block:
            breakpoints.append((digest.copy().hexdigest(), chars // _CHARS_PER_TOKEN))
    return chars // _CHARS_PER_TOKEN, breakpoints


def _first_tool(body: dict[str, Any]) -> str:
    tools = body.get("tools") or [{}]
    return str(tools[0].get("name", "tool"))


def _phrase(status: int) -> str:
    if status == 529:
        return "Overloaded"
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def _load_responder(spec: str) -> Responder:
    module_name, _, attribute = spec.partition(":")
    responder: Responder = getattr(importlib.import_module(module_name), attribute)
    return responder


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m slotwise.loadtest.fake_anthropic",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency-ms", type=float, default=320.0)
    parser.add_argument(
        "--responder", default=None, help="module:function answering (request_json) -> Reply"
    )
    args = parser.parse_args(argv)
    responder = _load_responder(args.responder) if args.responder else default_responder
    fake = FakeAnthropic(
        responder=responder,
        latency_s=args.latency_ms / 1000,
        host=args.host,
        port=args.port,
        record_limit=0,
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    with fake:
        print(f"fake Anthropic Messages API on {fake.base_url}", file=sys.stderr, flush=True)
        stop.wait()


if __name__ == "__main__":
    # Run the package's module, not this __main__ copy: a responder from another module
    # returns loadtest.fake_anthropic.ToolUse, which this copy's classes would not match.
    from slotwise.loadtest.fake_anthropic import main as package_main

    package_main()
