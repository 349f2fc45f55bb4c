"""Whose life and which time a clause of slot talk is in: the guards of the uncertain middle.

The word families of :mod:`~processors.rules.slot_talk` name a slot and a change; these
say when the change is not the speaker's own, now: someone else's life, a trip or a
visit, a time before a change, a reminder of what was said, another service's plan.
A request put as a question ("could you use she/her for me?") is still a statement of
what the speaker wants from now on.
"""

from __future__ import annotations

import re

__all__ = [
    "ADVERTISED",
    "DONE_TO_ME",
    "ELSEWHERE",
    "HANDSET_WORDS",
    "MISNAMED",
    "NOT_A_HOME",
    "OTHER_SERVICE",
    "PARTNER",
    "PAST_ONLY",
    "REQUEST",
    "RESTATING",
    "ROUTINE",
    "SAME_AGAIN",
    "SERVICE_SLOTS",
    "SOMEONE",
    "SO_FAR",
    "THEIRS",
    "THESE_DAYS",
]

_I = re.IGNORECASE

# The clause is set elsewhere than the speaker's home or life: a trip, a visit, a stay.
ELSEWHERE = re.compile(
    r"\b(?:trip|holiday|vacation|visiting|visit|for\s+the\s+(?:weekend|week|conference)|"
    r"conference|offsite|off-site|away\s+day|for\s+the\s+(?:day|night|event|meeting|party|"
    r"wedding|launch)|back\s+(?:next|(?:on\s+)?(?:monday|tuesday|wednesday|thursday|friday|saturday|"
    r"sunday)|on\s+(?:the\s+)?\d+)|"
    r"flight|hotel|airbnb|landed|jet\s*lag(?:ged)?|dog-?sitting|pet-?sitting|house-?sitting|"
    r"babysitting|someone's|"
    # At someone's place, not moved to it ("moved back home to my mum's").
    r"(?<!to\smy\s)(?<!into\smy\s)(?:friend|sister|brother|mum|mom|dad|neighbou?r|boss|"
    r"partner|cousin)'s)\b",
    _I,
)

# Someone near the speaker, whose changes are theirs: "my buddy just got hired at spotify".
_PEOPLE = (
    r"sister|brother|sis|bro|sibling|mom|mum|mother|dad|father|parents?|friend|buddy|mate|pal|"
    r"bestie|bff|partner|husband|wife|hubby|boss|manager|colleague|coworker|co-worker|"
    r"teammate|son|daughter|kids?|cousin|aunt|uncle|niece|nephew|grandma|grandpa|grand?dad|granny|"
    r"grandparents|gran|nan|"
    r"grandmother|grandfather|in-laws?|girlfriend|boyfriend|gf|bf|fianc[eé]e?|roommate|"
    r"flatmate|housemate|neighbou?r|landlord|ex|sister-in-law|brother-in-law|family|folks|"
    r"herman[oa]s?|madre|padre|amig[oa]s?|vecin[oa]|irm[aã]o?|m[aã]e|pai|vizinh[oa]"
)
# Someone at work or about, named by their role: "the new ceo loves the office".
_ROLES = (
    r"church|club|choir|band|charity|parish|gym|ceo|cto|cfo|founder|director|hire|intern|guy|"
    r"girl|lady|man|woman|team\s+lead|recruiter|head(?:\s+of\s+\w+)?|dean|supervisor|principal"
)
# "my old colleagues sent me off": the people of a job left are the speaker's change.
_LEFT_BEHIND = r"(?:old|former|ex-?)\s+(?:colleague|coworker|co-worker|boss|manager|teammate)"
# "our little girl was born on tuesday": a child of the speaker's arriving is their change.
_OWN_BIRTH = (
    r"(?:my|our)\s+(?:little\s+|baby\s+|new\s+)?(?:girl|boy|son|daughter|baby|twins|kids?)\b"
    r".*\b(?:born|arrived)\b"
)
SOMEONE = re.compile(
    # Two others: "sam and jo broke up"; "me and sam broke up" is the speaker's.
    r"^(?!(?:me|i|we)\b)[a-z]+\s+(?:and|&)\s+(?!(?:i|me)\b)[a-z]+\s+(?:broke|split|got|are|were|"
    r"have|moved|just|had)\b|"
    # A group the speaker is not said to join: "the growth team is doing a reorg".
    r"^the\s+(?:\w+\s+)?(?:team|squad|department|dept|office)\s+(?:is|are|was|were|has|have|will|'s)\b|"
    # Some of a group: "half my team got made redundant".
    r"^(?:half|most|some|all|the\s+rest|a\s+lot|lots|loads|a\s+few|several|\d+|two|three|four|"
    r"five)\s+(?:of\s+)?(?:my|our|the)\s+(?:team|colleagues|department|dept|coworkers|co-workers|"
    r"office|company|org|squad|people|friends|class)\b|"
    rf"^(?!(?:my|our)\s+{_LEFT_BEHIND})(?!{_OWN_BIRTH})"
    rf"(?:(?:my|our|his|her|their|a|mi|mis|meu|minha|meus)\s+(?:best\s+|old\s+|little\s+|"
    rf"big\s+|older\s+|younger\s+)?(?:{_PEOPLE}|{_ROLES})(?:s|'s|s')?|(?:he|she)(?:'s)?|"
    rf"the\s+(?:new\s+|old\s+)?(?:{_PEOPLE}|{_ROLES})(?:s|'s|s')?)(?!\w)"
    r"(?!\s+and\s+(?:i|me)\b)",
    _I,
)

# Someone else's thing named inside the clause: "the new flat my sister got is gorgeous";
# or a change done to someone else: "the doctor took my dad off the statins".
THEIRS = re.compile(
    r"\b(?:flat|house|place|apartment|job|gig|car|phone|number|dog|cat|baby|meds)\s+(?:that\s+)?"
    rf"(?:my|our|his|her)\s+(?:{_PEOPLE})\s+(?:got|bought|found|has|had|just|adopted|rents?)\b|"
    r"\b(?:took|takes|taken|taking|put|puts|putting|switched|moved|weaned|started)\s+"
    rf"(?:my|our|his|her)\s+(?:{_PEOPLE})\s+(?:off|on|onto)\b",
    _I,
)

# The clause dates itself before a change, so what it says held then: "my uk number before
# i moved was …", "took my husband's when we married", "back when i lived in york".
PAST_ONLY = re.compile(
    r"\b(?:before|when|until|till|back\s+when)\s+(?:i|we)\s+(?:was|were|had|left|met|"
    r"got|\w+ed)\b|"
    r"\bback\s+then\b|\bat\s+the\s+time\b|\bmaiden\b|\bin\s+my\s+(?:twenties|teens|old)\b",
    _I,
)

# The turn reminds of what was said, it tells nothing new: "remember i cant have peanuts".
RESTATING = re.compile(
    r"^\W*(?:remember|reminder|just\s+a\s+reminder|as\s+(?:i|we)\s+(?:said|mentioned|told\s+you)|"
    r"like\s+i\s+(?:said|told\s+you|mentioned)|as\s+you\s+know|as\s+i've\s+said)\b",
    _I,
)

# Another service's plan, bill or card: "finally paid for spotify premium".
SERVICE_SLOTS = frozenset({"plan", "billing_cycle", "payment_method"})
OTHER_SERVICE = re.compile(
    r"\b(?:spotify|netflix|youtube|disney|hulu|hbo|max|prime|amazon|apple\s+(?:music|tv|one)|"
    r"icloud|dropbox|google\s+(?:one|drive)|chatgpt|openai|duolingo|gym|phone\s+plan|data\s+plan|"
    r"mobile\s+plan|broadband|internet|insurance|mortgage|rent|patreon|substack|xbox|playstation|"
    r"ps\s*plus|nintendo|steam|adobe|office\s+365|microsoft|notion|slack|zoom|audible|kindle|"
    r"uber|deliveroo|doordash|peloton|strava|headspace|calm|wi-?fi|vpn)\b",
    _I,
)

# A clause that opens on the speaker's partner, doing what only a couple does: the
# speaker's own relationship is in view ("my girlfriend moved in with me").
PARTNER = re.compile(
    r"^(?:my|our)\s+(?:new\s+)?(?:girlfriend|boyfriend|gf|bf|partner|husband|wife|hubby|"
    r"fianc[eé]e?|novi[oa]|namorad[oa])\b(?=.*\b(?:moved\s+in|proposed|popped\s+the\s+question|"
    r"left\s+me|dumped\s+me|broke\s+up|asked\s+me\s+out|said\s+yes|and\s+i\s+(?:got|are|split))\b|"
    # The partner's own death leaves the speaker widowed; their dog's does not.
    r"\s+(?:has\s+|had\s+|just\s+|sadly\s+)?(?:passed|died)\b)",
    _I,
)

# A request phrased as a question is a statement of what the speaker wants from now on:
# "could you use she/her for me from now on?"; what follows the opening is read.
REQUEST = re.compile(
    r"^\W*(?:(?:could|can|would|will)\s+(?:you|u)\s+|pls\s+|please\s+|"
    r"(?:i'?d|i\s+would)\s+(?:rather|prefer)(?:\s+(?:it\s+if\s+)?(?:you|u))?\s+)"
    r"(?:please\s+|pls\s+)?"
    r"(?=(?:use|call|address|refer\s+to|email|e-mail|text|message|contact|reach|ping|dm|"
    r"be\s+called|go\s+by)\b)",
    _I,
)

# Someone does to the speaker what changes a slot of theirs: "they moved me over to growth",
# "my boss fired me"; "my mum texted me" changes nothing.
DONE_TO_ME = re.compile(
    r"^(?:\S+\s+){1,3}?(?:fired|sacked|promoted|demoted|moved|transferred|let|laid|made|put|"
    r"hired|switched|relocated|dumped|bumped|poached|headhunted)\s+(?:me|us)\b",
    _I,
)

# A slot's thing described by how it goes, dated only to "these days": no change is said.
SO_FAR = re.compile(
    r"(?:\b(?:is|are|has\s+been|have\s+been|feels?)|'s|'s\s+been|'ve\s+been)\s+"
    r"(?:so\s+|really\s+|pretty\s+|kinda\s+|"
    r"way\s+too\s+|a\s+bit\s+|super\s+|honestly\s+|absolutely\s+)?(?:brutal|awful|great|amazing|"
    r"terrible|rough|fine|ok|okay|good|bad|nice|hell|crazy|insane|busy|quiet|chaotic|boring|long|"
    r"hard|tough|annoying|lovely|chill|killing\s+me|a\s+nightmare|a\s+dream|grim|mad|wild|slow|"
    r"laggy|glitchy|buggy|clingy|needy|naughty|full|a\s+disaster|a\s+mess|a\s+state)\b",
    _I,
)

# A habit on some days of the week, not a standing state: "no como carne los lunes".
ROUTINE = re.compile(
    r"\b(?:on|los|las|às|aos|nas)\s+(?:mon|tues|wednes|thurs|fri|satur|sun)days\b|"
    r"\b(?:los|las)\s+(?:lunes|martes|mi[eé]rcoles|jueves|viernes|s[aá]bados|domingos)\b|"
    r"\b(?:às|nas)\s+(?:segundas|ter[cç]as|quartas|quintas|sextas|s[aá]bados|domingos)\b|"
    r"\b(?:on|at)\s+weekends\b|\bweekdays\b",
    _I,
)

# The words that date a state to the present without saying it changed.
THESE_DAYS = re.compile(r"\b(?:these\s+days|nowadays|lately)\b", _I)

# After "new job": a job advertised is none held ("a new job posting caught my eye").
ADVERTISED = r"(?!\s+(?:posting|listing|ad|advert|opening|alert|board|search|hunt|application)s?\b)"

# Where one is that is no home: "back in the office", "we're in the gym now", "back in march".
NOT_A_HOME = (
    r"(?!\s+(?:the\s+(?:office|gym|studio|lab|game|saddle|swing|habit|car|queue)|an?|this|that|"
    r"bed|work|school|class|action|shape|business|time|touch|town\s+for|\d|"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)\w*)\b)"
)

# What a handset or an app has, not a number: "new phone case", "my phone died", "mobile team".
HANDSET_WORDS = (
    r"\s+(?:case|cover|screen|charger|battery|died|broke|dies|app|apps|team|squad|dev|game|games|"
    r"site|version|banking|data|plan|bill|contract|upgrade|is\s+(?:dead|dying|broken|cracked))\b"
)
# A handset, not a number: "new phone case arrived", "my phone died mid call".
_HANDSET = re.compile(
    rf"\b(?:phone|mobile|cell)(?={HANDSET_WORDS})|\b(?:rip|r\.i\.p\.?|dropped|smashed|cracked|broke|lost)\s+"
    r"my\s+(?:phone|mobile|cell)\b",
    _I,
)

# A card replaced, not a way of paying changed: "my card got stolen, cancelled it".
_CARD_TROUBLE = re.compile(
    r"\bcard\b.*\b(?:stolen|lost|declined|blocked|frozen|hacked|skimmed|cloned|cancell?ed\s+it)\b"
    r"(?!.*\b(?:paypal|invoice|direct\s+debit|bank\s+transfer|instead)\b)",
    _I,
)

# A move of work, not of home: "moved in-house", "moved teams", "mudei de emprego".
_WORK_MOVE = re.compile(
    r"\bmov(?:ed|ing|e)\s+(?:in-?house|jobs|teams|roles|companies|departments|squads|agencies|"
    r"careers|over\s+to\s+(?:the\s+)?\w+\s+(?:team|squad))\b|"
    r"\bmov(?:ed|ing|e)\s+(?:from\s+\w+\s+)?(?:in)?to\s+(?:marketing|sales|product|engineering|design|"
    r"finance|ops|operations|support|hr|legal|data|research|management|ux|consulting)\b|"
    r"\bmud(?:ei|amos|ou)\s+de\s+(?:emprego|trabalho|carreira|[aá]rea|time|equipe)\b",
    _I,
)
# A group moved to other premises, not the speaker to another group or role.
_PREMISES = re.compile(
    r"\bmov(?:ed|ing|e)\s+(?:in)?to\s+(?:\w+'s\s+|the\s+|our\s+|a\s+)?(?:old\s+|new\s+|bigger\s+|"
    r"smaller\s+)?(?:space|floor|building|office|room|desks?|wing)\b",
    _I,
)
# One bill, not the way of paying: "the invoice was wrong".
_A_BILL = re.compile(r"\b(?:the|this|that|last|latest|an)\s+invoice\b", _I)
# A number that is no phone's: "number 3 arrived", "wrong number called me".
_NOT_A_NUMBER = re.compile(
    r"\b(?:number|no\.?)\s*(?:\d+|two|three|four|five)\b|\bwrong\s+number\b|"
    r"\bnumber\s+(?:of|one|two|\d)\b",
    _I,
)
# A contract of work, not the plan's: "my contract wasn't renewed".
_JOB_CONTRACT = re.compile(
    r"\b(?:employment|job|work|fixed-term|temp|teaching|zero-hours|my)\s+contract\b|"
    r"\bcontract\b(?=.{0,40}\b(?:renewed|extended|ran\s+out|between|job|redundan))",
    _I,
)

# A venue, not a home: "the new place down the road does amazing tacos".
_VENUE = re.compile(
    r"\bnew\s+place\s+(?:down|round|around|across|that\s+opened|which|on\s+\w+\s+st|opened|does|"
    r"serves|has\s+(?:great|amazing|good|the\s+best))\b|"
    # The keys to a workplace or a vehicle open no new home.
    r"\bkeys\s+(?:to|for)\s+(?:the|my|our)\s+(?:new\s+)?(?:office|shop|store|studio|car|van|locker|gym)\b",
    _I,
)
# Notice given on a flat or to a cleaner, not on a job: "gave notice on the flat".
_NOTICE_ELSEWHERE = re.compile(
    r"\bnotice\s+(?:on|to)\s+(?:the|my|our)\s+(?!(?:job|boss|manager|employer|company|work|firm)\b)"
    r"\w+",
    _I,
)
# Per slot, the phrases whose words look like the slot's but name something else; the
# clause speaks about the slot only if it names it once they are taken away.
# A kind of food asked for, not the speaker's diet: "so no meat recipes", "veggie options".
_A_DISH = re.compile(
    r"\b(?:meat|fish|dairy|vegan|vegetarian|veggie|keto|halal|kosher|plant-based)\s+(?:recipes?|"
    r"dish(?:es)?|options?|meals?|menus?|restaurants?|places?|suggestions?|ideas?|brownies?)\b",
    _I,
)

# An animal word inside a compound adjective names no animal kept: "dog-friendly cafes",
# "a pet-free building".
_PET_COMPOUND = re.compile(
    r"\b(?:dog|pet|cat|puppy|kitten|animal)s?-(?:friendly|free|proof|themed|shaped|loving|lovers?)\b",
    _I,
)

MISNAMED = {
    "phone": re.compile(f"{_HANDSET.pattern}|{_NOT_A_NUMBER.pattern}", _I),
    "home_city": re.compile(f"{_WORK_MOVE.pattern}|{_VENUE.pattern}", _I),
    "employer": _NOTICE_ELSEWHERE,
    "payment_method": re.compile(f"{_CARD_TROUBLE.pattern}|{_A_BILL.pattern}", _I),
    "plan": _JOB_CONTRACT,
    "team": _PREMISES,
    "job_title": _PREMISES,
    "diet": _A_DISH,
    "pets": _PET_COMPOUND,
}

# The clause says the same holds on, or again: "still at ucl", "renewed my passport"; a
# "still" well into the clause is about something else ("…the new place still smells").
SAME_AGAIN = re.compile(
    r"^(?:\S+\s+){0,2}still\b(?!\s+(?:getting\s+used|settling|adjusting|unpacking))|"
    r"\b(?:renew(?:ed|al|ing|s)?|extended)\b",
    _I,
)
