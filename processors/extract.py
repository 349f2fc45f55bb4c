"""Offline extraction: deterministic rules for the schematized head, plus a cautious free-text tail.

Runs when no model is configured (DESIGN §6). Precision beats recall: a wrong
fact about a user is worse than a missed one, so every rule is anchored on a
first-person subject at the start of a clause, and a clause is dropped when it
is a question, a hypothetical or plan, a negation the schema cannot represent,
or about someone else ("my sister lives in Paris").

Text is split into sentences, then into clauses at conjunctions that start a
new first-person statement ("… and I work at Stripe"). Each clause goes
through the rules in order; the first rule that finds something wins. A
first-person past-tense statement no rule places ("I visited Lisbon in
March") becomes one free-text candidate (``attribute=None``) for the vector
and model path. Relative dates set ``valid_from`` and are rewritten to
absolute ones in the fact's text, which would otherwise go stale.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime

from processors.dates import Tense, absolute_phrase, find_date
from processors.model import stable_id
from processors.schema import AttributeSchema
from topics.records import CandidateFact, Observation

__all__ = ["RulesExtractor", "extract_candidates"]

NON_USER_SPEAKERS = frozenset({"assistant", "system", "bot"})
DIRECT = 0.9
INFERRED = 0.75
FREE_TEXT = 0.7
FREE_TEXT_CATEGORY = "event"
IMPORTANCE = {
    "identity": 0.9,
    "health": 0.9,
    "contact": 0.8,
    "work": 0.7,
    "home": 0.7,
    "plan": 0.6,
    "family": 0.6,
    "education": 0.5,
    "languages": 0.5,
    "preferences": 0.5,
    "event": 0.3,
}
DEFAULT_IMPORTANCE = 0.5
MAX_FREE_TEXT_WORDS = 20
# Bounds on work per turn: a pasted document is not a chat statement about the user.
MAX_CLAUSES = 200
MAX_CLAUSE_CHARS = 400


class RulesExtractor:
    """The :class:`~processors.ports.Extractor` used when no model is configured."""

    def __init__(self, schema: AttributeSchema) -> None:
        self._schema = schema

    async def extract(self, observation: Observation) -> list[CandidateFact]:
        return extract_candidates(observation, self._schema)


@dataclass(frozen=True, slots=True)
class Finding:
    """What a rule read in a clause, before it becomes a CandidateFact."""

    attribute: str | None
    value: str | int | None
    text: str
    confidence: float = DIRECT


@dataclass(frozen=True, slots=True)
class Clause:
    text: str
    cased: bool  # the turn uses capitals, so proper nouns are capitalised
    tense: Tense | None
    greeting: bool = False  # the turn opens with a greeting: "I'm Ana" is an introduction


Rule = Callable[[Clause], list[Finding]]


def extract_candidates(observation: Observation, schema: AttributeSchema) -> list[CandidateFact]:
    """The facts about the subject stated in one observation (pure and deterministic)."""
    if observation.speaker.strip().lower() in NON_USER_SPEAKERS:
        return []
    text = observation.text.replace("\u2019", "'").replace("\u2018", "'")
    candidates: list[CandidateFact] = []
    said: set[tuple[str | None, object, str]] = set()
    for count, clause in enumerate(_clauses(text)):
        if count >= MAX_CLAUSES:
            break
        for finding in _read(clause):
            spec = schema.get(finding.attribute)
            key = (finding.attribute, finding.value, finding.text)
            if (finding.attribute is not None and spec is None) or key in said:
                continue
            said.add(key)
            category = spec.category if spec is not None else FREE_TEXT_CATEGORY
            mention = find_date(clause.text, observation.observed_at, tense=clause.tense)
            candidates.append(
                CandidateFact(
                    schema="candidate/1",
                    candidate_id=stable_id(
                        "rules", observation.observation_id, str(len(candidates))
                    ),
                    subject_id=observation.subject_id,
                    attribute=finding.attribute,
                    value=finding.value,
                    text=_absolute(finding.text, observation.observed_at, clause.tense),
                    category=category,
                    observed_at=observation.observed_at,
                    valid_from=observation.observed_at if mention is None else mention.when,
                    source=observation.source,
                    confidence=finding.confidence,
                    importance=IMPORTANCE.get(category, DEFAULT_IMPORTANCE),
                    observation_id=observation.observation_id,
                )
            )
    return candidates


# --- sentences and clauses ---------------------------------------------------------------------

_SENTENCE_BREAK = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n+|\s+[-\u2013\u2014]+\s+")
_CLAUSE_BREAK = re.compile(
    r"\s*;\s*|,\s+(?=(?:which|where|who|whom|whose)\b)"
    r"|,?\s+(?:but|although|though|whereas|because|cause|since|so|and\s+also|and\s+now|and|plus)\s+"
    r"(?=(?:i|i'm|i've|i'll|my|we|we're|we've|our|please|you\s+can\s+call|call\s+me|it|it's|"
    r"that|that's|this|he|she|they|you)\b)"
    r"|,\s+(?=(?:i|i'm|i've|my|we|our)\b)|,?\s+but\s+",
    re.IGNORECASE,
)
_FILLER = re.compile(
    r"^(?:(?:hi|hey|hello|hiya|howdy|oh|ah|well|so|also|anyway|anyways|btw|by the way|yeah|yes|"
    r"yep|ok|okay|um|uh|honestly|actually|and|but|plus|now|fyi|just so you know|for the record|"
    r"for context|fun fact|guess what|haha|lol|wow|cool|great|sure|right|as you know|"
    r"I\s+(?:just\s+|recently\s+)?(?:found\s+out|learned|realized|discovered)(?:\s+recently)?"
    r"(?:\s+that)?(?=\s+I\b)|"
    r"(?:please\s+)?(?:remember|note)(?:\s+that)?)\b[,!:.]?\s+|(?:no|nope)[,!.]\s+)",
    re.IGNORECASE,
)
_TIME_PHRASE = (
    r"(?:just\s+)?(?:yesterday|today|tonight|recently|the\s+other\s+day|earlier\s+today|"
    r"(?:last|this)\s+(?:night|morning|afternoon|evening|week|weekend|month|year|monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday)|(?:a|two|three|a\s+few|\d+)\s+(?:days?|weeks?|"
    r"months?|years?)\s+ago|in\s+\d{4})"
)
_FRONT_TIME = re.compile(rf"^(?P<when>{_TIME_PHRASE})\s*,?\s+(?P<rest>I\b.*)$", re.IGNORECASE)
_TIME_ONLY = re.compile(rf"^{_TIME_PHRASE}$", re.IGNORECASE)
_GREETING = re.compile(
    r"^\W*(?:hi|hello|hey|hiya|howdy|greetings|good\s+(?:morning|afternoon|evening))\b", re.I
)
_QUESTION_START = re.compile(
    r"^(?:who|what|when|where|why|how|which|whose|whom|do|does|did|is|are|am|was|were|can|could|"
    r"would|will|should|shall|have|has|had|may|might|must|any|anyone|anybody|isn't|aren't|"
    r"don't|doesn't|didn't|won't|wouldn't|can't|couldn't|shouldn't|haven't|hasn't)\b",
    re.IGNORECASE,
)
_CONDITIONAL = re.compile(
    r"\b(?:if|unless|whether|suppose|supposing|imagine|in case|assuming|wonder|wondering|"
    r"hypothetically|pretend)\b",
    re.IGNORECASE,
)
_HYPOTHETICAL = re.compile(
    r"\b(?:might|maybe|perhaps|possibly|probably|would|could|should|wish|hope|hoping|hopefully|"
    r"thinking\s+(?:about|of)|considering|consider|planning|plan\s+to|plans\s+to|want\s+to|"
    r"wants\s+to|wanna|going\s+to|gonna|intend|someday|one\s+day|eventually|dream|dreaming|"
    r"about\s+to|trying\s+to|try\s+to|need\s+to|have\s+to|has\s+to|got\s+to|gotta|"
    r"supposed\s+to|used\s+to|if)\b|'d\b|(?<!\bin\s)(?<!\blast\s)(?<!\bnext\s)(?<!\bsince\s)\bmay\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"\b(?:not|never|no|nor|neither|none|nobody|nothing|no\s+longer|cannot)\b|n't\b", re.IGNORECASE
)
_FUTURE = re.compile(
    r"\b(?:will|shall|tomorrow|next|upcoming|soon|start|starts|starting|begin|begins)\b|'ll\b",
    re.IGNORECASE,
)
_PREPOSITION_BEFORE = re.compile(
    r"\b(?:since|from|until|by|in|on|for|during|before|after)\s+$", re.IGNORECASE
)
_HEDGE = re.compile(
    r"\b(?:about|around|roughly|almost|nearly|over|approximately|just\s+under)\s+$", re.IGNORECASE
)
_PAST = re.compile(r"\b(?:was|were|did|ago|yesterday|last|\w+ed)\b", re.IGNORECASE)


def _clauses(text: str) -> Iterator[Clause]:
    cased = any(ch.isupper() for ch in text)
    greeting = bool(_GREETING.match(text))
    for raw_sentence in _SENTENCE_BREAK.split(text):
        sentence = _strip_fillers(raw_sentence.strip())
        if not sentence or sentence.endswith("?") or _QUESTION_START.match(sentence):
            continue
        if _CONDITIONAL.search(sentence):
            continue
        carried = ""
        for raw_clause in _CLAUSE_BREAK.split(sentence):
            clause = _strip_fillers(raw_clause.strip()).rstrip(" .!,;:")
            if _TIME_ONLY.match(clause):  # "Yesterday, I moved…": the time belongs to what follows
                carried = clause
                continue
            clause, carried = _front_time_to_end(f"{carried} {clause}".strip()), ""
            if clause and len(clause) <= MAX_CLAUSE_CHARS and not _HYPOTHETICAL.search(clause):
                yield Clause(clause, cased, _tense(clause), greeting)


def _front_time_to_end(clause: str) -> str:
    """ "Last weekend I joined a club" → "I joined a club last weekend": rules anchor on "I"."""
    found = _FRONT_TIME.match(clause)
    if found is None:
        return clause
    when = re.sub(r"^just\s+", "", found["when"].lower())
    head, comma, tail = found["rest"].partition(",")
    return f"{head} {when}{comma}{tail}"


def _strip_fillers(text: str) -> str:
    previous = None
    while previous != text:
        previous, text = text, _FILLER.sub("", text, count=1).lstrip(" ,")
    return text


def _tense(clause: str) -> Tense | None:
    first_words = " ".join(clause.split()[:4])
    if _FUTURE.search(first_words):
        return "future"
    if _PAST.search(first_words) or any(w.lower() in _IRREGULAR_PAST for w in clause.split()[:4]):
        return "past"
    return None


def _read(clause: Clause) -> list[Finding]:
    rules = _NEGATION_RULES if _NEGATION.search(clause.text) else _RULES
    for rule in rules:
        findings = rule(clause)
        if findings:
            return findings
    return [] if rules is _NEGATION_RULES else _free_text(clause)


def _absolute(text: str, observed_at: datetime, tense: Tense | None) -> str:
    mention = find_date(text, observed_at, tense=tense)
    if mention is None or not mention.deictic:
        return text
    phrase = absolute_phrase(mention)
    before = text[: mention.start]
    after = text[mention.end :]
    hedge = _HEDGE.search(before)
    if after.startswith("'s"):  # "yesterday's class" → "the March 13, 2026 class"
        phrase, after = "the " + phrase.split(" ", 1)[1], after[2:]
    elif hedge is not None:
        before, phrase = before[: hedge.start()], "around " + phrase.split(" ", 1)[1]
    elif _PREPOSITION_BEFORE.search(before):
        phrase = phrase.split(" ", 1)[1]
    return f"{before}{phrase}{after}"


# --- lexicons ----------------------------------------------------------------------------------


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _canon(text: str) -> dict[str, str]:
    """``"canonical: alias, alias | …"`` → {lower-case name or alias: canonical}."""
    table: dict[str, str] = {}
    for entry in text.split("|"):
        name, _, aliases = entry.partition(":")
        name = name.strip()
        for key in (name, *aliases.split(",")):
            if key.strip():
                table[key.strip().lower()] = name
    return table


_COUNTRIES = _canon(
    "Afghanistan|Albania|Algeria|Andorra|Angola|Argentina|Armenia|Australia|Austria|Azerbaijan|"
    "Bahamas|Bahrain|Bangladesh|Barbados|Belarus|Belgium|Belize|Benin|Bhutan|Bolivia|Bosnia and "
    "Herzegovina: Bosnia|Botswana|Brazil: Brasil|Brunei|Bulgaria|Burkina Faso|Burundi|Cambodia|"
    "Cameroon|Canada|Cape Verde|Chad|Chile|China|Colombia|Costa Rica|Croatia|Cuba|Cyprus|Czechia:"
    " Czech Republic|Denmark|Dominican Republic|Ecuador|Egypt|El Salvador|England|Estonia|"
    "Ethiopia|Fiji|Finland|France|Gabon|Gambia|Germany|Ghana|Greece|Guatemala|Guinea|Haiti|"
    "Honduras|Hong Kong|Hungary|Iceland|India|Indonesia|Iran|Iraq|Ireland|Israel|Italy|Ivory "
    "Coast|Jamaica|Japan|Jordan|Kazakhstan|Kenya|Kosovo|Kuwait|Kyrgyzstan|Laos|Latvia|Lebanon|"
    "Liberia|Libya|Liechtenstein|Lithuania|Luxembourg|Madagascar|Malawi|Malaysia|Maldives|Mali|"
    "Malta|Mauritius|Mexico|Moldova|Monaco|Mongolia|Montenegro|Morocco|Mozambique|Myanmar|"
    "Namibia|Nepal|Netherlands: the netherlands, holland|New Zealand|Nicaragua|Niger|Nigeria|"
    "North Korea|North Macedonia: macedonia|Northern Ireland|Norway|Oman|Pakistan|Panama|"
    "Paraguay|Peru|Philippines: the philippines|Poland|Portugal|Puerto Rico|Qatar|Romania|Russia|"
    "Rwanda|Saudi Arabia|Scotland|Senegal|Serbia|Singapore|Slovakia|Slovenia|Somalia|South "
    "Africa|South Korea: korea|Spain|Sri Lanka|Sudan|Sweden|Switzerland|Syria|Taiwan|Tajikistan|"
    "Tanzania|Thailand|Togo|Trinidad and Tobago|Tunisia|Turkey: turkiye|Turkmenistan|Uganda|"
    "Ukraine|United Arab Emirates: uae, the uae|United Kingdom: uk, u.k., the uk, the u.k., "
    "britain, great britain, the united kingdom|United States: us, u.s., usa, u.s.a., the us, "
    "the u.s., the usa, america, the states, the united states, united states of america|"
    "Uruguay|Uzbekistan|Venezuela|Vietnam|Wales|Yemen|Zambia|Zimbabwe"
)
_REGIONS = _canon(
    "Alabama|Alaska|Arizona|Arkansas|California|Colorado|Connecticut|Delaware|Florida|Hawaii|"
    "Idaho|Illinois|Indiana|Iowa|Kansas|Kentucky|Louisiana|Maine|Maryland|Massachusetts|"
    "Michigan|Minnesota|Mississippi|Missouri|Montana|Nebraska|Nevada|New Hampshire|New Jersey|"
    "New Mexico|North Carolina|North Dakota|Ohio|Oklahoma|Oregon|Pennsylvania|Rhode Island|"
    "South Carolina|South Dakota|Tennessee|Texas|Utah|Vermont|Virginia|West Virginia|Wisconsin|"
    "Wyoming|Ontario|Quebec|British Columbia|Alberta|Manitoba|Saskatchewan|Nova Scotia|"
    "New South Wales|Queensland|Tasmania|Bavaria|Catalonia|Andalusia|Tuscany|Algarve"
)
# Places that name a city in one reading and a state or country in another.
_AMBIGUOUS_PLACES = _words("georgia washington victoria")
_LANGUAGES = _canon(
    "English|Spanish: castilian|Portuguese: brazilian portuguese, european portuguese|French|"
    "German|Italian|Dutch: flemish|Swedish|Norwegian|Danish|Finnish|Icelandic|Polish|Czech|"
    "Slovak|Hungarian|Romanian|Bulgarian|Greek|Turkish|Russian|Ukrainian|Serbian|Croatian|"
    "Bosnian|Slovenian|Albanian|Lithuanian|Latvian|Estonian|Arabic|Hebrew|Persian: farsi|Urdu|"
    "Hindi|Bengali: bangla|Punjabi|Gujarati|Marathi|Tamil|Telugu|Kannada|Malayalam|Nepali|"
    "Sinhala|Chinese|Mandarin: mandarin chinese|Cantonese|Japanese|Korean|Vietnamese|Thai|"
    "Indonesian: bahasa|Malay|Tagalog|Filipino|Swahili|Amharic|Yoruba|Igbo|Hausa|Zulu|Xhosa|"
    "Afrikaans|Catalan|Basque|Galician|Welsh|Irish: gaelic|Latin|Esperanto|"
    "American Sign Language: asl|British Sign Language: bsl"
)
_DEMONYMS = _canon(
    "American|British|Canadian|Mexican|Brazilian|Portuguese|Spanish|French|German|Italian|Dutch|"
    "Irish|Scottish|Welsh|English|Swedish|Norwegian|Danish|Finnish|Polish|Russian|Ukrainian|"
    "Greek|Turkish|Indian|Pakistani|Chinese|Japanese|Korean|Vietnamese|Filipino|Thai|Indonesian|"
    "Australian|Nigerian|Kenyan|Ghanaian|South African|Egyptian|Moroccan|Argentinian: argentine|"
    "Chilean|Colombian|Peruvian|Venezuelan|Cuban|Israeli|Iranian|Swiss|Austrian|Belgian|Czech|"
    "Hungarian|Romanian|Croatian|Serbian|Lebanese|Ethiopian|Jamaican|New Zealander: kiwi"
)
_DATABASES = _canon(
    "Postgres: postgresql, pg, postgre|MySQL|MariaDB|MongoDB: mongo|SQLite|Oracle|SQL Server: "
    "mssql, microsoft sql server|DynamoDB|Cassandra|Redis|CockroachDB: cockroach|Snowflake|"
    "BigQuery|ClickHouse|Elasticsearch|OpenSearch|Neo4j|Couchbase|CouchDB|Firestore|Supabase|"
    "PlanetScale|TimescaleDB|Spanner|Aurora|ScyllaDB|Db2|Teradata|Vitess|TiDB|DuckDB|"
    "SingleStore|Milvus|Pinecone|InfluxDB"
)
_PLANS = _words(
    "free basic starter hobby personal pro plus premium team teams business enterprise "
    "professional standard growth scale ultimate essentials developer individual"
)
_NOT_PLANS = _words(
    "payment meal data phone cell insurance workout training diet retirement savings treatment "
    "lesson study exercise mobile health family annual monthly yearly"
)
_JOB_HEADS = _words(
    "engineer developer programmer designer manager director lead architect analyst scientist "
    "researcher consultant teacher professor lecturer tutor nurse doctor physician surgeon dentist "
    "pharmacist therapist psychologist psychiatrist counselor counsellor lawyer attorney paralegal "
    "accountant auditor banker trader economist writer author journalist editor reporter "
    "photographer illustrator musician chef cook baker barista bartender waiter waitress cashier "
    "clerk receptionist secretary administrator officer agent specialist coordinator technician "
    "mechanic electrician plumber carpenter contractor firefighter paramedic pilot driver farmer "
    "student intern freelancer entrepreneur founder co-founder cofounder ceo cto cfo coo cmo cio "
    "vp president executive marketer recruiter strategist producer veterinarian vet librarian "
    "statistician physicist chemist biologist translator interpreter tester sre devops pm "
    "instructor coach trainer caregiver nanny soldier detective principal curator stylist "
    "hairdresser barber realtor broker actuary investor advisor adviser midwife radiologist "
    "dietitian nutritionist physiotherapist administrator salesperson copywriter animator "
    "underwriter optometrist archivist social-worker"
)
_LEADERS = _words("ceo cto cfo coo cmo cio vp president founder co-founder cofounder head director")
_ACRONYMS = _words("ceo cto cfo coo cmo cio cpo vp svp evp qa ux ui sre it hr ml ai pm pr seo ios")
_TITLE_FILLER = re.compile(
    r"^(?:(?:good|great|proud|happy|decent|real|full-time|part-time|professional|working)\s+)+",
    re.IGNORECASE,
)
_SOCIAL = _words(
    "facebook instagram twitter tiktok reddit discord strava linkedin snapchat pinterest "
    "youtube twitch tumblr threads mastodon bluesky weightwatchers toastmasters"
)
_INSTITUTION = re.compile(
    r"\b(?:university|college|school|institute|academy|polytechnic|conservatory|mit|ucla|nyu)\b",
    re.IGNORECASE,
)
_DIETS = _canon(
    "vegetarian|vegan|pescatarian: pescetarian, pescaterian|flexitarian|keto|paleo|"
    "plant-based: plant based|gluten-free: gluten free|dairy-free: dairy free|kosher|halal|"
    "low-carb: low carb|mediterranean"
)
_CONDITIONS = _canon(
    "diabetes: diabetic|type 1 diabetes|type 2 diabetes|asthma: asthmatic|celiac disease: "
    "coeliac disease, celiac, coeliac|epilepsy: epileptic|hypertension: high blood pressure|"
    "migraines|ADHD|autism: autistic|anxiety|depression|arthritis|IBS|Crohn's disease: crohn's|"
    "lupus|psoriasis|eczema|sleep apnea|multiple sclerosis|insomnia|PCOS|endometriosis|"
    "fibromyalgia|lactose intolerance: lactose intolerant|gluten intolerance: gluten intolerant|"
    "hypothyroidism|PTSD|OCD|bipolar disorder: bipolar|dyslexia: dyslexic|heart disease|"
    "kidney disease|long covid"
)
_ALLERGENS = _canon(
    "peanuts: peanut|tree nuts: tree nut|nuts: nut|eggs: egg|shellfish|fish|milk|dairy|soy|wheat|"
    "gluten|sesame|penicillin|latex|pollen|dust|dust mites: dust mite|cats: cat|dogs: dog|"
    "bees: bee, bee stings, bee sting|strawberries: strawberry|almonds: almond|cashews: cashew|"
    "walnuts: walnut|shrimp|mustard|celery|lupin|sulfites|ibuprofen|aspirin|sulfa drugs"
)
_VAGUE = _words(
    "everything anything something it that this stuff things them lots food foods some many "
    "most certain several all seasonal bad severe mild terrible spring environmental"
)
_SPECIES = _canon(
    "dog: dogs|cat: cats|puppy: puppies|kitten: kittens|rabbit: rabbits|bunny: bunnies|"
    "hamster: hamsters|guinea pig: guinea pigs|parrot: parrots|bird: birds|budgie: budgies|"
    "fish|goldfish|turtle: turtles|tortoise: tortoises|snake: snakes|lizard: lizards|"
    "gecko: geckos|horse: horses|pony: ponies|ferret: ferrets|chinchilla: chinchillas|"
    "hedgehog: hedgehogs|chicken: chickens|goat: goats|golden retriever: golden retrievers|"
    "labrador: labradors, lab|corgi: corgis|husky: huskies|beagle: beagles|poodle: poodles|"
    "pug: pugs|dachshund: dachshunds|chihuahua: chihuahuas|german shepherd: german shepherds|"
    "border collie: border collies|bulldog: bulldogs|terrier: terriers"
)
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10,
}  # fmt: skip
_TIMEZONE = re.compile(
    r"^(?P<tz>(?:UTC|GMT)\s*[+-]\s*\d{1,2}(?::?\d\d)?|UTC|GMT|CET|CEST|EET|EEST|WET|WEST|BST|IST|"
    r"EST|EDT|CST|CDT|MST|MDT|PST|PDT|AKST|HST|JST|KST|AEST|AEDT|ACST|AWST|NZST|SGT|HKT|BRT|ART|"
    r"[A-Z][a-z]+/[A-Z][A-Za-z_]+(?:/[A-Z][A-Za-z_]+)?|(?i:pacific|eastern|central|mountain))"
    r"(?P<suffix>\s+(?i:time(?:\s?zone)?|standard\s+time))?$"
)
_PARTICLES = _words("de da do dos das di du del della van von der den la le of upon &")
_PROPER_BLOCK = _words(
    "i a an the my our your his her their this that monday tuesday wednesday thursday friday "
    "saturday sunday january february march april june july august september october november "
    "december christmas easter home night work school sorry fine good okay ok back here done "
    "ready glad happy excited lucky tired not so just also still really very totally pretty "
    "super always never in on at from with now currently sales marketing finance engineering "
    "it hr god lol omg yes no hey hi thanks thank yesterday today tomorrow tonight last next"
)
_STOPWORDS = _PROPER_BLOCK | _words(
    "and or but for to of by as is are was were be been being am do does did have has had can "
    "will would should could might may must about into over under after before because while "
    "there then than too me him them us we you it its itself myself yourself some any all "
    "every each other another such only own same few more most much many little big new old "
    "night day week month year morning evening today tomorrow yesterday moment place town city "
    "country area state company startup job office team bank hospital store shop restaurant "
    "cafe home house apartment flat back later anytime soon again hard lot lately usual great "
    "well busy fine together nonstop alot recently while ago few couple days weeks months years"
)
_IRREGULAR_PAST = _words(
    "went ran saw met got took made bought began found gave left wrote won lost came ate drank "
    "drove flew swam sang built caught taught brought sent spent sold paid held kept slept "
    "became broke chose fell fought grew hung led lit quit rode rose sat shot spoke stood stole "
    "threw tore woke wore dug fed fled bent hurt sped spun stuck swept wept"
)
_PARTICIPLES = _IRREGULAR_PAST | _words(
    "been gone done seen taken written given eaten driven flown grown shown spoken begun run "
    "won made had gotten ridden broken chosen fallen stolen thrown worn"
)
_UNINFLECTED = _IRREGULAR_PAST | _words("had did was were can could will would must")
# Verbs of thought, feeling and speech: their clauses are opinions or reports, not facts.
_NOT_EVENTS = _words(
    "loved liked enjoyed hated wanted needed hoped wished wondered thought felt figured guessed "
    "meant realized realised noticed knew understood forgot remembered agreed appreciated "
    "believed decided said told asked mentioned talked heard imagined expected assumed "
    "supposed missed admired adored preferred worried feared cared used lived worked planned "
    "considered intended seemed looked sounded happened managed did was were had tried "
    "promised guaranteed texted messaged replied answered explained shared posted wondered "
    "laughed cried smiled sighed noticed learnt learned"
)
_EVENT_OBJECT_BLOCK = _words(
    "so really very too quite pretty super kind kinda sort totally completely more less much "
    "like it that this these those them there what how why when where if you your home out "
    "back away over inside outside upstairs downstairs ahead through by up around along a-lot "
    "something anything everything nothing stuff hard well great fine"
)
_CONTEXT_WORDS = _words(
    "you your yours it he she him her his hers they them their theirs this that these those "
    "we us there here one"
)
_TIME_WORDS = re.compile(
    r"\b(?:this|that|last|next)\s+(?:morning|afternoon|evening|night|week|weekend|month|year|"
    r"summer|winter|spring|fall|autumn|time)\b",
    re.IGNORECASE,
)


# --- values ------------------------------------------------------------------------------------

_TOKEN = re.compile(r"[^\s,;:()\"!?]+|[,;:()\"!?]")
# What may follow a standing state ("I'm vegan now", "married for ten years"); "on Fridays" may not.
_STATE_AFTER = re.compile(
    r"^\s*(?:$|,|(?:to|with|now|since|for|again|too|anymore|any\s+more|at\s+all|these\s+days|"
    r"last|this|yesterday|today|recently|happily)\b|in\s+\d{4})",
    re.IGNORECASE,
)
_BOUNDARY = re.compile(
    r"^\s*(?:$|[,;:(]|(?:on|in|as|since|for|with|from|at|near|now|currently|today|yesterday|"
    r"tomorrow|last|next|this|starting|until|but|so|because|where|which|who|though|although|"
    r"while|full-time|part-time|remotely|these\s+days|again|too|as\s+well|right\s+now|by|after|"
    r"before|during|over|to|back|originally|ever|anymore|\d)\b)",
    re.IGNORECASE,
)


def _proper(rest: str, cased: bool, limit: int = 4) -> tuple[str, str] | None:
    """A proper-noun phrase at the start of ``rest`` (canonically cased) and the text after it."""
    words: list[str] = []
    pending: list[str] = []
    end = 0
    for token in _TOKEN.finditer(rest):
        word = token.group()
        if words and word.lower() in _PARTICLES:
            pending.append(word.lower())
            continue
        if not _name_word(word, cased):
            break
        words += [*pending, word]
        pending = []
        end = token.end()
        if len(words) >= limit:
            break
    if not words:
        return None
    phrase = " ".join(words) if cased else _title(words)
    return phrase, rest[end:]


def _name_word(word: str, cased: bool) -> bool:
    if word.lower() in _PROPER_BLOCK or not any(ch.isalpha() for ch in word):
        return False
    if "'" in word:  # a possessive ("Stripe's office") names something else
        return False
    if cased:
        return word[0].isupper()
    return word.replace("-", "").isalpha() and word not in _STOPWORDS


def _title(words: list[str]) -> str:
    return " ".join(
        w if (i and w in _PARTICLES) else w[:1].upper() + w[1:] for i, w in enumerate(words)
    )


def _bounded(found: tuple[str, str] | None) -> str | None:
    """The phrase, if what follows it ends the clause or starts a new phrase."""
    if found is None or not _BOUNDARY.match(found[1]):
        return None
    return found[0]


def _strip_the(rest: str) -> str:
    return re.sub(r"^the\s+(?=\S)", "", rest, flags=re.IGNORECASE)


def _org(rest: str, cased: bool) -> str | None:
    return _bounded(_proper(_strip_the(rest), cased))


def _split_items(rest: str) -> list[str]:
    rest = re.sub(r"\s+(?:too|as\s+well|also)$", "", rest.strip(), flags=re.IGNORECASE)
    return [i.strip() for i in re.split(r"\s*(?:,|\band\b|&|/|\bor\b)\s*", rest) if i.strip()]


def _lookup(item: str, table: dict[str, str]) -> str | None:
    words = item.lower().split()
    for size in (3, 2, 1):
        if len(words) >= size and " ".join(words[:size]) in table:
            return table[" ".join(words[:size])] if len(words) == size else None
    return None


def _job_title(raw: str) -> str | None:
    title = _TITLE_FILLER.sub("", raw.strip())
    words = title.lower().split()
    if not 0 < len(words) <= 5 or not _JOB_HEADS & set(words):
        return None
    if set(words) & (_STOPWORDS - {"of", "and", "&"}) or not all(
        w.replace("-", "").replace("/", "").isalpha() for w in words
    ):
        return None
    return " ".join(w.upper() if w in _ACRONYMS else w for w in words)


# --- rewriting to the third person ---------------------------------------------------------------

_ADVERBS = (
    r"(?:\s+(?:also|now|currently|still|actually|just|recently|finally|already|mostly|mainly|"
    r"primarily|officially|really|happily|newly|even|basically|definitely|proudly|first|once))*"
)
_HEAD = re.compile(
    rf"^[Ii](?P<aux>'m|\s+am|'ve|\s+have|'ll|\s+will|\s+was|\s+can)?(?P<adv>{_ADVERBS})"
    rf"(?:\s+(?P<verb>[A-Za-z'-]+))?",
)
_PRONOUNS = (
    (r"\bI'm\b", "they're"),
    (r"\bI am\b", "they are"),
    (r"\bI've\b", "they've"),
    (r"\bI was\b", "they were"),
    (r"\b[Ii]\b", "they"),
    (r"\bmyself\b", "themselves"),
    (r"\b[Mm]y\b", "their"),
    (r"\bmine\b", "theirs"),
    (r"\bme\b", "them"),
    (r"\bour\b", "their"),
    (r"\bours\b", "theirs"),
)
_AUX = {"'m": "is", "am": "is", "'ve": "has", "have": "has", "'ll": "will", "will": "will"}


def _third_person(clause: str) -> str:
    """``clause`` (which starts with "I" or "My") as a sentence about "User"."""
    if re.match(r"^my\b", clause, re.IGNORECASE):
        return _sentence("User's" + _rest_pronouns(clause[2:]))
    head = _HEAD.match(clause)
    if head is None:
        return _sentence(clause)
    aux = (head.group("aux") or "").strip()
    verb = head.group("verb") or ""
    if aux:
        words = ["User", _AUX.get(aux, aux) + head.group("adv"), verb]
    else:
        words = ["User" + head.group("adv"), _conjugate(verb)]
    return _sentence(" ".join(w for w in words if w) + _rest_pronouns(clause[head.end() :]))


def _conjugate(verb: str) -> str:
    lower = verb.lower()
    if lower in _UNINFLECTED or lower.endswith("ed") or "'" in lower:
        return {"don't": "doesn't"}.get(lower, verb)
    if lower in ("have", "do", "go"):
        return {"have": "has", "do": "does", "go": "goes"}[lower]
    if re.search(r"(?:s|sh|ch|x|z|o)$", lower):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lower):
        return verb[:-1] + "ies"
    return verb + "s"


def _rest_pronouns(text: str) -> str:
    for pattern, replacement in _PRONOUNS:
        text = re.sub(pattern, replacement, text)
    return text


def _sentence(text: str) -> str:
    text = " ".join(text.split()).rstrip(" .,;:-\u2013\u2014")
    return text + "."


# --- rules -------------------------------------------------------------------------------------

_I = re.IGNORECASE
_AM = rf"I(?:'m|\s+am){_ADVERBS}"
_AFTER_ORG_TITLE = re.compile(
    r"^\s+as\s+(?:a|an|the|our|their)\s+(?P<title>[\w\s/&-]+?)"
    r"(?=\s+(?:on|in|at|since|starting|from|for|last|next|this|today|tomorrow)\b|$)",
    _I,
)


def _re(*patterns: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, _I) for p in patterns)


def _match(patterns: tuple[re.Pattern[str], ...], text: str) -> re.Match[str] | None:
    for pattern in patterns:
        found = pattern.match(text)
        if found is not None:
            return found
    return None


def _say(clause: Clause, *values: str) -> str:
    """The clause about "User", with each value in its canonical spelling."""
    text = _third_person(clause.text)
    for value in values:
        found = re.search(re.escape(value), text, _I)
        if found is not None:
            text = text[: found.start()] + value + text[found.end() :]
    return text


_EMAIL_LEAD = _re(
    r"^my\s+(?:new\s+|work\s+|personal\s+|current\s+|primary\s+|main\s+)?"
    r"(?:e-?mail(?:\s+address)?|address)\s+is\s+(?:now\s+)?(?P<rest>.+)$",
    r"^(?:you\s+can\s+|please\s+)?(?:e-?mail|reach|contact|write\s+to|message)\s+me\s+"
    r"(?:at|on|via)\s+(?P<rest>.+)$",
    rf"^{_AM}\s+reachable\s+at\s+(?P<rest>.+)$",
)
_PHONE_LEAD = _re(
    r"^my\s+(?:new\s+|work\s+|cell\s+|mobile\s+|home\s+|personal\s+)?(?:phone(?:\s+number)?|"
    r"number|cell(?:\s+number)?|mobile(?:\s+number)?|whatsapp)\s+is\s+(?:now\s+)?(?P<rest>.+)$",
    r"^(?:you\s+can\s+|please\s+)?(?:call|text|reach|contact|whatsapp|ring)\s+me\s+(?:at|on)\s+"
    r"(?P<rest>.+)$",
)
_EMAIL = re.compile(r"^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$")
_PHONE = re.compile(r"^\+?[\d(][\d\s().-]{5,}\d$")


def _contact(clause: Clause) -> list[Finding]:
    found = _match(_EMAIL_LEAD, clause.text)
    if found is not None and _EMAIL.match(found["rest"].strip()):
        email = found["rest"].strip().lower()
        return [Finding("email", email, f"User's email is {email}.")]
    found = _match(_PHONE_LEAD, clause.text)
    if found is not None and _PHONE.match(found["rest"].strip()):
        raw = found["rest"].strip()
        digits = re.sub(r"\D", "", raw)
        international = raw.startswith(("+", "00"))
        digits = digits[2:] if raw.startswith("00") else digits
        if 7 <= len(digits) <= 15:
            phone = ("+" if international else "") + digits
            return [Finding("phone", phone, f"User's phone number is {phone}.")]
    return []


_NAME = _re(r"^my\s+(?:full\s+|real\s+|legal\s+)?name(?:'s|\s+is)\s+(?P<rest>.+)$")
_CALL_ME = _re(
    r"^(?:(?:you\s+can|please|just|feel\s+free\s+to|everyone|people|friends|my\s+friends)\s+)*"
    r"calls?\s+me\s+(?P<rest>.+)$",
    r"^I\s+go\s+by\s+(?P<rest>.+)$",
    r"^I\s+prefer\s+(?:to\s+be\s+called|being\s+called)\s+(?P<rest>.+)$",
)
_INTRO = re.compile(r"^I(?:'m|\s+am)\s+(?P<rest>.+)$")


def _name(clause: Clause) -> list[Finding]:
    found = _match(_NAME, clause.text)
    if found is not None:
        name = _bounded(_proper(found["rest"], clause.cased))
        return [] if name is None else [Finding("name", name, f"User's name is {name}.")]
    found = _match(_CALL_ME, clause.text)
    if found is not None:
        name = _bounded(_proper(found["rest"], clause.cased, limit=2))
        if name is not None:
            return [Finding("preferred_name", name, f"User prefers to be called {name}.")]
    return []


def _introduction(clause: Clause) -> list[Finding]:
    """ "I'm Ana": only a short capitalised clause that names nothing else we know."""
    found = _INTRO.match(clause.text)
    if found is None or not clause.cased:
        return []
    phrase = _proper(found["rest"], cased=True, limit=3)
    if phrase is None or not re.match(r"^\s*(?:$|,)", phrase[1]):
        return []
    name = phrase[0]
    if not clause.greeting and len(name.split()) < 2:
        return []  # "I'm Blessed" in Title Case is not a name
    known = (_LANGUAGES, _DEMONYMS, _COUNTRIES, _REGIONS, _DATABASES)
    if any(name.lower() in table for table in known) or name.lower() in _PLANS:
        return []
    if _TIMEZONE.match(name) or any(w.isupper() and len(w) > 1 for w in name.split()):
        return []
    return [Finding("name", name, f"User's name is {name}.", INFERRED)]


_HOME = _re(
    rf"^I(?:'ve|\s+have)?{_ADVERBS}\s+(?:live|reside|(?:moved|relocated)(?:\s+back|\s+over|"
    rf"\s+out)?)\s+(?:in|to)\s+(?P<rest>.+)$",
    rf"^{_AM}\s+(?:based|living|settled|located|residing)\s+(?:in|out\s+of)\s+(?P<rest>.+)$",
)
_FROM = _re(
    rf"^{_AM}\s+(?P<origin>originally\s+)?from\s+(?P<rest>.+)$",
    r"^I\s+(?P<origin>originally\s+come|come)\s+from\s+(?P<rest>.+)$",
    r"^I\s+(?P<origin>grew\s+up|was\s+raised)\s+in\s+(?P<rest>.+)$",
)
_BORN = _re(r"^I\s+was\s+born\s+(?P<raised>and\s+raised\s+)?in\s+(?P<rest>.+)$")


def _places(rest: str, cased: bool) -> list[tuple[str, str]] | None:
    """``[(slot kind, canonical place)]`` for "Lisbon", "Portugal", "Austin, Texas"…"""
    first = _proper(_strip_the(rest), cased)
    if first is None:
        return None
    place, after = first
    if rest.lower().startswith("the ") and f"the {place.lower()}" in _COUNTRIES:
        place = f"the {place}"  # "the States"
    found = [_place_kind(place)]
    second = re.match(r"^\s*,\s*(?P<rest>.+)$", after)
    if second is not None:
        more = _proper(_strip_the(second["rest"]), cased)
        if more is None:
            return None
        kind = _place_kind(more[0])
        if kind[0] not in ("home_country", "home_region") or found[0][0] != "home_city":
            return None
        found.append(kind)
        after = more[1]
    if not _BOUNDARY.match(after) or any(kind == "" for kind, _ in found):
        return None
    return found


def _place_kind(place: str) -> tuple[str, str]:
    key = place.lower()
    if key in _COUNTRIES:
        return "home_country", _COUNTRIES[key]
    if key in _REGIONS:
        return "home_region", _REGIONS[key]
    if key in _AMBIGUOUS_PLACES:
        return "", place
    return "home_city", place


def _home(clause: Clause) -> list[Finding]:
    found = _match(_HOME, clause.text)
    places = None if found is None else _places(found["rest"], clause.cased)
    if not places:
        return []
    where = ", ".join(value for _, value in places)
    moved = re.search(r"\b(?:moved|relocated)\b", clause.text, _I)
    text = f"User lives in {where}." if moved else _say(clause, *(value for _, value in places))
    return [Finding(kind, value, text) for kind, value in places]


def _origin(clause: Clause) -> list[Finding]:
    born = _match(_BORN, clause.text)
    if born is not None:
        places = _places(born["rest"], clause.cased)
        if not places:
            return []
        where = ", ".join(value for _, value in places)
        text = _say(clause, *(value for _, value in places))
        found = [Finding("birthplace", where, text)]
        return found + ([Finding("hometown", where, text)] if born["raised"] else [])
    found_from = _match(_FROM, clause.text)
    places = None if found_from is None else _places(found_from["rest"], clause.cased)
    if found_from is None or not places:
        return []
    # "I'm from Datadog" introduces a company: a bare "from" needs a place we know.
    if not found_from["origin"] and places[-1][0] == "home_city":
        return []
    where = ", ".join(value for _, value in places)
    return [Finding("hometown", where, _say(clause, *(value for _, value in places)))]


_TITLE_AT = re.compile(
    rf"^{_AM}\s+(?:a|an|the)\s+(?P<title>[\w\s/&-]+?)\s+(?P<prep>at|for|with|of)\s+(?P<rest>.+)$",
    _I,
)
_TITLE_ONLY = re.compile(
    rf"^{_AM}\s+(?:a|an)\s+(?P<title>[\w\s/&-]+?)(?:\s+by\s+(?:trade|profession|training))?$", _I
)
_WORK_AS = re.compile(
    rf"^I{_ADVERBS}\s+work\s+as\s+(?:a|an)\s+(?P<title>[\w\s/&-]+?)"
    r"(?:\s+(?:at|for)\s+(?P<rest>.+))?$",
    _I,
)
_EMPLOYED = _re(
    rf"^I{_ADVERBS}\s+work\s+(?:full-time\s+|part-time\s+)?(?:at|for)\s+(?P<rest>.+)$",
    rf"^{_AM}\s+(?:working|employed)\s+(?:full-time\s+|part-time\s+)?(?:at|for|by)\s+(?P<rest>.+)$",
)
# A change of job: the fact is where the user works from then on, so the text says that.
_HIRED = _re(
    rf"^I(?:'ll|\s+will|'m|\s+am)?{_ADVERBS}\s+(?:be\s+)?(?:start|starting|started|begin|beginning|"
    r"began)\s+(?:work\s+|working\s+|a\s+new\s+job\s+|my\s+new\s+job\s+)?(?:at|with)\s+(?P<rest>.+)$",
    rf"^I(?:'ve|\s+have)?{_ADVERBS}\s+(?:got\s+(?:a\s+(?:new\s+)?job|hired)\s+(?:at|with|by)|"
    r"was\s+hired\s+(?:at|by)|landed\s+a\s+(?:new\s+)?job\s+(?:at|with)|accepted\s+(?:a|an)\s+"
    r"(?:new\s+)?(?:job|offer|position)\s+(?:at|from|with))\s+(?P<rest>.+)$",
)
_JOINED = _re(rf"^I(?:'ve|\s+have)?{_ADVERBS}\s+joined\s+(?P<rest>.+)$")
_NEW_JOB_AS = re.compile(
    rf"^I(?:'ve|\s+have)?{_ADVERBS}\s+(?:started|got|landed|took|accepted|began)\s+(?:a|my)\s+"
    r"(?:new\s+)?(?:job|role|position)\s+as\s+(?:a|an)\s+(?P<title>[\w\s/&-]+?)"
    r"(?:\s+(?:at|with)\s+(?P<rest>.+?))?(?P<after>(?:\s+(?:last|this|in|on|since|two|a)\b.*)?)$",
    _I,
)


def _org_and_title(rest: str, cased: bool) -> tuple[str, str | None] | None:
    found = _proper(_strip_the(rest), cased)
    if found is None:
        return None
    org, after = found
    as_title = _AFTER_ORG_TITLE.match(after)
    title = None if as_title is None else _job_title(as_title["title"])
    if as_title is not None:
        after = after[as_title.end() :]
    return (org, title) if _BOUNDARY.match(after) else None


def _employment(org: str | None, title: str | None, text: str, confidence: float) -> list[Finding]:
    found = [] if org is None else [Finding("employer", org, text, confidence)]
    return found + ([] if title is None else [Finding("job_title", title, text, confidence)])


def _works(org: str | None, title: str | None) -> str:
    """The canonical sentence for a job change ("I start at Stripe on Monday")."""
    role = "" if title is None else f" as {'an' if title[0] in 'aeiouAEIOU' else 'a'} {title}"
    return f"User works at {org}{role}." if org else f"User works{role}."


def _employer(clause: Clause) -> list[Finding]:
    found = _TITLE_AT.match(clause.text)
    if found is not None:
        title = _job_title(found["title"])
        leader = title is not None and bool(_LEADERS & set(title.lower().split()))
        if title is None or (found["prep"].lower() == "of" and not leader):
            return []
        org = _org(found["rest"], clause.cased)
        if org is None and not re.match(r"^(?:a|an|the|my|our|one)\s", found["rest"], _I):
            return []  # "an engineer at heart"
        if title == "student":
            return [] if org is None else [Finding("education", org, _say(clause, org))]
        return _employment(org, title, _say(clause, *([org] if org else [])), DIRECT)
    new_job = _NEW_JOB_AS.match(clause.text)
    found = _WORK_AS.match(clause.text) or new_job or _TITLE_ONLY.match(clause.text)
    if found is not None:
        title = _job_title(found["title"])
        rest = found.groupdict().get("rest")
        org = None if rest is None else _org(rest, clause.cased)
        if title is None or (rest is not None and org is None):
            return []
        text = _works(org, title) if new_job else _say(clause, *([org] if org else []))
        return _employment(org, title, text, DIRECT)
    found = _match(_EMPLOYED, clause.text)
    if found is not None:
        parsed = _org_and_title(found["rest"], clause.cased)
        return [] if parsed is None else _employment(*parsed, _say(clause, parsed[0]), DIRECT)
    found = _match(_HIRED, clause.text)
    confidence = DIRECT
    if found is None:
        found = _match(_JOINED, clause.text)
        confidence = INFERRED  # "I joined Strava" is a sign-up, not a job
    parsed = None if found is None else _org_and_title(found["rest"], clause.cased)
    if parsed is None or parsed[0].lower() in _SOCIAL:
        return []
    org, title = parsed
    return _employment(org, title, _works(org, title), DIRECT if title else confidence)


_TEAM = re.compile(
    rf"^I(?:'m|\s+am|{_ADVERBS}\s+work){_ADVERBS}\s+(?:on|in|with|part\s+of)\s+the\s+"
    r"(?P<team>[\w&/-]+(?:\s+[\w&/-]+){0,2}?)\s+team(?P<after>.*)$",
    _I,
)


def _team(clause: Clause) -> list[Finding]:
    found = _TEAM.match(clause.text)
    if found is None or set(found["team"].lower().split()) & _STOPWORDS:
        return []
    team = " ".join(w if w.isupper() else w.lower() for w in found["team"].split())
    at = re.match(r"^\s+(?:at|for)\s+(?P<rest>.+)$", found["after"], _I)
    org = None if at is None else _org(at["rest"], clause.cased)
    if (at is None and not _BOUNDARY.match(found["after"])) or (at is not None and org is None):
        return []
    text = _say(clause, *([org] if org else []))
    return [Finding("team", team, text), *_employment(org, None, text, DIRECT)]


_EDUCATION = _re(
    rf"^I{_ADVERBS}\s+(?:studied|study|majored|major)(?:\s+[a-z][\w\s-]{{0,40}}?)?\s+at\s+"
    r"(?P<rest>.+)$",
    rf"^{_AM}\s+(?:studying|majoring)(?:\s+[a-z][\w\s-]{{0,40}}?)?\s+at\s+(?P<rest>.+)$",
    rf"^I(?:'ve|\s+have)?{_ADVERBS}\s+graduated\s+from\s+(?P<rest>.+)$",
    rf"^I{_ADVERBS}\s+(?P<institution>go\s+to|attend|attended|went\s+to)\s+(?P<rest>.+)$",
)


def _education(clause: Clause) -> list[Finding]:
    found = _match(_EDUCATION, clause.text)
    school = None if found is None else _org(found["rest"], clause.cased)
    if found is None or school is None:
        return []
    if found.groupdict().get("institution") and not _INSTITUTION.search(school):
        return []  # "I went to Paris" is a trip
    return [Finding("education", school, _say(clause, school))]


_SPEAK = _re(
    rf"^I(?:\s+can)?{_ADVERBS}\s+(?:speak|can\s+speak)\s+(?P<rest>.+)$",
    rf"^{_AM}\s+(?:fluent|conversational|proficient|bilingual)\s+in\s+(?P<rest>.+)$",
)
_NATIVE = _re(
    r"^my\s+(?:native|first|mother)\s+(?:language|tongue)\s+is\s+(?P<rest>.+)$",
    rf"^{_AM}\s+a\s+native\s+(?P<rest>.+?)\s+speaker$",
)
_LANGUAGE_QUALIFIERS = re.compile(
    r"^(?:a\s+little(?:\s+bit)?(?:\s+of)?|a\s+bit\s+of|some|basic|fluent|native|conversational|"
    r"decent|good|broken|passable|intermediate)\s+|\s+(?:fluently|natively|well|pretty\s+well|"
    r"fairly\s+well|a\s+little|a\s+bit|at\s+home|at\s+work|too|as\s+well)$",
    _I,
)


_LANGUAGE_CONTEXT = re.compile(r"\s+(?:with|to|when|because|for|on|since|every|most|daily)\b", _I)


def _languages(clause: Clause) -> list[Finding]:
    found = _match(_NATIVE, clause.text)
    if found is not None:
        language = _lookup(found["rest"].strip(), _LANGUAGES)
        text = f"User's native language is {language}."
        return [] if language is None else [Finding("native_language", language, text)]
    found = _match(_SPEAK, clause.text)
    if found is None:
        return []
    languages: list[str] = []
    for item in _split_items(found["rest"]):
        spoken = _LANGUAGE_CONTEXT.split(item)[0]
        language = _lookup(_LANGUAGE_QUALIFIERS.sub("", spoken).strip(), _LANGUAGES)
        if language is not None and language not in languages:
            languages.append(language)
    return [Finding("languages", lang, f"User speaks {lang}.") for lang in languages]


_ALLERGIC = _re(
    rf"^{_AM}\s+(?:(?:very|severely|deathly|mildly|highly|slightly|extremely|super|so|quite)\s+)*"
    r"allergic\s+to\s+(?P<rest>.+)$",
    rf"^I(?:'ve\s+got|\s+have\s+got|\s+have){_ADVERBS}\s+(?:a\s+|an\s+)?(?:(?:severe|mild|serious|"
    r"bad|slight|life-threatening|deadly)\s+)*(?P<rest>[\w\s,&-]+?)\s+allerg(?:y|ies)$",
)


def _allergies(clause: Clause) -> list[Finding]:
    found = _match(_ALLERGIC, clause.text)
    if found is None:
        return []
    allergens: list[str] = []
    for item in _split_items(found["rest"]):
        words = [w for w in item.lower().split() if w not in ("the", "all", "raw", "any")]
        allergen = _ALLERGENS.get(" ".join(words))
        plain = 0 < len(words) <= 2 and all(w.isalpha() and w not in _STOPWORDS for w in words)
        if allergen is None and plain and not set(words) & _VAGUE:
            allergen = " ".join(words)
        if allergen is not None and allergen not in allergens:
            allergens.append(allergen)
    return [Finding("allergies", a, f"User is allergic to {a}.") for a in allergens]


_CONDITION_LEAD = _re(
    rf"^I(?:'ve\s+got|\s+have\s+got|\s+have|'m|\s+am|\s+suffer\s+from|\s+live\s+with){_ADVERBS}\s+"
    r"(?P<rest>.+)$"
)
_DIAGNOSED = _re(
    rf"^I(?:'ve\s+been|\s+have\s+been|\s+was|\s+got){_ADVERBS}\s+diagnosed\s+with\s+(?P<rest>.+)$"
)
_CONDITION_KEYS = sorted(_CONDITIONS, key=len, reverse=True)


def _conditions(clause: Clause) -> list[Finding]:
    diagnosed = _match(_DIAGNOSED, clause.text)
    found = diagnosed or _match(_CONDITION_LEAD, clause.text)
    if found is None:
        return []
    rest = found["rest"].lower()
    for key in _CONDITION_KEYS:
        if rest.startswith(key) and _BOUNDARY.match(rest[len(key) :]):
            return [Finding("medical_conditions", _CONDITIONS[key], _say(clause))]
    if diagnosed is not None:
        words = re.split(r"\s+(?=(?:on|in|at|since|last|this|after|when|a\s+few)\b)", rest)[0]
        if 0 < len(words.split()) <= 4 and not set(words.split()) & _CONTEXT_WORDS:
            return [Finding("medical_conditions", words, _say(clause))]
    return []


_DIET_NAMES = "|".join(re.escape(k).replace(r"\ ", r"\s+") for k in sorted(_DIETS, key=len)[::-1])
_DIET = _re(
    rf"^I(?:'m|\s+am|'ve\s+been|\s+have\s+been){_ADVERBS}\s+(?:(?:a|an|fully|strictly|completely|"
    rf"100%)\s+)*(?P<diet>{_DIET_NAMES})\b(?P<after>.*)$",
    rf"^I(?:'ve|\s+have)?{_ADVERBS}\s+(?:went|gone|became|become|turned)\s+(?:a\s+|fully\s+)?"
    rf"(?P<diet>{_DIET_NAMES})\b(?P<after>.*)$",
    rf"^{_AM}\s+on\s+an?\s+(?:strict\s+)?(?P<diet>{_DIET_NAMES})\s+diet\b(?P<after>.*)$",
    rf"^I{_ADVERBS}\s+(?:follow|eat|keep)\s+(?:a\s+|an\s+)?(?:strict\s+|mostly\s+)?"
    rf"(?P<diet>{_DIET_NAMES})(?:\s+diet)?\b(?P<after>.*)$",
)
_MEATLESS = _re(
    rf"^I(?:'ve|\s+have)?{_ADVERBS}\s+(?:don't|do\s+not|no\s+longer|never|stopped|quit|gave\s+up)"
    r"(?:\s+eating|\s+eat)?\s+(?:any\s+)?(?P<what>meat(?:\s+(?:or|and)\s+fish)?|animal\s+products)"
    r"(?P<after>(?:\s+(?:anymore|any\s+more|at\s+all))?.*)$"
)


def _diet(clause: Clause) -> list[Finding]:
    found = _match(_DIET, clause.text)
    if found is None or not _STATE_AFTER.match(found["after"]) or " with" in found["after"]:
        return []
    diet = _DIETS[" ".join(found["diet"].lower().split())]
    return [Finding("diet", diet, f"User follows a {diet} diet.")]


def _meatless(clause: Clause) -> list[Finding]:
    found = _match(_MEATLESS, clause.text)
    if found is None or not _STATE_AFTER.match(found["after"]) or " with" in found["after"]:
        return []
    diet = "vegan" if found["what"].lower().startswith("animal") else "vegetarian"
    return [Finding("diet", diet, f"User follows a {diet} diet.", INFERRED)]


_HAVE = _re(
    rf"^(?P<who>I|we)(?:'ve|\s+have)?{_ADVERBS}\s+(?P<verb>have\s+got|have|got|adopted|rescued|own)"
    r"\s+(?P<rest>.+)$",
    rf"^(?P<who>I|we)'ve{_ADVERBS}\s+(?P<verb>got)\s+(?P<rest>.+)$",
)
_SPECIES_NAMES = "|".join(
    re.escape(k).replace(r"\ ", r"\s+") for k in sorted(_SPECIES, key=len)[::-1]
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


def _possessions(clause: Clause) -> list[Finding]:
    """ "I have a dog named Rex and two kids": pets, children, a spouse."""
    found = _match(_HAVE, clause.text)
    if found is None:
        return []
    rest = found["rest"]
    while _TRAILING.search(rest):
        rest = _TRAILING.sub("", rest)
    owning = found["verb"].lower() in ("have", "have got", "own") or clause.text[1:4] == "'ve"
    verb = "has" if owning else found["verb"].lower()
    findings: list[Finding] = []
    children: list[tuple[int, str, str]] = []
    for item in _split_items(rest):
        pet, child, spouse = _PET.match(item), _CHILDREN.match(item), _SPOUSE.match(item)
        if pet is not None and (
            pet["name"] is None or not clause.cased or pet["name"][0].isupper()
        ):
            findings.append(Finding("pets", _pet_value(pet), f"User {verb} {_pet_words(pet)}."))
        elif child is not None and owning:
            children.append(
                (_NUMBERS.get(child["n"].lower()) or int(child["n"]), child["kind"], item)
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
    species = _SPECIES[" ".join(pet["species"].lower().split())]
    count = _NUMBERS.get(pet["n"].lower()) or int(pet["n"])
    if count > 1:
        return f"{count} {' '.join(pet['species'].lower().split())}"
    name = pet["name"]
    return species if name is None else f"{species} named {name[:1].upper() + name[1:]}"


def _pet_words(pet: re.Match[str]) -> str:
    words = pet.group(0)
    if pet["name"] is not None:
        words = words[: pet.start("name")] + pet["name"][:1].upper() + pet["name"][1:]
    return " ".join(words.split())


_NO_CHILDREN = _re(
    r"^(?:I|we)\s+(?:don't|do\s+not)\s+have\s+(?:any\s+)?(?:kids|children)(?P<after>.*)$",
    r"^(?:I|we)\s+have\s+no\s+(?:kids|children)(?P<after>.*)$",
)
_PARENT_OF = _re(
    rf"^{_AM}\s+(?:a\s+)?(?P<single>single\s+)?(?:proud\s+|working\s+|busy\s+|stay-at-home\s+)?"
    r"(?:mom|mum|mother|dad|father|parent)\s+(?:of|to)\s+(?P<n>one|two|three|four|five|six|\d)"
    r"(?:\s+(?:kids|children|boys|girls|little\s+ones))?$"
)


def _no_children(clause: Clause) -> list[Finding]:
    found = _match(_NO_CHILDREN, clause.text)
    if found is None or not re.match(r"^\s*(?:yet)?\s*$", found["after"]):
        return []
    return [Finding("children_count", 0, "User has no children.")]


def _parent_of(clause: Clause) -> list[Finding]:
    found = _match(_PARENT_OF, clause.text)
    if found is None:
        return []
    count = _NUMBERS.get(found["n"].lower()) or int(found["n"])
    children = [Finding("children_count", count, _say(clause))]
    single = [Finding("relationship_status", "single", _say(clause), INFERRED)]
    return children + (single if found["single"] else [])


_STATUS = (
    r"married|single|engaged|divorced|widowed|separated|"
    r"in\s+a\s+(?:committed\s+|long-distance\s+|serious\s+|happy\s+)?relationship"
)
_RELATIONSHIP = _re(
    rf"^{_AM}\s+(?:(?:happily|newly|very|still)\s+)*(?P<status>{_STATUS})\b(?P<after>.*)$",
    rf"^I(?:'ve|\s+have)?{_ADVERBS}\s+(?:got|gotten)\s+(?P<status>married|engaged|divorced|"
    r"separated)\b(?P<after>.*)$",
    rf"^{_AM}\s+a\s+(?P<status>widow|widower|single\s+(?:mom|mum|mother|dad|father|parent))"
    r"\b(?P<after>.*)$",
)


def _relationship(clause: Clause) -> list[Finding]:
    found = _match(_RELATIONSHIP, clause.text)
    if found is None or not _STATE_AFTER.match(found["after"]):
        return []
    status = " ".join(found["status"].lower().split())
    if status.startswith("in a"):
        status = "in a relationship"
    elif status.startswith("widow"):
        status = "widowed"
    elif status.startswith("single"):
        status = "single"
    changed = re.match(r"^I(?:'ve|\s+have)?\W*\w*\s*(?:got|gotten)\b", clause.text, _I)
    text = f"User is {status}." if changed else _say(clause)
    return [Finding("relationship_status", status, text)]


_TIMEZONE_LEAD = _re(
    r"^my\s+time\s?zone\s+is\s+(?P<rest>.+)$",
    rf"^{_AM}\s+(?:on|in)\s+(?:the\s+)?(?P<rest>.+)$",
)


def _timezone(clause: Clause) -> list[Finding]:
    found = _match(_TIMEZONE_LEAD, clause.text)
    zone = None if found is None else _TIMEZONE.match(found["rest"].strip())
    if zone is None:
        return []
    raw = zone["tz"]
    if raw.isalpha() and raw.lower() in ("pacific", "eastern", "central", "mountain"):
        if zone["suffix"] is None:
            return []
        value = f"{raw.capitalize()} Time"
    else:
        value = re.sub(r"\s+", "", raw) if "/" not in raw else raw
    return [Finding("timezone", value, f"User's timezone is {value}.")]


_PLAN_LEAD = _re(
    rf"^(?:I|we)(?:'m|'re|\s+am|\s+are){_ADVERBS}\s+on\s+(?:the\s+|a\s+|an\s+|our\s+|my\s+)?"
    r"(?P<rest>.+)$",
    rf"^(?:I|we)(?:'ve|\s+have)?{_ADVERBS}\s+(?:upgraded|downgraded|switched|moved|changed|"
    r"subscribed|signed\s+up)(?:\s+(?:my|our)\s+(?:plan|account|subscription|workspace))?\s+"
    r"(?:to|for)\s+(?:the\s+|a\s+|an\s+)?(?P<rest>.+)$",
    r"^(?:my|our)\s+(?:current\s+)?(?:plan|subscription|tier)\s+is\s+(?:now\s+)?(?:the\s+|a\s+)?"
    r"(?P<rest>.+)$",
)
_PLAN_NAMES = _re(
    r"^(?P<name>[\w+-]+(?:\s+[\w+-]+)?)\s+(?P<kind>plan|tier|subscription|package|edition)\b"
    r"(?P<after>.*)$",
    r"^(?P<name>[\w+-]+)(?P<kind>)(?P<after>(?:\s.*)?)$",
)


def _plan(clause: Clause) -> list[Finding]:
    found = _match(_PLAN_LEAD, clause.text)
    name = None if found is None else _match(_PLAN_NAMES, found["rest"].strip())
    if name is None:
        return []
    words = name["name"].split()
    known = all(w.lower() in _PLANS for w in words)
    named = bool(name["kind"]) and all(w[0].isupper() or w.lower() in _PLANS for w in words)
    if set(w.lower() for w in words) & _NOT_PLANS or not (known or named):
        return []
    if not _BOUNDARY.match(name["after"]):
        return []
    plan = " ".join(w if w[0].isupper() else w.capitalize() for w in words)
    return [Finding("plan", plan, f"User is on the {plan} plan.")]


_DB_IS = _re(
    r"^(?:our|my|the)\s+(?:(?:main|primary|production|prod|core|current|new)\s+)*"
    r"(?:database|db|datastore|data\s+store)\s+is\s+(?:now\s+)?(?P<rest>.+)$"
)
_DB_SWITCH = _re(
    rf"^(?:I|we)(?:'ve|\s+have)?{_ADVERBS}\s+(?:switched|migrated|moved|changed)"
    r"(?:\s+(?:our|my|the))?(?:\s+(?:main|primary|production|prod))?(?P<db>\s+(?:database|db|data))?"
    r"(?:\s+from\s+\S+(?:\s+\S+)?)?\s+(?:to|onto|over\s+to)\s+(?P<rest>.+)$"
)
_DB_USE = _re(
    rf"^(?:I|we)(?:'re|'m|\s+are|\s+am)?{_ADVERBS}\s+(?:use|using|run|running|rely\s+on)\s+"
    r"(?P<rest>.+)$"
)
_DB_USE_AFTER = re.compile(
    r"^\s*(?:$|(?:as\s+(?:our|my|the)\s+(?:main\s+|primary\s+)?(?:database|db)|in\s+production|"
    r"for\s+(?:everything|our\s+(?:main\s+)?(?:database|data|db)|storage|persistence)|now|"
    r"these\s+days)\b)",
    _I,
)


def _database(clause: Clause) -> list[Finding]:
    found = _match(_DB_IS, clause.text)
    named_slot = found is not None
    if found is None:
        found = _match(_DB_SWITCH, clause.text)
        named_slot = found is not None and found["db"] is not None
    use = found is None
    if use:
        found = _match(_DB_USE, clause.text)
    parsed = None if found is None else _proper(found["rest"], clause.cased, limit=3)
    if parsed is None:
        return []
    name, after = parsed
    database = _DATABASES.get(name.lower())
    if database is None and not named_slot:
        return []
    if not (_DB_USE_AFTER if use else _BOUNDARY).match(after):
        return []
    value = database or name
    return [Finding("database", value, f"User's main database is {value}.")]


_NATIONALITY = _re(rf"^{_AM}\s+(?:a\s+|an\s+)?(?P<rest>[\w\s-]+?)(?:\s+citizen|\s+national)?$")


def _nationality(clause: Clause) -> list[Finding]:
    found = _match(_NATIONALITY, clause.text)
    demonym = None if found is None else _DEMONYMS.get(found["rest"].lower())
    return [] if demonym is None else [Finding("nationality", demonym, f"User is {demonym}.")]


# --- the free-text tail ------------------------------------------------------------------------

_EVENT = re.compile(rf"^I(?P<aux>'ve|\s+have)?{_ADVERBS}\s+(?P<verb>[a-z]+)\b(?P<rest>.*)$")
_FAVOURITE = re.compile(
    r"^my\s+(?:all-time\s+)?favou?rite\s+(?P<what>[a-z]+(?:\s+[a-z]+)?)\s+(?:is|are)\s+(?P<rest>.+)$",
    _I,
)
# "I've been feeling low", "I've been doing great": states and moods, not events.
_STATE_PROGRESSIVES = _words(
    "feeling doing keeping having getting going wanting thinking hoping wondering dying loving "
    "enjoying missing meaning trying struggling decompressing slogging"
)
_TAIL_CUT = re.compile(r",|\s+(?:which|who|where)\s+", re.IGNORECASE)
# "working on for a while": a preposition left without its object (a relative clause's remnant).
_DANGLING = re.compile(
    r"\b(?:on|at|in|with|to|for|about|from|of)\s+(?:on|at|in|with|to|for|about|from|of)\b|"
    r"\b(?:on|at|in|with|to|for|about|from|of)$",
    re.IGNORECASE,
)
_GOT_OBJECTS = _words(
    "a an my our the some new two three four five promoted accepted hired into certified"
)
_HAD_OBJECTS = re.compile(r"^\s+(?:surgery|an?\s+(?:\w+\s+)?(?:baby|surgery|operation|accident))\b")


def _free_text(clause: Clause) -> list[Finding]:
    """A first-person past event no rule places, or a stated favourite; otherwise nothing."""
    favourite = _FAVOURITE.match(clause.text)
    if favourite is not None:
        if _plain(favourite["rest"], limit=8):
            return [Finding(None, None, _third_person(clause.text), FREE_TEXT)]
        return []
    event = _TAIL_CUT.split(clause.text, maxsplit=1)[0]
    found = _EVENT.match(event)
    if found is None or not _event_verb(found["aux"], found["verb"], found["rest"]):
        return []
    if len(event.split()) > MAX_FREE_TEXT_WORDS or _DANGLING.search(found["rest"]):
        return []
    content = found["rest"].split(maxsplit=1)[-1] if found["verb"] == "been" else found["rest"]
    if not _plain(content, limit=None):
        return []
    return [Finding(None, None, _third_person(event), FREE_TEXT)]


def _event_verb(aux: str | None, verb: str, rest: str) -> bool:
    words = rest.lower().split()
    following = words[0] if words else ""
    if verb in _NOT_EVENTS and verb != "had":
        return False
    if following in _EVENT_OBJECT_BLOCK:
        return False
    if verb == "had":
        return bool(_HAD_OBJECTS.match(rest))
    if verb == "got":
        return not aux and following in _GOT_OBJECTS  # "I've got" is possession
    if aux:
        if verb == "been":
            progressive = following.endswith("ing") and following not in _STATE_PROGRESSIVES
            return following == "to" or (progressive and words[1:2] != ["hard"])
        return verb in _PARTICIPLES or (verb.endswith("ed") and len(verb) > 4)
    return verb in _IRREGULAR_PAST or (verb.endswith("ed") and len(verb) > 4)


def _plain(text: str, limit: int | None) -> bool:
    """Self-contained: no pronoun that needs the conversation to resolve, some content."""
    words = re.findall(r"[\w'-]+", _TIME_WORDS.sub("", text).lower())
    if limit is not None and len(words) > limit:
        return False
    if any(w in _CONTEXT_WORDS or w.removesuffix("'s") in _CONTEXT_WORDS for w in words):
        return False
    return any(len(w) >= 3 and w not in _STOPWORDS for w in words)


_RULES: tuple[Rule, ...] = (
    _contact,
    _name,
    _database,
    _home,
    _origin,
    _employer,
    _team,
    _education,
    _languages,
    _allergies,
    _conditions,
    _diet,
    _meatless,
    _possessions,
    _parent_of,
    _relationship,
    _timezone,
    _plan,
    _nationality,
    _introduction,
)
# A negated clause says what is not so; only these rules can represent that.
_NEGATION_RULES: tuple[Rule, ...] = (_meatless, _no_children)
