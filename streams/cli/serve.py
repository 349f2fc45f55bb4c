"""``slotwise serve``: the HTTP read API and the inspector page, on uvicorn."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from typing import Annotated

import typer
from rich.console import Console

from slotwise.sinks.kafka.publisher import idempotent_producer
from slotwise.streams.config import Settings
from slotwise.topics.codec import encode_record
from slotwise.topics.records import Command

__all__ = ["CommandReviewDecider", "serve"]

_err = Console(stderr=True)


class CommandReviewDecider:
    """A review action as the review loop takes it: a ``command/1`` on the candidates topic,
    keyed by the subject, so the decision is ordered with the subject's writes.

    Needs a worker with a ``review`` command handler; a worker without one
    dead-letters the command as unsupported (and changes nothing).
    """

    def __init__(self, settings: Settings) -> None:
        self._topic = settings.catalogue().candidates
        self._producer = idempotent_producer(settings.librdkafka())

    async def decide(self, subject_id: str, review_id: str, action: str) -> None:
        command = Command(
            command_id=str(uuid.uuid4()),
            subject_id=subject_id,
            command="review",
            issued_at=datetime.now(UTC),
            review_id=review_id,
            action=action,  # type: ignore[arg-type]
            reason="decided in the inspector",
        )
        self._producer.produce(
            self._topic,
            key=subject_id.encode(),
            value=encode_record(command),
            headers=[("content-type", b"application/json"), ("schema", b"command/1")],
        )
        await asyncio.to_thread(self._producer.flush, 10)


def serve(
    host: Annotated[str, typer.Option(help="Address to listen on; loopback by default.")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8080,
    review_actions: Annotated[
        bool,
        typer.Option(
            "--review-actions",
            help="Let the page accept and reject review items (needs the review loop).",
        ),
    ] = False,
    log_level: Annotated[str, typer.Option(help="uvicorn's log level.")] = "warning",
) -> None:
    """Serve the HTTP read API (/v1/…, /openapi.json) and the inspector page (/inspector).

    Off loopback it refuses to start without SLOTWISE_API_TOKEN; with the token
    set, every request but /healthz must carry it as a bearer token.
    """
    import uvicorn  # noqa: PLC0415 - only this command needs the server (and FastAPI)

    from slotwise.streams.api.serve import ServeRefused, check_bind, create_app  # noqa: PLC0415

    settings = Settings()
    token = settings.api_token.get_secret_value() if settings.api_token else None
    try:
        check_bind(host, token)
    except ServeRefused as exc:
        _err.print(f"[red]{exc}[/]")
        raise typer.Exit(2) from None
    app = create_app(
        settings,
        token=token,
        review=CommandReviewDecider(settings) if review_actions else None,
    )
    _err.print(f"slotwise serve on http://{host}:{port} (inspector: /inspector, API: /docs)")
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        loop="uvloop",
        http="httptools",
    )
