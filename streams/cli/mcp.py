"""``slotwise mcp``: serve the memory to an agent over the Model Context Protocol.

``--subject S`` over stdio (a desktop or coding agent starts it as a subprocess);
``--transport http --port N`` for hosted agents, each caller's subject taken from
its bearer token (``slotwise token create``). Tools and binding:
:mod:`slotwise.streams.api.mcp_server`.
"""

from __future__ import annotations

from typing import Annotated, Literal

import typer
from rich.console import Console

from slotwise.streams.config import Settings
from slotwise.topics.records import Identifier

__all__ = ["mcp"]

_err = Console(stderr=True)


def mcp(
    subject: Annotated[
        str | None,
        typer.Option("--subject", help="stdio: the subject every tool call is about."),
    ] = None,
    transport: Annotated[
        Literal["stdio", "http"], typer.Option("--transport", help="stdio or http.")
    ] = "stdio",
    host: Annotated[str, typer.Option(help="http: the address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="http: the port to listen on.")] = 8765,
    log_level: Annotated[str, typer.Option(help="http: uvicorn's log level.")] = "warning",
) -> None:
    """Serve add_memory, search_memories, get_facts, delete_memory, list_reviews and
    resolve_review over MCP, bound to one subject (stdio) or to each caller's token (http)."""
    from pydantic import TypeAdapter, ValidationError  # noqa: PLC0415

    from slotwise.streams.api.mcp_server import Binding, build_server  # noqa: PLC0415

    settings = Settings()
    if transport == "stdio":
        if subject is None:
            raise typer.BadParameter("stdio serves one subject: give --subject")
        try:
            TypeAdapter(Identifier).validate_python(subject)
        except ValidationError as exc:
            message = exc.errors(include_url=False)[0]["msg"]
            raise typer.BadParameter(f"--subject: {message}") from None
        build_server(settings, Binding(subject=subject)).run("stdio")
        return
    if subject is not None:
        raise typer.BadParameter("over http each caller's token names its subject, not --subject")
    import uvicorn  # noqa: PLC0415

    static = settings.api_token.get_secret_value() if settings.api_token else None
    server = build_server(settings, Binding(static_token=static))
    _err.print(f"slotwise mcp on http://{host}:{port}/mcp (a bearer token per caller)")
    uvicorn.run(
        server.streamable_http_app(host=host),
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
    )
