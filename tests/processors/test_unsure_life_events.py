"""Changes of a held slot told by an event that is a change in itself: a pregnancy, a
final divorce, the keys to a bought home, a finished degree, a demotion, a downgrade, a
pet gone to live elsewhere, a dose someone changed, what the speaker had to do; and
changes named by a drug's brand or a condition's name.
Their look-alikes: someone else's event, a parcel or rain expected, the keys to an
office, a plan, a question, a time long gone.

Written for the reader before it was run on them, in the ways people type; not taken from
the evaluation data. The last seven look-alikes (a rota, caffeine, rain, a certificate, a
meeting, a sister's dog, a password) were added after, to hold the new words to their slot."""

from __future__ import annotations

import pytest

from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import slots_asked, slots_spoken

SCHEMA = AttributeSchema.load()


@pytest.mark.parametrize(
    ("text", "slot"),
    [
        ("we're expecting!! due in march", "children_count"),
        ("the divorce is final as of friday, weird feeling", "relationship_status"),
        ("moved in with my gf last month, so far so good lol", "relationship_status"),
        ("our second arrived on tuesday, 3.4kg, all good", "children_count"),
        ("we're foster fails now, the kitten is staying 😅", "pets"),
        ("off the sertraline now, feeling ok", "medications"),
        ("doc doubled my dose of propranolol", "medications"),
        ("finished my degree!!! no more essays", "education"),
        ("dropped out of the masters, it wasnt for me", "education"),
        ("got bumped up to senior last week", "job_title"),
        ("they put me on the data team after the reorg", "team"),
        ("we went annual at renewal, cheaper", "billing_cycle"),
        ("cancelled pro, the free one does what i need", "plan"),
        ("ditched my gmail, use the proton one from now on", "email"),
        ("finally got the keys!! we're in", "home_city"),
        ("signed the lease on a place in leeds", "home_city"),
        ("the endo says i'm prediabetic now", "medical_conditions"),
        ("new number btw, old sim died", "phone"),
        ("downgraded to basic to save money", "plan"),
        ("the cat went to live with my mum, she has a garden", "pets"),
        ("twins!! two boys, nobody's sleeping", "children_count"),
        ("no more ozempic for me, insurance stopped covering it", "medications"),
        ("they switched me from citalopram to escitalopram", "medications"),
        ("demoted back to analyst after the restructure ugh", "job_title"),
        ("we upgraded everyone to enterprise this morning", "plan"),
        ("we completed on the house friday!! homeowners", "home_city"),
        ("turns out it's crohn's, got the results today", "medical_conditions"),
        ("we separated in may, still figuring things out", "relationship_status"),
        ("handed in my thesis and passed the viva, dr me now", "education"),
        ("wife and i called it quits in the summer, amicable at least", "relationship_status"),
        ("me and jake are officially a thing now lol", "relationship_status"),
        ("baby number 3 is on the way 😳", "children_count"),
        ("we're pregnant!!! 12 weeks today", "children_count"),
        ("weaned off the venlafaxine finally", "medications"),
        ("gp put me on statins last month", "medications"),
        ("doc cut my levothyroxine in half", "medications"),
        ("got my phd!!! call me doctor", "education"),
        ("promoted to staff engineer 🎉", "job_title"),
        ("switched us to yearly billing to get the discount", "billing_cycle"),
        ("got a uk number now, the spanish one is dead", "phone"),
        ("we bought a place in bath!! moving in june", "home_city"),
        ("got made redundant, job hunting again", "employer"),
        ("had to put our dog down yesterday, worst day", "pets"),
        ("we had to put our old dog down", "pets"),
        ("had to quit my job, burnout", "employer"),
        ("had to come off the sertraline", "medications"),
    ],
)
def test_an_event_that_is_a_change_is_heard(text: str, slot: str) -> None:
    heard = slots_spoken(text, SCHEMA)
    assert slot in heard, f"{text!r} gave {heard}"


@pytest.mark.parametrize(
    "text",
    [
        "my sister is expecting her second, so exciting",
        "thinking about moving in with my gf next year",
        "if i cancelled pro would i lose my files?",
        "my friend finally got the keys to her flat",
        "i used to be on sertraline years ago",
        "saw a flat yesterday, not signing anything yet",
        "we're expecting a parcel today so i'm stuck in",
        "we're expecting rain all weekend ugh",
        "i'm expecting you to remind me on friday",
        "my sister's divorce is final, she's thrilled",
        "got the keys to the office so i can open up tomorrow",
        "homeowners insurance went up again, robbery",
        "the dog went to live with my ex years ago",
        "my boss got demoted lol karma",
        "if we downgraded to basic would we lose history?",
        "my daughter finished her degree!! so proud",
        "our neighbours' second arrived last night, cute baby",
        "do you know if ozempic has side effects?",
        "my dad's on ozempic now and lost loads of weight",
        "my friends separated in may, awkward dinners now",
        "we watched a doc about crohn's last night",
        "they upgraded the wifi at work to the pro tier, finally fast",
        "jake and amy are officially a thing now lol",
        "my sister's baby number 3 is on the way",
        "my dad's gp put him on statins",
        "my wife got her phd!!! so proud",
        "half my team got made redundant, brutal",
        "the office is packed on tuesdays now",
        "they put me on the rota for sunday",
        "cut my caffeine in half, headaches galore",
        "we are expecting a lot of rain",
        "got my degree certificate in the post",
        "had to move the meeting to friday",
        "my sister had to put her dog down",
        "had to change my password again ugh",
    ],
)
def test_someone_elses_event_or_a_plan_asks_nothing(text: str) -> None:
    assert slots_asked(text, SCHEMA) == set(), text
