"""A local HTTP server that plays the Anthropic Messages API for tests and benchmarks.

The real ``anthropic`` SDK is pointed at it with ``base_url``. It answers
``POST /v1/messages`` with proper Messages responses (text and tool_use
blocks, ``stop_reason``, ``usage`` with the prompt-cache fields) or with
Anthropic-style errors, and records every request so tests can assert on
prompts, ``cache_control`` and tool choice.

Replies come from a per-test script first (a FIFO of :data:`Reply` values),
then from a default responder ``(request_json) -> Reply`` with a fixed
latency. Run it standalone for benchmarks::

    python -m slotwise.loadtest.fake_anthropic --port 8765 --latency-ms 320
"""

from __future__ import annotations

import argparse
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
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

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
_PAUSE_SLICE_S = 0.1  # how late a stopping server may end a scripted delay


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
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)
    ids: itertools.count[int] = field(default_factory=itertools.count)
    cached_prefixes: set[str] = field(default_factory=set)
    in_flight: int = 0
    max_concurrent: int = 0

    def pause(self, seconds: float) -> None:
        """Sleep ``seconds``, or less once the server is stopping.

        Not ``stopping.wait(seconds)``: every handler thread waiting on one Event
        queues on its Condition's lock to sleep and again to wake, and at a few
        hundred requests in flight that lock, not the model's latency, set the pace
        (265 replies/s at 256 in flight, the median three times slower than asked).
        ``is_set`` takes no lock, so short sleeps that look at it cost nothing shared.
        """
        deadline = time.monotonic() + seconds
        while not self.stopping.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, _PAUSE_SLICE_S))


class FakeAnthropic:
    """The fake Messages API on 127.0.0.1, started and stopped as a context manager."""

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
        self._server: _Server | None = None
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
        handler = type("_BoundHandler", (_Handler,), {"state": self._state})
        self._server = _Server(self._address, handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="fake-anthropic", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._state.stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

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
        if self._server is None:
            raise RuntimeError("the fake Anthropic server is not running")
        host, port = self._server.server_address[:2]
        return str(host), int(port)


class _Server(ThreadingHTTPServer):
    # A benchmark opens hundreds of connections at once; the default listen
    # backlog of 5 drops their SYNs and costs each one a 1 s retransmission.
    request_queue_size = 1024
    block_on_close = False


class _Handler(BaseHTTPRequestHandler):
    state: _State
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms stall
    timeout = 60  # idle keep-alive connections end instead of pinning a thread forever

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Quiet: a benchmark sends tens of thousands of requests."""

    def do_POST(self) -> None:
        try:
            self._serve()
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            # The client gave up (its timeout is shorter than a scripted delay).
            self.close_connection = True

    def do_GET(self) -> None:
        self._send_error(Failure(404, "not_found_error", f"no route {self.path}"))

    def _serve(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length).decode("utf-8", "replace")
        if self.path.split("?", 1)[0] != _MESSAGES_PATH:
            self._send_error(Failure(404, "not_found_error", f"no route {self.path}"))
            return
        if not (self.headers.get("x-api-key") or self.headers.get("authorization")):
            self._send_error(Failure(401, "authentication_error", "x-api-key header is required"))
            return
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self._send_error(Failure(400, "invalid_request_error", "body is not JSON"))
            return
        if not isinstance(body, dict):
            self._send_error(Failure(400, "invalid_request_error", "body is not an object"))
            return
        missing = [k for k in ("model", "max_tokens", "messages") if k not in body]
        if missing:
            self._send_error(Failure(400, "invalid_request_error", f"missing {missing}"))
            return
        state = self.state
        with state.lock:
            state.requests.append(
                RecordedRequest(
                    path=self.path,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                    raw=raw,
                    received_at=time.monotonic(),
                )
            )
            state.in_flight += 1
            state.max_concurrent = max(state.max_concurrent, state.in_flight)
            scripted = state.script.popleft() if state.script else None
        try:
            reply = scripted if scripted is not None else self._default(body)
            self._send(reply, body)
        finally:
            with state.lock:
                state.in_flight -= 1

    def _default(self, body: dict[str, Any]) -> Reply:
        if self.state.latency_s > 0:
            self.state.pause(self.state.latency_s)
        return self.state.responder(body)

    def _send(self, reply: Reply, body: dict[str, Any]) -> None:
        while isinstance(reply, Delay):
            self.state.pause(reply.seconds)
            reply = reply.then if reply.then is not None else self._default(body)
        if isinstance(reply, Failure):
            self._send_error(reply)
        elif isinstance(reply, Raw):
            self._write(reply.status, reply.body, reply.content_type)
        else:
            self._write(200, json.dumps(self._message(reply, body)).encode())

    def _message(self, reply: ToolUse | Text, body: dict[str, Any]) -> dict[str, Any]:
        serial = next(self.state.ids)
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
        """Rough token counts (4 characters a token) and a prompt cache keyed by the prefix."""
        system = body.get("system")
        cacheable = isinstance(system, list) and any("cache_control" in b for b in system)
        prefix = json.dumps([body.get("tools"), system], sort_keys=True)
        prefix_tokens = len(prefix) // 4
        created = read = 0
        if cacheable:
            digest = hashlib.sha256(prefix.encode()).hexdigest()
            with self.state.lock:
                hit = digest in self.state.cached_prefixes
                self.state.cached_prefixes.add(digest)
            read, created = (prefix_tokens, 0) if hit else (0, prefix_tokens)
        messages_tokens = len(json.dumps(body.get("messages"))) // 4
        return {
            "input_tokens": messages_tokens + (0 if cacheable else prefix_tokens),
            "output_tokens": max(1, len(json.dumps(content)) // 4),
            "cache_creation_input_tokens": created,
            "cache_read_input_tokens": read,
        }

    def _send_error(self, failure: Failure) -> None:
        payload = {
            "type": "error",
            "error": {"type": failure.error_type, "message": failure.message},
            "request_id": f"req_fake{next(self.state.ids):08d}",
        }
        headers = {}
        if failure.retry_after is not None:
            headers["retry-after"] = f"{failure.retry_after:g}"
        self._write(failure.status, json.dumps(payload).encode(), headers=headers)

    def _write(
        self,
        status: int,
        payload: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status, _phrase(status))
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(payload)))
        self.send_header("request-id", f"req_fake{next(self.state.ids):08d}")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()


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
