"""Who may do what: loopback by default, a bearer token whenever ``slotwise serve`` listens
elsewhere, and what that token reaches.

A token comes as ``Authorization: Bearer <token>`` or as the inspector's cookie
(HttpOnly, SameSite=Strict, so no other site's form posts with it). It is either
``SLOTWISE_API_TOKEN`` (compared in constant time; every subject, every scope)
or one made by ``slotwise token create`` (looked up by its hash,
``sinks/redis/tokens.py``; the subjects and scopes it names). The
:class:`Gate` resolves it to a :class:`~slotwise.sinks.redis.tokens.Grant` and
hands that to the routes, which answer 403 outside it (:func:`grant_of`).

A request without a token is refused (401) when a token is required
(``SLOTWISE_API_TOKEN`` set, or off loopback); otherwise, on loopback, it
has every scope, as before scoped tokens. A token offered on loopback is
still held to its grant, so an agent's client behaves the same everywhere.
Only ``/healthz`` and the inspector's login form are open.
:func:`check_bind` refuses to listen off loopback without ``SLOTWISE_API_TOKEN``.
"""

from __future__ import annotations

import ipaddress
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any

from slotwise.sinks.exceptions import SinkError
from slotwise.sinks.redis.tokens import Grant, Scope
from slotwise.topics.codec import dumps
from slotwise.topics.exceptions import SlotwiseError

__all__ = [
    "COOKIE",
    "GRANT",
    "OPEN_PATHS",
    "Forbidden",
    "Gate",
    "ServeRefused",
    "check_bind",
    "grant_of",
    "is_loopback",
]

COOKIE = "slotwise_token"
OPEN_PATHS = ("/healthz", "/inspector/login")
# Where the gate leaves the caller's grant in the ASGI scope.
GRANT = "slotwise.grant"

Lookup = Callable[[str], Awaitable[Grant | None]]


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


class Forbidden(SlotwiseError, PermissionError):
    """The caller's token does not reach this subject, or lacks this scope (403)."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def grant_of(scope: MutableMapping[str, Any]) -> Grant:
    """The grant the gate resolved for this request (every scope when no gate ran)."""
    found = scope.get(GRANT)
    return found if isinstance(found, Grant) else Grant.everything()


def require(grant: Grant, scope: Scope, subject_id: str | None) -> None:
    """Raise :class:`Forbidden` unless ``grant`` holds ``scope`` on ``subject_id``."""
    if scope not in grant.scopes:
        raise Forbidden(f"this token has no {scope!r} scope")
    if not grant.allows(scope, subject_id):
        where = "every subject" if subject_id is None else f"subject {subject_id!r}"
        raise Forbidden(f"this token does not reach {where}", field="subject_id")


class Gate:
    """Pure ASGI (cheaper per request than an ``http`` middleware): resolves the caller's
    token to a grant, or answers 401/503 itself."""

    def __init__(self, app: Any, *, token: str | None, lookup: Lookup, required: bool) -> None:
        self._app = app
        self._token = token.encode() if token else None
        self._lookup = lookup
        self._required = required

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[Any], Awaitable[None]],
    ) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            await self._app(scope, receive, send)
            return
        offered = _offered(dict(scope["headers"]))
        if not offered:
            if self._required:
                await _refuse(send, 401, "unauthorized", "a bearer token is required")
                return
            grant: Grant | None = Grant.everything("loopback")
        elif self._token is not None and secrets.compare_digest(offered, self._token):
            grant = Grant.everything("SLOTWISE_API_TOKEN")
        else:
            try:
                grant = await self._lookup(offered.decode("latin-1"))
            except SinkError as exc:
                await _refuse(send, 503, "redis_unavailable", f"checking the token: {exc}")
                return
        if grant is None:
            await _refuse(send, 401, "unauthorized", "the bearer token is not known")
            return
        # The page shows any subject it is asked for: only an all-subjects reader may open it.
        if scope["path"].startswith("/inspector") and not grant.allows("read"):
            await _refuse(send, 403, "forbidden", "the inspector needs an all-subjects read token")
            return
        scope[GRANT] = grant
        await self._app(scope, receive, send)


def _offered(headers: dict[bytes, bytes]) -> bytes:
    scheme, _, credential = headers.get(b"authorization", b"").partition(b" ")
    if scheme.lower() == b"bearer":
        return credential.strip()
    if b"cookie" in headers:
        cookie = SimpleCookie(headers[b"cookie"].decode("latin-1"))
        if COOKIE in cookie:
            return cookie[COOKIE].value.encode("latin-1")
    return b""


async def _refuse(
    send: Callable[[Any], Awaitable[None]], status: int, error: str, message: str
) -> None:
    headers = [(b"content-type", b"application/json")]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send(
        {
            "type": "http.response.body",
            "body": dumps({"error": error, "message": message, "field": None}),
        }
    )
