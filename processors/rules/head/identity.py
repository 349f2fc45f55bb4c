"""Rules for who the user is: contact, name, home and origin, languages, timezone, nationality."""

from __future__ import annotations

import re

from slotwise.processors.rules import gazetteer
from slotwise.processors.rules.clauses import Clause
from slotwise.processors.rules.findings import INFERRED, Finding
from slotwise.processors.rules.head.matching import AM, compile_all, first_match, say
from slotwise.processors.rules.head.places import spelled_out
from slotwise.processors.rules.values import (
    BOUNDARY,
    bounded,
    lookup,
    proper_noun,
    split_items,
    strip_the,
)
from slotwise.processors.rules.wording import ADVERBS
from slotwise.processors.rules.words import (
    AMBIGUOUS_PLACES,
    COMMON_WORD_PLACES,
    COUNTRIES,
    DATABASES,
    DEMONYMS,
    LANGUAGES,
    PLANS,
    REGIONS,
    TIMEZONE,
)

__all__ = [
    "read_contact",
    "read_home",
    "read_introduction",
    "read_languages",
    "read_name",
    "read_nationality",
    "read_origin",
    "read_timezone",
]

_I = re.IGNORECASE

_EMAIL_LEAD = compile_all(
    r"^my\s+(?:new\s+|work\s+|personal\s+|current\s+|primary\s+|main\s+)?"
    r"(?:e-?mail(?:\s+address)?|address)\s+is\s+(?:now\s+)?(?P<rest>.+)$",
    r"^(?:you\s+can\s+|please\s+)?(?:e-?mail|reach|contact|write\s+to|message)\s+me\s+"
    r"(?:at|on|via)\s+(?P<rest>.+)$",
    rf"^{AM}\s+reachable\s+at\s+(?P<rest>.+)$",
)
_PHONE_LEAD = compile_all(
    r"^my\s+(?:new\s+|work\s+|cell\s+|mobile\s+|home\s+|personal\s+)?(?:phone(?:\s+number)?|"
    r"number|cell(?:\s+number)?|mobile(?:\s+number)?|whatsapp)\s+is\s+(?:now\s+)?(?P<rest>.+)$",
    r"^(?:you\s+can\s+|please\s+)?(?:call|text|reach|contact|whatsapp|ring)\s+me\s+(?:at|on)\s+"
    r"(?P<rest>.+)$",
)
_EMAIL = re.compile(r"^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$")
_PHONE = re.compile(r"^\+?[\d(][\d\s().-]{5,}\d$")


def read_contact(clause: Clause) -> list[Finding]:
    found = first_match(_EMAIL_LEAD, clause.text)
    if found is not None and _EMAIL.match(found["rest"].strip()):
        email = found["rest"].strip().lower()
        return [Finding("email", email, f"User's email is {email}.")]
    found = first_match(_PHONE_LEAD, clause.text)
    if found is not None and _PHONE.match(found["rest"].strip()):
        raw = found["rest"].strip()
        digits = re.sub(r"\D", "", raw)
        international = raw.startswith(("+", "00"))
        digits = digits[2:] if raw.startswith("00") else digits
        if 7 <= len(digits) <= 15:
            phone = ("+" if international else "") + digits
            return [Finding("phone", phone, f"User's phone number is {phone}.")]
    return []


_NAME = compile_all(r"^my\s+(?:full\s+|real\s+|legal\s+)?name(?:'s|\s+is)\s+(?P<rest>.+)$")
_CALL_ME = compile_all(
    r"^(?:(?:you\s+can|please|just|feel\s+free\s+to|everyone|people|friends|my\s+friends|"
    # "i'd rather you call me Sam", "i'd prefer it if you call me Jo".
    r"I(?:'d|\s+would)\s+(?:rather|prefer)(?:\s+it\s+if)?\s+you)\s+)*"
    r"calls?\s+me\s+(?P<rest>.+)$",
    rf"^I{ADVERBS}\s+go\s+by\s+(?P<rest>.+)$",
    # "now going by Sam", "I'm going by Jo these days".
    rf"^(?:{AM}\s+|now\s+)?going\s+by\s+(?P<rest>.+)$",
    r"^I\s+prefer\s+(?:to\s+be\s+called|being\s+called)\s+(?P<rest>.+)$",
    r"^my\s+(?:preferred\s+name|nick\s*name|chosen\s+name|usual\s+name)(?:'s|\s+is)\s+(?P<rest>.+)$",
)
_INTRO = re.compile(r"^I(?:'m|\s+am)\s+(?P<rest>.+)$")


# "my name is different now", "call me old-fashioned": words said about a name, not one.
_SAID_OF_A_NAME = frozenset(
    "different same changed new wrong correct right weird long short hard spelled pronounced "
    "unusual common fine ok okay complicated easy private hyphenated double legally officially "
    "still also actually old-fashioned crazy paranoid lazy picky lucky biased silly "
    "embarrassing stupid cute funny awful cringe cringey dumb terrible ridiculous cool nice "
    "boring on in the a an my your not".split()
)


# "I go by they now": a pronoun, not a name (``head.personal`` reads it as pronouns).
_PRONOUN_WORDS = frozenset("he she they them him her xe ze it any".split())


def _a_name(name: str | None) -> str | None:
    if name is None:
        return None
    first = name.split()[0].casefold()
    return None if first in _SAID_OF_A_NAME or first in _PRONOUN_WORDS else name


def read_name(clause: Clause) -> list[Finding]:
    found = first_match(_NAME, clause.text)
    if found is not None:
        name = _a_name(bounded(proper_noun(found["rest"], clause.cased)))
        return [] if name is None else [Finding("name", name, f"User's name is {name}.")]
    found = first_match(_CALL_ME, clause.text)
    if found is not None:
        name = _a_name(bounded(proper_noun(found["rest"], clause.cased, limit=2)))
        if name is not None:
            return [Finding("preferred_name", name, f"User prefers to be called {name}.")]
    return []


def read_introduction(clause: Clause) -> list[Finding]:
    """ "I'm Ana": only a short capitalised clause that names nothing else we know."""
    found = _INTRO.match(clause.text)
    if found is None or not clause.cased:
        return []
    phrase = proper_noun(found["rest"], cased=True, limit=3)
    if phrase is None or not re.match(r"^\s*(?:$|,)", phrase[1]):
        return []
    name = phrase[0]
    if not clause.greeting and len(name.split()) < 2:
        return []  # "I'm Blessed" in Title Case is not a name
    known = (LANGUAGES, DEMONYMS, COUNTRIES, REGIONS, DATABASES)
    if any(name.lower() in table for table in known) or name.lower() in PLANS:
        return []
    if TIMEZONE.match(name) or any(w.isupper() and len(w) > 1 for w in name.split()):
        return []
    return [Finding("name", name, f"User's name is {name}.", INFERRED)]


_HOME = compile_all(
    rf"^I(?:'ve|\s+have)?{ADVERBS}\s+(?:live|reside|(?:moved|relocated)(?:\s+back|\s+over|"
    rf"\s+out)?)(?:\s+alone|\s+with\s+(?:my|our)\s+\w+(?:\s+\w+)?)?\s+(?:in|to)\s+(?P<rest>.+)$",
    rf"^{AM}\s+(?:based|living|settled|located|residing)\s+(?:in|out\s+of)\s+(?P<rest>.+)$",
    # "I've lived in Toronto for 6 years": a home that lasts to now ("I've lived in Rome" alone
    # may be a past one).
    rf"^I(?:'ve|\s+have){ADVERBS}\s+(?:lived|been\s+living)\s+in\s+"
    r"(?!.*\b(?:when|as\s+a|back\s+in|during)\b)(?P<rest>.+?\s(?:for|since)\s.+)$",
)
_FROM = compile_all(
    rf"^{AM}\s+(?P<origin>originally\s+)?from\s+(?P<rest>.+)$",
    r"^I\s+(?P<origin>originally\s+come|come)\s+from\s+(?P<rest>.+)$",
    r"^I\s+(?P<origin>grew\s+up|was\s+raised)\s+in\s+(?P<rest>.+)$",
    # Spanish and Portuguese "I'm from": "soy de rosario", "sou de recife".
    r"^(?:yo\s+|eu\s+)?(?P<origin>soy|sou)\s+(?:de|da|do)\s+(?P<rest>.+)$",
)
_BORN = compile_all(r"^I\s+was\s+born\s+(?P<raised>and\s+raised\s+)?in\s+(?P<rest>.+)$")


def _places(rest: str, cased: bool) -> list[tuple[str, str]] | None:
    """``[(slot kind, canonical place)]`` for "Lisbon", "Portugal", "Austin, Texas"…"""
    # "I'm based in galway": a capitalised turn may still leave a place in lower case.
    first = (proper_noun(strip_the(rest), cased) if cased else None) or _known_place_prefix(
        rest, fallback=not cased
    )
    if first is None:
        return None
    place, after = first
    if rest.lower().startswith("the ") and f"the {place.lower()}" in COUNTRIES:
        place = f"the {place}"  # "the States"
    found = [_place_kind(place)]
    second = re.match(r"^\s*,\s*(?P<rest>.+)$", after)
    more = None if second is None else proper_noun(strip_the(second["rest"]), cased)
    if more is not None:
        kind = _place_kind(more[0])
        if kind[0] in ("home_country", "home_region") and found[0][0] == "home_city":
            found.append(kind)
            after = more[1]
        elif _known_place(more[0]):
            # "in porto, lisbon": a second place that is not the first's country or region
            # leaves the reading in doubt; anything else after the comma is another remark.
            return None
    if not BOUNDARY.match(after) or any(kind == "" for kind, _ in found):
        return None
    return found


def _known_place_prefix(rest: str, *, fallback: bool) -> tuple[str, str] | None:
    """The longest run of lower-case words a library knows as a place, when a boundary
    follows it ("lisbon three weeks ago"); else, with ``fallback``, the plain reading."""
    for size in (4, 3, 2, 1):
        found = proper_noun(strip_the(rest), False, limit=size)
        if (
            found is not None
            and found[0].casefold() not in COMMON_WORD_PLACES
            and (gazetteer.city_by_name(found[0]) or gazetteer.country(found[0]))
            and BOUNDARY.match(found[1])
        ):
            return found
    return proper_noun(strip_the(rest), False) if fallback else None


def _known_place(place: str) -> bool:
    """A place a library knows: then a comma after the first place may be a second one."""
    return any(
        lookup(place) is not None
        for lookup in (gazetteer.city, gazetteer.country, gazetteer.region)
    )


def _place_kind(place: str) -> tuple[str, str]:
    key = place.lower()
    if key in COUNTRIES:
        return "home_country", COUNTRIES[key]
    if key in REGIONS:
        return "home_region", REGIONS[key]
    if key in AMBIGUOUS_PLACES or key in PLANS:
        # "moved to Team": a plan's name is a move of subscription, never a home.
        return "", place
    return "home_city", spelled_out(place)


def read_home(clause: Clause) -> list[Finding]:
    found = first_match(_HOME, clause.text)
    places = None if found is None else _places(found["rest"], clause.cased)
    if not places:
        return []
    where = ", ".join(value for _, value in places)
    moved = re.search(r"\b(?:moved|relocated)\b", clause.text, _I)
    if moved and not any(_known_place(value) for _, value in places):
        # "I moved to Atlassian in march": a move to a name no library knows as a place may
        # be a move of job; the change is asked about, not guessed.
        return []
    text = f"User lives in {where}." if moved else say(clause, *(value for _, value in places))
    return [Finding(kind, value, text) for kind, value in places]


def read_origin(clause: Clause) -> list[Finding]:
    born = first_match(_BORN, clause.text)
    if born is not None:
        places = _places(born["rest"], clause.cased)
        if not places:
            return []
        where = ", ".join(value for _, value in places)
        text = say(clause, *(value for _, value in places))
        found = [Finding("birthplace", where, text)]
        return found + ([Finding("hometown", where, text)] if born["raised"] else [])
    found_from = first_match(_FROM, clause.text)
    if found_from is None:
        return []
    rest, originally = re.subn(r"\s+originally\b", "", found_from["rest"], flags=_I)
    places = _places(rest, clause.cased)
    if not places:
        return []
    # "I'm from Datadog" introduces a company, "(working) from nairobi" a place of work: a
    # bare "from" needs a country or region, or "originally".
    if not (found_from["origin"] or originally) and places[-1][0] == "home_city":
        return []
    where = ", ".join(value for _, value in places)
    return [Finding("hometown", where, say(clause, *(value for _, value in places)))]


_SPEAK = compile_all(
    rf"^I(?:\s+can)?{ADVERBS}\s+(?:speak|can\s+speak)\s+(?P<rest>.+)$",
    rf"^{AM}\s+(?:fluent|conversational|proficient|bilingual)\s+in\s+(?P<rest>.+)$",
    r"^(?:yo\s+|eu\s+)?(?:hablo|falo)\s+(?P<rest>.+)$",
)
_NATIVE = compile_all(
    # "…is Greek so bear with me": the language, then the speaker's aside.
    r"^my\s+(?:native|first|mother)\s+(?:language|tongue)\s+is\s+(?P<rest>.+?)"
    r"(?:\s+(?:so|but|and|because|which|though)\b.*)?$",
    r"^(?P<rest>\w+)\s+is\s+my\s+(?:native|first|mother)\s+(?:language|tongue)\b",
    rf"^{AM}\s+(?:a\s+)?native\s+(?P<rest>.+?)\s+speaker$",
    rf"^I{ADVERBS}\s+speak\s+(?P<rest>\w+)\s+natively$",
)
_LANGUAGE_QUALIFIERS = re.compile(
    r"^(?:a\s+little(?:\s+bit)?(?:\s+of)?|a\s+bit\s+of|un\s+poco\s+de|um\s+pouco\s+de|some|basic|"
    r"fluent|native|conversational|"
    r"decent|good|broken|passable|intermediate)\s+|\s+(?:fluently|natively|well|pretty\s+well|"
    r"fairly\s+well|a\s+little|a\s+bit|at\s+home|at\s+work|too|as\s+well)$",
    _I,
)


_LANGUAGE_CONTEXT = re.compile(r"\s+(?:with|to|when|because|for|on|since|every|most|daily)\b", _I)


def read_languages(clause: Clause) -> list[Finding]:
    found = first_match(_NATIVE, clause.text)
    if found is not None:
        language = lookup(found["rest"].strip(), LANGUAGES)
        text = f"User's native language is {language}."
        return [] if language is None else [Finding("native_language", language, text)]
    found = first_match(_SPEAK, clause.text)
    if found is None:
        return []
    languages: list[str] = []
    # "hablo inglés y español", "falo português e inglês": the Spanish and Portuguese "and".
    for item in split_items(re.sub(r"\s+(?:y|e)\s+", " and ", found["rest"])):
        spoken = _LANGUAGE_CONTEXT.split(item)[0]
        language = lookup(_LANGUAGE_QUALIFIERS.sub("", spoken).strip(), LANGUAGES)
        if language is not None and language not in languages:
            languages.append(language)
    return [Finding("languages", lang, f"User speaks {lang}.") for lang in languages]


_TIMEZONE_LEAD = compile_all(
    r"^my\s+time\s?zone\s+is\s+(?P<rest>.+)$",
    # "switched my clocks to CET", "changed my timezone to UTC+2": the zone the speaker keeps.
    r"^(?:I\s+)?(?:switched|changed|set|moved)\s+(?:my|our)\s+(?:clocks?|time\s?zone|watch)\s+"
    r"(?:over\s+|back\s+)?to\s+(?P<rest>.+)$",
    rf"^{AM}\s+(?:on|in)\s+(?:the\s+)?(?P<rest>.+)$",
)


def read_timezone(clause: Clause) -> list[Finding]:
    found = first_match(_TIMEZONE_LEAD, clause.text)
    zone = None if found is None else TIMEZONE.match(found["rest"].strip())
    if zone is None:
        return []
    raw = zone["tz"]
    if raw.isalpha() and raw.lower() in ("pacific", "eastern", "central", "mountain"):
        if zone["suffix"] is None:
            return []
        value = f"{raw.capitalize()} Time"
    else:
        value = re.sub(r"\s+", "", raw) if "/" not in raw else raw
    return [Finding("timezone", value, f"User's timezone is {value}.")]


_NATIONALITY = compile_all(
    rf"^{AM}\s+(?:a\s+|an\s+)?(?P<rest>[\w\s-]+?)(?:\s+citizen|\s+national)?$",
    r"^(?:yo\s+|eu\s+)?(?:soy|sou)\s+(?P<rest>\w+)$",
)
# "sou brasileira", "soy mexicano": the Spanish and Portuguese demonyms, both genders.
_ROMANCE_DEMONYMS = {
    f"{stem}{end}": english
    for stems, english in (
        (("brasileir", "brasileñ"), "Brazilian"),
        (("mexican",), "Mexican"),
        (("argentin",), "Argentinian"),
        (("chilen",), "Chilean"),
        (("colombian",), "Colombian"),
        (("peruan",), "Peruvian"),
        (("venezolan", "venezuelan"), "Venezuelan"),
        (("cuban",), "Cuban"),
        (("italian",), "Italian"),
    )
    for stem in stems
    for end in "oa"
} | {"español": "Spanish", "española": "Spanish", "portugués": "Portuguese",
     "português": "Portuguese", "portuguesa": "Portuguese"}  # fmt: skip


def read_nationality(clause: Clause) -> list[Finding]:
    found = first_match(_NATIONALITY, clause.text)
    rest = "" if found is None else found["rest"].lower()
    demonym = DEMONYMS.get(rest) or _ROMANCE_DEMONYMS.get(rest)
    return [] if demonym is None else [Finding("nationality", demonym, f"User is {demonym}.")]
