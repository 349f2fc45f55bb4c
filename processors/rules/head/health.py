"""Rules for health and diet: allergies, medical conditions, diet."""

from __future__ import annotations

import re

from slotwise.processors.rules.clauses import Clause
from slotwise.processors.rules.findings import INFERRED, Finding
from slotwise.processors.rules.head.matching import AM, compile_all, first_match, say
from slotwise.processors.rules.values import BOUNDARY, STATE_AFTER, split_items
from slotwise.processors.rules.wording import ADVERBS
from slotwise.processors.rules.words import (
    ALLERGENS,
    CONDITIONS,
    CONTEXT_WORDS,
    DIETS,
    STOPWORDS,
    VAGUE,
)

__all__ = [
    "read_allergies",
    "read_conditions",
    "read_diet",
    "read_hay_fever",
    "read_meatless",
    "read_omnivore",
    "read_treated_condition",
]

# "just found out I'm allergic to penicillin": news of the speaker's own allergy.
_FOUND_OUT = (
    r"(?:(?:just\s+|recently\s+)?(?:found\s+out|learned|learnt|discovered|realised|realized)\s+"
    r"(?:that\s+)?)?"
)
_ALLERGIC = compile_all(
    rf"^{_FOUND_OUT}{AM}\s+(?:(?:very|severely|deathly|mildly|highly|slightly|extremely|super|so|quite)\s+)*"
    r"allergic\s+to\s+(?P<rest>.+)$",
    rf"^I(?:'ve\s+got|\s+have\s+got|\s+have){ADVERBS}\s+(?:a\s+|an\s+)?(?:(?:severe|mild|serious|"
    r"bad|slight|life-threatening|deadly)\s+)*(?P<rest>[\w\s,&-]+?)\s+allerg(?:y|ies)$",
)


# A list after "allergic to" runs on into other statements ("latex, asthmatic, vegan"): a
# condition's adjective or a diet is the speaker's state, never an allergen.
_STATE_WORD = re.compile(
    rf"(?:tic|mic)$|^(?:{'|'.join(sorted(map(re.escape, DIETS), key=len, reverse=True))})$", re.I
)


def read_allergies(clause: Clause) -> list[Finding]:
    found = first_match(_ALLERGIC, clause.text)
    if found is None:
        return []
    allergens: list[str] = []
    for item in split_items(found["rest"]):
        words = [w for w in item.lower().split() if w not in ("the", "all", "raw", "any")]
        # "shellfish ironically", "nuts apparently": a comment on the allergen, not part of it.
        while len(words) > 1 and len(words[-1]) > 5 and words[-1].endswith("ly"):
            words.pop()
        # "basically all pollen": a hedge before the allergen, as well.
        while len(words) > 1 and len(words[0]) > 5 and words[0].endswith("ly"):
            words.pop(0)
        allergen = ALLERGENS.get(" ".join(words))
        plain = 0 < len(words) <= 2 and all(w.isalpha() and w not in STOPWORDS for w in words)
        if allergen is None and plain and not set(words) & VAGUE and not _STATE_WORD.search(item):
            allergen = " ".join(words)
        if allergen is not None and allergen not in allergens:
            allergens.append(allergen)
    return [Finding("allergies", a, f"User is allergic to {a}.") for a in allergens]


_CONDITION_LEAD = compile_all(
    rf"^I(?:'ve\s+got|\s+have\s+got|\s+have|'m|\s+am|\s+suffer\s+from|\s+live\s+with){ADVERBS}\s+"
    r"(?P<rest>.+)$"
)
_DIAGNOSED = compile_all(
    rf"^I(?:'ve\s+been|\s+have\s+been|\s+was|\s+got){ADVERBS}\s+diagnosed\s+with\s+(?P<rest>.+)$"
)
_CONDITION_KEYS = sorted(CONDITIONS, key=len, reverse=True)


def read_conditions(clause: Clause) -> list[Finding]:
    diagnosed = first_match(_DIAGNOSED, clause.text)
    found = diagnosed or first_match(_CONDITION_LEAD, clause.text)
    if found is None:
        return []
    rest = found["rest"].lower()
    for key in _CONDITION_KEYS:
        if rest.startswith(key) and BOUNDARY.match(rest[len(key) :]):
            return [Finding("medical_conditions", CONDITIONS[key], say(clause))]
    if diagnosed is not None:
        words = re.split(r"\s+(?=(?:on|in|at|since|last|this|after|when|a\s+few)\b)", rest)[0]
        if 0 < len(words.split()) <= 4 and not set(words.split()) & CONTEXT_WORDS:
            return [Finding("medical_conditions", words, say(clause))]
    return []


_DIET_NAMES = "|".join(re.escape(k).replace(r"\ ", r"\s+") for k in sorted(DIETS, key=len)[::-1])
_DIET = compile_all(
    rf"^I(?:'m|\s+am|'ve\s+been|\s+have\s+been){ADVERBS}\s+(?:(?:a|an|fully|strictly|completely|"
    rf"100%)\s+)*(?P<diet>{_DIET_NAMES})(?:\s+diet)?\b(?P<after>.*)$",
    rf"^I(?:'ve|\s+have)?{ADVERBS}\s+(?:went|gone|became|become|turned)\s+(?:a\s+|fully\s+)?"
    rf"(?P<diet>{_DIET_NAMES})\b(?P<after>.*)$",
    rf"^{AM}\s+on\s+an?\s+(?:strict\s+)?(?P<diet>{_DIET_NAMES})\s+diet\b(?P<after>.*)$",
    rf"^I{ADVERBS}\s+(?:follow|eat|keep)\s+(?:a\s+|an\s+)?(?:strict\s+|mostly\s+)?"
    rf"(?P<diet>{_DIET_NAMES})(?:\s+diet)?\b(?P<after>.*)$",
    rf"^my\s+diet(?:'s|\s+is){ADVERBS}\s+(?:strictly\s+|mostly\s+|fully\s+)?"
    rf"(?P<diet>{_DIET_NAMES})\b(?P<after>.*)$",
    # A chat fragment that is only the diet: "halal diet, and i'd rather you text".
    rf"^(?:strict(?:ly)?\s+|fully\s+)?(?P<diet>{_DIET_NAMES})\s+diet(?P<after>(?:\s+(?:btw|now|"
    r"these\s+days|lately|since\s+.+))?)$",
)
_MEATLESS = compile_all(
    rf"^I(?:'ve|\s+have)?{ADVERBS}\s+(?:don't|do\s+not|no\s+longer|never|stopped|quit|gave\s+up)"
    r"(?:\s+eating|\s+eat)?\s+(?:any\s+)?(?P<what>meat(?:\s+(?:or|and)\s+fish)?|animal\s+products)"
    r"(?P<after>(?:\s+(?:anymore|any\s+more|at\s+all))?.*)$"
)


def read_diet(clause: Clause) -> list[Finding]:
    found = first_match(_DIET, clause.text)
    if found is None or not STATE_AFTER.match(found["after"]) or " with" in found["after"]:
        return []
    diet = DIETS[" ".join(found["diet"].lower().split())]
    return [Finding("diet", diet, f"User follows a {diet} diet.")]


# "i eat everything", "I'm back to eating meat": an explicit omnivore, the one way the
# convention stores "no diet". Only the whole clause: "I eat everything except fish" is not.
_OMNIVORE = re.compile(
    rf"^I(?:'m|\s+am)?{ADVERBS}\s+(?:back\s+to\s+|(?:now\s+)?)?eat(?:ing)?\s+(?:pretty\s+much\s+|"
    r"basically\s+)?(?:everything|anything|meat)(?:\s+again)?(?:\s+(?:now|these\s+days|again|"
    r"tbh|honestly))*\s*[.!]*$",
    re.IGNORECASE,
)


def read_omnivore(clause: Clause) -> list[Finding]:
    if _OMNIVORE.match(clause.text) is None:
        return []
    return [Finding("diet", "omnivore", "User eats everything.")]


def read_meatless(clause: Clause) -> list[Finding]:
    found = first_match(_MEATLESS, clause.text)
    if found is None or not STATE_AFTER.match(found["after"]) or " with" in found["after"]:
        return []
    diet = "vegan" if found["what"].lower().startswith("animal") else "vegetarian"
    return [Finding("diet", diet, f"User follows a {diet} diet.", INFERRED)]


# "on lisinopril 10mg for my hypertension", "I take inhalers for my asthma": the condition a
# treatment the speaker takes is for is theirs. Only a condition the vocabulary knows.
_TREATED = re.compile(
    r"^(?:I(?:'m|\s+am|'ve\s+been|\s+take|\s+use)|I\s+(?:was|got)\s+prescribed)\b.*?\s+for\s+"
    r"my\s+(?P<condition>[\w\s'-]{3,40}?)(?=\s*(?:$|[,;.!]|\s+(?:and|but|since|now)\b))",
    re.IGNORECASE,
)


def read_treated_condition(clause: Clause) -> list[Finding]:
    found = _TREATED.match(clause.text)
    condition = None if found is None else CONDITIONS.get(found["condition"].lower().strip())
    if condition is None:
        return []
    return [Finding("medical_conditions", condition, f"User has {condition}.", INFERRED)]


# "my hay fever is brutal", "cetirizine for the hay fever", "hay fever + dust mites": the
# convention stores hay fever as the allergen, pollen. Only the speaker's own.
_HAY_FEVER = re.compile(
    r"^(?:I(?:'ve|\s+have)?\s+(?:got\s+|get\s+|suffer\s+from\s+)?|my\s+)?(?:bad\s+|terrible\s+|awful\s+)?"
    r"hay\s*fever\b(?!\s+season)|\b(?:for|with)\s+(?:my|the)\s+hay\s*fever\b",
    re.IGNORECASE,
)


_WHICH_POLLEN = re.compile(r"\b(?P<kind>grass|tree|birch|ragweed|weed|oak|olive)\s+pollen\b", re.I)


def read_hay_fever(clause: Clause) -> list[Finding]:
    if _HAY_FEVER.search(clause.text) is None:
        return []
    which = _WHICH_POLLEN.search(clause.text)  # "hay fever, grass pollen specifically"
    value = "pollen" if which is None else f"{which['kind'].lower()} pollen"
    return [Finding("allergies", value, f"User is allergic to {value} (hay fever).", INFERRED)]
