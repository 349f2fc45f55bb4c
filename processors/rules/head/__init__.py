"""The schematized head: the rules that fill schema slots, in the order they are tried.

The first rule that finds something in a clause wins, so the order matters:
contact details and names before places, places before employers, and the
bare introduction ("I'm Ana") last.
"""

from __future__ import annotations

from slotwise.processors.rules.corrections import read_meant
from slotwise.processors.rules.findings import Rule
from slotwise.processors.rules.head.consequence import (
    read_home_by_consequence,
    read_job_by_consequence,
)
from slotwise.processors.rules.head.family import (
    read_named_pets,
    read_new_child,
    read_no_children,
    read_parent_of,
    read_possessions,
    read_relationship,
)
from slotwise.processors.rules.head.health import (
    read_allergies,
    read_conditions,
    read_diet,
    read_hay_fever,
    read_meatless,
    read_omnivore,
    read_treated_condition,
)
from slotwise.processors.rules.head.household import read_pets_in_passing
from slotwise.processors.rules.head.identity import (
    read_contact,
    read_home,
    read_introduction,
    read_languages,
    read_name,
    read_nationality,
    read_origin,
    read_timezone,
)
from slotwise.processors.rules.head.new_job import read_new_job
from slotwise.processors.rules.head.personal import (
    read_contact_preference,
    read_degree,
    read_language_level,
    read_open_pronouns,
)
from slotwise.processors.rules.head.places import read_home_since
from slotwise.processors.rules.head.residence import read_home_otherwise
from slotwise.processors.rules.head.spoken import (
    read_children,
    read_contact_in_passing,
    read_current_location,
    read_hobbies,
    read_home_in_passing,
    read_medications,
)
from slotwise.processors.rules.head.standing import (
    read_billing,
    read_contact_method,
    read_payment,
    read_programming,
    read_pronouns,
    read_work_arrangement,
)
from slotwise.processors.rules.head.work import (
    read_database,
    read_education,
    read_employer,
    read_plan,
    read_team,
    read_title,
)

__all__ = ["ALSO_RULES", "NEGATION_RULES", "RULES"]

RULES: tuple[Rule, ...] = (
    read_contact,
    read_name,
    read_database,
    read_home,
    read_origin,
    read_employer,
    read_title,
    read_team,
    read_education,
    read_languages,
    read_allergies,
    read_conditions,
    read_diet,
    read_meatless,
    read_omnivore,
    read_possessions,
    read_parent_of,
    read_relationship,
    read_timezone,
    read_plan,
    read_nationality,
    read_introduction,
)
# Closed vocabularies read in any clause that is the speaker's own, beside whatever the
# head found: one clause often says several ("I'm hybrid, on the pro plan, pay monthly").
ALSO_RULES: tuple[Rule, ...] = (
    read_pronouns,
    read_work_arrangement,
    read_billing,
    read_payment,
    read_contact_method,
    read_programming,
    read_home_in_passing,
    read_home_otherwise,
    read_home_by_consequence,
    read_home_since,
    read_current_location,
    read_new_job,
    read_job_by_consequence,
    read_medications,
    read_treated_condition,
    read_hay_fever,
    read_children,
    read_new_child,
    read_hobbies,
    read_contact_in_passing,
    read_named_pets,
    read_pets_in_passing,
    read_language_level,
    read_contact_preference,
    read_open_pronouns,
    read_degree,
    read_meant,
)
# A negated clause says what is not so; only these rules can represent that.
NEGATION_RULES: tuple[Rule, ...] = (read_meatless, read_no_children)
