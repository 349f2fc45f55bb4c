"""Bio lines: a message that is a list of short items about the speaker.

"33, nurse, two kids, live in cork", "28 / software engineer / berlin / vegan": each item
is a statement with everything but its content dropped. When the line is the speaker's
(it gives their age, or an item reads as their own state or act), each item is written
out as the sentence it stands for, so the rules read it as they read any clause: a bare
job title is "I'm a nurse", "mum of 3" "I have 3 kids", "one husband" "I'm married",
"Sydney based" "I'm based in Sydney". Anything else stays as it is: a bare town may be
where they work, grew up or are going, so it is no home.
"""

from __future__ import annotations

import re

from slotwise.processors.rules.chat import restore_subject
from slotwise.processors.rules.gazetteer import city_by_name
from slotwise.processors.rules.values import job_title
from slotwise.processors.rules.words import TITLE_FILLER

__all__ = ["bio_items"]

_I = re.IGNORECASE

# Separators a bio uses besides the comma: "28 / engineer / berlin", "nurse | mum | leeds".
_SEPARATOR = re.compile(r"\s+[/|\u00b7\u2022]\s+")
# "nurse at st james's", "accountant in dublin": a title, and where it is worked.
_TITLE_WHERE = re.compile(r"^(?P<title>.+?)(?:\s+(?:at|in|for|with|@)\s+\S.*)?$", _I)
# "41", "aged 41", "41 yo": the speaker's age, the mark of a bio line.
_AGE = re.compile(r"(?:age|aged)?\s*\d{2}(?:\s*(?:yo|y/o|years\s+old))?", _I)
_PRONOUNS = re.compile(r"(?:he|she|they|xe|ze|it)/\w+", _I)
# A list with more than this many items is a list of things, not lines of a bio.
_MOST_ITEMS = 8


def bio_items(sentence: str) -> list[str]:
    """The items of a bio line, each as the statement it stands for; any other sentence as
    it is. The caller has checked that no item opens on someone else."""
    items = [item.strip() for item in _SEPARATOR.sub(", ", sentence).split(",")]
    if not 3 <= len(items) <= _MOST_ITEMS or not all(0 < len(i.split()) <= 4 for i in items):
        return [sentence]
    aged = any(_AGE.fullmatch(item) for item in items)
    # A bare title alone does not make the line the speaker's ("nurse, teacher, vet").
    speaker = aged or any(
        restore_subject(i) != i or (_title(i) is None and _written(i) != i) for i in items
    )
    # Two bare titles are a list of jobs (someone's options, a family's), not one bio.
    if not speaker or sum(_title(item) is not None for item in items) > 1:
        return [sentence]
    # A written-out item stands alone; the others stay joined as they came, where the clause
    # rules find them as they would without the list ("married, one kid, a cat called Pudding").
    pieces: list[str] = []
    joined = False
    for item in items:
        written = _written(item)
        if written == item and joined and not _PRONOUNS.fullmatch(item):
            pieces[-1] = f"{pieces[-1]}, {item}"
        else:
            pieces.append(written)
        joined = written == item
    return pieces


# "mum of 3", "proud dad to two": how many children the speaker has.
_PARENT_OF = re.compile(
    r"^(?:a\s+)?(?:proud\s+|busy\s+|tired\s+)?(?:mum|mom|mam|mother|dad|father|parent)\s+(?:of|to)"
    r"\s+(?P<count>[1-9]|one|two|three|four|five|six)(?:\s+(?:kids|children|boys|girls))?$",
    _I,
)
# "one husband, no kids": a spouse listed among the speaker's household.
_SPOUSE = re.compile(r"(?:one|a|1)\s+(?:husband|wife)", _I)
_PLACE_BASED = re.compile(r"^(?P<place>[^\W\d][\w'.-]*(?:\s+[^\W\d][\w'.-]*)?)[\s-]based$", _I)


def _written(item: str) -> str:
    """The item as the speaker's sentence, or as it is."""
    parent = _PARENT_OF.match(item)
    if parent is not None:
        return f"I have {parent['count']} kids"
    if _SPOUSE.fullmatch(item):
        return "I'm married"
    title = _title(item)
    if title is not None:
        article = "an" if item[0].lower() in "aeiou" else "a"
        return f"I'm {article} {item}"
    based = _PLACE_BASED.match(item)
    if based is not None and city_by_name(based["place"]) is not None:
        return f"I'm based in {based['place']}"
    return item


def _title(item: str) -> str | None:
    """The job title an item is, alone or with where it is worked."""
    found = _TITLE_WHERE.match(item)
    if found is None or TITLE_FILLER.sub("", found["title"]) != found["title"]:
        return None
    return job_title(found["title"])
