"""The word lists the rules read.

Places, languages, demonyms, databases, plans, jobs, diets, conditions,
allergens and species (canonical spellings keyed by lower-case name or alias),
and the closed-class words that tell a name, a state or an event from
anything else.
"""

from __future__ import annotations

import re

__all__ = [
    "ACRONYMS",
    "ALLERGENS",
    "AMBIGUOUS_PLACES",
    "CONDITIONS",
    "CONTEXT_WORDS",
    "COUNTRIES",
    "DATABASES",
    "DEMONYMS",
    "DIETS",
    "EVENT_OBJECT_BLOCK",
    "GOT_OBJECTS",
    "INSTITUTION",
    "IRREGULAR_PAST",
    "JOB_HEADS",
    "LANGUAGES",
    "LEADERS",
    "NOT_EVENTS",
    "NOT_PLANS",
    "NUMBERS",
    "PARTICIPLES",
    "PARTICLES",
    "PLANS",
    "PROPER_BLOCK",
    "REGIONS",
    "SOCIAL",
    "SPECIES",
    "STATE_PROGRESSIVES",
    "STOPWORDS",
    "TIMEZONE",
    "TIME_WORDS",
    "TITLE_FILLER",
    "UNINFLECTED",
    "VAGUE",
]


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


COUNTRIES = _canon(
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
REGIONS = _canon(
    "Alabama|Alaska|Arizona|Arkansas|California|Colorado|Connecticut|Delaware|Florida|Hawaii|"
    "Idaho|Illinois|Indiana|Iowa|Kansas|Kentucky|Louisiana|Maine|Maryland|Massachusetts|"
    "Michigan|Minnesota|Mississippi|Missouri|Montana|Nebraska|Nevada|New Hampshire|New Jersey|"
    "New Mexico|North Carolina|North Dakota|Ohio|Oklahoma|Oregon|Pennsylvania|Rhode Island|"
    "South Carolina|South Dakota|Tennessee|Texas|Utah|Vermont|Virginia|West Virginia|Wisconsin|"
    "Wyoming|Ontario|Quebec|British Columbia|Alberta|Manitoba|Saskatchewan|Nova Scotia|"
    "New South Wales|Queensland|Tasmania|Bavaria|Catalonia|Andalusia|Tuscany|Algarve"
)
# Places that name a city in one reading and a state or country in another.
AMBIGUOUS_PLACES = _words("georgia washington victoria")
# Everyday words that are also some town's name ("moved back in spring"): in lower case they
# are the word, never the town.
COMMON_WORD_PLACES = _words(
    "spring summer autumn fall winter time march may university college paradise heaven "
    "union liberty independence eden"
)
LANGUAGES = _canon(
    # With the names Spanish and Portuguese speakers type ("hablo inglés", "falo alemão").
    "English: inglés, ingles, inglês|Spanish: castilian, español, espanol, castellano, espanhol|"
    "Portuguese: brazilian portuguese, european portuguese, portugués, portugues, português|"
    "French: francés, frances, francês|German: alemán, aleman, alemão|Italian: italiano|"
    "Dutch: flemish|Swedish|Norwegian|Danish|Finnish|Icelandic|Polish|Czech|"
    "Slovak|Hungarian|Romanian|Bulgarian|Greek|Turkish|Russian|Ukrainian|Serbian|Croatian|"
    "Bosnian|Slovenian|Albanian|Lithuanian|Latvian|Estonian|Arabic|Hebrew|Persian: farsi|Urdu|"
    "Hindi|Bengali: bangla|Punjabi|Gujarati|Marathi|Tamil|Telugu|Kannada|Malayalam|Nepali|"
    "Sinhala|Chinese|Mandarin: mandarin chinese|Cantonese|Japanese|Korean|Vietnamese|Thai|"
    "Indonesian: bahasa|Malay|Tagalog|Filipino|Swahili|Amharic|Yoruba|Igbo|Hausa|Zulu|Xhosa|"
    "Afrikaans|Catalan: català, catalán|Basque|Galician|Welsh|Irish: gaelic|Latin|Esperanto|"
    "American Sign Language: asl|British Sign Language: bsl"
)
DEMONYMS = _canon(
    "American|British|Canadian|Mexican|Brazilian|Portuguese|Spanish|French|German|Italian|Dutch|"
    "Irish|Scottish|Welsh|English|Swedish|Norwegian|Danish|Finnish|Polish|Russian|Ukrainian|"
    "Greek|Turkish|Indian|Pakistani|Chinese|Japanese|Korean|Vietnamese|Filipino|Thai|Indonesian|"
    "Australian|Nigerian|Kenyan|Ghanaian|South African|Egyptian|Moroccan|Argentinian: argentine|"
    "Chilean|Colombian|Peruvian|Venezuelan|Cuban|Israeli|Iranian|Swiss|Austrian|Belgian|Czech|"
    "Hungarian|Romanian|Croatian|Serbian|Lebanese|Ethiopian|Jamaican|New Zealander: kiwi"
)
DATABASES = _canon(
    "PostgreSQL: postgres, pg, postgre|MySQL|MariaDB|MongoDB: mongo|SQLite|Oracle|SQL Server: "
    "mssql, microsoft sql server|DynamoDB|Cassandra|Redis|CockroachDB: cockroach|Snowflake|"
    "BigQuery|ClickHouse|Elasticsearch|OpenSearch|Neo4j|Couchbase|CouchDB|Firestore|Supabase|"
    "PlanetScale|TimescaleDB|Spanner|Aurora|ScyllaDB|Db2|Teradata|Vitess|TiDB|DuckDB|"
    "SingleStore|Milvus|Pinecone|InfluxDB"
)
PLANS = _words(
    "free basic starter hobby personal pro plus premium team teams business enterprise "
    "professional standard growth scale ultimate essentials developer individual"
)
NOT_PLANS = _words(
    "payment meal data phone cell insurance workout training diet retirement savings treatment "
    "lesson study exercise mobile health family annual monthly yearly"
)
JOB_HEADS = _words(
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
LEADERS = _words("ceo cto cfo coo cmo cio vp president founder co-founder cofounder head director")
ACRONYMS = _words("ceo cto cfo coo cmo cio cpo vp svp evp qa ux ui sre it hr ml ai pm pr seo ios")
TITLE_FILLER = re.compile(
    r"^(?:(?:good|great|proud|happy|decent|real|full-time|part-time|professional|working)\s+)+",
    re.IGNORECASE,
)
SOCIAL = _words(
    "facebook instagram twitter tiktok reddit discord strava linkedin snapchat pinterest "
    "youtube twitch tumblr threads mastodon bluesky weightwatchers toastmasters"
)
INSTITUTION = re.compile(
    r"\b(?:university|college|school|institute|academy|polytechnic|conservatory|mit|ucla|nyu)\b",
    re.IGNORECASE,
)
DIETS = _canon(
    "vegetarian|vegan|pescatarian: pescetarian, pescaterian|flexitarian|keto|paleo|"
    "plant-based: plant based|gluten-free: gluten free|dairy-free: dairy free|kosher|halal|"
    "low-carb: low carb|mediterranean"
)
CONDITIONS = _canon(
    "diabetes: diabetic|type 1 diabetes|type 2 diabetes|asthma: asthmatic|coeliac disease: "
    "celiac disease, celiac, coeliac|epilepsy: epileptic|hypertension: high blood pressure|"
    "migraines|ADHD|autism: autistic|anxiety|depression|arthritis|IBS|Crohn's disease: crohn's|"
    "lupus|psoriasis|eczema|sleep apnea|multiple sclerosis|insomnia|PCOS|endometriosis|"
    "fibromyalgia|lactose intolerance: lactose intolerant|gluten intolerance: gluten intolerant|"
    "hypothyroidism|PTSD|OCD|bipolar disorder: bipolar|dyslexia: dyslexic|heart disease|"
    "kidney disease|long covid"
)
ALLERGENS = _canon(
    "peanuts: peanut|tree nuts: tree nut|nuts: nut|eggs: egg|shellfish|fish|milk|dairy|soy|wheat|"
    "gluten|sesame|penicillin|latex|pollen|dust|dust mites: dust mite|cats: cat|dogs: dog|"
    "bees: bee, bee stings, bee sting|strawberries: strawberry|almonds: almond|cashews: cashew|"
    "walnuts: walnut|shrimp|mustard|celery|lupin|sulfites|ibuprofen|aspirin|sulfa drugs"
)
VAGUE = _words(
    "everything anything something it that this stuff things them lots food foods some many "
    "most certain several all seasonal bad severe mild terrible spring environmental"
)
SPECIES = _canon(
    "dog: dogs, doggo, doggos, pooch|cat: cats, kitty, kitties|puppy: puppies, pup, pups|"
    "kitten: kittens|rabbit: rabbits|bunny: bunnies|"
    "hamster: hamsters|guinea pig: guinea pigs|parrot: parrots|bird: birds|budgie: budgies|"
    "fish|goldfish|turtle: turtles|tortoise: tortoises|snake: snakes|lizard: lizards|"
    "gecko: geckos|horse: horses|pony: ponies|ferret: ferrets|chinchilla: chinchillas|"
    "hedgehog: hedgehogs|chicken: chickens|goat: goats|golden retriever: golden retrievers|"
    "labrador: labradors, lab|corgi: corgis|husky: huskies|beagle: beagles|poodle: poodles|"
    "pug: pugs|dachshund: dachshunds|chihuahua: chihuahuas|german shepherd: german shepherds|"
    "border collie: border collies|bulldog: bulldogs|terrier: terriers"
)
NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10,
}  # fmt: skip
TIMEZONE = re.compile(
    r"^(?P<tz>(?:UTC|GMT)\s*[+-]\s*\d{1,2}(?::?\d\d)?|UTC|GMT|CET|CEST|EET|EEST|WET|WEST|BST|IST|"
    r"EST|EDT|CST|CDT|MST|MDT|PST|PDT|AKST|HST|JST|KST|AEST|AEDT|ACST|AWST|NZST|SGT|HKT|BRT|ART|"
    r"[A-Z][a-z]+/[A-Z][A-Za-z_]+(?:/[A-Z][A-Za-z_]+)?|(?i:pacific|eastern|central|mountain))"
    r"(?P<suffix>\s+(?i:time(?:\s?zone)?|standard\s+time))?"
    # What chat adds after the zone: "CET now fyi".
    r"(?:\s+(?i:now|too|again|btw|fyi|these\s+days|from\s+now\s+on|going\s+forward|actually))*$"
)
PARTICLES = _words("de da do dos das di du del della van von der den la le of upon &")
PROPER_BLOCK = _words(
    "i a an the my our your his her their this that monday tuesday wednesday thursday friday "
    "saturday sunday january february march april june july august september october november "
    "december christmas easter home night work school sorry fine good okay ok back here done "
    "ready glad happy excited lucky tired not so just also still really very totally pretty "
    "super always never in on at from with now currently sales marketing finance engineering "
    "it hr god lol omg yes no hey hi thanks thank yesterday today tomorrow tonight last next agora "
    "ahora btw tbh thx pls plz imo since until till ago"
)
STOPWORDS = PROPER_BLOCK | _words(
    "and or but for to of by as is are was were be been being am do does did have has had can "
    "will would should could might may must about into over under after before because while "
    "there then than too me him them us we you it its itself myself yourself some any all "
    "every each other another such only own same few more most much many little big new old "
    "night day week month year morning evening today tomorrow yesterday moment place town city "
    "country area state company startup job office team bank hospital store shop restaurant "
    "cafe home house apartment flat back later anytime soon again hard lot lately usual great "
    "well busy fine together nonstop alot recently while ago few couple days weeks months years "
    "these those fortnight"
)
IRREGULAR_PAST = _words(
    "went ran saw met got took made bought began found gave left wrote won lost came ate drank "
    "drove flew swam sang built caught taught brought sent spent sold paid held kept slept "
    "became broke chose fell fought grew hung led lit quit rode rose sat shot spoke stood stole "
    "threw tore woke wore dug fed fled bent hurt sped spun stuck swept wept"
)
PARTICIPLES = IRREGULAR_PAST | _words(
    "been gone done seen taken written given eaten driven flown grown shown spoken begun run "
    "won made had gotten ridden broken chosen fallen stolen thrown worn"
)
UNINFLECTED = IRREGULAR_PAST | _words("had did was were can could will would must")
# Verbs of thought, feeling and speech: their clauses are opinions or reports, not facts.
NOT_EVENTS = _words(
    "loved liked enjoyed hated wanted needed hoped wished wondered thought felt figured guessed "
    "meant realized realised noticed knew understood forgot remembered agreed appreciated "
    "believed decided said told asked mentioned talked heard imagined expected assumed "
    "supposed missed admired adored preferred worried feared cared used lived worked planned "
    "considered intended seemed looked sounded happened managed did was were had tried "
    "promised guaranteed texted messaged replied answered explained shared posted wondered "
    "laughed cried smiled sighed noticed learnt learned"
)
EVENT_OBJECT_BLOCK = _words(
    "so really very too quite pretty super kind kinda sort totally completely more less much "
    "like it that this these those them there what how why when where if you your home out "
    "back away over inside outside upstairs downstairs ahead through by up around along a-lot "
    "something anything everything nothing stuff hard well great fine"
)
CONTEXT_WORDS = _words(
    "you your yours it he she him her his hers they them their theirs this that these those "
    "we us there here one"
)
TIME_WORDS = re.compile(
    r"\b(?:this|that|last|next)\s+(?:morning|afternoon|evening|night|week|weekend|month|year|"
    r"summer|winter|spring|fall|autumn|time)\b",
    re.IGNORECASE,
)

# "I've been feeling low", "I've been doing great": states and moods, not events.
STATE_PROGRESSIVES = _words(
    "feeling doing keeping having getting going wanting thinking hoping wondering dying loving "
    "enjoying missing meaning trying struggling decompressing slogging"
)
# What follows "I got" in an event ("I got promoted", "I got a new bike").
GOT_OBJECTS = _words(
    "a an my our the some new two three four five promoted accepted hired into certified"
)
