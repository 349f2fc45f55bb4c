"""Corrections of a stored value, put right in the ways people type them, and look-alikes.

The sentences were written, with the value each should put in place of the held one,
before the reader ran on them: a correction after the value or before it ("not leeds,
leicester"), across a line break, chat's asterisk ("*Leicester"), a value put right alone
("i misspoke earlier, we're in Porto"), a count, an address, a little Spanish and
Portuguese. The look-alikes must put nothing in the held value's place: someone else's
correction, the assistant's answer put right, a plan denied, a hypothetical, a quote, a
typo in some other word, an object that shares the value's words.
"""

from __future__ import annotations

import pytest

from slotwise.processors.corrected import corrected
from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import read_turn
from tests.processors.lifecycle_facts import stored

SCHEMA = AttributeSchema.load()


def put_right(text: str, attribute: str, value: str) -> str | None:
    """The value the turn puts in place of the held ``attribute = value``: read outright,
    or a correction the resolver applies to the held fact."""
    fact = stored(
        f"c-{attribute}", f"User's {attribute} is {value}.", attribute=attribute, value=value
    )
    for candidate in read_turn(text, SCHEMA, ask=True):
        if candidate.question is None and candidate.attribute == attribute:
            return str(candidate.value)
        if candidate.attribute is None and (fix := corrected(candidate, [fact], SCHEMA)):
            return fix.value
    return None


@pytest.mark.parametrize(
    ("text", "slot", "held_value", "value"),
    [
        ("not Leeds, Leicester", "home_city", "Leeds", "Leicester"),
        ("sorry meant to say leicester not leeds", "home_city", "Leeds", "Leicester"),
        ("correction: I'm at Wise, not Monzo", "employer", "Monzo", "Wise"),
        ("sorry, typo — it's jon not john", "preferred_name", "John", "Jon"),
        (
            "my bad, I'm a senior engineer not staff",
            "job_title",
            "staff engineer",
            "senior engineer",
        ),
        ("i misspoke earlier, we're in Porto not Lisbon", "home_city", "Lisbon", "Porto"),
        ("we're on mysql not postgres, my mistake", "database", "PostgreSQL", "MySQL"),
        ("hybrid, not remote — sorry if i said that wrong", "work_arrangement", "remote", "hybrid"),
        (
            "I'm Australian, not Austrian lol, everyone mixes it up",
            "nationality",
            "Austrian",
            "Australian",
        ),
        ("typo: i'm on the platform team not payments", "team", "payments", "platform"),
        (
            "correction — my first language is catalan, not spanish",
            "native_language",
            "Spanish",
            "Catalan",
        ),
        ("not austria, australia 🙃 autocorrect", "home_country", "Austria", "Australia"),
        ("i work at KPMG not deloitte, sorry brain fart", "employer", "Deloitte", "KPMG"),
        ("oops, we're on the Team plan not Pro", "plan", "Pro", "Team"),
        ("not cork, kerry — i grew up in kerry", "hometown", "Cork", "Kerry"),
        ("brighton? no, hove. sorry", "home_city", "Brighton", "Hove"),
        (
            "engaged, not married, we're not there yet haha",
            "relationship_status",
            "married",
            "engaged",
        ),
        (
            "ugh autocorrect, my email is sam.leigh@gmail.com not sam.lee@gmail.com",
            "email",
            "sam.lee@gmail.com",
            "sam.leigh@gmail.com",
        ),
        ("i was born in braga, not porto, my parents moved later", "birthplace", "Porto", "Braga"),
        ("midwife not nurse! common mistake", "job_title", "nurse", "midwife"),
        ("oxford, not cambridge, sorry long day", "home_city", "Cambridge", "Oxford"),
        ("I meant italian not french", "languages", "French", "Italian"),
        (
            "when i said climbing i meant cycling, autocorrect again",
            "hobbies",
            "climbing",
            "cycling",
        ),
        (
            "no, not accenture — capgemini. i left accenture ages ago",
            "employer",
            "Accenture",
            "Capgemini",
        ),
        ("edinburgh not glasgow sorry!!", "home_city", "Glasgow", "Edinburgh"),
        ("*Leicester", "home_city", "Leeds", "Leicester"),
        ("scratch that, still vegetarian", "diet", "pescatarian", "vegetarian"),
        ("actually make that 3 cats", "pets", "2 cats", "3 cats"),
        (
            "the number I gave you was missing a digit: +447700901234",
            "phone",
            "+447700900123",
            "+447700901234",
        ),
        ("i misspoke earlier, we're in Porto", "home_city", "Lisbon", "Porto"),
        ("ugh autocorrect — it's Jon", "preferred_name", "John", "Jon"),
        (
            "oops my email is actually ana.souza@proton.me, typo earlier",
            "email",
            "ana.souza@gmail.com",
            "ana.souza@proton.me",
        ),
        ("wait, typo — vegan", "diet", "vegetarian", "vegan"),
        ("sorry, I meant remote", "work_arrangement", "hybrid", "remote"),
        ("my bad, it's annual", "billing_cycle", "monthly", "annual"),
        ("perdón, es Sevilla", "home_city", "Madrid", "Sevilla"),
        ("quer dizer, Coimbra", "home_city", "Porto", "Coimbra"),
        ("my bad, I'm a senior engineer", "job_title", "staff engineer", "senior engineer"),
        ("sorry, I meant Leicester\nnot Leeds", "home_city", "Leeds", "Leicester"),
        ("oops\nit's Asda, not Tesco", "employer", "Tesco", "Asda"),
        ("I'm on Pro — sorry, wrote free by mistake", "plan", "Free", "Pro"),
        ("actually make that 3 kids", "children_count", "2", "3"),
        ("typo, i'm on the data team", "team", "infra", "data"),
        ("my mistake, I'm Scottish", "nationality", "Irish", "Scottish"),
        ("sorry autocorrect, it's pottery", "hobbies", "poetry", "pottery"),
        ("i misspoke — i'm divorced, not single", "relationship_status", "single", "divorced"),
        ("*Australia", "home_country", "Austria", "Australia"),
        ("*MariaDB", "database", "MySQL", "MariaDB"),
        ("sorry I meant portuguese, not spanish", "languages", "Spanish", "Portuguese"),
        ("ugh autocorrect, my email is tom@gmail.com", "email", "tom@gmial.com", "tom@gmail.com"),
        (
            "lol no i live in leicester not leeds, the accent threw you",
            "home_city",
            "Leeds",
            "Leicester",
        ),
        ("correction, I work for Wise not Monzo, the green one", "employer", "Monzo", "Wise"),
        (
            "no sorry, I'm a product owner, not product manager. small difference but it "
            "matters to my boss",
            "job_title",
            "product manager",
            "product owner",
        ),
        ("perdón, es Valencia, no Madrid", "home_city", "Madrid", "Valencia"),
        ("desculpa, quer dizer Porto", "home_city", "Lisboa", "Porto"),
        (
            "just to correct myself, I'm pescatarian — fish is fine",
            "diet",
            "vegetarian",
            "pescatarian",
        ),
        ("I said amazon but it's actually AWS", "employer", "Amazon", "AWS"),
        ("I said Bristol but I meant Bath, I just work in Bristol", "home_city", "Bristol", "Bath"),
        ("my number ends in 124 not 123, typo", "phone", "07700900123", "07700900124"),
        ("sorry, his name's Rocky not Rex haha", "pets", "dog named Rex", "dog named Rocky"),
        (
            "mid-level developer not junior, got that wrong earlier",
            "job_title",
            "junior developer",
            "mid-level developer",
        ),
        (
            "salford, not manchester - it's technically a different city lol",
            "home_city",
            "Manchester",
            "Salford",
        ),
        ("two kids, not one, sorry I wasn't clear", "children_count", "1", "2"),
        ("ugh I typed barclays, I meant HSBC", "employer", "Barclays", "HSBC"),
        ("oops i'm actually on the retention team not growth", "team", "growth", "retention"),
        (
            "sorry, meant to type Galway not Dublin. I'm only in Dublin for work",
            "home_city",
            "Dublin",
            "Galway",
        ),
        ("we use couchdb not mongodb, got them mixed up", "database", "MongoDB", "CouchDB"),
        ("my mistake, I'm on Premium not Basic", "plan", "Basic", "Premium"),
        ("ah wait it's yearly not monthly, I checked", "billing_cycle", "monthly", "annual"),
        (
            "married actually, not engaged — wedding was in may!",
            "relationship_status",
            "engaged",
            "married",
        ),
        ("i'm in leicester (not leeds, sorry autocorrect)", "home_city", "Leeds", "Leicester"),
        ("remote, not in office, sorry if i was unclear", "work_arrangement", "office", "remote"),
        ("I'm Belgian not Dutch, please fix that", "nationality", "Dutch", "Belgian"),
        ("whoops, meant Revolut not Wise", "employer", "Wise", "Revolut"),
        ("data engineer, not analyst, sorry", "job_title", "data analyst", "data engineer"),
        ("sorry it's Mat with one t", "preferred_name", "Matt", "Mat"),
        ("perdón, quise decir Granada", "home_city", "Seville", "Granada"),
        ("typo — norway, not sweden", "home_country", "Sweden", "Norway"),
        ("oops I'm pescatarian not vegan, fish is fine", "diet", "vegan", "pescatarian"),
        (
            "typo in my email, it's jo.smyth@gmail.com",
            "email",
            "jo.smith@gmail.com",
            "jo.smyth@gmail.com",
        ),
        ("sorry wrong number, it's +15551234576", "phone", "+15551234567", "+15551234576"),
        ("i'm on the payments team, not billing, mixed that up", "team", "billing", "payments"),
        ("LYON? no, Lille. sorry!", "home_city", "Lyon", "Lille"),
        (
            "my first language is marathi not hindi, sorry for the confusion",
            "native_language",
            "Hindi",
            "Marathi",
        ),
        ("remote actually, not hybrid, my bad", "work_arrangement", "hybrid", "remote"),
        ("ugh typo, Business plan not Pro", "plan", "Pro", "Business"),
        ("swedish not swiss lol autocorrect", "nationality", "Swiss", "Swedish"),
        ("grew up in Durham, not Derby, sorry typo", "hometown", "Derby", "Durham"),
        ("sorry i misspoke, engaged, not married yet", "relationship_status", "married", "engaged"),
        ("oops i have 2 kids not 3", "children_count", "3", "2"),
        ("desculpa, é Braga, não Porto", "home_city", "Porto", "Braga"),
        ("no wait, I'm at Google, not Meta", "employer", "Meta", "Google"),
        ("*Alexa", "preferred_name", "Alex", "Alexa"),
        ("i meant dutch not german, sorry", "languages", "German", "Dutch"),
        ("correction: sunderland", "home_city", "Newcastle", "Sunderland"),
    ],
)
def test_a_correction_puts_the_right_value_in_place_of_the_held_one(
    text: str, slot: str, held_value: str, value: str
) -> None:
    found = put_right(text, slot, held_value)
    assert found is not None and found.casefold() == value.casefold()


@pytest.mark.parametrize(
    ("text", "slot", "held_value"),
    [
        ("no, my sister's in Leicester not me", "home_city", "Leeds"),
        ("not that I'd ever move to Leicester lol", "home_city", "Leeds"),
        ("I'm in Leeds, obviously, not Leicester", "home_city", "Leeds"),
        ("she said 'not Leeds, Leicester!' and everyone laughed", "home_city", "Leeds"),
        ("sorry typo in my last message, 'teh' meant 'the'", "employer", "Monzo"),
        ("no, I meant the Wise app not the Monzo one, for transfers", "employer", "Monzo"),
        ("we're not moving to Porto after all", "home_city", "Lisbon"),
        ("scratch that, I'll have the vegan option tonight", "diet", "vegetarian"),
        ("no, Leicester is the one with the cathedral, not Leeds", "home_city", "Leeds"),
        (
            "my brother is jon not john, he hates when people spell it wrong",
            "preferred_name",
            "John",
        ),
        ("my wife works at Wise not Monzo", "employer", "Monzo"),
        (
            "sorry, I meant the senior engineer role in the job ad, not staff",
            "job_title",
            "staff engineer",
        ),
        ("make that 3 coffees, it's been a long day", "pets", "2 cats"),
        ("no no, the meeting is in Leicester not Leeds", "home_city", "Leeds"),
        ("correction: the party is for 3 kids not 2", "children_count", "2"),
        ("the flight goes via porto not lisbon, sorry", "home_city", "Lisbon"),
        ("not that I'm complaining, but the scottish weather is awful", "nationality", "Irish"),
        ("if I lived in leicester, not leeds, I'd be closer to mum", "home_city", "Leeds"),
        ("you said KPMG but I asked about Deloitte's audit practice", "employer", "Deloitte"),
        ("typo in the query, it's mysql_connect not mysqli", "database", "PostgreSQL"),
        ("Leicester? no, Leeds, I said Leeds", "home_city", "Leeds"),
        ("not vegetarian, obviously, I'm still vegan", "diet", "vegan"),
        (
            "ugh autocorrect changed 'meeting' to 'meting' in that email",
            "email",
            "sam.lee@gmail.com",
        ),
        ("my mum misspoke, she's in Porto not Lisbon", "home_city", "Lisbon"),
        ("*their not there, sorry", "preferred_name", "Kate"),
        ("no I'm not leaving google for meta, that was a joke", "employer", "Google"),
        ("leicester not leeds was the answer to the quiz question", "home_city", "Leeds"),
        ("my daughter's a midwife, not a nurse, she'd correct you", "job_title", "nurse"),
        ("perdón, mi hermano vive en Valencia, no yo", "home_city", "Madrid"),
        (
            "wait no, I meant the Leicester store, not the Leeds one, for the return",
            "home_city",
            "Leeds",
        ),
        ("oops wrong chat, meant to send that to the data team", "team", "platform"),
        ("not upgrading to Team, pro is fine", "plan", "Pro"),
        ("actually make that 2 tickets for saturday", "pets", "1 dog"),
        (
            "the train goes to Bath, not Bristol, sorry my mistake on the booking",
            "home_city",
            "Bristol",
        ),
        ("correction to my earlier email to hr: the start date is monday", "employer", "Monzo"),
        ("my kids' first language is catalan, not spanish", "native_language", "Spanish"),
        ("I'd never say Leicester, not in a million years", "home_city", "Leeds"),
        ("is it australian or austrian who say g'day? lol", "nationality", "Austrian"),
        ("my friend is engaged not married yet", "relationship_status", "married"),
        ("so you're saying Deloitte, not KPMG, audits them?", "employer", "KPMG"),
        ("sorry, meant pescatarian-friendly restaurants, for my guests", "diet", "vegetarian"),
        ("he wrote 'Porto, not Lisbon' on the card, cute", "home_city", "Lisbon"),
        ("we wanted three kids, not two, but life happened", "children_count", "2"),
        ("jon not john is how my dad spells it", "preferred_name", "Jon"),
        ("I meant rowing machine not treadmill, for the gym order", "hobbies", "running"),
        ("the number I gave the plumber was missing a digit, oops", "phone", "+447700900123"),
        ("what, not Leeds? I thought you said Leeds", "home_city", "Leeds"),
        (
            "sorry, meant to say the Bristol office, not the Bath one, for the meeting",
            "home_city",
            "Bath",
        ),
        ("my husband's at Revolut, not Wise", "employer", "Wise"),
        ("*Lille is where the conference is, not Lyon", "home_city", "Lyon"),
        ("oops I ordered the pescatarian menu not the vegan one", "diet", "vegan"),
        ("make that 2 coffees please", "pets", "1 dog"),
        ("typo in my email to the landlord, sorry", "email", "jo.smith@gmail.com"),
        ("sorry wrong number, I meant to text my sister", "phone", "+15551234567"),
        ("wrong channel sorry, meant for the payments team", "team", "billing"),
        ("if I'd said Lille, not Lyon, would that change the answer?", "home_city", "Lyon"),
        ("not Business, Pro is plenty for us", "plan", "Pro"),
        ("my friend is swedish, not swiss, you mixed them up", "nationality", "Swiss"),
        ("correction: the match is in sunderland", "home_city", "Newcastle"),
        ("i'd have 2 kids not 3 if i could do it again lol", "children_count", "3"),
        ("no wait, Google was founded before Facebook, not after", "employer", "Meta"),
        ("*Alexa, play some music", "preferred_name", "Alex"),
        ("bath* not bathe, typo lol", "home_city", "Bath"),
        ("data engineer not analyst is the role I'm applying for", "job_title", "data analyst"),
        ("norway not sweden was the trip, sorry", "home_country", "Sweden"),
        ("sorry, I meant the dutch course, not the german one", "languages", "German"),
        ("derby, not durham, is where my mum grew up", "hometown", "Derby"),
        ("desculpa, a minha irmã mora em Braga, não eu", "home_city", "Porto"),
        ("scratch that, I'll get the vegetarian pizza instead", "diet", "vegan"),
    ],
)
def test_a_look_alike_puts_nothing_in_place_of_the_held_value(
    text: str, slot: str, held_value: str
) -> None:
    found = put_right(text, slot, held_value)
    assert found is None or found.casefold() == held_value.casefold()
