"""Facts as chat says them, beside the head's sentence-shaped rules.

People rarely write "I live in Ghent." They write "live in ghent w my gf",
"unpacked the last box in valencia", "day 3 at the new job at Ynov", "on
sertraline + allergic to codeine", "new number btw: 0412 555 019". These
rules read such clauses, each in a frame that ties the value to the speaker
(:func:`~processors.rules.head.standing.own`) and with the value checked
against what a library knows (a city, a country, a language) when the writer
does not capitalise. They run beside the head (``ALSO_RULES``), so a clause
that states two facts yields both.
"""

from __future__ import annotations

import re

from slotwise.processors.rules import gazetteer
from slotwise.processors.rules.clauses import Clause
from slotwise.processors.rules.findings import INFERRED, Finding
from slotwise.processors.rules.head.places import home_place, move_to_unknown
from slotwise.processors.rules.head.standing import own
from slotwise.processors.rules.values import BOUNDARY, proper_noun, split_items, strip_the
from slotwise.processors.rules.wording import ADVERBS
from slotwise.processors.rules.words import NUMBERS, STOPWORDS

__all__ = [
    "read_children",
    "read_contact_in_passing",
    "read_current_location",
    "read_hobbies",
    "read_home_in_passing",
    "read_medications",
]

_I = re.IGNORECASE
_WE = r"(?:I|we)(?:'m|'re|\s+am|\s+are|'ve|\s+have)?"


_HOME = tuple(
    re.compile(p, _I)
    for p in (
        # "based out of austin" is a home; "moved out of london" is one left behind.
        rf"^{_WE}{ADVERBS}\s+(?:been\s+)?(?:(?:live|living|based|settled|moved|relocated)"
        r"(?:\s+(?:back|up|over|out|down))?(?:\s+home)?\s+(?:in|to)|(?:based|living)\s+out\s+of)\s+"
        r"(?P<rest>.+)$",
        r"\b(?:keys\s+to\s+(?:the|our|my|a)\s+new\s+(?:place|flat|house|apartment|home)|"
        r"(?:new|our|my)\s+(?:place|flat|house|apartment)|signed\s+(?:the|a)\s+lease|"
        r"unpacked\s+the\s+last\s+box(?:es)?)\s+in\s+(?P<rest>.+?)(?:\s+(?:is|was|has|feels)\b.*)?$",
        r"\bthe\s+move\s+to\s+(?P<rest>.+?)\s+is\s+(?:done|finished|complete)\b",
        # "fully remote from exeter": where a remote worker works from is home, unless the
        # clause says for how long ("remote from bali this month" is a trip).
        rf"^{_WE}{ADVERBS}\s+(?:work(?:ing)?\s+)?(?:fully\s+|mostly\s+|100%\s+)?(?:remote(?:ly)?|"
        r"from\s+home)\s+(?:from|in|out\s+of)\s+(?P<rest>(?!.*\b(?:this|for|until|till|while|"
        r"during|next)\b).+)$",
        r"^(?P<rest>\w+(?:\s+\w+)?)\s+is\s+home\s+now\b",
        # "since thursday" is a trip (current_location), "since 2020" a home.
        rf"^{_WE}{ADVERBS}\s+(?:in|been\s+in)\s+(?P<rest>.+?)\s+(?:(?:now|these\s+days)(?:\s*,.*)?|since\b"
        r"(?!\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|yesterday|this\s+"
        r"morning|last\s+night)\b).*)$",
    )
)


# "the new flat in dallas is my daughter's": the place said to be someone else's.
_SOMEONE_ELSES = re.compile(
    r"\b(?:is|was)\s+(?:(?:my|our|his|her|their)\s+\w+'s|hers|theirs)\b", _I
)


def read_home_in_passing(clause: Clause) -> list[Finding]:
    text = clause.text
    # "Lisbon is home now"; "the commute from our new place in York": the speaker's own home,
    # said in passing, whoever the clause's subject is.
    passing = re.search(r"\bis\s+home\s+now\b", text, _I) or re.search(
        r"\b(?:our|my)\s+new\s+(?:place|flat|house|apartment|home)\s+in\b|"
        r"^(?:the\s+)?new\s+(?:place|flat|house|apartment)\s+in\b",
        text,
        _I,
    )
    lead = re.match(r"^(?:I|we|our|my)\b", text, _I) or passing
    if not lead or not (own(clause) or passing) or _SOMEONE_ELSES.search(text):
        return []
    for number, pattern in enumerate(_HOME):
        found = pattern.search(text)
        if found is None:
            continue
        if (
            number == len(_HOME) - 1
            and not re.search(r"\b(?:moved|live|living|home|since|settled)\b", text, _I)
            and not re.search(r"\bnow\b", text, _I)
        ):
            return []
        place = home_place(found["rest"], clause.cased)
        if place is None:
            return []
        kind, value = place
        if move_to_unknown(text, value):
            return []
        return [Finding(kind, value, f"User lives in {value}.")]
    return []


_HERE = tuple(
    re.compile(p, _I)
    for p in (
        rf"^I(?:'m|\s+am){ADVERBS}\s+in\s+(?P<rest>.+?)\s+(?:today|tonight|this\s+week|right\s+now|"
        r"until|till|for\s+(?:the|a|work|two|three|\d)\b|since\s+(?:monday|tuesday|wednesday|"
        r"thursday|friday|saturday|sunday|yesterday|this\s+morning))",
        r"^I(?:'m|\s+am)\s+currently\s+in\s+(?P<rest>.+)$",
        rf"^I(?:'ve)?{ADVERBS}\s+(?:landed|arrived)\s+in\s+(?P<rest>.+)$",
        rf"^I{ADVERBS}\s+made\s+it\s+to\s+(?P<rest>.+)$",
        rf"^I(?:'ve)?{ADVERBS}\s+been\s+in\s+(?P<rest>.+?)\s+since\s+(?:monday|tuesday|wednesday|"
        r"thursday|friday|saturday|sunday|yesterday)",
    )
)


def read_current_location(clause: Clause) -> list[Finding]:
    for pattern in _HERE:
        found = pattern.match(clause.text)
        if found is None:
            continue
        rest = strip_the(found["rest"])
        named = proper_noun(rest, clause.cased, limit=3)
        if named is None or not BOUNDARY.match(named[1]):
            return []
        place = named[0]
        if not clause.cased and gazetteer.city(place) is None and gazetteer.country(place) is None:
            return []
        return [Finding("current_location", place, f"User is currently in {place}.")]
    return []


def own_or_bare(clause: Clause) -> bool:
    return own(clause) or not re.match(
        r"^(?:my|our|his|her|their|the|a|an|he|she|they)\b", clause.text, _I
    )


_DRUG = re.compile(
    r"(?:ine|ol|pril|statin|pam|lam|tide|formin|azole|cillin|mab|sartan|pine|done|xine|zine|"
    r"triptan|fen|rin|xib|nib|mide|pram|oxetine|afil|mycin|cycline|vir|zumab|glutide|semide|"
    r"prazole|tropin|lone|sone|olone|dipine|aline|ipine)$",
    _I,
)
_BRANDS = frozenset(
    "ozempic wegovy mounjaro adderall ritalin vyvanse concerta prozac zoloft lexapro "
    "xanax synthroid eliquis humira keytruda ventolin".split()
)
_ON_DRUG = re.compile(
    rf"^I(?:'m|\s+am|'ve\s+been|\s+have\s+been|(?:'ve|\s+have)?{ADVERBS}\s+(?:started|began|"
    rf"been\s+put|was\s+put|got\s+put)){ADVERBS}\s+on\s+(?P<rest>.+)$|"
    rf"^I{ADVERBS}\s+take\s+(?P<rest2>.+)$",
    _I,
)


def read_medications(clause: Clause) -> list[Finding]:
    found = _ON_DRUG.match(clause.text)
    if found is None:
        return []
    rest = found["rest"] or found["rest2"]
    rest = re.split(
        r"\s+(?:every|daily|twice|once|each|since|for|at|in\s+the|\d+\s?mg|now|a\s+day|last|"
        r"this|yesterday|today|\w+\s+ago)\b|,",
        rest,
        flags=_I,
    )[0]
    drugs: list[str] = []
    for item in re.split(r"\s*(?:\+|\band\b|&|/)\s*", rest):
        words = item.lower().split()
        if len(words) != 1:
            continue
        word = words[0]
        if word in STOPWORDS or not word.isalpha() or len(word) < 5:
            continue
        if _DRUG.search(word) or word in _BRANDS:
            drugs.append(word)
    return [Finding("medications", d, f"User takes {d}.") for d in dict.fromkeys(drugs)]


_KIDS = re.compile(
    r"(?:^|\bwith\s+|\bhave\s+|^we\s+have\s+)(?P<n>a|an|one|two|three|four|five|six|\d)\s+"
    r"(?:little\s+|young\s+|small\s+)?(?P<kind>kids?|children|child)\b(?!\s+(?:at|in|from|of)\b)|"
    r"(?:^|,\s*|\bwith\s+)(?P<none>no\s+(?:kids|children))\b",
    _I,
)


def read_children(clause: Clause) -> list[Finding]:
    text = clause.text
    if not (own(clause) or re.match(r"^(?:no|one|two|three|four|five|\d)\b", text, _I)):
        return []
    found = _KIDS.search(text)
    if found is None or re.search(r"\b(?:my|our)\s+(?:friend|sister|brother)", text, _I):
        return []
    if found["none"]:
        return [Finding("children_count", 0, "User has no children.")]
    raw = found["n"].lower()
    count = NUMBERS.get(raw) or int(raw)
    noun = "child" if count == 1 else "children"
    return [Finding("children_count", count, f"User has {count} {noun}.")]


_HOBBY_VERBS = {
    "knit": "knitting", "bake": "baking", "garden": "gardening", "surf": "surfing",
    "climb": "climbing", "boulder": "climbing", "run": "running", "swim": "swimming",
    "paint": "painting", "draw": "drawing", "sew": "sewing", "hike": "hiking", "cycle": "cycling",
    "crochet": "crocheting", "skate": "skating", "ski": "skiing", "row": "rowing",
    "dance": "dancing", "fish": "fishing", "sing": "singing", "cook": "cooking",
}  # fmt: skip
_HOBBY_NOUNS = frozenset(
    "pottery woodworking photography birdwatching yoga pilates chess climbing bouldering running "
    "knitting baking gardening surfing swimming painting drawing hiking cycling crochet "
    "embroidery calligraphy archery fencing boxing karate judo bjj jiu-jitsu tennis padel golf "
    "football soccer basketball volleyball badminton squash rowing sailing kayaking skiing "
    "snowboarding skateboarding guitar piano violin drums ukulele cello gaming reading writing "
    "journaling origami sewing quilting fishing camping clarinet flute saxophone trumpet "
    "trombone harp banjo mandolin harmonica accordion kickboxing weightlifting skating".split()
) | {"video games", "video game", "board games", "rock climbing", "martial arts"}
_HOBBY_ALIASES = {"bouldering": "climbing", "bjj": "jiu jitsu", "jiu-jitsu": "jiu jitsu",
                  "crochet": "crocheting", "soccer": "football", "video games": "gaming",
                  "video game": "gaming", "rock climbing": "climbing"}  # fmt: skip
# "a huge fan of archery", "a lifelong chess fan": what the speaker is a fan of is a pastime
# when it is one.
_FAN = r"(?:a\s+)?(?:(?:big|huge|total|massive|real|true|lifelong|longtime|die-?hard|avid)\s+)*"
_HOBBY_LEAD = re.compile(
    rf"^I{ADVERBS}\s+(?:enjoy|love|do|play|practi[cs]e)\s+(?P<rest>.+)$|"
    rf"^I(?:'m|\s+am){ADVERBS}\s+(?:doing|playing|practi[cs]ing)\s+(?P<rest5>.+)$|"
    rf"^I(?:'m|\s+am){ADVERBS}\s+(?:really\s+)?into\s+(?P<rest2>.+)$|"
    rf"^I(?:'m|\s+am){ADVERBS}\s+(?:{_FAN}fan\s+of|all\s+about)\s+(?P<rest6>.+)$|"
    rf"^I(?:'m|\s+am){ADVERBS}\s+{_FAN}(?P<rest7>[a-z][\w\s-]*?)\s+fan\b|"
    rf"^I(?:'ve)?{ADVERBS}\s+(?:picked\s+up|taken\s+up|took\s+up|started|joined)\s+(?P<rest3>.+)$|"
    r"^my\s+(?:main\s+|big\s+)?hobby\s+is\s+(?P<rest4>.+)$",
    _I,
)
_HOBBY_TRAIL = re.compile(
    r"\s+(?:on|at|in|near|every|most|when|with|on\s+weekends|a\s+lot|twice|three|3x|again|lately|"
    r"recently|these\s+days|for|because|and\s+i)\b.*$",
    _I,
)


def read_hobbies(clause: Clause) -> list[Finding]:
    text = clause.text
    found = _HOBBY_LEAD.match(text)
    hobbies: list[str] = []
    if found is not None:
        noun_only = found["rest"] or found["rest5"]
        if found["rest5"] and _SOME_DAY.search(text):
            return []  # "I'm playing tennis on Saturday": a plan, not a pastime
        rest = next(g for g in found.groups() if g)
        rest = _HOBBY_TRAIL.sub("", rest)
        for item in split_items(rest):
            word = _pastime(item)
            if word in _HOBBY_NOUNS:
                hobbies.append(_HOBBY_ALIASES.get(word, word))
            elif word.rstrip("s") in _HOBBY_VERBS and noun_only is None:
                hobbies.append(_HOBBY_VERBS[word.rstrip("s")])
    else:
        verbs = re.findall(
            r"(?:^|,\s*|\band\s+)I\s+(\w+)(?=\s*(?:$|,|\band\b|\s+on\s+weekends|\s+when\b)|"
            # "I run most mornings", "I bake a lot": a habit said with how often.
            r"\s+(?:a\s+lot(?!\s+of)|loads|regularly|daily|most\s+(?:days|mornings|evenings|"
            r"weekends)|every\s+(?:day|morning|evening|weekend|week|sunday|saturday)|(?:once|twice|"
            r"three\s+times|\d+\s*x)\s+a\s+week)\b)",
            text,
            _I,
        )
        hobbies = [_HOBBY_VERBS[v.lower()] for v in verbs if v.lower() in _HOBBY_VERBS]
        club = re.search(
            r"\bjoined\s+a\s+(?P<what>run|running|climbing|chess|cycling|swim)\s+club\b", text, _I
        )
        if club is not None and own(clause):
            hobbies.append(
                {"run": "running", "swim": "swimming", "book": "reading"}.get(
                    club["what"].lower(), club["what"].lower()
                )
            )
    return [Finding("hobbies", h, f"User enjoys {h}.", INFERRED) for h in dict.fromkeys(hobbies)]


_SOME_DAY = re.compile(
    r"\b(?:tonight|tomorrow|later|next|on\s+\w+day|this\s+(?:weekend|evening|afternoon|morning))\b",
    _I,
)
_PASTIME_FRAME = re.compile(
    r"^(?:(?:the|some|this|my|a|an|a\s+bit\s+of|a\s+little)\s+)?"
    r"(?:(?:acoustic|electric|classical|bass|local|competitive|amateur|weekly)\s+)?"
    r"(?P<what>.+?)(?:\s+(?:class|classes|lessons?|club|group|course|sessions?|team))?$",
    _I,
)


def _pastime(item: str) -> str:
    """ "this pilates class" → "pilates", "electric guitar" → "guitar": the pastime named."""
    found = _PASTIME_FRAME.match(item.lower().strip())
    return found["what"].strip() if found is not None else item.lower().strip()


# "oops typo, it's x@y": a correction of the address is context enough.
_ADDRESS_CONTEXT = re.compile(
    r"\b(?:e-?mail|mail|address|use|reach|contact|write|best|typo|mistyped|correction|correo|"
    # "switched to protonmail - r@proton.me": the service the speaker is on now.
    r"correio|(?:to|on|using)\s+(?:gmail|hotmail|outlook|proton(?:mail)?|icloud|fastmail))\b",
    _I,
)
_EMAIL_ANY = re.compile(r"(?<![\w.+-])(?P<addr>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)(?![\w@])")
_PHONE_CONTEXT = re.compile(r"\b(?:number|phone|mobile|cell|sim|whatsapp|call|text|reach)\b", _I)
_PHONE_ANY = re.compile(r"(?<![\w+])(?P<num>\+?\d[\d\s().-]{6,}\d)(?![\w])")


def read_contact_in_passing(clause: Clause) -> list[Finding]:
    """An address or a number the speaker gives as theirs in a longer clause."""
    text = clause.text
    if re.search(
        # "mum got a new sim, it's …": a relative said without "my" is still someone else.
        r"\b(?:his|her|their|(?:^|my\s+(?:\w+\s+)?)(?:brother|sister|mum|mom|dad|wife|husband|"
        r"partner|boss|manager|friend|landlord|son|daughter|kid|gran|grandma|grandpa|flatmate|"
        r"roommate|housemate|colleague|neighbou?r|girlfriend|boyfriend|fianc[eé]e?))\b"
        # "my flatmate's new number", "the office number": a number that is someone's or some
        # place's, not the speaker's.
        r"|\b\w+'s\s+(?:new\s+|old\s+)?(?:number|phone|mobile|cell|e-?mail)\b"
        r"|\bthe\s+(?:new\s+|old\s+)?(?!(?:new|old|mobile|cell|phone|sim|whatsapp)\b)\w+\s+"
        r"(?:number|phone|line|e-?mail)\b",
        text,
        _I,
    ):
        return []
    if re.search(r"\b(?:was|were|used\s+to)\b", text, _I) or re.search(
        r"\b(?:old|previous|former)\s+(?:number|phone|mobile|e-?mail|address)\s+(?:is|was)\b",
        text,
        _I,
    ):
        return []  # "my uk number before I moved was …": history, not the current number
    if re.search(r"\bfor\s+the\s+(?:trip|holidays?|vacation)\b|\blocal\s+(?:sim|one)\b", text, _I):
        return []  # "a sim for the trip, the local one is …": a number kept for a while
    found: list[Finding] = []
    email = _EMAIL_ANY.search(text)
    if email is not None and _ADDRESS_CONTEXT.search(text):
        addr = email["addr"].lower().rstrip(".")
        found.append(Finding("email", addr, f"User's email is {addr}."))
    phone = _PHONE_ANY.search(text)
    if phone is not None and _PHONE_CONTEXT.search(text[: phone.start()]):
        raw = phone["num"].strip()
        digits = re.sub(r"\D", "", raw)
        if raw.startswith("00"):
            digits, raw = digits[2:], "+" + raw[2:]
        if 7 <= len(digits) <= 15 and len(set(digits)) > 2:
            value = ("+" if raw.startswith("+") else "") + digits
            found.append(Finding("phone", value, f"User's phone number is {value}."))
    return found
