"""Rules for family: pets, children, relationship status."""

from __future__ import annotations

import re

from slotwise.processors.rules.clauses import Clause
from slotwise.processors.rules.findings import INFERRED, Finding
from slotwise.processors.rules.head.matching import AM, compile_all, first_match, say
from slotwise.processors.rules.head.spoken import own_or_bare
from slotwise.processors.rules.values import STATE_AFTER, split_items
from slotwise.processors.rules.wording import ADVERBS
from slotwise.processors.rules.words import NUMBERS, SPECIES

__all__ = [
    "read_named_pets",
    "read_new_child",
    "read_no_children",
    "read_parent_of",
    "read_possessions",
    "read_relationship",
]

_I = re.IGNORECASE

_HAVE = compile_all(
    rf"^(?P<who>I|we)(?:'ve|\s+have)?{ADVERBS}\s+(?P<verb>have\s+got|have|got|adopted|rescued|own)"
    r"\s+(?P<rest>.+)$",
    rf"^(?P<who>I|we)'ve{ADVERBS}\s+(?P<verb>got)\s+(?P<rest>.+)$",
)
_SPECIES_NAMES = "|".join(
    re.escape(k).replace(r"\ ", r"\s+") for k in sorted(SPECIES, key=len)[::-1]
)
_PET = re.compile(
    r"^(?P<n>a|an|one|two|three|four|five|six|\d)\s+(?:(?:little|new|rescue|rescued|adorable|cute|"
    r"sweet|old|young|black|white|brown|grey|gray|ginger|orange|golden|big|small|baby|pet)\s+)*"
    rf"(?P<species>{_SPECIES_NAMES})(?:,?\s+(?:named|called)\s+(?P<name>[\w'-]+))?$",
    _I,
)
_CHILDREN = re.compile(
    r"^(?P<n>a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d)\s+(?:(?:little|young|grown|"
    r"grown-up|adult|beautiful|wonderful|amazing|lovely|teenage|small)\s+)*"
    r"(?P<kind>kids?|children|child|sons?|daughters?)$",
    _I,
)
_SPOUSE = re.compile(
    r"^(?:a|an)\s+(?:(?:wonderful|lovely|amazing|loving|beautiful|supportive)\s+)*"
    r"(?P<who>wife|husband|spouse|girlfriend|boyfriend|fianc[eé]e?)$",
    _I,
)
_TRAILING = re.compile(
    r"\s+(?:(?:last|this|next)\s+\w+|yesterday|today|recently|now|too|as\s+well|at\s+home|"
    r"at\s+the\s+moment|right\s+now|(?:\d+|a|an|one|two|a\s+few)\s+\w+\s+ago|in\s+\d{4}|"
    r"in\s+[A-Z][a-z]+|on\s+[A-Z][a-z]+day|since\s+.+)$",
    _I,
)
_SPOUSE_STATUS = {
    "wife": "married",
    "husband": "married",
    "spouse": "married",
    "fiance": "engaged",
    "fiancé": "engaged",
    "fiancee": "engaged",
    "fiancée": "engaged",
    "girlfriend": "in a relationship",
    "boyfriend": "in a relationship",
}


def read_possessions(clause: Clause) -> list[Finding]:
    """ "I have a dog named Rex and two kids": pets, children, a spouse."""
    found = first_match(_HAVE, clause.text)
    if found is None:
        return []
    rest = found["rest"]
    while _TRAILING.search(rest):
        rest = _TRAILING.sub("", rest)
    owning = found["verb"].lower() in ("have", "have got", "own") or clause.text[1:4] == "'ve"
    verb = "has" if owning else found["verb"].lower()
    findings: list[Finding] = []
    children: list[tuple[int, str, str]] = []
    for item in split_items(rest):
        pet, child, spouse = _PET.match(item), _CHILDREN.match(item), _SPOUSE.match(item)
        if pet is not None and (
            pet["name"] is None or not clause.cased or pet["name"][0].isupper()
        ):
            findings.append(Finding("pets", _pet_value(pet), f"User {verb} {_pet_words(pet)}."))
        elif child is not None and owning:
            children.append(
                (NUMBERS.get(child["n"].lower()) or int(child["n"]), child["kind"], item)
            )
        elif spouse is not None and owning and found["who"].lower() == "i":
            status = _SPOUSE_STATUS[spouse["who"].lower()]
            findings.append(Finding("relationship_status", status, f"User is {status}.", INFERRED))
    kinds = {kind.lower().rstrip("s") for _, kind, _ in children}
    # "a son" alone does not say how many children; "a son and a daughter" does.
    if kinds & {"kid", "children", "child"} or kinds >= {"son", "daughter"}:
        count = sum(n for n, _, _ in children)
        items = " and ".join(item for _, _, item in children)
        findings.append(Finding("children_count", count, f"User has {items}."))
    return findings


def _pet_value(pet: re.Match[str]) -> str:
    species = SPECIES[" ".join(pet["species"].lower().split())]
    count = NUMBERS.get(pet["n"].lower()) or int(pet["n"])
    if count > 1:
        return f"{count} {' '.join(pet['species'].lower().split())}"
    name = pet["name"]
    return species if name is None else f"{species} named {name[:1].upper() + name[1:]}"


def _pet_words(pet: re.Match[str]) -> str:
    words = pet.group(0)
    if pet["name"] is not None:
        words = words[: pet.start("name")] + pet["name"][:1].upper() + pet["name"][1:]
    return " ".join(words.split())


_NO_CHILDREN = compile_all(
    r"^(?:I|we)\s+(?:don't|do\s+not)\s+have\s+(?:any\s+)?(?:kids|children)(?P<after>.*)$",
    r"^(?:I|we)\s+have\s+no\s+(?:kids|children)(?P<after>.*)$",
    # A list's item: "single, no kids, one parrot".
    r"^no\s+(?:kids|children)(?P<after>(?:\s+(?:yet|lol|haha|either|thankfully))*)\s*[.!]*$",
)
_PARENT_OF = compile_all(
    rf"^{AM}\s+(?:a\s+)?(?P<single>single\s+)?(?:proud\s+|working\s+|busy\s+|stay-at-home\s+)?"
    r"(?:mom|mum|mother|dad|father|parent)\s+(?:of|to)\s+(?P<n>one|two|three|four|five|six|\d)"
    r"(?:\s+(?:kids|children|boys|girls|little\s+ones))?$"
)


def read_no_children(clause: Clause) -> list[Finding]:
    found = first_match(_NO_CHILDREN, clause.text)
    if found is None or not re.match(r"^\s*(?:yet)?\s*$", found["after"]):
        return []
    return [Finding("children_count", 0, "User has no children.")]


def read_parent_of(clause: Clause) -> list[Finding]:
    found = first_match(_PARENT_OF, clause.text)
    if found is None:
        return []
    count = NUMBERS.get(found["n"].lower()) or int(found["n"])
    children = [Finding("children_count", count, say(clause))]
    single = [Finding("relationship_status", "single", say(clause), INFERRED)]
    return children + (single if found["single"] else [])


_STATUS = (
    r"married|single|engaged|divorced|widowed|separated|"
    r"in\s+a\s+(?:committed\s+|long-distance\s+|serious\s+|happy\s+)?relationship"
)
_RELATIONSHIP = compile_all(
    rf"^{AM}\s+(?:(?:happily|newly|very|still)\s+)*(?P<status>{_STATUS})\b(?P<after>.*)$",
    rf"^I(?:'ve|\s+have)?{ADVERBS}\s+(?:got|gotten)\s+(?P<status>married|engaged|divorced|"
    r"separated)\b(?P<after>.*)$",
    # "we got engaged": the speaker and their partner; "we got separated" may be in a crowd.
    rf"^we(?:'ve|\s+have)?{ADVERBS}\s+(?:got|gotten)\s+(?P<status>married|engaged|divorced)\b"
    r"(?P<after>.*)$",
    rf"^{AM}\s+a\s+(?P<status>widow|widower|single\s+(?:mom|mum|mother|dad|father|parent))"
    r"\b(?P<after>.*)$",
    # "we tied the knot on saturday": the wedding itself.
    rf"^(?:I|we)(?:'ve|\s+have)?{ADVERBS}\s+(?P<status>tied\s+the\s+knot|got\s+hitched)\b"
    r"(?P<after>.*)$",
)


def read_relationship(clause: Clause) -> list[Finding]:
    found = first_match(_RELATIONSHIP, clause.text)
    changed = re.match(r"^(?:I|we)(?:'ve|\s+have)?\W*\w*\s*(?:got|gotten|tied)\b", clause.text, _I)
    # A wedding (or an engagement, a divorce) is an event: what follows dates it ("on
    # saturday", "in june"), it qualifies no state.
    wedding = found is not None and bool(changed)
    if found is None or not (wedding or STATE_AFTER.match(found["after"])):
        return []
    status = " ".join(found["status"].lower().split())
    if status.startswith("in a"):
        status = "in a relationship"
    elif status.startswith("widow"):
        status = "widowed"
    elif status.startswith("single"):
        status = "single"
    elif status.startswith(("tied", "got")):
        status = "married"
    text = f"User is {status}." if changed else say(clause)
    return [Finding("relationship_status", status, text)]


# Breeds and young ones are stored as their kind: "a rescue greyhound named Pixel" is a dog.
_KIND = {
    **{breed: "dog" for breed in (
        "golden retriever labrador corgi husky beagle poodle pug dachshund chihuahua "
        "german shepherd border collie bulldog terrier greyhound whippet lurcher spaniel "
        "collie retriever schnauzer rottweiler doodle puppy"
    ).split()},
    "kitten": "cat",
}  # fmt: skip
# Case-sensitive inside the case-insensitive pattern: a name is capitalised when the turn is.
_CASED_NAME = r"(?-i:[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,2})"
_PLAIN_NAME = r"[a-z][\w'-]*"
_KINDS = rf"(?P<species>{_SPECIES_NAMES}|german\s+shepherd|greyhound|whippet|lurcher|spaniel|"
_KINDS += r"collie|retriever|schnauzer|rottweiler|doodle)"
_ONE_PET = r"(?:^|,\s*|\b(?:and|with|plus|have|got|adopted|rescued)\s+)(?:a|an|one|my|our)\s+"
_ONE_PET += r"(?:[\w-]+\s+){0,3}?"
_MANY_PETS = r"(?:^|,\s*|\band\s+|\bwith\s+|\bhave\s+)(?P<n>two|2)\s+(?:[\w-]+\s+)?"
_NAMED = r"\s+(?:named|called)\s+"


# "my dog's name is Max", "our cat is called Miso"; "my cats are called Tig and Tag".
_MY_PET = r"(?:^|,\s*|\band\s+)(?:(?:yes|yeah|yep|also|oh|btw)\s+)?(?:my|our|the)\s+(?:[\w-]+\s+)?"
_IS_NAMED = (
    r"(?:'s\s+name\s+(?:really\s+|actually\s+)?is|\s+is\s+(?:really\s+|actually\s+)?"
    r"(?:called|named))\s+"
)
_ARE_NAMED = r"s\s+are\s+(?:called|named)\s+"


def _pets_pattern(name: str) -> tuple[tuple[re.Pattern[str], ...], tuple[re.Pattern[str], ...]]:
    pair = rf"(?P<a>{name})\s*(?:&|\band\b|,)\s*(?P<b>{name})\b"
    return (
        (
            re.compile(rf"{_ONE_PET}{_KINDS}{_NAMED}(?P<name>{name})\b", _I),
            re.compile(rf"{_MY_PET}{_KINDS}{_IS_NAMED}(?P<name>{name})\b", _I),
        ),
        (
            re.compile(rf"{_MANY_PETS}{_KINDS}(?:{_NAMED}|\s*\(\s*){pair}", _I),
            re.compile(rf"{_MY_PET}(?:two\s+|2\s+)?{_KINDS}{_ARE_NAMED}{pair}", _I),
        ),
    )


_PETS_CASED, _PETS_PLAIN = _pets_pattern(_CASED_NAME), _pets_pattern(_PLAIN_NAME)
# "my dog's name": the pet's own possessive, not someone else's pet ("my sister's cat").
_PETS_OWN = re.compile(rf"^(?:my|our)\s+(?!{_KINDS}'s\b)\w+'s\b", _I)
# Someone named before the pet may be its owner ("a friend just adopted a kitten called sushi").
_PERSON = re.compile(
    r"\b(?:friend|sister|brother|mum|mom|mother|dad|father|parents?|neighbou?r|colleague|"
    r"coworker|cousin|aunt|uncle|son|daughter|partner|husband|wife|boyfriend|girlfriend|boss|"
    r"roommate|flatmate|kids?|he|she|they)(?:'s\b|\s+(?:\w+\s+)?(?:has|have|had|got|just|"
    r"adopted|rescued|owns|bought|took|brought)\b)",
    _I,
)
_NOT_NAMES = frozenset({"after", "because", "since", "for", "and", "but", "who", "which", "that"})


def read_named_pets(clause: Clause) -> list[Finding]:
    """ "a cat called Pudding", "two cats (mango & kiwi)", "a rescue greyhound named Pixel":
    each named pet the speaker mentions as theirs, wherever in the clause."""
    mine = re.match(rf"^(?:my|our|the)\s+(?:[\w-]+\s+)?{_KINDS}", clause.text, _I)
    if _PETS_OWN.match(clause.text) or not (own_or_bare(clause) or mine):
        return []
    ones, manys = _PETS_CASED if clause.cased else _PETS_PLAIN
    named: list[tuple[str, str]] = []
    for found in (found for one in ones for found in one.finditer(clause.text)):
        if not _PERSON.search(clause.text[: found.start()]):
            named.append((found["species"], found["name"]))
    for found in (found for many in manys for found in many.finditer(clause.text)):
        if not _PERSON.search(clause.text[: found.start()]):
            named += [(found["species"], found["a"]), (found["species"], found["b"])]
    pets: list[Finding] = []
    for species, name in named:
        if name.lower() in _NOT_NAMES:
            continue
        key = " ".join(species.lower().split())
        kind = _KIND.get(key) or _KIND.get(SPECIES.get(key, key), SPECIES.get(key, key))
        value = f"{kind} named {name[:1].upper() + name[1:]}"
        pets.append(Finding("pets", value, f"User has a {value}.", INFERRED))
    return pets


# "baby #2 arrived tuesday", "our third kid was born on friday", "welcomed baby number two":
# the child's number among the speaker's children is how many they have now.
_ORDINALS = {"second": 2, "third": 3, "fourth": 4, "fifth": 5, "2nd": 2, "3rd": 3, "4th": 4}
_NTH_CHILD = re.compile(
    r"^(?:(?:our|my)\s+)?(?:(?:baby|kid|child)\s+(?:#|no\.?\s*|number\s+)(?P<n>\d|two|three|four|five)"
    r"|(?P<nth>second|third|fourth|fifth|2nd|3rd|4th)\s+(?:baby|kid|child|little\s+one))\b"
    r"(?:\s+\w+)?\s+(?:arrived|was\s+born|is\s+here|came)\b"
    r"|^(?:I|we)(?:'ve|\s+have)?\s+(?:just\s+)?(?:welcomed|had)\s+(?:our|my)\s+"
    r"(?P<nth2>second|third|fourth|fifth|2nd|3rd|4th)\s+(?:baby|kid|child)\b",
    _I,
)


def read_new_child(clause: Clause) -> list[Finding]:
    found = _NTH_CHILD.search(clause.text)
    if found is None:
        return []
    word = (found["n"] or found["nth"] or found["nth2"]).lower()
    count = _ORDINALS.get(word) or (int(word) if word.isdigit() else NUMBERS.get(word))
    if count is None:
        return []
    return [Finding("children_count", str(count), f"User has {count} children.", INFERRED)]
