"""``slotwise serve``: the HTTP read API and the inspector page, on uvicorn."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from slotwise.streams.config import Settings

__all__ = ["serve"]

_err = Console(stderr=True)


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
    """Serve the HTTP API (reads and writes, /v1/…, /openapi.json) and the inspector page.

    Off loopback it refuses to start without SLOTWISE_API_TOKEN, and every request
    but /healthz must carry a token: that one, or a scoped one (`slotwise token
    create`), held to its subjects and scopes.
    """
    import uvicorn  # noqa: PLC0415 - only this command needs the server (and FastAPI)

    from slotwise.client.publishing import Publisher  # noqa: PLC0415
    from slotwise.streams.api.access import is_loopback  # noqa: PLC0415
    from slotwise.streams.api.operations import CommandReviews  # noqa: PLC0415
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
        review=CommandReviews(Publisher(settings)) if review_actions else None,
        require_token=not is_loopback(host),
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
