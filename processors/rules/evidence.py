"""What a clause must say before the classifier's reading of a slot is kept.

The classifier places a clause by its nearness to a few exemplars, and nearness
is not evidence: "I adore my neighbour's cats" sits near "I can't be around
cats, they make me sneeze", "drafting the business plan for the bank" near "we
pay for the business tier", and the closed vocabularies then find a value
("cats", "Business") in either. A slot filled that way is the dangerous kind of wrong fact: it can
supersede a true one, and an allergy is high stakes. So a classified reading
of these slots is kept only when the clause carries the words the slot is
about, and never when it says the opposite kind of thing:

* an allergy or a condition needs a reaction or a diagnosis, and liking the
  thing ("love", "enjoy", "a fan of") rules it out: liking is not an allergy;
* a product plan needs a subscription around it ("on the … plan", a tier,
  upgrading, paying for it): a business plan is a document, not a tier;
* a diet needs the word said of the speaker, not of a dish ("vegan brownies",
  "a gluten-free pizza" are food the speaker met, not how they eat).
"""

from __future__ import annotations

import re

__all__ = ["food_only", "supported"]

_I = re.IGNORECASE

_LIKING = re.compile(
    r"\b(?:love[sd]?|loving|like[sd]?|liking|adore[sd]?|enjoy(?:s|ed|ing)?|fan\s+of|"
    r"favou?rite|into|miss(?:es|ed)?|cuddl\w*|pet(?:ted|ting)?|obsessed)\b",
    _I,
)
_REACTION = re.compile(
    r"\b(?:allerg\w*|react\w*|hives|sneez\w*|itch\w*|rash(?:es)?|swell\w*|swollen|wheez\w*|"
    r"anaphyla\w*|epi-?pen|intoleran\w*|sensitiv\w*|break\s+out|broke\s+out|"
    r"can't\s+(?:eat|have|touch|take|be\s+around|go\s+near|tolerate)|"
    r"makes?\s+me\s+(?:sick|ill|sneeze|itch)|made\s+me\s+(?:sick|ill))\b",
    _I,
)
_DIAGNOSIS = re.compile(
    r"\b(?:diagnos\w*|have|has|had|suffer\w*|live\s+with|living\s+with|managing|condition|"
    r"chronic|flare\w*|intoleran\w*|I'm|I\s+am|my\s+\w+\s+(?:is|are|got)|doctor|meds?|"
    r"medication)\b",
    _I,
)
_SUBSCRIPTION = re.compile(
    r"\b(?:on|onto|to)\s+(?:the|a|an|our|my)\s+\w+\s+(?:plan|tier|subscription|package)\b|\btier\b|"
    r"\bsubscri\w*|\bupgrad\w*|\bdowngrad\w*|\baccount\b|\bseats?\b|\bbill\w*|\blicen[cs]e\w*|"
    r"\bpay(?:s|ing)?\s+for\b|\bpaid\s+for\b|\bsigned\s+up\b|\bper\s+(?:month|year|seat|user)\b|"
    r"\b(?:monthly|annual|yearly)\b",
    _I,
)
# Food a diet word can describe without saying how the speaker eats.
_DISH = re.compile(
    r"^(?:\w+[-\s])?(?:ice\s+cream|flavou?rs?|cakes?|cookies?|recipes?|options?|food|dish(?:es)?|"
    r"meals?|snacks?|bread|pasta|pizzas?|burgers?|restaurants?|caf[eé]s?|places?|versions?|"
    r"treats?|desserts?|chocolates?|cheese|milk|menu|spots?|bakery|brownies?|muffins?|"
    r"sandwich(?:es)?|cooking|baking|dinner|lunch|breakfast|products?|alternatives?)\b",
    _I,
)
_DIET_WORD = re.compile(
    r"\b(?:vegetarian|vegan|pescatarian|pescetarian|flexitarian|keto|paleo|plant[-\s]based|"
    r"gluten[-\s]free|dairy[-\s]free|kosher|halal|low[-\s]carb|mediterranean|veggie)\b",
    _I,
)


def supported(attribute: str, text: str) -> bool:
    """Whether ``text`` says enough about ``attribute`` for a classified reading of it to
    stand (slots not named here need nothing more than a value the vocabulary knows)."""
    if attribute == "allergies":
        return bool(_REACTION.search(text)) and not _LIKING.search(text)
    if attribute == "medical_conditions":
        return bool(_DIAGNOSIS.search(text)) and not _LIKING.search(text)
    if attribute == "plan":
        return bool(_SUBSCRIPTION.search(text))
    if attribute == "diet":
        return _DIET_WORD.search(text) is not None and not food_only(text)
    return True


def food_only(text: str) -> bool:
    """``text`` has diet words and every one describes food ("a dairy-free recipe"), none
    the speaker."""
    words = list(_DIET_WORD.finditer(text))
    return bool(words) and all(_DISH.match(text[m.end() :].lstrip()) for m in words)
