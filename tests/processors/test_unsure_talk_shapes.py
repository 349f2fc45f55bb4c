"""The uncertain middle on the shapes a change takes outside a plain "I" sentence: the
thing as the subject ("the denver place closed yesterday", "new email, same old me"),
fragments and emoji ("NYC → LA ✈️ done", "bye london 👋"), a change in the third or
fourth sentence, a capitalised opening that is no one's name ("Officially moved in"), and
a doubt about the telling before the news ("not sure if i said but i quit my job"); and
their look-alikes: a trip by arrow, a goodbye that names no city, someone else's move.

Written for the reader before it was run on them, in the ways people type; not taken from
the evaluation data."""

from __future__ import annotations

import pytest

from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import read_turn, slots_asked, slots_spoken

SCHEMA = AttributeSchema.load()


def spoken(text: str) -> set[str | None]:
    return slots_spoken(text, SCHEMA)


def asked(text: str) -> set[str | None]:
    return slots_asked(text, SCHEMA)


CHANGES = [
    # The thing as the subject.
    ("the flat in leith is ours now, got the keys friday", "home_city"),
    ("my new number is in the signup form, use that one", "phone"),
    ("new email, same old me", "email"),
    ("the Denver place closed yesterday so that's us out of colorado", "home_city"),
    ("mgr at Brightwave since monday", "job_title"),
    ("Veganism is over for me, had a burger last night", "diet"),
    ("the old job is history, started somewhere new this week", "employer"),
    ("My surname is different now that I'm married", "name"),
    ("the new place is two streets from the sea", "home_city"),
    ("my old address is no good anymore", "postal_address"),
    # Fragments and emoji.
    ("NYC → LA ✈️ done", "home_city"),
    ("bye london 👋", "home_city"),
    ("vegan 3 months now 🌱", "diet"),
    ("new job 🎉🎉", "employer"),
    ("engaged!!! 💍", "relationship_status"),
    ("officially a mum 👶", "children_count"),
    ("remote now 🏠💻", "work_arrangement"),
    ("Berlin ➡️ Lisbon, finally", "home_city"),
    ("meat again 🥩 sorry not sorry", "diet"),
    ("perth now! 3 hrs behind everyone at work", "home_city"),
    ("Lisbon now 🇵🇹", "home_city"),
    ("oslo now, the dark is no joke", "home_city"),
    ("divorced. finally.", "relationship_status"),
    ("ok so. big news. huge. we moved! Leeds!", "home_city"),
    ("remote. for good. 🙌", "work_arrangement"),
    # The change in a later sentence.
    (
        "Long week. Kids were sick. Anyway we moved to a bigger place in Leeds on Saturday.",
        "home_city",
    ),
    ("hey! quick one. the app keeps logging me out. also i left Acme last week btw", "employer"),
    ("So tired. Work is insane. Rain all week. Oh and I'm vegetarian now.", "diet"),
    (
        "Hi. Can you help with a cover letter? It's for a new role. I got laid off on Friday.",
        "employer",
    ),
    (
        "thanks for yesterday. the recipe worked. we got married on saturday!!",
        "relationship_status",
    ),
    ("Hello again. Busy month. New city, new job, same cat.", "home_city"),
    ("hi!\nhope ur well\nbeen mad busy\nwe moved to cardiff in the end", "home_city"),
    ("ugh. rain. again. anyway new flat is ace", "home_city"),
    (
        "Thanks! That worked. One more thing: I'm not vegetarian anymore, so meat is fine.",
        "diet",
    ),
    ("Quick q about exports. Also: I go by Sam now, not Samantha.", "preferred_name"),
    ("good morning ☀️ married life is treating us well 💍", "relationship_status"),
    # A capitalised opening that names no one.
    ("We moved to Porto last month.", "home_city"),
    ("We moved house in the spring, the old flat was too small", "home_city"),
    ("Officially moved in, boxes everywhere", "home_city"),
    ("Finally left Deloitte!", "employer"),
    ("Switched to annual billing this morning", "billing_cycle"),
    ("Got divorced last year, it's final now", "relationship_status"),
    # A named partner beside the speaker, an employer as the subject of what it did to them.
    ("Kate and I got married in June", "relationship_status"),
    ("Tom and I split up last month", "relationship_status"),
    ("Jess and I moved to Bristol", "home_city"),
    ("Acme let me go on Friday", "employer"),
    ("Google hired me!!!", "employer"),
    ("Stripe made me a staff engineer", "job_title"),
    ("I was let go on Thursday, still processing it", "employer"),
    ("work has relocated me to Manchester", "home_city"),
    ("got transferred to the Leeds branch, so Leeds it is", "home_city"),
    ("the divorce came through this morning", "relationship_status"),
    ("The doctor says it's coeliac after all", "medical_conditions"),
    ("Our little one arrived on Tuesday 💙", "children_count"),
    ("My number's different now, I'll DM it", "phone"),
    # The news after a word about the telling.
    ("just realised i never told you we moved to glasgow", "home_city"),
    ("getting used to being married lol", "relationship_status"),
    ("fyi my email changed", "email"),
    ("not sure if i said but i quit my job", "employer"),
    ("idk if i told you, we moved to leeds in may", "home_city"),
    ("forgot to mention, i'm pescatarian now", "diet"),
]


@pytest.mark.parametrize(("text", "slot"), CHANGES)
def test_a_change_in_any_shape_reaches_the_slot(text: str, slot: str) -> None:
    assert slot in spoken(text)


@pytest.mark.parametrize(
    "text",
    [
        "We went to Porto last month, lovely trip",
        "Sarah moved to Leeds last month",
        "sarah moved to leeds last month",
        "Emily moved to Leeds in the spring",
        "Tom left Acme last week",
        "Mum moved in with us over the winter",
        "the flat in leith is my sister's now",
        "my brother's new number is 07700900123",
        "bye for now 👋",
        "NYC → LA ✈️ next week for a conference",
        "vegan brownies 🌱 are amazing",
        "new phone case 📱",
        "Would you move to Lisbon?",
        "thinking about going vegan",
        "Long week. Kids were sick. My friend moved to Leeds on Saturday.",
        "Mark got married on saturday!!",
        "the Denver office closed yesterday",
        "my manager is new",
        "new episode of the show tonight 🎉",
        "my old job was in retail years ago",
        "Emma is vegan now",
        "not sure if i should quit my job",
        "london now has a new mayor",
        "hi!\nhope ur well\nbeen mad busy\nmy brother moved to cardiff in the end",
        "Thanks! That worked. One more thing: my wife is vegetarian, so no meat recipes.",
        "Can you suggest a gym? My sister just moved to Hove.",
        "ugh. rain. again. anyway the new episode is ace",
        "we might move in march, hope that helps",
        "Kate and Tom got married in June",
        "Acme let John go on Friday",
        "Google hired my brother",
        "Jess moved to Bristol",
        "The doctor says my dad has diabetes",
        "Stripe made a new API",
        "Tom split up with his girlfriend",
        "Priya quit her job at Monzo",
        "my sister was let go on Thursday",
        "work sent me to Manchester for a conference",
        "the old printer was let go of years ago",
        "my doctor took my dad off the statins",
        "my sister's divorce came through this morning",
        "the parcel came through at last",
        "the vet put our neighbour's cat on a new diet",
        "the gp switched my mum onto a new inhaler",
        "I get how annoying it is not to find a late cafe",
        "perth now? or later?",
        "paris now, rome tomorrow, back home sunday 🎒",
        "my sister is in lisbon now",
    ],
)
def test_what_only_looks_like_a_change_asks_nothing(text: str) -> None:
    assert not asked(text)


def test_every_new_shape_asks_without_a_value() -> None:
    for text, slot in CHANGES:
        for c in read_turn(text, SCHEMA, ask=True):
            if c.attribute == slot and c.question is not None:
                assert c.value is None, text
