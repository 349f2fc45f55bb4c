"""What the generated users say: how each attribute is phrased, and the values they use.

The phrasings follow the patterns of the rules extractor
(``processors/rules/``), so the offline path places every structured write. The
pools are disjoint as whole words, so a value found in a text names one slot,
and no pool value occurs in the free-text tail.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "EMAIL_DOMAINS",
    "FIRST_NAMES",
    "LAST_NAMES",
    "PHRASING",
    "POOLS",
    "TAIL",
    "TAIL_FILL",
    "VOLATILITY",
    "Phrasing",
    "Value",
]

Value = str | int


@dataclass(frozen=True, slots=True)
class Phrasing:
    """How a user says a value, how they say it changed, and the fact as stored."""

    says: str
    changes: str
    fact: str


# The user's words follow the patterns of the rules extractor (processors/extract.py).
PHRASING: dict[str, Phrasing] = {
    "name": Phrasing("My name is {v}.", "My name is {v}.", "User's name is {v}."),
    "preferred_name": Phrasing(
        "Please call me {v}.", "Please call me {v} from now on.", "User prefers to be called {v}."
    ),
    "email": Phrasing("My email is {v}.", "My new email is {v}.", "User's email is {v}."),
    "phone": Phrasing(
        "My phone number is {v}.", "My new phone number is {v}.", "User's phone number is {v}."
    ),
    "home_city": Phrasing("I live in {v}.", "I moved to {v}.", "User lives in {v}."),
    "home_country": Phrasing("I live in {v}.", "I moved to {v}.", "User lives in {v}."),
    "employer": Phrasing("I work at {v}.", "I start at {v} on Monday.", "User works at {v}."),
    "job_title": Phrasing(
        "I work as a {v}.", "I started a new job as a {v}.", "User works as a {v}."
    ),
    "plan": Phrasing("I'm on the {v}.", "I switched to the {v}.", "User is on the {v}."),
    "diet": Phrasing("I'm {v}.", "I'm {v} now.", "User is {v}."),
    "allergies": Phrasing(
        "I'm allergic to {v}.", "I'm allergic to {v}.", "User is allergic to {v}."
    ),
    "languages": Phrasing("I speak {v}.", "I speak {v}.", "User speaks {v}."),
    "pets": Phrasing("I have a {v}.", "I have a {v}.", "User has a {v}."),
    "children_count": Phrasing("I have {v}.", "I have {v} now.", "User has {v}."),
    "relationship_status": Phrasing("I'm {v}.", "I'm {v} now.", "User is {v}."),
    "timezone": Phrasing("My timezone is {v}.", "My timezone is {v}.", "User's timezone is {v}."),
    "database": Phrasing(
        "Our main database is {v}.",
        "We switched our database from {old} to {v}.",
        "User's main database is {v}.",
    ),
}

# Pools are disjoint as whole words, so a value found in a text names one slot.
FIRST_NAMES = (
    "Maria",
    "João",
    "Lena",
    "Tomás",
    "Priya",
    "Kenji",
    "Amara",
    "Lucas",
    "Sofia",
    "Noah",
    "Elif",
    "Mateo",
    "Zara",
    "Ivan",
    "Chloe",
    "Omar",
    "Hana",
    "Felix",
)
LAST_NAMES = (
    "Silva",
    "Costa",
    "Novak",
    "Okafor",
    "Tanaka",
    "Müller",
    "Haddad",
    "Larsen",
    "Moreau",
    "Rossi",
    "Kowalski",
    "Nguyen",
    "Santos",
    "Fischer",
    "Reyes",
)
EMAIL_DOMAINS = ("example.com", "mail.example.org", "inbox.example.net")
POOLS: dict[str, tuple[Value, ...]] = {
    "preferred_name": ("Ace", "Bee", "Kit", "Sunny", "Jojo", "Pip", "Moss", "Wren"),
    "home_city": (
        "Lisbon",
        "Porto",
        "Berlin",
        "Munich",
        "Toronto",
        "Austin",
        "Denver",
        "Madrid",
        "Osaka",
        "Curitiba",
    ),
    "home_country": ("Portugal", "Germany", "Canada", "Spain", "Japan", "Brazil", "Ireland"),
    "employer": (
        "Stripe",
        "Datadog",
        "Shopify",
        "Atlassian",
        "Spotify",
        "Canva",
        "Zalando",
        "Klarna",
        "Twilio",
        "Figma",
    ),
    "job_title": (
        "data engineer",
        "product manager",
        "nurse",
        "teacher",
        "software architect",
        "pharmacist",
        "backend developer",
        "designer",
    ),
    "plan": ("Free", "Pro", "Team", "Enterprise"),
    "diet": ("vegetarian", "vegan", "pescatarian", "keto"),
    "allergies": ("peanuts", "shellfish", "penicillin", "pollen", "latex", "sesame"),
    "languages": (
        "Portuguese",
        "German",
        "French",
        "Spanish",
        "Japanese",
        "Italian",
        "Mandarin",
        "Hindi",
    ),
    "pets": ("dog", "cat", "parrot", "rabbit", "tortoise", "hamster"),
    "children_count": (1, 2, 3, 4),
    "relationship_status": ("single", "married", "engaged", "divorced"),
    "timezone": ("UTC-08:00", "UTC-05:00", "UTC+00:00", "UTC+01:00", "UTC+05:30", "UTC+09:00"),
    "database": ("PostgreSQL", "MySQL", "MongoDB", "Cassandra", "DynamoDB", "CockroachDB"),
}
# How often each single-valued attribute changes relative to the others: people
# move and change jobs far more often than they change their name.
VOLATILITY: dict[str, float] = {
    "name": 0.2,
    "preferred_name": 0.5,
    "email": 1.0,
    "phone": 1.0,
    "home_city": 3.0,
    "home_country": 1.0,
    "employer": 3.0,
    "job_title": 2.0,
    "plan": 2.0,
    "diet": 1.0,
    "children_count": 0.5,
    "relationship_status": 1.0,
    "timezone": 1.0,
    "database": 2.0,
}
# The free-text tail: (what the user says, the fact, category). No pool value occurs in them.
TAIL: tuple[tuple[str, str, str], ...] = (
    ("I visited {place} in {month}.", "User visited {place} in {month}.", "travel"),
    ("I ran a marathon last year.", "User ran a marathon last year.", "sport"),
    ("I went hiking in {region} last weekend.", "User went hiking in {region}.", "travel"),
    ("I finished reading {book} last week.", "User finished reading {book}.", "hobby"),
    ("I started learning the {instrument}.", "User is learning the {instrument}.", "hobby"),
    ("I baked sourdough bread for the first time.", "User baked sourdough bread.", "hobby"),
    ("I watched {film} twice this month.", "User watched {film} twice.", "hobby"),
)
TAIL_FILL: dict[str, tuple[str, ...]] = {
    "place": ("Kyoto", "Reykjavik", "Marrakesh", "Cusco", "Hanoi", "Tbilisi", "Oaxaca"),
    "month": ("January", "March", "May", "July", "September", "November"),
    "region": ("the Dolomites", "Patagonia", "the Highlands", "the Alps"),
    "book": ("Dune", "Middlemarch", "The Overstory", "Piranesi"),
    "instrument": ("cello", "ukulele", "drums", "piano"),
    "film": ("Paddington 2", "Spirited Away", "Arrival"),
}
