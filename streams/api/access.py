"""Who may read: loopback by default, a bearer token whenever ``slotwise serve`` listens elsewhere.

With ``SLOTWISE_API_TOKEN`` set, every request but ``/healthz`` (and the
inspector's login form) must carry it, as ``Authorization: Bearer <token>`` or
as the inspector's cookie (HttpOnly, SameSite=Strict, so no other site's form
posts with it); it is compared in constant time. :func:`check_bind` refuses to
listen off loopback without one.
"""

from __future__ import annotations

import ipaddress
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any

from slotwise.topics.codec import dumps
from slotwise.topics.exceptions import SlotwiseError

__all__ = ["COOKIE", "OPEN_PATHS", "ServeRefused", "TokenGate", "check_bind", "is_loopback"]

COOKIE = "slotwise_token"
OPEN_PATHS = ("/healthz", "/inspector/login")


class ServeRefused(SlotwiseError, RuntimeError):
    """The server will not start as configured (off loopback without a token)."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it could resolve anywhere


def check_bind(host: str, token: str | None) -> None:
    """Refuse to listen off loopback without a token."""
    if not is_loopback(host) and not token:
        raise ServeRefused(
            f"refusing to listen on {host} without SLOTWISE_API_TOKEN: off loopback "
            "every request must carry a bearer token"
        )


class TokenGate:
    """Pure ASGI: cheaper per request than an ``http`` middleware."""

    def __init__(self, app: Any, token: str) -> None:
        self._app = app
        self._token = token.encode()

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[Any], Awaitable[None]],
    ) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            await self._app(scope, receive, send)
            return
        if self._allowed(dict(scope["headers"])):
            await self._app(scope, receive, send)
            return
        body = dumps({"error": "unauthorized", "message": "a bearer token is required"})
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b"Bearer"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    def _allowed(self, headers: dict[bytes, bytes]) -> bool:
        offered = b""
        scheme, _, credential = headers.get(b"authorization", b"").partition(b" ")
        if scheme.lower() == b"bearer":
            offered = credential.strip()
        elif b"cookie" in headers:
            cookie = SimpleCookie(headers[b"cookie"].decode("latin-1"))
            if COOKIE in cookie:
                offered = cookie[COOKIE].value.encode("latin-1")
        return secrets.compare_digest(offered, self._token)
