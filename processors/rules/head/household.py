"""A household named in passing: "my dogs", "our cat", "my husband and I".

People rarely say "I have a dog"; they say what the dog did ("my dogs dug up
the tulips again"). A possessive before a kind of pet, or before a spouse,
says the speaker has one. Read only where the possessive is the speaker's own
("my", "our", not "my friend's"), where the word is the animal and not a
thing named after it ("my dog walker", "my cat allergy"), and never in a
clause about a loss ("my late husband", "my dog passed away").
"""

from __future__ import annotations

import re

from slotwise.processors.rules.clauses import Clause
from slotwise.processors.rules.findings import INFERRED, Finding
from slotwise.processors.rules.words import IRREGULAR_PAST, PROPER_BLOCK, SPECIES

__all__ = ["read_pets_in_passing", "spouse_in_turn"]

_I = re.IGNORECASE

_SPECIES = "|".join(re.escape(k).replace(r"\ ", r"\s+") for k in sorted(SPECIES, key=len)[::-1])
_FOND = (
    r"(?:(?:little|new|rescue|rescued|adorable|cute|sweet|young|baby|furry|fluffy|two|three|"
    r"four|lovely|beautiful|wonderful|silly|crazy|big|small)\s+)*"
)
# What may follow the animal: the end, a possessive, a verb or a preposition; a noun
# there makes a compound ("dog food", "cat allergy") that names no animal.
_AFTER = (
    r"(?=$|[.,!;:)]|'s?\b|s'|\s+(?:and|or|is|are|was|were|has|have|had|makes?|made|loves?|"
    r"loved|gets?|got|keeps?|kept|brings?|brought|do|does|did|can|will|seems?|looks?|"
    r"enjoys?|enjoyed|plays?|played|needs?|went|goes|too|so|really|always|just|still|"
    r"named|called|in|at|on|to|for|with|from|into|around|every|out|over|up|down|are|"
    r"can't|won't|don't|isn't|aren't|\w+ed|{}|(?-i:[A-Z][a-z]+))\b)".format(
        "|".join(sorted(IRREGULAR_PAST))
    )
)
_PET = re.compile(
    rf"\b(?:my|our)\s+{_FOND}(?P<species>{_SPECIES}){_AFTER}"
    r"(?:,?\s+(?:named\s+|called\s+)?(?P<name>(?-i:[A-Z][a-z]+))\b)?",
    _I,
)
# The speaker and the spouse as one subject: "my husband and I", "me and my wife". A
# spouse named alone is the subject of their own clause ("my wife works at Google"),
# which the rules leave to the spouse.
_PARTNER = (
    r"my\s+(?:(?:lovely|amazing|wonderful|dear|beloved|supportive|new)\s+)?"
    r"(?P<{}>husband|wife|hubby|fianc[eé]e?|boyfriend|girlfriend)"
)
_SPOUSE = re.compile(
    rf"\b{_PARTNER.format('who')}\s+and\s+I\b|\b(?:me|I)\s+and\s+{_PARTNER.format('with')}\b",
    _I,
)
_STATUS = {"husband": "married", "wife": "married", "hubby": "married", "fiance": "engaged",
           "fiancé": "engaged", "fiancee": "engaged", "fiancée": "engaged",
           "boyfriend": "in a relationship", "girlfriend": "in a relationship"}  # fmt: skip
# A clause about a loss, or about a time before: the household may not be so now.
_LOSS = re.compile(
    r"\b(?:died|dead|passed|lost|losing|loss|death|late|rip|put\s+(?:down|to\s+sleep)|"
    r"miss(?:es|ed|ing)?|grave|funeral|memor(?:y|ies)|rainbow\s+bridge|ex|former|"
    r"divorc\w*|separat\w*|widow\w*|used\s+to|ran\s+away|rehomed|gave\s+away|anymore|"
    r"any\s+more|no\s+longer|(?:don't|doesn't|do\s+not)\s+have)\b",
    _I,
)


def read_pets_in_passing(clause: Clause) -> list[Finding]:
    """ "took my dogs to the beach": the speaker has dogs."""
    if _LOSS.search(clause.text):
        return []
    findings: list[Finding] = []
    for found in _PET.finditer(clause.text):
        said = " ".join(found["species"].lower().split())
        species = SPECIES[said]
        name = found["name"]
        if name is not None and (not clause.cased or name.lower() in PROPER_BLOCK):
            name = None
        if name is not None:
            findings.append(
                Finding("pets", f"{species} named {name}", f"User has a {species} named {name}.")
            )
            continue
        # One value per kind of animal, however it is called or counted ("my pup", "my
        # dogs"): how many is not said, and a repeat must find the value it restates.
        kind = _YOUNG.get(species, species)
        many = (said != species and said.endswith("s")) or clause.text[found.end() :][:2] == "s'"
        text = f"User has {_PLURAL.get(kind, kind + 's')}." if many else f"User has a {kind}."
        findings.append(Finding("pets", kind, text, INFERRED))
    return list({f.value: f for f in findings}.values())


_YOUNG = {"puppy": "dog", "kitten": "cat", "bunny": "rabbit"}
_PLURAL = {"puppy": "puppies", "pony": "ponies", "fish": "fish", "goldfish": "goldfish",
           "husky": "huskies", "guinea pig": "guinea pigs"}  # fmt: skip


# "my girlfriend and I had our wedding": the sentence tells a change of status, which the
# word for the partner no longer names.
_NEW_STATUS = re.compile(
    r"\b(?:wedding|married|marry|marrying|engaged|engagement|proposed|propose|honeymoon|"
    r"vows|eloped|broke\s+up|breakup|split(?:ting)?\s+up|separat\w*|divorc\w*|widow\w*)\b",
    _I,
)
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")


def spouse_in_turn(text: str, cased: bool) -> list[tuple[Clause, list[Finding]]]:
    """ "my husband and I went hiking": the speaker is married. Read per sentence, not per
    clause, since the clauses split at "and I"; whatever the sentence's mood ("my wife and I
    might move"), the spouse is there."""
    for sentence in _SENTENCES.split(text):
        found = _SPOUSE.search(sentence)
        if found is not None and not _LOSS.search(sentence) and not _NEW_STATUS.search(sentence):
            status = _STATUS[(found["who"] or found["with"]).lower()]
            said = Clause(sentence.strip(), cased, None)
            return [
                (said, [Finding("relationship_status", status, f"User is {status}.", INFERRED)])
            ]
    return []
