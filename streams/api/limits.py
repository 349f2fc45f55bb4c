"""A request body over the limit is refused (413) before it is read whole.

Pure ASGI, outermost: a ``Content-Length`` over the limit is refused unread;
a body without one (chunked) is read only up to the limit, then refused. A body
within the limit is handed on as read, so the app sees it unchanged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from slotwise.topics.codec import dumps

__all__ = ["MAX_BODY_BYTES", "BodyLimit"]

# A batch of observations at the worker's 64 KiB text limit, with room for its JSON.
MAX_BODY_BYTES = 4 * 1024 * 1024

Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class BodyLimit:
    def __init__(self, app: Any, max_bytes: int = MAX_BODY_BYTES) -> None:
        self._app = app
        self._max = max_bytes

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self._app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self._max):
            await self._refuse(send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self._max:
                await self._refuse(send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> MutableMapping[str, Any]:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self._app(scope, replay, send)

    async def _refuse(self, send: Send) -> None:
        body = dumps(
            {
                "error": "body_too_large",
                "message": f"the request body is over {self._max} bytes",
                "field": None,
            }
        )
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"connection", b"close")],
            }
        )
        await send({"type": "http.response.body", "body": body})
