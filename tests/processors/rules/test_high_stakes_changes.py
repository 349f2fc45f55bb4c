"""Changes of high-stakes slots (email, phone, pronouns, nationality, billing, payment),
said the ways people type them, and the look-alikes that must never move one.

The sentences and their expected readings were written before the reader ran on them. A
high-stakes slot moves only on a value read with the change said (``stated_change``), so a
change must carry both, and a look-alike (someone else's, a plan, a question, a former
value, a temporary number) must give no candidate that carries both.
"""

from __future__ import annotations

import pytest

from slotwise.processors.schema import AttributeSchema
from slotwise.processors.testing import read_turn

SCHEMA = AttributeSchema.load()


def moving(text: str) -> set[tuple[str | None, object]]:
    """The slot values the turn could supersede with: read, and said as a change."""
    found: set[tuple[str | None, object]] = set()
    for c in read_turn(text, SCHEMA, ask=True):
        spec = SCHEMA.get(c.attribute)
        if c.value is not None and c.stated_change and spec is not None and spec.high_stakes:
            found.add((c.attribute, c.value))
    return found


@pytest.mark.parametrize(
    ("text", "slot", "value"),
    [
        ("new email: dan.reyes@fastmail.com", "email", "dan.reyes@fastmail.com"),
        ("my email changed, it's priya.k@outlook.com now", "email", "priya.k@outlook.com"),
        ("use my proton address from now on: mira@proton.me", "email", "mira@proton.me"),
        ("retired my old gmail, reach me at tom.b@hey.com instead", "email", "tom.b@hey.com"),
        ("ditched hotmail lol, it's jlee@icloud.com these days", "email", "jlee@icloud.com"),
        ("please update my email to sam.ortiz@pm.me", "email", "sam.ortiz@pm.me"),
        ("going forward please email me at ana@ribeiro.pt", "email", "ana@ribeiro.pt"),
        ("it's +44 7700 900 222 now", "phone", "+447700900222"),
        ("got a new sim, number is 07700 900 333", "phone", "07700900333"),
        ("new number: +1 415 555 0199", "phone", "+14155550199"),
        ("my phone number changed to 0161 496 0000", "phone", "01614960000"),
        ("from today my mobile is +351 912 345 678", "phone", "+351912345678"),
        ("update my number pls: 07911 123456", "phone", "07911123456"),
        ("my pronouns changed, it's they/them now", "pronouns", "they/them"),
        ("changed my pronouns to he/him", "pronouns", "he/him"),
        ("i use she/her now", "pronouns", "she/her"),
        ("i'm Irish now, dropped the british passport", "nationality", "Irish"),
        ("switched to paying by paypal", "payment_method", "paypal"),
        ("i pay with apple pay now instead of my visa", "payment_method", "apple pay"),
        ("we went annual", "billing_cycle", "annual"),
        ("switched to monthly billing", "billing_cycle", "monthly"),
        ("i go by Alex now", "preferred_name", "Alex"),
        ("please call me Jo from now on, not Joanna", "preferred_name", "Jo"),
        ("i'd rather you call me Sam now", "preferred_name", "Sam"),
        ("everyone calls me Bex now, not Rebecca", "preferred_name", "Bex"),
        ("changed my card to paypal, easier", "payment_method", "paypal"),
        ("we pay by invoice now instead of card", "payment_method", "invoice"),
        ("i'm on annual billing now", "billing_cycle", "annual"),
        ("changed numbers, text me on +1 212 555 0142 instead", "phone", "+12125550142"),
        ("my number's different now, it's 0412 555 019", "phone", "0412555019"),
        (
            "hey quick one, my email's changed to lena.fischer@posteo.de",
            "email",
            "lena.fischer@posteo.de",
        ),
    ],
)
def test_a_high_stakes_change_is_read_with_its_change(text: str, slot: str, value: str) -> None:
    assert (slot, value) in moving(text)


# Someone else's, a service's, a former value, a restatement, a question, a plan, a number
# kept for a trip, a phone that is a device.
LOOK_ALIKES = (
    "my sister's new email is kate@gmail.com",
    "my sister ditched hotmail, it's kate@icloud.com now",
    "my wife ditched hotmail lol, it's amy.r@icloud.com these days",
    "my husband got a new number, +44 7700 900 444",
    "mum got a new sim, it's +44 7700 900 555 now",
    "the clinic moved, it's +44 20 7946 0000 now",
    "the dentist's phone is 0161 496 1111",
    "my old email was dan@yahoo.com, don't use that",
    "my email is still dan.reyes@fastmail.com",
    "can i change my email?",
    "how do i update my phone number?",
    "should i ditch gmail?",
    "i'll get a new number next month",
    "i'll ditch hotmail next month, it'll be jlee@icloud.com",
    "got a new sim for the trip, the local one is +34 600 000 000",
    "my brother got rid of his old phone, his new one is 07700 900 666",
    "might switch to paypal at some point",
    "thinking of going annual",
    "should i switch to annual billing?",
    "my partner went annual on her gym",
    "dad pays with apple pay now",
    "my mum's address is 4 Oak Rd, York",
    "her new address is 9 Mill Lane, Bath",
    "my friend switched to they/them",
    "their pronouns changed, it's they/them now",
    "my kid's pronouns changed, it's he/him now",
    "my dad became a british citizen",
    "tom became a canadian citizen, so proud",
    # A citizenship gained may sit beside the old one: no sign the old one went.
    "became a canadian citizen last month!!",
    "got my portuguese citizenship!! officially portuguese now",
    "he dropped the old passport, he's irish now",
    "my son is allergic to nuts now apparently",
    "the new office number is 020 7946 0123",
    "my flatmate's new number is 07700 900 888",
    "my boss changed his email to p.grant@acme.com",
    "is my email still lena@posteo.de on file?",
    "changed my card to paypal next month, maybe",
    "should i change my card to paypal, is it safer?",
    "my mum switched to paypal",
    "my sister got her german citizenship",
    "my friend switched to protonmail - k@proton.me",
    "hotmail keeps spamming me, unsubscribe@promo.com",
    "new phone who dis lol",
    "got a new phone, the camera is amazing",
)


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_a_look_alike_moves_no_high_stakes_slot(text: str) -> None:
    assert not moving(text), moving(text)
