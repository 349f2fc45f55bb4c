"""The schematized head: the rules that fill schema slots, in the order they are tried.

The first rule that finds something in a clause wins, so the order matters:
contact details and names before places, places before employers, and the
bare introduction ("I'm Ana") last.
"""

from __future__ import annotations

from processors.rules.findings import Rule
from processors.rules.head.family import (
    read_no_children,
    read_parent_of,
    read_possessions,
    read_relationship,
)
from processors.rules.head.health import read_allergies, read_conditions, read_diet, read_meatless
from processors.rules.head.identity import (
    read_contact,
    read_home,
    read_introduction,
    read_languages,
    read_name,
    read_nationality,
    read_origin,
    read_timezone,
)
from processors.rules.head.work import (
    read_database,
    read_education,
    read_employer,
    read_plan,
    read_team,
)

__all__ = ["NEGATION_RULES", "RULES"]

RULES: tuple[Rule, ...] = (
    read_contact,
    read_name,
    read_database,
    read_home,
    read_origin,
    read_employer,
    read_team,
    read_education,
    read_languages,
    read_allergies,
    read_conditions,
    read_diet,
    read_meatless,
    read_possessions,
    read_parent_of,
    read_relationship,
    read_timezone,
    read_plan,
    read_nationality,
    read_introduction,
)
# A negated clause says what is not so; only these rules can represent that.
NEGATION_RULES: tuple[Rule, ...] = (read_meatless, read_no_children)
