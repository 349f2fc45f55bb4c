"""More of the uncertain middle in everyday phrasing: a change said in passing inside a
longer message, through a demonym, a pet's name, a kind of workplace, a level, a move of
work that is not one of home, a preference put as "i'd rather"; and their look-alikes: a
handset rather than a number, a card replaced by a card, how a commute or a team is going
"these days", two other people, someone else's flat.

Written for the reader before it was run on them, in the ways people type; not taken from
the evaluation data."""

from __future__ import annotations

import pytest

from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import read_turn

SCHEMA = AttributeSchema.load()


def spoken(text: str) -> set[str | None]:
    """The slots the turn gives a candidate for: a value read, or a question asked."""
    return {c.attribute for c in read_turn(text, SCHEMA, ask=True)}


def asked(text: str) -> set[str | None]:
    return {c.attribute for c in read_turn(text, SCHEMA, ask=True) if c.question is not None}


@pytest.mark.parametrize(
    ("text", "slot"),
    [
        ("so yeah we're londoners now, still can't believe it", "home_city"),
        (
            "anyway since the move our rent is half what it was and the tram stops outside",
            "home_city",
        ),
        (
            "ok long story but work is fine, kids are fine, oh and we relocated up north in "
            "august so the weather is grim lol",
            "home_city",
        ),
        ("my commute is a 5 min walk since we moved, life changing", "home_city"),
        ("at a bank these days, boring but stable", "employer"),
        ("started at the hospital last monday, nights are rough", "employer"),
        ("finally out of retail!! office job now", "employer"),
        ("sorry been quiet, new job ate my whole month", "employer"),
        ("i run my own bakery now, quit the corporate thing", "employer"),
        ("got the manager job i interviewed for", "job_title"),
        ("no longer a junior, they made me mid-level", "job_title"),
        ("they moved me over to the growth team in the reorg", "team"),
        ("switched squads, i'm on mobile now", "team"),
        ("office is dead to me, full remote since the spring", "work_arrangement"),
        ("they cut our wfh days, 4 days in now", "work_arrangement"),
        ("got my masters results, passed!! officially done with uni", "education"),
        ("started a phd in october, send coffee", "education"),
        ("RIP biscuit, 14 good years", "pets"),
        ("we lost our dog last week, house is so quiet", "pets"),
        ("my address changed, will send the new one", "postal_address"),
        ("we moved so my postcode is different now", "postal_address"),
        ("turns out my dob on file is wrong, it's the 14th", "date_of_birth"),
        ("please stop calling me Jennifer, it's Jen", "preferred_name"),
        ("email's better than calls for me now", "preferred_contact_method"),
        ("my pronouns changed, he/him now", "pronouns"),
        ("no longer vegetarian, i eat chicken now", "diet"),
        ("gone keto for real this time, three weeks in", "diet"),
        ("my psychiatrist took me off lamotrigine", "medications"),
        ("new meds this month, the old ones made me dizzy", "medications"),
        ("she said yes!!! we're getting married next year", "relationship_status"),
        ("i'm single again, long story", "relationship_status"),
        ("we had a baby girl last month 🥹", "children_count"),
        ("moved to berlin, so i'm on CET now", "timezone"),
        ("email changed after the rebrand, it's the new domain now", "email"),
        ("changed phone numbers last week, text me for the new one", "phone"),
        ("we bumped up to pro this morning", "plan"),
        ("went from monthly to annual at renewal", "billing_cycle"),
        ("paying by paypal now, my card expired", "payment_method"),
        ("got my irish passport through!! officially a citizen", "nationality"),
        ("still getting used to the new flat, the trams are loud af", "home_city"),
        ("getting used to the new job, everyone's nice so far", "employer"),
        ("i'd rather you text me than call from now on", "preferred_contact_method"),
        (
            "long day. kids had swimming, dog got out, and i signed the papers on the new house "
            "in leeds so that's happening lol",
            "home_city",
        ),
        ("fyi i'm no longer at deloitte, moved in-house", "employer"),
        ("bye bye agency life, hello in-house", "employer"),
        ("i'm a senior dev now at the same place", "job_title"),
        ("promotion came through on friday 🎉", "job_title"),
        ("joined the infra team this sprint", "team"),
        ("our squad got merged into platform, so that's my team now", "team"),
        ("we went fully remote after the office lease ended", "work_arrangement"),
        ("i'm back in the office 3 days a week since january", "work_arrangement"),
        ("i'm doing an mba now, evenings and weekends", "education"),
        ("quit my masters halfway, it wasn't for me", "education"),
        ("we had to put pepper to sleep on monday", "pets"),
        ("my address is different now, we moved across town", "postal_address"),
        ("new address for deliveries btw, same city", "postal_address"),
        ("it's Kit now, not Christopher, please update", "preferred_name"),
        ("go by my surname now, everyone at work does", "preferred_name"),
        ("pls stop emailing, i only check whatsapp now", "preferred_contact_method"),
        ("pronouns are he/they now fyi", "pronouns"),
        ("since january i'm eating meat again", "diet"),
        ("dropped the vegan thing, too hard with the kids", "diet"),
        ("the gp changed my antidepressant last week", "medications"),
        ("off the inhaler completely now", "medications"),
        ("me and sam broke up in the summer", "relationship_status"),
        ("got divorced last year, finally done", "relationship_status"),
        ("we're expecting… jk she's here, born thursday!", "children_count"),
        ("moved to tokyo last month, the time difference with home is brutal", "timezone"),
        ("my number's changed, the old one got cut off", "phone"),
        ("lost my phone and had to get a new number", "phone"),
        ("switched email providers, use the proton one from now on", "email"),
        ("cancelled pro, back on free", "plan"),
        ("moved us to monthly billing, cash is tight", "billing_cycle"),
        ("card's gone, paying by bank transfer from now on", "payment_method"),
        ("became a british citizen last month!!", "nationality"),
        ("moved out of my parents' place finally, own flat now", "home_city"),
        ("new gig in fintech, started monday", "employer"),
    ],
)
def test_a_change_said_in_passing_reaches_the_slot(text: str, slot: str) -> None:
    assert slot in spoken(text)


@pytest.mark.parametrize(
    ("text", "slot"),
    [
        ("my commute is brutal these days", "home_city"),
        ("new phone case arrived, it's purple", "phone"),
        ("my brother is a londoner now", "home_city"),
        ("my wife works at a bank these days", "employer"),
        ("RIP to my favourite mug, smashed it this morning", "pets"),
        ("my friend's dog biscuit passed away, so sad", "pets"),
        ("the hospital called about my appointment", "employer"),
        ("a new job posting caught my eye, should i apply?", "employer"),
        ("my manager got promoted to director", "job_title"),
        ("the growth team is doing a reorg", "team"),
        ("office party tonight, wish me luck", "work_arrangement"),
        ("my son is learning german at school", "languages"),
        ("how long does a phd take?", "education"),
        ("we're dogsitting for the neighbours this week", "pets"),
        ("what's your postal address for returns?", "postal_address"),
        ("my mum's birthday is on the 14th", "date_of_birth"),
        ("jennifer from work says hi", "preferred_name"),
        ("my sister prefers email over calls", "preferred_contact_method"),
        ("what are neopronouns?", "pronouns"),
        ("had chicken for lunch, was ok", "diet"),
        ("is keto safe long term?", "diet"),
        ("my dad's new meds are making him dizzy", "medications"),
        ("is penicillin allergy common?", "allergies"),
        ("my best mate said yes to his girlfriend's proposal lol", "relationship_status"),
        ("my cousin had a baby girl last month", "children_count"),
        ("what time is it in berlin right now?", "timezone"),
        ("my work email is down again", "email"),
        ("my phone died mid call, sorry", "phone"),
        ("is the pro plan worth it?", "plan"),
        ("what's the difference between monthly and annual?", "billing_cycle"),
        ("my card got declined at the shop lol", "payment_method"),
        ("my husband got his irish passport", "nationality"),
        ("in berlin for a week for work, hotel is nice", "home_city"),
        ("the new intern started today", "employer"),
        ("thinking of going remote next year", "work_arrangement"),
        ("getting used to the cold weather this week", "home_city"),
        ("i'd rather live in lisbon tbh", "home_city"),
        ("i'd rather not talk about work", "employer"),
        ("my dog got out again, chased him for an hour", "pets"),
        ("signed the papers for my new car", "home_city"),
        ("my mate's at deloitte now", "employer"),
        ("is in-house better than agency?", "employer"),
        ("the senior devs are all at a conference", "job_title"),
        ("the infra team broke prod again", "team"),
        ("our office lease ends next year, might go remote", "work_arrangement"),
        ("my wife's back in the office 3 days a week", "work_arrangement"),
        ("should i do an mba?", "education"),
        ("pepper is asleep on my lap", "pets"),
        ("what's your address for returns?", "postal_address"),
        ("kit from accounting is so funny", "preferred_name"),
        ("my boss only checks whatsapp", "preferred_contact_method"),
        ("my friend's pronouns are he/they", "pronouns"),
        ("ate meat at the bbq, it was fine", "diet"),
        ("the gp was running late again", "medications"),
        ("forgot my inhaler at home today", "medications"),
        ("sam and jo broke up lol drama", "relationship_status"),
        ("my parents got divorced when i was 10", "relationship_status"),
        ("my sister's baby was born thursday", "children_count"),
        ("what time is it in tokyo?", "timezone"),
        ("my phone screen is cracked", "phone"),
        ("my proton inbox is full", "email"),
        ("is pro cheaper annually?", "plan"),
        ("my card got stolen, just cancelled it with the bank", "payment_method"),
        ("my husband became a british citizen", "nationality"),
        ("my commute has been awful lately", "home_city"),
        ("my team's been amazing these days", "team"),
        ("the new flat my sister got is gorgeous", "home_city"),
        ("rip my phone, dropped it in the loo", "phone"),
        ("RIP queen elizabeth", "pets"),
        ("my meds have been great lately", "medications"),
    ],
)
def test_what_only_sounds_like_a_change_asks_nothing(text: str, slot: str) -> None:
    assert slot not in asked(text)


def test_a_question_never_guesses_the_value() -> None:
    for text, slot in [
        ("so yeah we're londoners now, still can't believe it", "home_city"),
        ("at a bank these days, boring but stable", "employer"),
        ("RIP biscuit, 14 good years", "pets"),
    ]:
        questions = [c for c in read_turn(text, SCHEMA, ask=True) if c.attribute == slot]
        assert questions and all(c.question is not None and c.value is None for c in questions)
