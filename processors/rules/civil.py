"""Civil details read from the whole turn: a date of birth, a postal address, and the
name to use (``processors.rules.naming``).

Both are read before the turn is cut into clauses, and with the day it was said:
an address runs across commas ("5 Rue des Lilas, 75019 Paris") that the clause
splitter cuts, and a birthday told as an age ("I turned 25 on Sunday", "turning
30 tomorrow!!") is a date only once that day is known: the day of the birthday,
that many years back.

Only the speaker's own: "my son turned 5 today" and "my mum's address is …" are
someone else's, a question or a plan states nothing, and an address must carry a
number (a house number or a postcode) to be one.
"""

from __future__ import annotations

import re
from datetime import date, datetime

from slotwise.processors.dates import Tense, find_date, parse_calendar_date
from slotwise.processors.rules.findings import Finding
from slotwise.processors.rules.naming import read_name_to_use

__all__ = ["read_civil"]

_I = re.IGNORECASE

# Someone else's, a question, or not now: nothing in the sentence is read.
_NOT_OWN = re.compile(
    r"\?|\b(?:if\s+(?:i|we)|would|might|maybe|planning|hope|wish|old|previous|former|used\s+to|"
    r"(?:my|our|his|her|their)\s+(?:sister|brother|mom|mum|mother|dad|father|friend|partner|"
    r"husband|wife|boss|son|daughter|kid|cousin|aunt|uncle|girlfriend|boyfriend|parents?|"
    r"grand\w+|office|company|work|landlord)\b|\w+'s\s+(?:new\s+)?(?:address|birthday)|"
    # Reported or role-played: "DAN knows my address is …", "pretend my birthday is …".
    r"knows?|says?|said|thinks?|tells?|told|pretend|imagine|you\s+are\s+now|act\s+as)",
    _I,
)
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")

# "my birthday's 3 march 1994", "dob: 1988-02-09", "I was born on March 3, 1990".
_BIRTH_WORDS = re.compile(
    r"(?:\bmy\s+(?:birthday|birth\s*date|date\s+of\s+birth|dob|d\.o\.b\.?)|^\s*(?:birthday|"
    r"date\s+of\s+birth|dob|d\.o\.b\.?)|\bI\s+was\s+born|^\s*born)\b(?P<rest>.{0,40})",
    _I,
)
_NUMBER_WORDS = {
    word: n
    for n, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
} | {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80}
_AGE = r"(\d{1,3}|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + r")"
# "I turned 25 on Sunday", "turning 30 tomorrow", "it's my 21st birthday today",
# "I'm 40 today": the speaker's age on a day the sentence names.
_AGE_ON = re.compile(
    rf"(?:(?:^|\bI\s+(?:just\s+)?|\bI've\s+just\s+|^\s*just\s+|\bI(?:'m|\s+am)\s+)"
    rf"turn(?:ed|ing)?\s+{_AGE}\b"
    rf"|\bI(?:'m|\s+am)\s+(?:turning\s+)?{_AGE}\s+(?=today|tomorrow)"
    rf"|\bI(?:'ll|\s+will)\s+(?:be|turn)\s+{_AGE}\b"
    # "big 50 on sunday!!": the round birthday, the speaker's own unless someone is named.
    rf"|^\s*(?:(?:my|the)\s+)?big\s+{_AGE}\b"
    rf"|\bmy\s+{_AGE}(?:st|nd|rd|th)\s+birthday\b)(?P<rest>.*)",
    _I,
)
_DAY_NAMED = re.compile(
    r"\b(?:today|tomorrow|yesterday|tonight|on\s+\w+day|(?:last|next|this|this\s+coming)\s+\w+day)"
    r"\b",
    _I,
)
# "I'll be 30 minutes late on friday": a number of something else, not years of age.
_NOT_AN_AGE = re.compile(
    r"^\s*(?:[%:.,/x-]\s*\d|%|minutes?|mins?|hours?|hrs?|seconds?|secs?|days?|weeks?|months?|"
    r"km|k|miles?|kg|kilos?|lbs?|pounds?|euros?|dollars?|bucks|quid|percent|am|pm|people|pages?|"
    r"of|in\s+a\s+row)\b",
    _I,
)
# A day counted from the named one ("a week from today", "the day after tomorrow"): the
# date reader does not count, so the birthday is left unread rather than misdated.
_DAY_SHIFTED = re.compile(
    r"\b(?:from|after|before)\s+(?:today|tomorrow|yesterday|\w+day)\b|\bin\s+\w+\s+days\b", _I
)

# "my new address is …", "send letters to …", "address is now …".
_ADDRESS_INTRO = re.compile(
    r"(?:\bmy\s+(?:new\s+|home\s+|postal\s+|mailing\s+|billing\s+|shipping\s+|delivery\s+)?"
    r"address(?:\s+for\s+(?:the\s+)?\w+)?(?:\s+is|'s|\s*[=:])|"
    # Spanish and Portuguese: "nueva dirección: …", "meu endereço é …".
    r"\b(?:(?:mi|mí|meu|o\s+meu)\s+)?(?:nueva\s+|novo\s+)?(?:direcci[oó]n|endere[cç]o)"
    r"(?:\s+(?:nueva|novo))?(?:\s+(?:es|é)|\s*:)|"
    r"(?:^|[,;]|\b(?:and|so))\s*(?:the\s+)?(?:new\s+)?address(?:\s+is|'s|:)|"
    r"\baddress\s+is\s+now\b|"
    r"\b(?:send|post|mail|ship)\s+(?:letters|post|mail|parcels|packages|deliveries|"
    r"everything|my\s+\w+)\s+to\b)\s*(?:now\s+)?:?\s*(?P<rest>.+)",
    _I,
)
# Where the address ends: "and my number is…", a new sentence, a bracket, a dash aside.
_ADDRESS_END = re.compile(
    r"\s*(?:,?\s+(?:and|but|so|btw|pls|please|thanks|thx)\b|[;()!?]|\s[-\u2013\u2014]\s|"
    r"\.(?:\s|$)|$)",
    _I,
)
_STREET_NUMBER = re.compile(r"\d")
_SMALL_WORDS = frozenset("de des du la le les del da do dos das di van von der den y e of".split())
_POSTCODE = re.compile(r"^(?=.*\d)(?=.*[a-z])[a-z0-9]{2,4}$", _I)


def read_civil(text: str, observed_at: datetime) -> list[Finding]:
    """The speaker's date of birth, postal address and name to use, where the turn states
    them."""
    found = read_name_to_use(text)
    for sentence in _SENTENCES.split(text):
        if _NOT_OWN.search(sentence):
            continue
        born = _birth_date(sentence, observed_at)
        if born is not None and not any(f.attribute == "date_of_birth" for f in found):
            found.append(Finding("date_of_birth", born.isoformat(), f"User was born on {born}."))
        address = _address(sentence)
        if address is not None and not any(f.attribute == "postal_address" for f in found):
            found.append(Finding("postal_address", address, f"User's address is {address}."))
    return found


def _birth_date(sentence: str, observed_at: datetime) -> date | None:
    stated = _BIRTH_WORDS.search(sentence)
    if stated is not None:
        return parse_calendar_date(stated.group("rest")) or _birthday_then_age(
            sentence, observed_at
        )
    aged = _AGE_ON.search(sentence)
    if (
        aged is None
        or not _DAY_NAMED.search(aged.group("rest"))
        or _DAY_SHIFTED.search(aged.group("rest"))
        or _NOT_AN_AGE.match(aged.group("rest"))
    ):
        return None
    word = next(g for g in aged.groups()[:-1] if g is not None)  # the age; then rest
    tense: Tense = "past" if "turned" in aged.group(0).lower() else "future"
    return _born(word, aged.group("rest"), observed_at, tense)


def _born(word: str, when: str, observed_at: datetime, tense: Tense) -> date | None:
    """The birth date of someone ``word`` years old on the day ``when`` names."""
    age = int(word) if word.isdigit() else _NUMBER_WORDS[word.lower()]
    mention = find_date(when, observed_at, tense=tense)
    if mention is None or mention.granularity != "day" or not 0 < age < 120:
        return None
    day = mention.when.date()
    try:
        return day.replace(year=day.year - age)
    except ValueError:  # 29 February in a year without one
        return None


# "birthday was yesterday, 27 now": the day, then the age it made.
_BIRTHDAY_THEN_AGE = re.compile(
    r"\b(?:my\s+)?(?:birthday|bday|b-day)\s+(?:was|is)\s+(?P<day>today|yesterday|(?:on\s+|last\s+)?"
    rf"\w+day)\b[\s,;.!-]+(?:and\s+)?(?:I(?:'m|\s+am)\s+|officially\s+)?{_AGE}\s+now\b",
    _I,
)


def _birthday_then_age(sentence: str, observed_at: datetime) -> date | None:
    found = _BIRTHDAY_THEN_AGE.search(sentence)
    return None if found is None else _born(found.group(2), found["day"], observed_at, "past")


def _address(sentence: str) -> str | None:
    intro = _ADDRESS_INTRO.search(sentence)
    if intro is None:
        return None
    rest = intro.group("rest")
    if "@" in rest:
        return None  # an email address
    end = _ADDRESS_END.search(rest)
    said = rest[: end.start() if end is not None else len(rest)].strip(" ,.:")
    # A house number or a postcode, and more than one word: "send it to my work" is no address.
    if not _STREET_NUMBER.search(said) or len(said.split()) < 3 or len(said) > 120:
        return None
    return _tidy(said)


def _tidy(said: str) -> str:
    """Capitalisation tidied: lower-case words capitalised, postcodes upper-cased."""
    words = []
    for i, word in enumerate(said.split(" ")):
        if _POSTCODE.match(word):
            words.append(word.upper())
        elif word.islower() and (i == 0 or word not in _SMALL_WORDS) and word[:1].isalpha():
            words.append("-".join(part[:1].upper() + part[1:] for part in word.split("-")))
        else:
            words.append(word)
    return " ".join(words)
