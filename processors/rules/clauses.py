"""Sentences and clauses, and the ones no rule may read.

A turn is split into sentences, then into clauses at conjunctions that start a
new first-person statement. Fillers ("oh, and btw") are stripped, a leading
time phrase is moved to the end so rules can anchor on "I", and questions,
conditionals, hypotheticals and plans are dropped. Negations are left for the
extractor, which only lets the rules that can represent them read the clause.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from slotwise.processors.dates import Tense
from slotwise.processors.rules.bio import bio_items
from slotwise.processors.rules.chat import restore_subject
from slotwise.processors.rules.words import IRREGULAR_PAST

__all__ = ["MAX_CLAUSE_CHARS", "NEGATION", "Clause", "clause_tense", "split_clauses"]

# A bound on work per clause: a pasted document is not a chat statement about the user.
MAX_CLAUSE_CHARS = 400


@dataclass(frozen=True, slots=True)
class Clause:
    """One clause of a user's turn, as the rules read it."""

    text: str
    cased: bool  # the turn uses capitals, so proper nouns are capitalised
    tense: Tense | None
    greeting: bool = False  # the turn opens with a greeting: "I'm Ana" is an introduction


# A dash between statements, spaced or not: "head chef- it's wild", "unreal—we won".
_SENTENCE_BREAK = re.compile(
    r"(?<=[.!?])[\"')\]]*\s+|\n+|\s+[-\u2013\u2014]+\s+|(?<=[A-Za-z])-+\s+|"
    r"(?<=[A-Za-z])\u2014(?=[A-Za-z])|"
    # "can you plan my meals, btw i'm vegetarian": news tacked on after an aside word is a
    # sentence of its own, so the question before it does not take it down too.
    r",\s*(?=(?:and\s+)?(?:btw|by\s+the\s+way|oh\s+and|oh|also|anyway|anyways|fyi|"
    r"just\s+so\s+you\s+know|for\s+context)[,:]?\s+(?:I|I'm|I've|my|we|we're|we've|our)\b)"
)
_CLAUSE_BREAK = re.compile(
    r"\s*;\s*|,\s+(?=(?:which|where|who|whom|whose)\b)"
    r"|,?\s+(?:but|although|though|whereas|because|cause|since|so|and\s+also|and\s+now|and|plus)\s+"
    r"(?=(?:i|i'm|i've|i'll|my|we|we're|we've|our|please|you\s+can\s+call|call\s+me|it|it's|"
    r"that|that's|this|he|she|they|you)\b)"
    r"|,\s+(?=(?:i|i'm|i've|my|we|our)\b)|,?\s+but\s+"
    # "I'm allergic to sesame, so no bagels": a consequence after a comma is a clause of its own,
    # as is one with no comma that denies ("lactose intolerant so no cheese").
    r"|,\s+so\s+|\s+so\s+(?=(?:no|not|never)\b)"
    # "no kids, one parrot named Captain": a list's denied item ends its own clause.
    r"|(?<=\bno\skids),\s+|(?<=\bno\schildren),\s+"
    # The Spanish and Portuguese "but" before a statement: "soy de rosario pero vivo en madrid".
    r"|(?:,\s+|,?\s+(?:pero|mas|y|e)\s+)(?=(?:vivo|vivimos|moro|moramos|trabajo|trabalho|hablo|falo|soy|sou)\b)"
    # "…worth it now that I'm a head chef": the reason is a statement too.
    r"|,?\s+now\s+that\s+(?=(?:i|i'm|i've|we|we're|we've)\b)"
    # "…, don't suggest mongo": an instruction is its own clause, and its negation is not the
    # statement's.
    r"|,\s+(?=(?:don't|do\s+not|please\s+don't)\b)"
    # "…and text is better than calling": how to reach the speaker is a statement of its own.
    r"|,?\s+and\s+(?=(?:texts?|texting|e-?mail|whats\s?app)\s+(?:is|works)\b)"
    r"|,?\s+and\s+(?=(?:on|from|next|this)\s+\w+\s+(?:i|i'm|i'll|we)\b)"
    # "I left Nubank and started at Stone": a second change told with the "I" dropped.
    r"|,?\s+(?:and(?:\s+then)?|then)\s+(?=(?:start|started|starting|began|joined|moved|"
    r"switched|relocated|went\s+back)\b)"
    # Chat runs statements together with commas and drops the "I" ("from lagos, based in
    # london now"): a comma before a dropped-subject opening starts a new clause.
    r"|(?:,|\s+\+)\s+(?=(?:(?:now|currently)\s+)?(?:based|living|live|work|working|married|single|engaged|divorced|on|"
    r"from|originally|starting|started|joining|joined|switched|gone|promoted|"
    r"allergic|vegan|vegetarian|pescatarian|hybrid|remote|fully|grew|born|speak|moved|"
    r"no\s+kids|one\s+kid|(?:two|three|four)\s+(?:kids|cats|dogs))\b)",
    re.IGNORECASE,
)
# "I'm vegan and allergic to shellfish", "I live in leeds and work at the nhs": in a clause
# the speaker opens, a second state or verb after "and" with the "I" dropped ("chicken and
# veggie stir-fry" is no such clause).
_AND_DROPPED = re.compile(
    r"\s+and\s+(?=(?:allergic|based|living|work|working|live|married|engaged|speak|fluent|"
    r"diagnosed)\b|(?:vegan|vegetarian|pescatarian)\s*(?:$|,|now|too|since|as\s+of)\b)",
    re.IGNORECASE,
)
# A clause that opens on someone else: the clauses after it that dropped their subject are
# theirs ("my sister is vegan and allergic to nuts"), not the speaker's; "she/they" is a
# speaker's pronouns.
_OTHERS_CLAUSE = re.compile(
    r"^(?:he|she|they|he's|she's|they're|(?:my|our|his|her|their)\s+(?:\w+\s+)?(?:sister|"
    r"brother|mum|mom|mother|dad|father|parents?|husband|wife|partner|boyfriend|girlfriend|son|"
    r"daughter|kids?|friend|boss|colleague|coworker|cousin|aunt|uncle|flatmate|roommate|"
    r"housemate|neighbou?r|manager|fianc[ée]e?|grand\w+)s?)\b(?!/)",
    re.IGNORECASE,
)
_KIN = re.compile(r"^(?:my|our|his|her|their)\s", re.IGNORECASE)
_SPEAKER_OPENS = re.compile(r"^(?:I|I'm|I've|I'd|I'll|me|we|we're|we've)\b", re.IGNORECASE)
_FILLER = re.compile(
    r"^(?:(?:hi|hey|hello|hiya|howdy|oh|ah|well|so|also|anyway|anyways|btw|by the way|yeah|yes|"
    r"yep|ok|okay|um|uh|honestly|actually|and|but|plus|now|fyi|just so you know|for the record|"
    r"for context|fun fact|guess what|haha|lol|wow|cool|great|sure|right|as you know|"
    r"I\s+(?:just\s+|recently\s+)?(?:found\s+out|learned|realized|discovered)(?:\s+recently)?"
    r"(?:\s+that)?(?=\s+I\b)|"
    r"(?:please\s+)?(?:remember|note)(?:\s+that)?|"
    # "not sure if i said but i quit": a doubt about the telling, not a condition on the news.
    r"(?:not\s+sure|dunno|idk|i\s+don't\s+know)\s+if\s+i\s+(?:ever\s+)?(?:said|told\s+you|"
    r"mentioned)(?:\s+(?:this|it|that))?(?:,?\s+but)?)\b[,!:.]?\s+|(?:no|nope)[,!.]\s+|"
    # "quick update: i'm a data engineer now": a heading before the statement.
    r"(?:(?:quick|small|little|big|life)\s+)?(?:update|news|heads\s+up)\s*[:!-]+\s*)",
    re.IGNORECASE,
)
_TIME_PHRASE = (
    r"(?:just\s+)?(?:yesterday|today|tonight|recently|the\s+other\s+day|earlier\s+today|"
    r"(?:last|this)\s+(?:night|morning|afternoon|evening|week|weekend|month|year|monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday)|(?:a|two|three|a\s+few|\d+)\s+(?:days?|weeks?|"
    r"months?|years?)\s+ago|in\s+\d{4}|(?:on|from|next)\s+(?:monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday)|next\s+(?:week|month)|"
    r"(?:since|as\s+of)\s+(?:(?:last|this)\s+(?:week|month|year|spring|summer|autumn|fall|winter|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)|today|yesterday|"
    r"january|february|march|april|june|july|august|september|october|november|december|\d{4}))"
)
_FRONT_TIME = re.compile(
    rf"^(?P<when>{_TIME_PHRASE})\s*,?\s+(?P<rest>(?:I|we)\b.*)$", re.IGNORECASE
)
# "Since I sold my car, I cycle everywhere": the reason given first is a statement of
# its own, as much as the clause after the comma.
_LEADING_REASON = re.compile(
    r"^(?:ever\s+since|since|now\s+that|after|because)\s+(?P<said>I\b[^,;]+),\s*", re.IGNORECASE
)
_TIME_ONLY = re.compile(rf"^{_TIME_PHRASE}$", re.IGNORECASE)
_GREETING = re.compile(
    r"^\W*(?:hi|hello|hey|hiya|howdy|greetings|good\s+(?:morning|afternoon|evening))\b", re.I
)
_QUESTION_START = re.compile(
    r"^(?:who|what|when|where|why|how|which|whose|whom|do|does|did|is|are|am|was|were|can|could|"
    r"would|will|should|shall|have|has|had|may|might|must|anyone|anybody|"
    # "any tips?" asks; "any pronouns are fine" states.
    r"any(?!\s+\w+\s+(?:is|are)\s+(?:fine|ok|okay|good|great)\b)|"
    # "don't you think…" asks; "don't call me johnny", "didn't get the job" state.
    r"(?:isn't|aren't|don't|doesn't|didn't|won't|wouldn't|can't|couldn't|shouldn't|haven't|"
    r"hasn't)(?=\s+(?:i|you|u|we|they|he|she|it|anyone|anybody|there|that|this)\b))\b",
    re.IGNORECASE,
)
_CONDITIONAL = re.compile(
    r"\b(?:if|unless|whether|suppose|supposing|imagine|in case|assuming|hypothetically|pretend)\b",
    re.IGNORECASE,
)
_HYPOTHETICAL = re.compile(
    # "I was wondering about insurance, I have asthma": a wondering asks in its own clause
    # only; the statement after it stands ("wondering if…" is a condition all the same).
    r"\b(?:might|maybe|perhaps|possibly|probably|would|could|should|wish|hope|hoping|hopefully|"
    r"wonder|wondering|"
    r"thinking\s+(?:about|of)|considering|consider|planning|(?:I|we|they|he|she|you)\s+plans?\s+to|want\s+to|"
    r"wants\s+to|wanna|going\s+to|gonna|intend|someday|one\s+day|eventually|dream|dreaming|"
    r"about\s+to|trying\s+to|try\s+to|need\s+to|have\s+to|has\s+to|got\s+to|gotta|"
    # "getting used to the new flat" is a present that began lately, not a past habit.
    r"supposed\s+to|(?<!getting\s)(?<!\bget\s)(?<!\bgot\s)used\s+to|if|"
    # Tempted, keen, itching to: a pull towards something, not a state of the speaker's.
    r"tempted|tempting|keen\s+to|eager\s+to|itching\s+to|dying\s+to|can't\s+wait\s+to|"
    # "I plan on moving" is a plan; "upgraded to the team plan on friday" is no such thing.
    r"looking\s+forward\s+to|aim(?:ing)?\s+to|planning\s+on|(?:I|we|they|he|she|you)\s+plans?\s+"
    r"on|curious\s+to|"
    # Hearsay: "they keep hinting we'll be back in the office" reports a rumour, not a change.
    r"hint(?:s|ed|ing)?|rumou?r(?:s|ed)?|supposedly|allegedly|word\s+is)\b|"
    # "I'd rather you text", "I'd prefer email": how to be reached is a standing preference,
    # not a condition ("I'd prefer to work remotely" still is one).
    r"'d\b(?!\s+(?:rather\s+you|prefer\s+(?:e-?mails?|texts?|sms|whats\s?app|signal|telegram|"
    r"phone|calls?)\b|(?:prefer|like)\s+to\s+be\s+(?:contacted|reached)))|"
    r"(?<!\bin\s)(?<!\blast\s)(?<!\bnext\s)(?<!\bsince\s)\bmay\b",
    re.IGNORECASE,
)
# "not long ago" dates a statement; it denies nothing.
NEGATION = re.compile(
    r"\b(?:not(?!\s+(?:so\s+|too\s+|that\s+)?long\s+ago)|never|no|nor|neither|none|nobody|"
    r"nothing|no\s+longer|cannot)\b|n't\b",
    re.IGNORECASE,
)
_FUTURE = re.compile(
    r"\b(?:will|shall|tomorrow|next|upcoming|soon|start|starts|starting|begin|begins)\b|'ll\b",
    re.IGNORECASE,
)
_PAST = re.compile(r"\b(?:was|were|did|ago|yesterday|last|\w+ed)\b", re.IGNORECASE)


# "me and my partner moved to bristol": the speaker and their household move, or live, as
# "we" (the clause would otherwise split at "and my").
_HOUSEHOLD_MOVE = re.compile(
    r"^(?:me\s+and\s+(?:my|the)\s+\w+|my\s+\w+\s+and\s+(?:I|me))(?=\s+(?:just\s+|finally\s+|"
    r"recently\s+)?(?:moved|relocated|live|are\s+(?:based|living)|have\s+lived|now\s+live)\b)",
    re.IGNORECASE,
)


def split_clauses(text: str, *, cased: bool | None = None) -> Iterator[Clause]:
    """The clauses of ``text``; ``cased`` says whether the writer uses capitals (by default,
    whether ``text`` has any), which tells a proper noun from a common word."""
    cased = any(ch.isupper() for ch in text) if cased is None else cased
    greeting = bool(_GREETING.match(text))
    for raw_sentence in _SENTENCE_BREAK.split(text):
        sentence = _told_after_asking(_strip_fillers(raw_sentence.strip()))
        if not sentence or sentence.endswith("?") or _QUESTION_START.match(sentence):
            continue
        sentence = _HOUSEHOLD_MOVE.sub("we", sentence)
        carried, others, kin = "", False, False
        pieces = (
            piece
            for item in _bio_items(sentence)
            for piece in _CLAUSE_BREAK.split(_LEADING_REASON.sub(r"\g<said>; ", item))
        )
        for raw_clause in _speaker_split(pieces):
            # A condition governs its own clause and what follows it ("if I get the job,
            # I'll move"); a statement before it stands ("I'm allergic to sesame, so I
            # check labels if I can").
            if _CONDITIONAL.search(raw_clause):
                break
            clause = _strip_fillers(raw_clause.strip()).rstrip(" .!,;:")
            if _TIME_ONLY.match(clause):  # "Yesterday, I moved…": the time belongs to what follows
                carried = clause
                continue
            clause, carried = _front_time_to_end(f"{carried} {clause}".strip()), ""
            restored = restore_subject(clause)
            if others and restored != clause:
                continue  # someone else's clause went on with their subject dropped
            if restored == clause:
                speaker = _SPEAKER_OPENS.match(clause) is not None
                opens_on_others = bool(_OTHERS_CLAUSE.match(clause))
                if kin and not speaker and not opens_on_others:
                    continue  # "my sister has a husband, two kids": the list is hers
                others = opens_on_others or (others and not speaker)
                # A relative named is whom what follows is about; "they" may be the firm.
                kin = others and (bool(_KIN.match(clause)) if opens_on_others else kin)
            clause = restored
            if clause and len(clause) <= MAX_CLAUSE_CHARS and not _HYPOTHETICAL.search(clause):
                yield Clause(clause, cased, clause_tense(clause), greeting)


# "can you suggest a stretch, I run most mornings": a request with no question mark, then
# the speaker's own statement after a comma.
# "When I was younger, my family and I…" opens a time, not a question: only a request or
# a yes-no question opening runs on into the speaker's statement.
_REQUEST = re.compile(
    r"^(?:can|could|would|will|do|does|did|is|are|any|anyone|anybody|what|which|should)\b",
    re.IGNORECASE,
)
_TOLD_AFTER = re.compile(r",\s+(?=(?:I|I'm|I've|my|we|we're|we've|our)\b)", re.IGNORECASE)


def _told_after_asking(sentence: str) -> str:
    """The statement an unmarked question runs on into, or the sentence as it is."""
    if sentence.endswith("?") or not _REQUEST.match(sentence):
        return sentence
    parts = _TOLD_AFTER.split(sentence, maxsplit=1)
    return parts[1] if len(parts) == 2 else sentence


def _bio_items(sentence: str) -> list[str]:
    """A bio line's items as the speaker's statements, unless one opens on someone else."""
    if any(_OTHERS_CLAUSE.match(item.strip()) for item in re.split(r",|\s/\s", sentence)):
        return [sentence]
    return bio_items(sentence)


def _speaker_split(clauses: Iterable[str]) -> Iterator[str]:
    """The clauses, those the speaker opens split where a second statement drops its "I"."""
    for clause in clauses:
        if _SPEAKER_OPENS.match(restore_subject(_strip_fillers(clause.strip()))):
            yield from _AND_DROPPED.split(clause)
        else:
            yield clause


def _front_time_to_end(clause: str) -> str:
    """ "Last weekend I joined a club" → "I joined a club last weekend": rules anchor on "I"."""
    found = _FRONT_TIME.match(clause)
    if found is None:
        return clause
    when = re.sub(r"^just\s+", "", found["when"].lower())
    head, comma, tail = found["rest"].partition(",")
    return f"{head} {when}{comma}{tail}"


# "I have type 2 diabetes by the way": the same words closing a statement.
_TRAILING_FILLER = re.compile(
    r"[,\s]+(?:by\s+the\s+way|btw|fyi|just\s+so\s+you\s+know|for\s+context|for\s+the\s+record|"
    r"tbh|to\s+be\s+honest)\W*$",
    re.IGNORECASE,
)


def _strip_fillers(text: str) -> str:
    previous = None
    while previous != text:
        previous, text = text, _FILLER.sub("", text, count=1).lstrip(" ,")
    return _TRAILING_FILLER.sub("", text)


def clause_tense(clause: str) -> Tense | None:
    """When a clause is told, by its first words: "future", "past" or None (present)."""
    first_words = " ".join(clause.split()[:4])
    if _FUTURE.search(first_words):
        return "future"
    if _PAST.search(first_words) or any(w.lower() in IRREGULAR_PAST for w in clause.split()[:4]):
        return "past"
    return None
