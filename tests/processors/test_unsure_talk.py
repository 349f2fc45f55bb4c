"""The uncertain middle told in words no value rule anchors on: a change of home, work,
family, health or how to reach the speaker, said through what comes with it (keys to a new
flat, a badge, a vet, a dose), is asked about; the same words about someone else, a trip,
a plan, a reminder, a time before a change or another service are not.

These probes were written for the reader, in the ways people type (lower case, slang,
typos, a little Spanish and Portuguese), not taken from the evaluation data."""

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
        ("got the keys to the new flat today!!", "home_city"),
        ("signed a lease on a place near the river, moving friday", "home_city"),
        ("new landlord is a nightmare already lol", "home_city"),
        ("my commute is 10 min now instead of an hour", "home_city"),
        ("finally unpacked the last boxes at the new place", "home_city"),
        ("we're in a new neighbourhood now, loving it", "home_city"),
        ("new postcode, new me", "home_city"),
        ("ya me mudé, estoy en otra ciudad", "home_city"),
        ("my new flatmate keeps stealing my oat milk", "home_city"),
        ("just moved house, internet's not even set up", "home_city"),
        ("handed in my notice today, 4 weeks to go", "employer"),
        ("my new manager seems chill", "employer"),
        ("got my badge for the new office this morning", "employer"),
        ("onboarding all week at the new company, so many slack channels", "employer"),
        ("accepted the offer!! starting in march", "employer"),
        ("signed the contract with them yesterday, new job here i come", "employer"),
        ("first standup at the new place went fine", "employer"),
        ("got made redundant on friday", "employer"),
        ("they let me go last week", "employer"),
        ("i work for myself now, freelance", "employer"),
        ("got promoted to senior!!", "job_title"),
        ("im a team lead now, weird", "job_title"),
        ("my title changed to staff engineer", "job_title"),
        ("started italian classes on tuesdays", "languages"),
        ("finally enrolled in the masters", "education"),
        ("submitted my thesis last night!!!", "education"),
        ("graduation was yesterday, i'm officially done", "education"),
        ("started my second semester of nursing school", "education"),
        ("we adopted a kitten this weekend", "pets"),
        ("our rescue greyhound arrived today", "pets"),
        ("text me instead of emailing from now on", "preferred_contact_method"),
        ("ping me on slack instead, i never check email", "preferred_contact_method"),
        ("please just whatsapp me from now on", "preferred_contact_method"),
        ("my pronouns are they/them now", "pronouns"),
        ("i use she/her these days", "pronouns"),
        ("please call me Sam from now on", "preferred_name"),
        ("i go by Alex now", "preferred_name"),
        ("actually my birthday is the 3rd not the 13th", "date_of_birth"),
        ("we got married last weekend!!!", "relationship_status"),
        ("we split up in may", "relationship_status"),
        ("the divorce went through", "relationship_status"),
        ("went fully vegan in january", "diet"),
        ("started eating meat again", "diet"),
        ("i'm off the sertraline now", "medications"),
        ("doc upped my dose to 50mg", "medications"),
        ("moved to the night shift team last month", "team"),
        ("back in the office full time now ugh", "work_arrangement"),
        ("fully remote as of this month", "work_arrangement"),
        ("new number, save it", "phone"),
        ("changed my email btw", "email"),
        ("downgraded to the free plan", "plan"),
        ("switched to yearly billing", "billing_cycle"),
        ("paying with a new card now", "payment_method"),
        ("my new boss starts monday, so does my new job lol", "employer"),
        ("they let me go on friday, so i'm job hunting", "employer"),
        ("moved in with my partner last month, new flat in leith", "home_city"),
        ("quit the agency, i freelance now", "employer"),
        ("im a dad now!!! she arrived at 3am", "children_count"),
        ("finally off the antidepressants as of last week", "medications"),
        ("no longer on metformin, diet controlled now", "medications"),
        ("it's she/her for me now", "pronouns"),
        ("just Liz now please, nobody calls me Elizabeth", "preferred_name"),
        ("turns out i'm lactose intolerant, no more milk", "allergies"),
        ("dropped down to 3 days in the office", "work_arrangement"),
        ("i'm on the data platform squad now", "team"),
        ("we're empty nesters now, both kids moved out", "children_count"),
        ("can you use they/them for me going forward?", "pronouns"),
        ("can you text me instead of calling from now on?", "preferred_contact_method"),
        ("my boyfriend moved in with me over the summer", "relationship_status"),
        ("my partner proposed on the beach!!!", "relationship_status"),
        ("new landlord in tucson won't let us paint the walls", "timezone"),
        ("two weeks in our lyon apartment now", "home_city"),
        ("my old colleagues sent me off with a card, day 2 somewhere new", "employer"),
        ("been a ward manager since the spring", "job_title"),
        ("ya no vivo en la calle sol, mi nueva dirección es avenida del mar 3", "postal_address"),
        ("my psychiatrist switched me from citalopram to venlafaxine", "medications"),
        ("the doctor put me on a beta blocker now", "medications"),
        ("day 3 at the new gig and i already have imposter syndrome", "employer"),
        ("officially unemployed lol, the startup folded", "employer"),
        ("started my new position on monday", "job_title"),
        ("they bumped me up to principal", "job_title"),
        ("we live by the sea now!!", "home_city"),
        ("just signed for a 2 bed in the east end", "home_city"),
        ("finally got out of the city, we're in the countryside now", "home_city"),
        ("i'm fully plant based now", "diet"),
        ("eating fish again after 6 yrs veggie", "diet"),
        ("gave up meat for lent and never went back", "diet"),
        ("my doctor swapped my blood pressure pills", "medications"),
        ("came off the pill last month", "medications"),
        ("i'm on a new inhaler", "medications"),
        ("we're engaged!!! 💍", "relationship_status"),
        ("me and tom called it quits", "relationship_status"),
        ("i'm a married woman now haha", "relationship_status"),
        ("our little girl was born on tuesday", "children_count"),
        ("baby number two arrived early", "children_count"),
        ("i'm doing a part time masters now", "education"),
        ("just defended my phd!!! dr. me", "education"),
        ("use he/him for me from now on", "pronouns"),
        ("best way to reach me is telegram now", "preferred_contact_method"),
        ("no calls please, text only going forward", "preferred_contact_method"),
        ("hybrid now, 2 days in", "work_arrangement"),
        ("they made us go back to the office 5 days", "work_arrangement"),
        ("my mobile changed, new one is below", "phone"),
        ("new email address, old one got hacked", "email"),
        ("upgraded us to enterprise last week", "plan"),
    ],
)
def test_a_change_said_through_what_comes_with_it_reaches_the_slot(text: str, slot: str) -> None:
    assert slot in spoken(text)


@pytest.mark.parametrize(
    ("text", "slot"),
    [
        ("my sister just moved to lisbon", "home_city"),
        ("thinking about moving to leeds next year", "home_city"),
        ("should i move to berlin?", "home_city"),
        ("in madrid for the weekend, back monday", "home_city"),
        ("when i was a kid we moved every year", "home_city"),
        ("my flatmate is moving out, need a new one", "home_city"),
        ("moved the meeting to thursday", "home_city"),
        ("my boss quit today lol", "employer"),
        ("my friend just got a new job at google", "employer"),
        ("if i got an offer from them i'd take it", "employer"),
        ("might hand in my notice soon", "employer"),
        ("used to work at a bank years ago", "employer"),
        ("my brother got promoted", "job_title"),
        ("my sister is learning french", "languages"),
        ("would love to learn japanese someday", "languages"),
        ("my daughter just graduated", "education"),
        ("my neighbour adopted a puppy", "pets"),
        ("pet-sitting my cousin's labrador this week", "pets"),
        ("my mum texted me", "preferred_contact_method"),
        ("can you text me a reminder?", "preferred_contact_method"),
        ("my sister got married last weekend", "relationship_status"),
        ("what's a good vegan recipe?", "diet"),
        ("my dad started eating meat again", "diet"),
        ("renewed my netflix plan", "plan"),
        ("my wife changed her email", "email"),
        ("my pal just got taken on at my firm too", "employer"),
        ("in the office thursday for the team offsite", "work_arrangement"),
        ("got diagnosed with dyslexia at 40, explains school honestly", "medical_conditions"),
        ("my mate's new flat is huge", "home_city"),
        ("mi hermana se mudó a madrid", "home_city"),
        ("my cousin's dog had puppies", "pets"),
        ("in lisbon for a conference till friday", "home_city"),
        ("visiting my parents in leeds this week", "home_city"),
        ("my wife started a new job", "employer"),
        ("our landlord just put the rent up again", "home_city"),
        ("she's vegan now, so dinners are tricky", "diet"),
        ("my bf finally got his visa", "relationship_status"),
        ("just a reminder i'm vegan, no cheese for me", "diet"),
        ("my old number before i switched carriers was 07700 900111", "phone"),
        ("finally caved and paid for youtube premium", "plan"),
        ("switched my netflix to the yearly plan", "billing_cycle"),
        ("back when i lived in york i had a cat", "home_city"),
        ("could you recommend a good hotel in rome?", "home_city"),
        ("my girlfriend started a new job", "relationship_status"),
        ("my wife's the vegan one, i'll eat anything", "relationship_status"),
        ("my dad's GP switched him to a new statin", "medications"),
        ("on-call week for the data team, phone buzzing at 2am again", "team"),
        ("our neighbours' baby was born tuesday", "children_count"),
        ("landed in tokyo, the hotel is tiny", "home_city"),
        ("my brother's new gig sounds awful", "employer"),
        ("what should i say in my notice letter?", "employer"),
        ("i'd love to live by the sea one day", "home_city"),
        ("the movers lost my friend's sofa lol", "home_city"),
        ("spent the weekend in the countryside, back to the city now", "home_city"),
        ("my mum is vegan now", "diet"),
        ("had fish for dinner, which was nice", "diet"),
        ("my dad's doctor swapped his pills", "medications"),
        ("my best friend got engaged!!!", "relationship_status"),
        ("fostering a dog for the shelter this week", "pets"),
        ("my cousin just defended her phd", "education"),
        ("my kid's school called me today", "preferred_contact_method"),
        ("we have a hybrid event next week", "work_arrangement"),
        ("my team lead is on holiday", "team"),
        ("our ceo upgraded the coffee machine", "plan"),
        ("my partner got a new phone", "phone"),
        ("back in 2019 i worked at deloitte", "employer"),
    ],
)
def test_the_same_words_without_a_change_of_the_speakers_own_ask_nothing(
    text: str, slot: str
) -> None:
    assert slot not in asked(text)


@pytest.mark.parametrize(
    "text",
    [
        "The lease on the new flat starts friday, movers booked",
        "got the keys to the new flat today!!",
    ],
)
def test_a_move_no_value_was_read_from_asks_about_the_zone_too(text: str) -> None:
    questions = [
        (c.attribute, c.value) for c in read_turn(text, SCHEMA, ask=True) if c.question is not None
    ]
    # No zone is guessed from a move whose place was not read.
    assert questions == [("home_city", None), ("timezone", None)]
