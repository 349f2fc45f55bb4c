"""Values that are one value under two spellings: "Postgres" said or stored before the
rules wrote the product's own name, "PostgreSQL"; "mongo" and "MongoDB".

Two spellings of one database must never supersede each other, so the policy
compares databases by the canonical name the rules' table gives an alias.
"""

from __future__ import annotations

from slotwise.processors.rules.words import DATABASES

__all__ = ["same_database"]


def _canonical(value: object) -> str:
    key = " ".join(str(value).split()).casefold()
    return DATABASES.get(key, key).casefold()


def same_database(a: object, b: object) -> bool:
    """ "Postgres" and "PostgreSQL" (or "mongo" and "MongoDB") name one database."""
    return _canonical(a) == _canonical(b)
