"""Relative date expressions resolved against the moment a turn was observed.

"I start at Stripe on Monday" said on Saturday 2026-03-14 means 2026-03-16;
the extractor needs that instant for ``valid_from`` and an absolute phrase to
put in the fact's text, because "on Monday" read a month later is false.

Every result is midnight of the resolved day in ``observed_at``'s own
timezone. Month and year expressions resolve to the first day of the period,
so two mentions of the same period resolve identically ("last year" said in
2026 and "in 2025"). The conventions:

* weekday ("Monday", "on Monday", "this Monday"): the next such day strictly
  after the observation date; "last Monday": the latest one strictly before;
* today / tonight / this morning, tomorrow, yesterday / last night;
* last / next week: seven days before / after (a week, not a calendar week);
  this week: its Monday;
* last / this / next weekend: the Saturday of the previous / current / next weekend;
* last / this / next month or year; "N days|weeks|months|years ago";
* "in March": in past tense the latest March at or before the observation
  month, in future tense the first March at or after it; "last March" /
  "next March": strictly before / after the observation month;
* "in 2021", "since 2021", "March 2021", "March 3", "3 March 2021".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Literal

from dateutil.relativedelta import relativedelta

__all__ = [
    "UNKNOWN_START",
    "DateMention",
    "Tense",
    "absolute_phrase",
    "duration_start",
    "find_date",
    "parse_calendar_date",
    "resolve",
    "start_unknown",
]

Granularity = Literal["day", "week", "month", "year"]

_MONTHS = (
    "january february march april may june july august september october november december"
).split()
_MONTH_NUMBER = (
    {name: i for i, name in enumerate(_MONTHS, start=1)}
    | {name[:3]: i for i, name in enumerate(_MONTHS, start=1)}
    | {"sept": 9}
)
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}

# Patterns compile case-sensitively with (?i:...) around every word, because
# "May" is a month only when capitalised: lower-case "may" is the modal verb.
_MONTH = (
    r"(?:(?i:january|february|march|april|june|july|august|september|october|november|december"
    r"|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?|May)"
)
_WEEKDAY = r"(?P<weekday>(?i:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b(?!s)"
# Abbreviations only capitalised and after a preposition: "sat" and "sun" are words.
_WEEKDAY_SHORT = r"(?P<weekday>Mon|Tues?|Wed|Thu(?:rs?)?|Fri|Sat|Sun)\b"
_DAY = r"(?P<day>[0-3]?\d)(?i:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("iso", r"\b(?P<iso>(?:19|20)\d\d-[01]\d-[0-3]\d)\b"),
        ("month_day", rf"\b(?:(?i:on)\s+)?(?P<month>{_MONTH})\s+{_DAY}\b(?:,?\s+{_YEAR}\b)?"),
        (
            "day_month",
            rf"\b(?:(?i:on)\s+)?(?:(?i:the)\s+)?{_DAY}\s+(?:(?i:of)\s+)?(?P<month>{_MONTH})"
            rf"(?:,?\s+{_YEAR})?\b",
        ),
        (
            "ago",
            r"\b(?P<count>\d+|(?i:a|an|one|two|three|four|five|six))\s+"
            r"(?P<unit>(?i:day|week|month|year))(?i:s)?\s+(?i:ago)\b",
        ),
        ("relative_weekday", rf"\b(?P<rel>(?i:last|next|this|on|since))\s+{_WEEKDAY}"),
        ("relative_weekday", rf"\b(?P<rel>(?i:last|next|this|on))\s+{_WEEKDAY_SHORT}"),
        ("weekday", rf"\b{_WEEKDAY}"),
        (
            "relative_month",
            rf"\b(?P<rel>(?i:last|next|this|in|since|by|until|from|starting|as\s+of))\s+"
            rf"(?:(?i:early|late|mid)[\s-]+)?"
            rf"(?P<month>{_MONTH})(?:,?\s+{_YEAR}\b)?",
        ),
        ("month_year", rf"\b(?P<month>{_MONTH})\s+{_YEAR}\b"),
        ("year", rf"\b(?i:in|since|back in|during|from|of)\s+{_YEAR}\b"),
        (
            "relative_period",
            r"\b(?P<rel>(?i:last|next|this))\s+(?P<unit>(?i:week|weekend|month|year))\b",
        ),
        (
            "day_word",
            r"\b(?P<word>(?i:the day before yesterday|the day after tomorrow|today|tonight"
            r"|this morning|this afternoon|this evening|tomorrow|yesterday|last night))\b",
        ),
    )
)


Tense = Literal["past", "future"]

# The convention for "began at a time nobody said": a statement about the past ("I went
# to a castle", "I made some sketches") is not valid from the day it was said, and its
# start cannot be resolved, so it starts at the earliest instant a record may carry
# (``topics.records.MIN_YEAR``). An as-of read must read it as "before it was said, when
# unknown", not as a fact of the year 1000; the out-of-order rule reads it as older than
# any incumbent, so such a fact is stored as history and never retires a current one.
UNKNOWN_START = datetime(1000, 1, 1, tzinfo=UTC)


def start_unknown(when: datetime) -> bool:
    """Whether ``when`` is :data:`UNKNOWN_START` (the start of the fact is not known)."""
    return when == UNKNOWN_START


_DURATION = re.compile(
    r"\b(?:I've|I\s+have|we've|we\s+have|been)\b.*?\bfor\s+(?:(?:about|almost|nearly|over|"
    r"around)\s+)?(?P<count>\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s+"
    r"(?P<unit>day|week|month|year)s?\b",
    re.IGNORECASE,
)
_COUNT_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10,
}  # fmt: skip


def duration_start(text: str, observed_at: datetime) -> datetime | None:
    """When a state that has lasted "for 3 years" (said in the present perfect) began."""
    found = _DURATION.search(text)
    if found is None:
        return None
    raw = found["count"].lower()
    count = int(raw) if raw.isdigit() else _COUNT_WORDS[raw]
    unit = found["unit"].lower()
    step = {
        "day": relativedelta(days=count),
        "week": relativedelta(weeks=count),
        "month": relativedelta(months=count),
        "year": relativedelta(years=count),
    }[unit]
    began: datetime = observed_at - step
    return began


@dataclass(frozen=True, slots=True)
class DateMention:
    """A date expression found in a text: its span, the instant, and how precise it is.

    ``deictic`` marks expressions whose meaning depends on when they were said
    ("yesterday", "last March"); a text keeping them goes stale, so the
    extractor replaces them with :func:`absolute_phrase`.
    """

    start: int
    end: int
    when: datetime
    granularity: Granularity
    deictic: bool


def resolve(text: str, observed_at: datetime, *, tense: Tense | None = None) -> datetime | None:
    """The first date expression in ``text`` as an aware datetime, or None."""
    mention = find_date(text, observed_at, tense=tense)
    return None if mention is None else mention.when


def find_date(
    text: str, observed_at: datetime, *, tense: Tense | None = None
) -> DateMention | None:
    """The earliest date expression in ``text`` (the longest one when two start together).

    ``tense`` is the tense of the statement: a bare weekday in the past tense
    ("I went hiking on Monday") is the latest such day before the observation;
    otherwise the next one. A bare month in the future tense is the next one;
    otherwise the latest one.
    """
    best: DateMention | None = None
    for kind, pattern in _PATTERNS:
        for found in pattern.finditer(text):
            mention = _interpret(kind, found, observed_at, tense)
            if mention is None:
                continue
            if best is None or (mention.start, -mention.end) < (best.start, -best.end):
                best = mention
            break
    return best


def absolute_phrase(mention: DateMention) -> str:
    """An absolute wording of ``mention``: "on March 16, 2026", "in February 2026", "in 2025"."""
    when = mention.when
    month = _MONTHS[when.month - 1].capitalize()
    if mention.granularity == "year":
        return f"in {when.year}"
    if mention.granularity == "month":
        return f"in {month} {when.year}"
    if mention.granularity == "week":
        return f"in the week of {month} {when.day}, {when.year}"
    return f"on {month} {when.day}, {when.year}"


def parse_calendar_date(text: str) -> date | None:
    """The first full date with a year: "March 3, 1990", "3 March 1990", "1990-03-03"."""
    patterns = dict(_PATTERNS)
    found = patterns["iso"].search(text)
    if found is not None:
        return _safe_date(*map(int, found.group("iso").split("-")))
    for kind in ("month_day", "day_month"):
        found = patterns[kind].search(text)
        if found is not None and found.group("year") is not None:
            month = _month_number(found.group("month"))
            return _safe_date(int(found.group("year")), month, int(found.group("day")))
    return _numeric_date(text)


# "14.02.1985", "3/15/1990": day and month in either order, so only a date whose order the
# numbers decide (one above 12, or both the same) is read; "3/4/1992" is left unread.
_NUMERIC = re.compile(r"(?<![\d.:/-])(\d{1,2})([./-])(\d{1,2})\2(\d{4})(?![\d./:-])")


def _numeric_date(text: str) -> date | None:
    found = _NUMERIC.search(text)
    if found is None:
        return None
    first, second, year = int(found.group(1)), int(found.group(3)), int(found.group(4))
    if first > 12 >= second or first == second:
        return _safe_date(year, second, first)
    if second > 12 >= first:
        return _safe_date(year, first, second)
    return None


def _interpret(
    kind: str, found: re.Match[str], observed_at: datetime, tense: Tense | None
) -> DateMention | None:
    today = observed_at.date()
    result: tuple[date, Granularity, bool] | None
    if kind == "iso":
        day = _safe_date(*map(int, found.group("iso").split("-")))
        result = None if day is None else (day, "day", False)
    elif kind in ("month_day", "day_month"):
        result = _calendar_day(found, today, tense)
    elif kind == "ago":
        result = _ago(found, today)
    elif kind in ("relative_weekday", "weekday"):
        rel = found.group("rel").lower() if kind == "relative_weekday" else "on"
        if (rel == "on" and tense == "past") or rel == "since":
            rel = "last"
        weekday = [w[:3] for w in _WEEKDAYS].index(found.group("weekday")[:3].lower())
        result = (_weekday(today, weekday, rel), "day", True)
    elif kind == "relative_month":
        result = _month_mention(found, today, tense)
    elif kind == "month_year":
        month = _month_number(found.group("month"))
        result = (date(int(found.group("year")), month, 1), "month", False)
    elif kind == "year":
        result = (date(int(found.group("year")), 1, 1), "year", False)
    elif kind == "relative_period":
        result = _period(found.group("rel").lower(), found.group("unit").lower(), today)
    else:
        result = _day_word(found.group("word").lower(), today)
    if result is None:
        return None
    day, granularity, deictic = result
    when = datetime(day.year, day.month, day.day, tzinfo=observed_at.tzinfo)
    return DateMention(found.start(), found.end(), when, granularity, deictic)


def _calendar_day(
    found: re.Match[str], today: date, tense: Tense | None
) -> tuple[date, Granularity, bool] | None:
    month = _month_number(found.group("month"))
    day_of_month = int(found.group("day"))
    if found.group("year") is not None:
        day = _safe_date(int(found.group("year")), month, day_of_month)
        return None if day is None else (day, "day", False)
    day = _safe_date(today.year, month, day_of_month)
    if day is None:
        return None
    if tense == "future" and day < today:
        day = _safe_date(today.year + 1, month, day_of_month)
    elif tense != "future" and day > today:
        day = _safe_date(today.year - 1, month, day_of_month)
    return None if day is None else (day, "day", True)


def _ago(found: re.Match[str], today: date) -> tuple[date, Granularity, bool]:
    raw = found.group("count").lower()
    count = int(raw) if raw.isdigit() else _NUMBER_WORDS[raw]
    unit = found.group("unit").lower()
    if unit == "day":
        return today - timedelta(days=count), "day", True
    if unit == "week":
        return today - timedelta(weeks=count), "week", True
    if unit == "month":
        return _month_start(today, -count), "month", True
    return date(today.year - count, 1, 1), "year", True


def _weekday(today: date, weekday: int, rel: str) -> date:
    if rel == "last":
        return today - timedelta(days=(today.weekday() - weekday - 1) % 7 + 1)
    return today + timedelta(days=(weekday - today.weekday() - 1) % 7 + 1)


def _month_mention(
    found: re.Match[str], today: date, tense: Tense | None
) -> tuple[date, Granularity, bool]:
    month = _month_number(found.group("month"))
    if found.group("year") is not None:
        return date(int(found.group("year")), month, 1), "month", False
    rel = found.group("rel").lower()
    if rel == "last":
        year = today.year if month < today.month else today.year - 1
        return date(year, month, 1), "month", True
    if rel == "next":
        year = today.year if month > today.month else today.year + 1
        return date(year, month, 1), "month", True
    if rel == "this":
        return date(today.year, month, 1), "month", True
    # "from april", "starting june": a state that takes hold at the month's next start.
    if (
        (tense == "future" and rel != "since")
        or rel in ("from", "starting")
        or rel.startswith("as")
    ):
        year = today.year if month >= today.month else today.year + 1
    else:
        year = today.year if month <= today.month else today.year - 1
    return date(year, month, 1), "month", False


def _period(rel: str, unit: str, today: date) -> tuple[date, Granularity, bool]:
    if rel == "this":
        return _this_period(unit, today)
    step = -1 if rel == "last" else 1
    if unit == "week":
        return today + timedelta(days=7 * step), "week", True
    if unit == "weekend":
        if step < 0:
            since_saturday = (today.weekday() - 5) % 7
            # On a weekend, "last weekend" is the one before the current one.
            back = since_saturday + (7 if since_saturday <= 1 else 0)
            return today - timedelta(days=back), "day", True
        return today + timedelta(days=(5 - today.weekday()) % 7 or 7), "day", True
    if unit == "month":
        return _month_start(today, step), "month", True
    return date(today.year + step, 1, 1), "year", True


def _this_period(unit: str, today: date) -> tuple[date, Granularity, bool]:
    if unit == "week":
        return today - timedelta(days=today.weekday()), "week", True
    if unit == "weekend":
        return today + timedelta(days=5 - today.weekday()), "day", True
    if unit == "month":
        return today.replace(day=1), "month", True
    return date(today.year, 1, 1), "year", True


def _day_word(word: str, today: date) -> tuple[date, Granularity, bool]:
    offsets = {
        "the day before yesterday": -2,
        "yesterday": -1,
        "last night": -1,
        "tomorrow": 1,
        "the day after tomorrow": 2,
    }
    return today + timedelta(days=offsets.get(word, 0)), "day", True


def _month_start(today: date, months: int) -> date:
    index = today.year * 12 + today.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def _month_number(name: str) -> int:
    return _MONTH_NUMBER[name.lower().rstrip(".")]


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None
