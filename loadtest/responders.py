"""What the fake model answers in the benchmarks: a competent extractor and slot matcher.

:func:`bench` plays both calls the worker makes, so that the cascade does the
work it would do against a real model:

* ``record_facts`` — the facts the offline rules extractor finds in the message
  (the load generator words every statement so that it does), in the tool's
  shape; the free-text tail comes back with ``attribute`` null, so it takes the
  vector fetch and slot-match path;
* ``answer_slot`` — the number of a neighbour whose text is the candidate's own
  (a re-mention of the same fact), otherwise NONE: the free-text tail records
  events ("User visited Kyoto in March."), and two different events never fill
  one slot. An extraction request that lists the stored memories gets the same
  answer for each fact, as its ``incumbent``.

Start it in its own process, as a remote model would be::

    python -m slotwise.loadtest.responders --port 8765 --latency-ms 320

This module's ``main`` is :func:`loadtest.fake_anthropic.main` (any
``--responder`` works), started from here because under ``python -m
loadtest.fake_anthropic`` the server's reply classes are ``__main__``'s, not
the ones a responder module imports, and a responder's ``ToolUse`` is then not
recognised as one.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from datetime import datetime
from functools import cache
from typing import Any

from slotwise.loadtest import fake_anthropic
from slotwise.loadtest.fake_anthropic import Reply, ToolUse, default_responder
from slotwise.processors.extract import extract_records
from slotwise.processors.rules import gazetteer
from slotwise.processors.schema import AttributeSchema
from slotwise.topics.records import CandidateFact, Command, Observation

__all__ = ["bench", "extraction_reply", "main", "slot_reply", "warm"]

_RENDERED = re.compile(
    r"Observation time: (?P<at>\S+).*?\nSpeaker: (?P<speaker>[^\n]*)\nMessage:\n(?P<text>.*)",
    re.DOTALL,
)
# A turn of a numbered several-turn request (models/extractor.py: render_turns).
_NUMBERED = re.compile(
    r"^Turn (?P<number>\d+)\. (?P<at>\S+) \(\w+\), (?P<speaker>[^\n]*?): (?P<text>\"[^\n]*\")$",
    re.MULTILINE,
)
_CANDIDATE = re.compile(r'Candidate observation about the user:\n  "(?P<text>.*?)"\n\n', re.DOTALL)
_LISTED = re.compile(r"^  (?P<number>\d+)\. (?P<text>.*)$", re.MULTILINE)
# The stored memories an extraction request lists first (models/incumbents.py).
_STORED = re.compile(r"\AMemories already stored about the user:\n(?P<listing>.*?\n)\n", re.DOTALL)


@cache
def _schema() -> AttributeSchema:
    return AttributeSchema.load()


def _user_text(request: dict[str, Any]) -> str:
    turns = [m for m in request.get("messages", []) if m.get("role") == "user"]
    if not turns:
        return ""
    content = turns[-1].get("content")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


def extraction_reply(request: dict[str, Any]) -> Reply:
    """The rules extractor's reading of the rendered message, as ``record_facts`` input.

    Each turn of a numbered request is read alone and its items name it, so a turn's
    answer is the same however many turns shared its call.
    """
    question = _user_text(request)
    stored = _STORED.match(question)
    if stored is not None:
        question = question[stored.end() :]
    numbered = list(_NUMBERED.finditer(question))
    facts: list[dict[str, Any]] = []
    erase: list[dict[str, Any]] = []
    if numbered:
        for turn in numbered:
            said = json.loads(turn["text"])
            found, forgotten = _read(turn["at"], turn["speaker"], said)
            number = {"turn": int(turn["number"])}
            facts += [{**item, **number} for item in found]
            erase += [{**item, **number} for item in forgotten]
    elif (single := _RENDERED.search(question)) is not None:
        facts, erase = _read(single["at"], single["speaker"], single["text"])
    if stored is not None:
        facts = [
            {**item, "incumbent": _same_fact(item["text"], stored["listing"]) or "NONE"}
            for item in facts
        ]
    return ToolUse({"facts": facts, "erase": erase} if erase else {"facts": facts})


def _read(at: str, speaker: str, text: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The facts and the erase items the rules read in one message."""
    observation = Observation(
        observation_id="fake-model",
        subject_id="fake-model",
        speaker=speaker.strip() or "user",
        text=text,
        observed_at=datetime.fromisoformat(at),
    )
    # One pass of the rules: a turn states facts or asks for an erase, never both.
    records = extract_records(observation, _schema())
    facts = [
        {
            "attribute": c.attribute,
            "value": c.value,
            "text": c.text,
            "category": c.category,
            "valid_from": c.valid_from.isoformat() if c.valid_from is not None else None,
            "confidence": c.confidence,
            "importance": c.importance,
            "stated_change": c.stated_change,
        }
        for c in records
        if isinstance(c, CandidateFact)
    ]
    erase = [
        {"attribute": c.attribute, "everything": c.attribute is None, "quote": c.reason or ""}
        for c in records
        if isinstance(c, Command)
    ]
    return facts, erase


def slot_reply(request: dict[str, Any]) -> Reply:
    """The number of the neighbour that states the candidate's own fact, or NONE."""
    question = _user_text(request)
    candidate = _CANDIDATE.search(question)
    if candidate is not None:
        listing = question[candidate.end() :]
        number = _same_fact(candidate["text"], listing)
        if number is not None:
            return ToolUse({"memory": number})
    return ToolUse({"memory": "NONE"})


def _same_fact(text: str, listing: str) -> int | None:
    """The number of the listed memory that states ``text``'s own fact (the same words)."""
    wanted = text.strip().casefold()
    for listed in _LISTED.finditer(listing):
        if listed["text"].strip().casefold() == wanted:
            return int(listed["number"])
    return None


def bench(request: dict[str, Any]) -> Reply:
    forced = (request.get("tool_choice") or {}).get("name")
    if forced == "record_facts":
        return extraction_reply(request)
    if forced == "answer_slot":
        return slot_reply(request)
    return default_responder(request)


def warm() -> None:
    """Load the rules' tables (GeoNames cities, the ISO lists, the attribute schema) now.

    They load lazily, on first use, and ``functools.cache`` does not hold back a second
    caller while the first one loads. Served cold by a thread per request, as the fake
    model once was, each of the few hundred requests of a run's first second built its
    own copy (a second of CPU each, on one interpreter lock): the fake model fell
    minutes behind, the worker's calls timed out and its circuit breaker opened, and the
    benchmark measured that instead of the worker. Served from one event loop, a cold
    first request would hold every other one up for as long.
    """
    _schema()
    gazetteer.city("Lisbon")
    gazetteer.country("Portugal")
    gazetteer.region("Texas")
    gazetteer.language("Portuguese")
    gazetteer.is_timezone("Europe/Lisbon")


def main(argv: Sequence[str] | None = None) -> None:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if "--responder" not in arguments:
        arguments += ["--responder", "slotwise.loadtest.responders:bench"]
    warm()
    fake_anthropic.main(arguments)


if __name__ == "__main__":
    main()
