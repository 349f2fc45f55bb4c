"""``slotwise review list | accept ID | reject ID | edit ID --value V``: a human closes a review.

``list`` reads the open items from Redis (``sinks/redis/review.py``), one
JSON object per line with ``--json``. A decision is published as a
``review`` command on the candidates topic, keyed by the item's subject, so
it is applied in order with the subject's writes (``streams/commands/review.py``);
the command's id is derived from the item, the action and the value, so
running the same decision twice publishes the same command and the worker
applies it once. By default the CLI waits until the worker has applied it and
prints the item's resolution.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import UTC, datetime
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from slotwise.processors.model import stable_id
from slotwise.processors.review_policy import mode
from slotwise.sinks.redis.review import RedisReviews
from slotwise.sinks.redis.store import RedisStore
from slotwise.streams.cli.durations import duration
from slotwise.streams.commands.log import CommandPublisher
from slotwise.streams.config import Settings
from slotwise.streams.read.store import open_store
from slotwise.topics.codec import encode_record
from slotwise.topics.records import Command, ReviewAction, ReviewItem

__all__ = ["review_app"]

review_app = typer.Typer(
    name="review", help="The review loop: list open items, accept, reject or edit them."
)
_out = Console()
_err = Console(stderr=True)

Wait = Annotated[
    bool, typer.Option("--wait/--no-wait", help="Wait until the worker has applied it.")
]
Timeout = Annotated[
    float,
    typer.Option("--timeout", parser=duration, metavar="DURATION", help="How long to wait (1m)."),
]


def _reviews(settings: Settings) -> tuple[RedisStore, RedisReviews]:
    store = open_store(settings)
    return store, RedisReviews(store, prefix=settings.redis_prefix)


@review_app.command("list")
def list_items(
    subject: Annotated[str | None, typer.Option("--subject", help="Only this subject.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
) -> None:
    """The open review items (of one subject, or of every subject), oldest first."""

    async def read() -> list[ReviewItem]:
        store, reviews = _reviews(Settings())
        try:
            subjects = [subject] if subject else await reviews.open_subjects()
            found = [item for s in subjects for item in await reviews.open_items(s)]
            return sorted(found, key=lambda i: (i.created_at, i.review_id))
        finally:
            await store.close()

    items = asyncio.run(read())
    if as_json:
        for item in items:
            sys.stdout.write(encode_record(item).decode() + "\n")
        return
    table = Table(title=f"{len(items)} open review item(s)")
    for column in ("review_id", "subject", "kind", "asks", "against", "why"):
        table.add_column(column, overflow="fold")
    for item in items:
        said = item.candidate.value if item.candidate.value is not None else item.candidate.text
        slot = item.candidate.attribute or "·"
        table.add_row(
            item.review_id,
            item.subject_id,
            f"{item.kind} ({item.origin})",
            f"{slot} = {said!r}",
            ", ".join(i[:8] for i in item.incumbent_fact_ids),
            item.reason[:160],
        )
    _out.print(table)


def _decide(
    review_id: str, action: ReviewAction, value: str | None, wait: bool, timeout: float
) -> None:
    settings = Settings()

    async def run() -> tuple[ReviewItem | None, str | None]:
        store, reviews = _reviews(settings)
        try:
            subject = await reviews.locate(review_id)
            if subject is None:
                return None, f"no open review item {review_id}"
            item = await reviews.get(subject, review_id)
            if item is None:
                return None, f"review item {review_id} is indexed but not stored"
            if action == "accept" and mode(item) == "reslot" and item.candidate.value is None:
                return None, f"{review_id} proposes no value: use `slotwise review edit --value`"
            command = Command(
                command_id=stable_id("review-decision", review_id, action, repr(value)),
                subject_id=subject,
                command="review",
                issued_at=datetime.now(UTC),
                review_id=review_id,
                action=action,
                value=value,
                reason=f"slotwise review {action}",
            )
            publisher = CommandPublisher(settings)
            publisher.publish(command)
            await asyncio.to_thread(publisher.flush)
            _out.print(f"published {action} of {review_id} ({subject}) as {command.command_id}")
            if not wait:
                return item, None
            deadline = asyncio.get_running_loop().time() + timeout
            while await store.applied(subject, command.command_id) is None:
                if asyncio.get_running_loop().time() > deadline:
                    return item, f"not applied within {timeout:g}s (the worker is behind or down)"
                await asyncio.sleep(0.2)
            return await reviews.get(subject, review_id), None
        finally:
            await store.close()

    item, problem = asyncio.run(run())
    if problem is not None:
        _err.print(f"[red]{problem}[/]")
        raise typer.Exit(1 if item is not None else 2)
    if wait and item is not None:
        _out.print(
            f"{item.review_id}: {item.status}"
            + (f" — {item.resolution}" if item.resolution else "")
        )


@review_app.command("accept")
def accept(
    review_id: Annotated[str, typer.Argument(help="The item's review_id.")],
    wait: Wait = True,
    timeout: Timeout = 30.0,
) -> None:
    """Apply the held candidate (or the pair's resolution) the item proposes."""
    _decide(review_id, "accept", None, wait, timeout)


@review_app.command("reject")
def reject(
    review_id: Annotated[str, typer.Argument(help="The item's review_id.")],
    wait: Wait = True,
    timeout: Timeout = 30.0,
) -> None:
    """Keep the incumbent; the same pair will not be asked about again."""
    _decide(review_id, "reject", None, wait, timeout)


@review_app.command("edit")
def edit(
    review_id: Annotated[str, typer.Argument(help="The item's review_id.")],
    value: Annotated[str, typer.Option("--value", help="The value to store instead.")],
    wait: Wait = True,
    timeout: Timeout = 30.0,
) -> None:
    """Store the given value for the item's slot."""
    _decide(review_id, "edit", value, wait, timeout)
