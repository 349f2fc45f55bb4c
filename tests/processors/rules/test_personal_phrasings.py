"""The slots the reader was weakest at, probed with phrasings written for this file:
pronouns, birthdays told as an age, addresses, pets by name, languages in Spanish and
Portuguese, the way to be reached, a job held since, a condition a treatment is for,
and corrections that name only the new value."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import read_turn
from slotwise.topics.records import CandidateFact

SCHEMA = AttributeSchema.load()
# A Saturday.
SAID = datetime(2026, 3, 14, 10, 0, tzinfo=UTC)


def facts(text: str) -> list[CandidateFact]:
    return read_turn(text, SCHEMA, at=SAID)


def slotted(text: str, *attributes: str) -> set[tuple[str | None, object]]:
    return {(c.attribute, c.value) for c in facts(text) if c.attribute in attributes}


@pytest.mark.parametrize(
    ("text", "pronouns"),
    [
        ("i go by they now", "they/them"),
        ("I go by she", "she/her"),
        ("my pronouns are they", "they/them"),
        ("i use he", "he/him"),
        ("pronouns: she/they", "she/they"),
        ("pronouns - he/him", "he/him"),
        ("could you use she/her for me from now on? it's been a long time coming", "she/her"),
        ("please use they/them for me", "they/them"),
    ],
)
def test_pronouns_however_said(text: str, pronouns: str) -> None:
    assert slotted(text, "pronouns", "preferred_name") == {("pronouns", pronouns)}


@pytest.mark.parametrize(
    "text", ["she goes by they", "could you use she/her for my sister?", "i go by sam"]
)
def test_no_pronouns_of_someone_else_or_from_a_name(text: str) -> None:
    assert slotted(text, "pronouns") == set()


@pytest.mark.parametrize(
    ("text", "born"),
    [
        ("turning 40 next friday", "1986-03-20"),
        ("turning 40 next friday and honestly not ready for it", "1986-03-20"),
        ("i turn 30 tomorrow!!", "1996-03-15"),
        ("i'll be 33 on sunday", "1993-03-15"),
        ("i'm turning 50 this coming saturday", "1976-03-21"),
        ("i'll turn 45 next monday, send cake", "1981-03-16"),
        ("big 50 on sunday!! party at ours, bring earplugs", "1976-03-15"),
        ("birthday was yesterday, 27 now, feel ancient", "1999-03-13"),
        ("my birthday was on saturday and I'm 33 now", "1993-03-07"),
        ("dob 14.02.1985", "1985-02-14"),
        ("born 14/02/1985", "1985-02-14"),
        ("born 12/31/1990", "1990-12-31"),
    ],
)
def test_a_birthday_told_as_an_age_or_a_number(text: str, born: str) -> None:
    assert slotted(text, "date_of_birth") == {("date_of_birth", born)}


@pytest.mark.parametrize(
    "text",
    [
        "turning 30 a week from today",  # a day the reader cannot count to
        "i turn 30 the day after tomorrow",
        "I'll be 30 minutes late on friday",  # minutes, not years
        "i'll be 20 mins late tomorrow",
        "i'll be 10k down by friday",
        "my son turns 5 tomorrow",  # someone else's
        "my son's big 5 on sunday",
        "born 3/4/1992",  # day and month cannot be told apart
    ],
)
def test_no_birthday_from_a_number_that_is_not_an_age(text: str) -> None:
    assert slotted(text, "date_of_birth") == set()


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("my address: 4 rue des lilas, 75019 paris", "4 Rue des Lilas, 75019 Paris"),
        (
            "my address for the forms: 22 rue saint-jean, 69005 lyon",
            "22 Rue Saint-Jean, 69005 Lyon",
        ),
        (
            "ya no vivo en calle mayor, nueva dirección: calle de toledo 48, 28005 madrid",
            "Calle de Toledo 48, 28005 Madrid",
        ),
        ("meu endereço é rua augusta 1500, são paulo", "Rua Augusta 1500, São Paulo"),
    ],
)
def test_an_address_introduced_in_chat_or_in_spanish_and_portuguese(
    text: str, address: str
) -> None:
    assert slotted(text, "postal_address") == {("postal_address", address)}


def test_a_new_address_in_spanish_states_the_change() -> None:
    [address] = [c for c in facts("nueva dirección: calle de toledo 48, 28005 madrid")]
    assert address.stated_change


@pytest.mark.parametrize(
    ("text", "pets"),
    [
        ("my dog's name is max", {"dog named Max"}),
        ("our cat is called Miso", {"cat named Miso"}),
        ("the cat's name is Lasagna", {"cat named Lasagna"}),
        ("she/they, 29, vegan, and yes the cat's name really is Lasagna", {"cat named Lasagna"}),
        ("my rescue greyhound's name is Pixel", {"dog named Pixel"}),
        ("my cats are called tig and tag", {"cat named Tig", "cat named Tag"}),
        ("my two dogs are named bo and luna", {"dog named Bo", "dog named Luna"}),
    ],
)
def test_a_pet_named_after_it_is_mentioned(text: str, pets: set[str]) -> None:
    assert slotted(text, "pets") == {("pets", pet) for pet in pets}


@pytest.mark.parametrize(
    "text", ["my sister's dog is called rex", "the dog at the park is called rex"]
)
def test_no_pet_of_someone_else(text: str) -> None:
    assert slotted(text, "pets") == set()


@pytest.mark.parametrize(
    ("text", "languages"),
    [
        ("hablo español y inglés", {"Spanish", "English"}),
        ("falo português e inglês", {"Portuguese", "English"}),
        ("hablo inglés, español y un poco de francés", {"English", "Spanish", "French"}),
    ],
)
def test_languages_said_in_spanish_or_portuguese(text: str, languages: set[str]) -> None:
    assert slotted(text, "languages") == {("languages", lang) for lang in languages}


@pytest.mark.parametrize(
    ("text", "method"),
    [
        ("i prefer signal", "signal"),
        ("prefer email pls", "email"),
        ("whatsapp works best", "whatsapp"),
        ("i prefer email to phone calls", "email"),
        ("text is better than calling", "text"),
    ],
)
def test_the_way_to_be_reached(text: str, method: str) -> None:
    assert slotted(text, "preferred_contact_method") == {("preferred_contact_method", method)}


def test_no_way_to_be_reached_from_a_question() -> None:
    assert slotted("i prefer text?", "preferred_contact_method") == set()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("i've been a nurse for 12 years", {("job_title", "nurse")}),
        (
            "I've been a climate scientist at the Met Office for three years",
            {("job_title", "climate scientist"), ("employer", "Met Office")},
        ),
    ],
)
def test_a_job_held_since(text: str, expected: set[object]) -> None:
    assert slotted(text, "job_title", "employer") == expected


@pytest.mark.parametrize(
    "text", ["I've been a guest at the Hilton since friday", "i've been a fan since 2010"]
)
def test_no_job_from_a_lasting_role_that_is_none(text: str) -> None:
    assert slotted(text, "job_title", "employer") == set()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "on lisinopril 10mg for my hypertension, no big deal",
            {("medications", "lisinopril"), ("medical_conditions", "hypertension")},
        ),
        ("I take an inhaler for my asthma", {("medical_conditions", "asthma")}),
    ],
)
def test_the_condition_a_treatment_is_for(text: str, expected: set[object]) -> None:
    assert slotted(text, "medications", "medical_conditions") == expected


@pytest.mark.parametrize(
    "text",
    ["my mum is on statins for her high blood pressure", "i'm on holiday for my birthday"],
)
def test_no_condition_of_someone_else_or_from_an_occasion(text: str) -> None:
    assert slotted(text, "medications", "medical_conditions") == set()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("wait no i meant vegan", ("diet", "vegan")),
        ("sorry i meant monthly", ("billing_cycle", "monthly")),
        ("scratch that, make it annual", ("billing_cycle", "annual")),
        ("typo, it's hybrid", ("work_arrangement", "hybrid")),
        ("oops i meant postgres", ("database", "PostgreSQL")),
        ("my bad, it's whatsapp", ("preferred_contact_method", "whatsapp")),
    ],
)
def test_a_correction_that_names_only_the_new_value(text: str, expected: tuple[str, str]) -> None:
    [candidate] = [c for c in facts(text) if c.attribute is not None]
    assert (candidate.attribute, candidate.value) == expected
    assert candidate.stated_change


@pytest.mark.parametrize(
    "text",
    [
        "it's monthly",  # no correction said
        "i meant it",
        "wait no i meant the other one",
        "i meant peanuts",  # a health list is corrected by a human
        "wait no I meant norwegian",  # so is any list
    ],
)
def test_no_correction_read_without_a_marker_or_into_a_list(text: str) -> None:
    assert [c for c in facts(text) if c.attribute is not None] == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("went up to the team plan yesterday since two more people joined us", ("plan", "Team")),
        ("ngl i'm keto again, 3rd attempt this year", ("diet", "keto")),
    ],
)
def test_chat_openers_and_plan_moves(text: str, expected: tuple[str, str]) -> None:
    assert expected in slotted(text, expected[0])


@pytest.mark.parametrize(
    "text",
    [
        "scratch that, my email is ana.r@example.com",
        "my bad, my email is ana.r@example.com",
        "oops, my email is ana.r@example.com",
    ],
)
def test_a_retraction_states_a_change(text: str) -> None:
    [email] = [c for c in facts(text) if c.attribute == "email"]
    assert email.stated_change


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("i eat everything", {("diet", "omnivore")}),
        ("I'm back to eating everything now.", {("diet", "omnivore")}),
        ("my husband's the vegetarian, i eat everything", {("diet", "omnivore")}),
        ("i eat everything except fish", set()),  # not the whole of it
        ("my kids eat everything", set()),  # someone else's
    ],
)
def test_an_explicit_omnivore(text: str, expected: set[object]) -> None:
    assert slotted(text, "diet") == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'm in the office two days a week now", {("work_arrangement", "hybrid")}),
        ("I work 3 days from home, the rest at the office", {("work_arrangement", "hybrid")}),
        ("I'm in two days a week at the gym", set()),  # no work said
    ],
)
def test_a_hybrid_week_told_by_its_days(text: str, expected: set[object]) -> None:
    assert slotted(text, "work_arrangement") == expected


def test_a_heading_before_the_statement_is_read_past() -> None:
    text = "quick update: i'm a data engineer now, moved onto the platform team"
    assert slotted(text, "job_title", "team") == {
        ("job_title", "data engineer"),
        ("team", "platform"),
    }


def test_a_name_refused_states_a_correction() -> None:
    [name] = [c for c in facts("don't call me johnny, it's John") if c.attribute]
    assert (name.attribute, name.value, name.stated_change) == ("preferred_name", "John", True)


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("baby #2 arrived tuesday night, everyone's healthy and nobody is sleeping", "2"),
        ("our third kid was born on friday", "3"),
        ("we just welcomed our second baby", "2"),
        ("baby number two is here!", "2"),
    ],
)
def test_the_newest_child_counts_the_children(text: str, count: str) -> None:
    assert slotted(text, "children_count") == {("children_count", count)}


@pytest.mark.parametrize(
    "text", ["my sister's second baby arrived", "second baby is due in may", "if baby #2 arrived"]
)
def test_no_count_from_someone_elses_or_a_coming_child(text: str) -> None:
    assert slotted(text, "children_count") == set()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("i'd rather you text than call", {("preferred_contact_method", "text")}),
        ("I'd like to be contacted by email only.", {("preferred_contact_method", "email")}),
        ("i'd prefer email", {("preferred_contact_method", "email")}),
        ("halal diet, and i'd rather you text than call", {("preferred_contact_method", "text")}),
        ("I'd like a call", set()),  # a request, not a preference
        ("I'd rather you didn't call", set()),
    ],
)
def test_a_preference_said_with_id(text: str, expected: set[object]) -> None:
    assert slotted(text, "preferred_contact_method") == expected


@pytest.mark.parametrize(
    "text", ["I'd prefer to work remotely", "I'd rather live in Paris", "I'd rather be vegan"]
)
def test_a_wish_said_with_id_is_still_a_wish(text: str) -> None:
    assert [c for c in facts(text) if c.attribute is not None] == []


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("name's Diego Fernández, call me Dieguito", "Diego Fernández"),
        ("name's tom btw", "Tom"),
        ("hi, name is Priya", "Priya"),
    ],
)
def test_a_name_with_the_my_dropped(text: str, name: str) -> None:
    assert slotted(text, "name") == {("name", name)}


def test_a_name_said_of_something_else_is_none() -> None:
    assert slotted("the restaurant name's weird", "name") == set()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "soy de rosario pero vivo en madrid hace 5 años",
            {("hometown", "Rosario"), ("home_city", "Madrid")},
        ),
        ("sou de recife", {("hometown", "Recife")}),
    ],
)
def test_where_from_and_where_now_in_spanish_and_portuguese(
    text: str, expected: set[object]
) -> None:
    assert slotted(text, "hometown", "home_city") == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("my hay fever is brutal this year", {("allergies", "pollen")}),
        ("daily cetirizine for the hay fever", {("allergies", "pollen")}),
        (
            "hay fever + allergic to dust mites, spring is hell",
            {("allergies", "pollen"), ("allergies", "dust mites")},
        ),
        ("hay fever too, grass pollen specifically", {("allergies", "grass pollen")}),
        ("my son's hay fever is bad", set()),  # someone else's
        ("hay fever season is the worst", set()),  # a season, not the speaker
    ],
)
def test_hay_fever_is_a_pollen_allergy(text: str, expected: set[object]) -> None:
    assert slotted(text, "allergies") == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("diagnosed with asthma last spring", {("medical_conditions", "asthma")}),
        (
            "diagnosed with endometriosis last spring, finally an answer",
            {("medical_conditions", "endometriosis")},
        ),
        ("my sister was diagnosed with asthma", set()),
    ],
)
def test_a_diagnosis_with_the_i_dropped(text: str, expected: set[object]) -> None:
    assert slotted(text, "medical_conditions") == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("no kids", {("children_count", 0)}),
        (
            "single, no kids, one very dramatic parrot named Captain",
            {
                ("relationship_status", "single"),
                ("children_count", 0),
                ("pets", "parrot named Captain"),
            },
        ),
        ("no kids allowed in the pool", set()),
    ],
)
def test_a_list_with_a_denied_item(text: str, expected: set[object]) -> None:
    assert slotted(text, "children_count", "relationship_status", "pets") == expected


def test_a_retraining_is_the_job_now() -> None:
    assert slotted("I gave up law and retrained as a nurse", "job_title") == {
        ("job_title", "nurse")
    }


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("My preferred name is Nnamdi.", "Nnamdi"),
        ("my nickname is bex, everyone uses it", "Bex"),
        ("my preferred name's Kit, legal name is Christopher", "Kit"),
    ],
)
def test_a_preferred_name_said_as_such(text: str, name: str) -> None:
    assert ("preferred_name", name) in slotted(text, "preferred_name")


@pytest.mark.parametrize(
    "text",
    [
        "my nickname is silly lol",
        "my preferred name is on file already",
        "my nickname is the worst",
        "my nickname at school was Moose",
    ],
)
def test_no_preferred_name_from_words_said_about_one(text: str) -> None:
    assert slotted(text, "preferred_name") == set()


@pytest.mark.parametrize(
    ("text", "diet"),
    [
        ("halal diet, and i'd rather you text than call", "halal"),
        ("keto diet these days", "keto"),
        ("my diet is pescatarian", "pescatarian"),
        ("vegan diet btw", "vegan"),
    ],
)
def test_a_diet_said_as_a_fragment_or_as_my_diet(text: str, diet: str) -> None:
    assert slotted(text, "diet") == {("diet", diet)}


@pytest.mark.parametrize(
    "text",
    ["vegan diet is hard", "keto diet worked for my dad", "my sister's diet is vegan",
     "my diet is a mess", "the keto diet?"],
)  # fmt: skip
def test_no_diet_from_talk_about_a_diet(text: str) -> None:
    assert slotted(text, "diet") == set()
