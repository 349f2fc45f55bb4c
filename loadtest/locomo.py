"""LoCoMo conversations replayed as chat turns across many synthetic subjects.

``locomo10.json`` (Maharana et al., 2024) holds ten long two-person
conversations: a list of samples, each with ``sample_id`` and a
``conversation`` object carrying ``speaker_a``, ``speaker_b``, and numbered
sessions ``session_<n>`` (a list of turns ``{"speaker", "dia_id", "text"}``,
some with an image ``blip_caption``) dated by ``session_<n>_date_time``
("1:56 pm on 8 May, 2023"). Some samples date sessions that have no turns.

Each speaker of each conversation becomes ``replicas`` subjects,
``{conversation}-{speaker}-{replica}``; a subject receives that speaker's own
turns, in conversation order, at the session's date (plus the turn's position
in the session, so every turn has its own instant). Subjects are interleaved
so that many are in flight at once while each keeps its order.

The file is read where it lies (``SLOTWISE_LOCOMO_PATH`` or
``../shared/data/locomo/locomo10.json`` beside the repository): its licence
keeps it out of this repository.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from slotwise.processors.model import stable_id
from slotwise.topics.codec import loads
from slotwise.topics.exceptions import SlotwiseError
from slotwise.topics.records import Observation

__all__ = [
    "LOCOMO_ENV",
    "CorpusError",
    "Turn",
    "default_path",
    "observations",
    "read_turns",
]

LOCOMO_ENV = "SLOTWISE_LOCOMO_PATH"
_REPO_ROOT = Path(__file__).resolve().parents[1]
_DEFAULT = _REPO_ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
_SESSION = re.compile(r"session_(\d+)")
_DATE_FORMAT = "%I:%M %p on %d %B, %Y"
TURN_SPACING = timedelta(seconds=30)
"""How far apart two consecutive turns of a session are placed."""


class CorpusError(SlotwiseError, ValueError):
    """The corpus file is missing or not shaped like LoCoMo."""


@dataclass(frozen=True, slots=True)
class Turn:
    """One utterance of a LoCoMo conversation."""

    conversation: str
    speaker: str
    session: int
    position: int
    dia_id: str
    text: str
    said_at: datetime


def default_path() -> Path:
    """The corpus location: ``$SLOTWISE_LOCOMO_PATH`` if set, else beside the repository."""
    configured = os.environ.get(LOCOMO_ENV)
    return Path(configured) if configured else _DEFAULT


def read_turns(path: Path | None = None) -> list[Turn]:
    """Every turn of every conversation, each conversation in its own order."""
    source = path or default_path()
    try:
        document = loads(source.read_bytes())
    except FileNotFoundError:
        raise CorpusError(f"no LoCoMo file at {source} (set {LOCOMO_ENV})") from None
    if not isinstance(document, list):
        raise CorpusError(f"{source}: expected a list of conversations")
    turns: list[Turn] = []
    for sample in document:
        turns.extend(_conversation_turns(sample, source))
    return turns


def _conversation_turns(sample: object, source: Path) -> list[Turn]:
    if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
        raise CorpusError(f"{source}: a sample has no 'conversation' object")
    name = str(sample.get("sample_id", "conv"))
    conversation: dict[str, object] = sample["conversation"]
    numbers = sorted(
        int(found.group(1))
        for key in conversation
        if (found := _SESSION.fullmatch(key)) is not None
    )
    turns: list[Turn] = []
    for number in numbers:
        spoken = conversation[f"session_{number}"]
        dated = conversation.get(f"session_{number}_date_time")
        if not isinstance(spoken, list) or not isinstance(dated, str):
            raise CorpusError(f"{source}: {name} session {number} has no turn list or no date")
        try:
            start = datetime.strptime(dated.strip(), _DATE_FORMAT).replace(tzinfo=UTC)
        except ValueError:
            raise CorpusError(f"{source}: {name} session {number}: bad date {dated!r}") from None
        for position, turn in enumerate(spoken):
            if not isinstance(turn, dict) or not turn.get("text") or not turn.get("speaker"):
                raise CorpusError(f"{source}: {name} session {number} turn {position} is malformed")
            turns.append(
                Turn(
                    conversation=name,
                    speaker=str(turn["speaker"]),
                    session=number,
                    position=position,
                    dia_id=str(turn.get("dia_id", f"D{number}:{position + 1}")),
                    text=str(turn["text"]),
                    said_at=start + position * TURN_SPACING,
                )
            )
    return turns


def observations(
    turns: Sequence[Turn], replicas: int, *, prefix: str = ""
) -> Iterator[Observation]:
    """The turns as observations of ``replicas`` copies of every speaker, interleaved.

    The replay goes round the streams (one per conversation and replica) taking one turn
    from each, so the subjects of every stream are in flight together; within a
    stream, turns keep the conversation's order.
    """
    if replicas < 1:
        raise CorpusError("replicas must be at least 1")
    by_conversation: dict[str, list[Turn]] = {}
    for turn in turns:
        by_conversation.setdefault(turn.conversation, []).append(turn)
    streams = [
        (replica, spoken) for replica in range(replicas) for spoken in by_conversation.values()
    ]
    longest = max((len(spoken) for _, spoken in streams), default=0)
    for index in range(longest):
        for replica, spoken in streams:
            if index < len(spoken):
                yield _observation(spoken[index], replica, prefix)


def _observation(turn: Turn, replica: int, prefix: str) -> Observation:
    subject = f"{prefix}{turn.conversation}-{turn.speaker}-{replica}"
    return Observation(
        schema="observation/1",
        observation_id=stable_id("locomo", subject, turn.dia_id),
        subject_id=subject,
        session_id=f"{subject}-session-{turn.session}",
        speaker="user",
        text=turn.text,
        observed_at=turn.said_at,
        source="locomo",
        metadata={"dia_id": turn.dia_id, "conversation": turn.conversation},
    )
