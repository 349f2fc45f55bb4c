"""Query-string scalars read as their OpenAPI types say, and no other way.

Pydantic's lax mode reads ``0.0`` as a Unix time, ``5.0`` as the integer 5 and
``yes`` as true. A client that sends those has a bug the API should name, not
guess around: the document promises an RFC 3339 date-time, an integer, a
number and a boolean, and these types hold each query parameter to exactly that
spelling before pydantic reads it.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AwareDatetime, BeforeValidator

__all__ = ["NUMBER", "WHOLE", "Flag", "Instant"]


def _spelled(name: str, pattern: str) -> BeforeValidator:
    shape = re.compile(pattern)

    def check(value: object) -> object:
        if isinstance(value, str) and not shape.fullmatch(value):
            raise ValueError(f"not {name}")
        return value

    return BeforeValidator(check)


# RFC 3339 §5.6, the date-time format of JSON Schema: a 'T', seconds, an offset.
Instant = Annotated[
    AwareDatetime,
    _spelled(
        "an RFC 3339 date-time with a timezone, such as 2026-03-01T09:00:00Z",
        r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})",
    ),
]
Flag = Annotated[bool, _spelled("true or false", r"true|false")]
# Bare validators for numbers: a bound must come before them in ``Annotated`` to stay
# a ``minimum``/``maximum`` in the document (after a validator pydantic cannot place it).
WHOLE = _spelled("a whole number", r"-?[0-9]+")
NUMBER = _spelled("a number", r"-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?")
