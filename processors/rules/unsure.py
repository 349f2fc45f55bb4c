"""The uncertain middle: a turn that speaks about a slot whose new value the rules cannot read.

"The move to Denver is done", "not on metformin any more", "reorg happened. im
platform now": the speaker says a slot changed (a change, correction or
negation marker beside words that name the slot) but no rule placed a value
there. Dropping such a turn loses the change silently; guessing a value could
destroy a truth. So the reader asks: a candidate with the slot, no value (or
a tentative one it could derive), and a ``question``. The cascade asks a human
only while the slot holds a current fact, and never stores the candidate.

People mostly name a slot by what comes with its change rather than by its noun
(the keys to a new flat, a badge, a vet, a dose): those families of words, and the
wider markers of a change, are ``processors.rules.slot_talk``; as they only ever make
a question, they may be broad, and the guards here keep them to the speaker's own
present (not someone else, a trip, a reminder, a time before a change, another
service's plan, nor one more of a slot that holds several).

A move the rules read as a new home city also asks about the timezone, naming
the zone the city keeps: a residence city alone is no timezone fact, but a held
zone may have gone stale. A move whose place was not read asks about the zone
with no value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from slotwise.processors.rules.asking import question
from slotwise.processors.rules.clauses import NEGATION, Clause
from slotwise.processors.rules.gazetteer import city
from slotwise.processors.rules.life_events import (
    ALTERED,
    PERFORCE,
    REMOVALS,
    changes_told,
    names_told,
)
from slotwise.processors.rules.passing import said_in_passing
from slotwise.processors.rules.slips import own_redo, own_swap
from slotwise.processors.rules.slot_talk import (
    AFOOT,
    LATELY,
    LESS,
    NOUNS,
    TALK,
)
from slotwise.processors.rules.small_talk import small_talk, to_listener
from slotwise.processors.rules.talk_guards import (
    ADVERTISED,
    DONE_TO_ME,
    ELSEWHERE,
    MISNAMED,
    NOT_A_HOME,
    OTHER_SERVICE,
    PARTNER,
    PAST_ONLY,
    REQUEST,
    RESTATING,
    ROUTINE,
    SAME_AGAIN,
    SERVICE_SLOTS,
    SO_FAR,
    SOMEONE,
    THEIRS,
    THESE_DAYS,
)
from slotwise.processors.rules.town_talk import left_town, town_now, town_to_town, townsfolk
from slotwise.topics.records import CandidateFact, Observation

__all__ = ["CUES", "MANY", "MARKER", "NOT_NOW", "OTHER", "Placer", "unsure_questions"]

# The attribute of each text, or None (``ExemplarClassifier.classify``).
Placer = Callable[[list[str]], list[str | None]]

_I = re.IGNORECASE

# Words that name a slot, with a change in view.
CUES: dict[str, re.Pattern[str]] = {
    attribute: re.compile(rf"\b(?:{pattern})", _I)
    for attribute, pattern in {
        "home_city": r"live\b|living\b|lives\b|relocat|flat\b|apartment|lease\b|"
        # A move of home, not "moved me to the payments team" or "moved the call".
        r"\bmov(?:e|ed|es|ing)\b(?!\s+(?:me|us|him|her|them|it|onto|forward|on\s+from|the\s+"
        r"(?:meeting|call|standup|date|deadline|car|money))\b)|"
        r"movers|mud[eé]|mudamos|mudei|home\s+now|is\s+home|commute|neighbou?rhood|landlord|"
        r"new\s+(?:place|house|home|city)\b|settled\b|\bbased\b|relocation|"
        # "back in leeds", not "back in the office" or "back in march".
        rf"back\s+in\b{NOT_A_HOME}",
        "employer": r"notice\b|last\s+day\s+at|laid\s+off|let\s+go\b|fired\b|quit\s+(?:my\s+)?job|"
        r"left\s+(?:my\s+job|(?-i:[A-Z])\w+)|start(?:ed|ing)?\s+at\b|"
        rf"new\s+job\b{ADVERTISED}|joined\b|hired\b|"
        r"resign|redundan|new\s+(?:gig|company|employer)|offer\s+from|first\s+day\s+at|"
        r"day\s+one\s+at|farewell",
        "job_title": r"promot|my\s+(?:role|title|position)\b|went\s+back\s+to\s+being|"
        r"left\s+(?:teaching|nursing|engineering|law|consulting)|retrain|career\s+change|"
        r"new\s+(?:role|title|position)\b",
        "team": r"\breorg|\bteam\b|moved\s+me\s+to",
        "work_arrangement": r"\bremote\b|office\b|\bhybrid\b|\bwfh\b|from\s+home|days\s+a\s+week|"
        r"in-office",
        "diet": r"vegan|vegetarian|veggie|pescatarian|\bketo\b|eating\s+(?:meat|fish)|"
        r"\bdiet\b|plant-based|\bhalal\b|\bkosher\b|eat\s+meat",
        "medications": r"\bmeds\b|medication|\bpills?\b|\bdose\b|prescri|switched\s+from",
        "allergies": r"allerg",
        "medical_conditions": r"diagnos|\bcondition\b|doctor\s+says|after\s+all,?\s+it's|"
        r"diabet|asthma|\badhd\b|coeliac|celiac|migraine",
        "plan": r"\bplan\b|\btier\b|subscription|\benterprise\b|\bcontract\b|upgrad|downgrad",
        "payment_method": r"\bpay(?:ing)?\s+by\b|\bcard\b|\binvoice\b|paypal|direct\s+debit",
        "billing_cycle": r"\bmonthly\b|\bannual(?:ly)?\b|\byearly\b",
        "relationship_status": r"married|wedding|tied\s+the\s+knot|divorc|separated|broke\s+up|"
        r"engaged\b|girlfriend|boyfriend|fianc|split\s+up|widow",
        "children_count": r"\bbaby\b|newborn|gave\s+birth|\bborn\b|\btwins\b|\bkids\b|children",
        "pets": r"\bdogs?\b|\bcats?\b|pupp|\bpup\b|kitten|kitty|\bpets?\b|adopt|rescue|rehom|"
        r"\bvet\b",
        "timezone": r"time\s*zone|\bclock\b|(?:hours?|hrs?|h)\s+(?:ahead|behind)|\bUTC\b|\bGMT\b|"
        r"time\s+difference",
        "languages": r"\bspeak\b|\bfluent\b|conversational|\blanguages\b|\blessons\b|"
        r"learning\s+\w+",
        "native_language": r"first\s+language|native\s+language|mother\s+tongue",
        "name": r"surname|last\s+name|maiden\s+name|full\s+name|legal\s+name|my\s+name\b",
        "preferred_name": r"calls?\s+me\b(?!\s*(?:[,.!]|$|at\b|on\b|back\b|later\b|after\b|"
        r"before\b|tomorrow\b|tonight\b|when\b|if\b))|\bgo(?:es)?\s+by\b|nickname",
        "pronouns": r"pronouns|\b(?:she|he|they)/(?:her|him|them|they|she|he)\b",
        "date_of_birth": r"birthday|date\s+of\s+birth|\bdob\b|born\s+on\b|\bturn(?:ed|ing)\s+\d",
        "education": r"\bdegree\b|graduat|\bphd\b|master's|\bmasters\b|\bmba\b|\buni\b|"
        r"university|college|enrolled|dropped\s+out|\bcourse\b|bootcamp",
        "database": r"\bdb\b|database|postgres|mysql|mongo|sqlite|snowflake|bigquery",
        "preferred_contact_method": r"text\s+me|email\s+me|whatsapp|signal|telegram|reach\s+me|"
        r"contact\s+me|message\s+me|\bcalls\b(?!\s+me\b)|phone\s+calls|texts\b",
        "current_location": r"\btrip\b|\blanded\b|travell?ing\b",
        "phone": r"\bnumber\b|\bphone\b|\bmobile\b|\bdigits\b",
        "email": r"\be-?mail\b",
        "postal_address": r"\baddress\b|postcode|zip\s+code|post\s+code",
        "nationality": r"citizen|passport|nationality",
        "programming_languages": r"\bstack\b|codebase|rewr[io]te|\bbackend\b|\bfrontend\b",
        "hobbies": r"stopped\s+(?:climbing|running|swimming|playing|cycling)|gave\s+up\s+\w+ing|"
        r"took\s+up|taking\s+up|picked\s+up\s+\w+ing|\bhobby\b",
    }.items()
}
# A time before a change dates the change itself when the clause says it changed or holds
# now: "our address changed when we moved, it's 14 elm st now".
_SAID_NOW = re.compile(r"\b(?:changed|now)\b", _I)
# Slots that hold several values: a correction of one ("it's not peanuts, it's tree nuts")
# takes a value away as well as adding one, which only a human may decide offline; and one
# more of them ("adopted a second cat") changes nothing held.
MANY = frozenset(
    {"allergies", "medical_conditions", "medications", "pets", "languages", "hobbies",
     "programming_languages"}
)  # fmt: skip
_ANOTHER = re.compile(
    r"\b(?:another|second|third|also|as\s+well|one\s+more)\b|\btoo\s*(?:[.!,;]|$)", _I
)
# The clause says something changed, was wrong, or no longer holds.
MARKER = re.compile(
    r"\b(?:now|new|changed|switched|moved|moving\s+in|move\s+(?:to|is\s+done)|no\s+longer|"
    r"any\s*more|instead|these\s+days|updated?|correction|typo|autocorrect|misspoke|i\s+meant|"
    r"wrong|left|quit|stopped|handed\s+in|last\s+day|laid\s+off|started|arrived|tied\s+the\s+knot|"
    r"reorg|after\s+all|turns\s+out|actually|went\s+back|back\s+(?:in|to)|cancelled|canceled|"
    r"lapse|since\s+last|finally|done|mud[eé]|mudamos|mudei|clarified|specifically|promot\w*|"
    r"retrain\w*|took\s+up|became|got\s+(?:married|engaged|divorced)|split\s+up|gave\s+birth|"
    r"signed|from\s+now\s+on|going\s+forward|swapped|replaced|dropped|ditched|joined|"
    # A change done to the speaker, told in the passive: "was let go", "relocated me".
    r"(?:was|were|got|been)\s+(?:let\s+go|fired|sacked|relocated|transferred)|relocated|"
    r"first\s+day|day\s+one|farewell|resigned|redundant|migrated|wait|oops|sorry|my\s+bad|"
    r"mixed\s+(?:up|them\s+up)|(?:had|welcomed)\s+(?:a|our)\s+(?:baby|son|daughter|little)|adopted|"
    r"rehomed|graduated|enrolled|settled|nowadays|lately|rather|prefer|different|"
    # "the old job is history", "veganism is over for me": what held is behind the speaker.
    r"(?:is|'s)\s+(?:history|over|behind\s+(?:me|us))|(?:gone|went|turned)(?!\s+(?:off|out|on|to|well|wrong|by|through|down|up|in|into|for|"
    r"home|ok|okay|great|fine|bad|over)\b))\b",
    _I,
)
# Someone else is the clause's subject: their changes are not the speaker's.
OTHER = re.compile(
    r"^(?:(?:my|our|his|her|their)\s+(?:sister|brother|mom|mum|mother|dad|father|friend|"
    r"partner|husband|wife|boss|manager|colleague|coworker|son|daughter|cousin|aunt|uncle|"
    r"girlfriend|boyfriend|roommate|flatmate|neighbou?r|parents?|kids?|office|landlord)|he|she|"
    # A name is capitalised where the writer uses capitals: the pattern is read ignoring
    # case, so the capital is asked for in case ("We moved", "Officially moved in" open on
    # no one else); only a clause with no capital at all may name someone in lower case.
    r"(?!(?:today|yesterday|tonight|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"this|that|it|there|work|life|we|i|you|just|now|then|also|still|already|so|and|but|"
    # An adverb opening a clause whose "I" was dropped; not every -ly word (Emily, Holly).
    r"(?:final|recent|official|actual|basical|honest|literal|eventual|apparent|sudden|"
    r"definite|current|original|initial|new|lucki|sadl?|happi|fortunate|unfortunate)ly)\b)"
    r"(?:(?-i:[A-Z][a-z]+)|(?=(?-i:[^A-Z]*)$)[a-z]+)\s+"
    r"(?:is|was|has|moved|left|got|split|broke|quit|started|joined|adopted)|"
    # "sarah from accounting is leaving": someone introduced by where they are from.
    r"(?!(?:I|we|me)\b)[a-z]+\s+from\s+(?:the\s+)?\w+\s+(?:is|was|has|got|just))\b",
    _I,
)
# Words that make the clause about the past, someone's plan, or a question.
NOT_NOW = re.compile(
    r"\b(?:if|would|might|maybe|thinking\s+about|considering|planning|hope|wish|when\s+i\s+was|"
    r"(?<!getting\s)(?<!\bget\s)(?<!\bgot\s)used\s+to|as\s+a\s+kid|(?:years?|decades?)\s+ago|"
    # "not signing anything yet", "yet to hear back": nothing has changed so far.
    r"(?:not|n't)\s+(?:\w+\s+){0,3}yet|yet\s+to)\b|\?",
    _I,
)
# A correction, a denial, or a value left behind: what it changes is found by the held value
# the turn names ("we finally left Cape Town", "ditched mysql"), else nothing is asked.
_CORRECTS = re.compile(
    r"\b(?:not(?!\s+(?:(?:so\s+|too\s+|that\s+)?long\s+ago|to\b))|isn't|aren't|wasn't|don't|doesn't|"
    r"never|no\s+longer|any\s*more|autocorrect|typo|"
    r"i\s+meant|meant|mistyped?|misspelt|misspelled|wrong|correction|after\s+all|turns\s+out|"
    r"actually|left|leaving|quit|quitting|stopped|ditched|dropped|cancell?ed|gave\s+up|"
    r"switched\s+from|moved\s+(?:away\s+)?from|moved\s+out\s+of|no\s+more|former(?:ly)?|"
    r"done\s+with|instead\s+of|replaced|swapped)\b",
    _I,
)
# "still in Tacoma and not going anywhere": the clause re-affirms the held value, it does not
# correct it.
_STILL = re.compile(r"\bstill\b", _I)
# A move, or a home that has lasted since some time: either way a held zone may be stale.
_MOVE = re.compile(
    r"\b(?:moved|move|moving|relocated|mud[eé]|mudamos|mudei|now|home|been\s+living|since|"
    r"left|bye|goodbye|farewell|new\s+(?:flat|place|house|apartment|apt|landlord|neighbou?rs?))\b",
    _I,
)


def unsure_questions(
    observation: Observation,
    clauses: Sequence[Clause],
    found: Sequence[CandidateFact],
    placer: Placer | None = None,
) -> list[CandidateFact]:
    """A question per slot a clause speaks about with a change in view that no candidate
    of the turn fills (named by the cue words, else by ``placer``, the attribute
    classifier); and the timezone a move implies, tentatively."""
    swap = own_swap(observation.text, NOT_NOW)
    if swap is not None and not any(str(c.value).casefold() == swap.new.casefold() for c in found):
        # The resolver applies it to the one held fact the old words name, else asks; the
        # slot words beside it ("correction on my number") add nothing to that.
        return [question(observation, None, observation.text, 0, swap.new)]
    placed = {c.attribute for c in found if c.attribute is not None}
    asked: list[CandidateFact] = []
    unnamed: list[str] = []
    moved: str | None = None  # the clause of a move no value was read from
    # A reminder of what was said tells no change.
    # News said before a question or a wish reaches no value reader, but may be asked about.
    heard = [*clauses, *said_in_passing(observation.text, clauses), *_requests(observation)]
    for clause in [] if RESTATING.search(observation.text) else heard:
        text = clause.text
        if PARTNER.match(text) and "relationship_status" not in placed:
            placed.add("relationship_status")
            asked.append(question(observation, "relationship_status", text, len(asked)))
            continue
        # Someone else's life, a time before a change, a trip or a visit: no change of the
        # speaker's own.
        if (
            _someone_else(text)
            or NOT_NOW.search(text)
            or (PAST_ONLY.search(text) and not _SAID_NOW.search(text))
            or ELSEWHERE.search(text)
        ):
            continue
        # "no como carne los lunes": a habit on some days denies no standing state.
        negated = bool(NEGATION.search(text)) and not ROUTINE.search(text)
        if SAME_AGAIN.search(text) and not negated:
            continue  # "still at ucl", "renewed the lease": the same holds on
        marked = bool(
            MARKER.search(text)
            or negated
            or LESS.search(text)
            or ALTERED.search(text)
            or PERFORCE.search(text)
        )
        events = changes_told(text)  # "we're expecting": the event is the change
        afoot = marked or bool(events) or bool(AFOOT.search(text))
        if not (afoot or LATELY.search(text)):
            continue
        # The value cues need a plain change marker, as the value readers use them; a slot's
        # nouns need the clause to say that something changed; the words that come with a
        # change need only a clause dated to lately.
        named = _named(text, marked=marked, afoot=afoot, events=events)
        if not named and marked:
            unnamed.append(text)  # for the classifier, where the change is plain
        for attribute in named:
            # An event that takes a value away changes a slot that holds several.
            if not _about_own(
                attribute, text, marked=marked or (attribute in REMOVALS and attribute in events)
            ):
                continue
            if attribute not in placed:
                placed.add(attribute)
                asked.append(question(observation, attribute, text, len(asked)))
                if attribute == "home_city":
                    moved = text
    placements = placer(unnamed) if placer is not None and unnamed else [None] * len(unnamed)
    for said, slot in zip(unnamed, placements, strict=True):
        if slot is not None and slot not in placed and _about_own(slot, said, marked=True):
            placed.add(slot)
            asked.append(question(observation, slot, said, len(asked)))
    redo = own_redo(observation.text, NOT_NOW)
    if not placed and (
        redo is not None
        or any(
            _CORRECTS.search(c.text)
            for c in clauses
            if not (
                NOT_NOW.search(c.text)
                or OTHER.match(c.text)
                or _STILL.search(c.text)
                or to_listener(c.text)
            )
        )
    ):
        asked.append(question(observation, None, observation.text, len(asked), redo))
    if moved is not None and "timezone" not in placed:
        # A move the reader could not place may have left the held zone behind too.
        placed.add("timezone")
        asked.append(question(observation, "timezone", moved, len(asked)))
    homes = [c for c in found if c.attribute == "home_city" and isinstance(c.value, str)]
    if len(homes) == 1 and "timezone" not in placed and _MOVE.search(observation.text):
        place = city(str(homes[0].value))
        if place is not None:
            said = f"{homes[0].text} (a move; {place.timezone} is that city's zone)"
            asked.append(question(observation, "timezone", said, len(asked), place.timezone))
    return asked


def _named(text: str, *, marked: bool, afoot: bool, events: Sequence[str] = ()) -> list[str]:
    """The slots the clause names, by the words each kind of change marker admits, and
    those of the ``events`` it tells that are changes in themselves."""
    cues = list(CUES.items()) if marked else []
    nouns = list(NOUNS.items()) if afoot else []
    named = list(dict.fromkeys(a for a, w in [*cues, *nouns, *TALK.items()] if w.search(text)))
    told = [*events, *(names_told(text) if marked else [])]  # a brand or a diagnosis
    named += [a for a in dict.fromkeys(told) if a not in named]
    if "home_city" not in named and (
        (afoot and (townsfolk(text) or town_now(text)))
        or left_town(text)
        or (marked and town_to_town(text))
    ):
        named.append("home_city")
    if named and SO_FAR.search(text) and not _changed_beyond_lately(text):
        return []  # "my commute is brutal these days": how it goes, not what changed
    return named


def _requests(observation: Observation) -> list[Clause]:
    """The sentences that ask the assistant to treat the speaker some way from now on,
    without their question form ("could you use she/her for me from now on?")."""
    out = []
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", observation.text):
        opening = REQUEST.match(sentence)
        if opening is not None:
            out.append(Clause(sentence[opening.end() :].rstrip(" ?!."), cased=False, tense=None))
    return out


def _about_own(attribute: str, text: str, *, marked: bool) -> bool:
    """Whether the clause can change the speaker's own ``attribute``: one more of a slot
    that holds several changes nothing held unless something is taken away or corrected
    (``marked``); another service's plan or bill is not theirs with us."""
    if attribute in MANY and (_ANOTHER.search(text) or not marked):
        return False
    if small_talk(attribute, text, many=attribute in MANY):
        return False
    misnamed = MISNAMED.get(attribute)
    if misnamed is not None and misnamed.search(text):
        # "new phone case", "moved in-house", "notice on the flat": the slot's words
        # name something else; the rest of the clause must name the slot.
        rest = misnamed.sub(" ", text)
        families = (CUES, NOUNS, TALK)
        if not any(f[attribute].search(rest) for f in families if attribute in f):
            return False
    return not (attribute in SERVICE_SLOTS and OTHER_SERVICE.search(text))


def _changed_beyond_lately(text: str) -> bool:
    """Whether the clause says a change once its "these days" is taken away."""
    rest = THESE_DAYS.sub(" ", text)
    return any(words.search(rest) for words in (MARKER, AFOOT, LESS, NEGATION, *TALK.values()))


# A few words and a colon before the statement: "one more thing:", "also:", "p.s.:".
_HEADING = re.compile(r"^(?:[\w.']+\s+){0,3}[\w.']+\s*:\s+")


def _someone_else(text: str) -> bool:
    """The clause opens on someone else; "graduation was yesterday" opens on an event of
    a slot's own, not on a person named in lower case; "they moved me to growth" is done
    to the speaker."""
    text = _HEADING.sub("", text)  # "one more thing: my wife is vegetarian"
    if DONE_TO_ME.match(text):
        return False
    if SOMEONE.match(text) or THEIRS.search(text):
        return True
    if not OTHER.match(text):
        return False
    first = text.split(maxsplit=1)[0]
    if first.casefold() in {"i", "we", "you"}:  # "we got married": the speaker's household
        return False
    return not any(
        words.match(first) for words in (*CUES.values(), *NOUNS.values(), *TALK.values())
    )
