"""Health of the worker's dependencies, and the HTTP endpoint that serves it with metrics.

``GET /healthz`` answers 200 while every dependency's last call succeeded (or
its failure is younger than the grace period) and 503 with the failing
dependencies otherwise; ``GET /metrics`` is the Prometheus exposition.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from slotwise.topics.codec import dumps

__all__ = ["Health", "HealthServer"]


class Health:
    def __init__(
        self, *, grace_s: float = 5.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._failing: dict[str, tuple[float, str]] = {}
        self._grace = grace_s
        self._clock = clock
        self._lock = threading.Lock()
        self._started = False

    def started(self) -> None:
        self._started = True

    def ok(self, dependency: str) -> None:
        with self._lock:
            self._failing.pop(dependency, None)

    def failing(self, dependency: str, error: BaseException | str) -> None:
        with self._lock:
            since = self._failing.get(dependency, (self._clock(), ""))[0]
            self._failing[dependency] = (since, str(error)[:300])

    def report(self) -> tuple[bool, dict[str, object]]:
        now = self._clock()
        with self._lock:
            down = {
                name: {"error": error, "for_s": round(now - since, 1)}
                for name, (since, error) in self._failing.items()
                if now - since >= self._grace
            }
        healthy = self._started and not down
        return healthy, {"healthy": healthy, "started": self._started, "failing": down}


class HealthServer:
    def __init__(self, health: Health, port: int, host: str = "127.0.0.1") -> None:
        handler = _handler(health)
        self._server = ThreadingHTTPServer((host, port), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _handler(health: Health) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.startswith("/metrics"):
                body, status, kind = generate_latest(), 200, CONTENT_TYPE_LATEST
            elif self.path.startswith("/healthz"):
                healthy, report = health.report()
                body, status, kind = dumps(report), (200 if healthy else 503), "application/json"
            else:
                body, status, kind = b"not found", 404, "text/plain"
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, fmt: str, *args: object) -> None:
            return

    return Handler
