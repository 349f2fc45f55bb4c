"""How people talk about a slot changing, in words no value rule anchors on.

The uncertain middle (``processors.rules.unsure``) asks a human about a slot when a
clause names the slot and says something moved. The value rules' cue words
(``unsure.CUES``) name a slot by its own nouns ("lease", "team", "diet"); people
mostly name it by what comes with a change: the keys to a new flat, a badge and an
onboarding week, a Duolingo streak, a thesis handed in, a vet visit for a new
kitten. These are families of such words per slot, and the markers that put the
clause in the present of a change ("as of", "officially", "ya", "agora").

They only ever make a question, never a value: a wrong question costs a human a
glance, so the families may be broad, while the guards (someone else's life, a
trip, a reminder, a bare past) are :mod:`~processors.rules.talk_guards`, and a question or
a plan stays with the caller.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from slotwise.processors.rules.talk_guards import ADVERTISED, HANDSET_WORDS, NOT_A_HOME
from slotwise.processors.rules.words import DEMONYMS, JOB_HEADS, LANGUAGES, SPECIES

__all__ = [
    "AFOOT",
    "LATELY",
    "LESS",
    "NOUNS",
    "TALK",
]

_I = re.IGNORECASE


def _alternation(words: Iterable[str]) -> str:
    """A regex alternation of the words, longest first, spaces as any whitespace."""
    ordered = sorted((str(w) for w in words), key=len, reverse=True)
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in ordered)


_LANGUAGE = _alternation(LANGUAGES)
_DEMONYM = _alternation(DEMONYMS)
_PET = _alternation(SPECIES) + r"|fur\s*baby|perr[oa]|gat[oa]|cachorr[oa]"
# With the short forms people type: "mgr at brightwave since monday".
_JOB = _alternation(
    JOB_HEADS
    | {
        "head",
        "deputy",
        "chief",
        "dev",
        "swe",
        "eng",
        "sde",
        "mgr",
        "snr",
        "sr",
        "jr",
        "svp",
        "evp",
    }
)
_NEW = r"(?:new|nuev[oa]|nov[oa])"
# The parts of a company a career moves between: "moved from marketing into product".
_FUNCTION = (
    r"marketing|sales|product|engineering|design|finance|ops|operations|support|hr|legal|data|"
    r"research|management|ux|consulting|teaching|nursing|tech"
)
# A death told by a name, "RIP biscuit", not "RIP to my mug" nor "RIP grandma".
_RIP = (
    r"\br\.?i\.?p\.?\s+(?!(?:to|in|my|the|our|this|that|me|it|your|his|her|their|mr|mrs|ms|dr|"
    r"sister|brother|mom|mum|mother|dad|father|grandma|grandpa|gran|nan|granny|grandad|aunt|"
    r"auntie|uncle|cousin|friend|legend|king|queen)\b)\w+"
)
_WORKPLACE = (
    r"bank|startup|start-up|scale-?up|agency|firm|consultancy|charity|non-?profit|ngo|fintech|"
    r"insurer|big\s+(?:four|4)|tech\s+(?:company|firm|giant)|council|saas\s+company|publisher"
)
# Per slot, the words that come with a change of it ("the keys to", "onboarding",
# "adopted"), and its plain nouns ("flat", "team", "wife"), which name the slot in any talk
# about it and so need the clause to say that something changed.
_HOME = (
    rf"{_NEW}\s+(?:place|flat|apartment|apt|house|home|city|town|digs|pad|casa|piso|"
    r"neighbou?rhood|area|landlord|postcode|zip|address|commute|street)\b|"
    # Sent to another place, not to another floor of the same one.
    r"(?:transferr?ed|relocated|posted|seconded)\s+to\b(?!\s+(?:the\s+|a\s+|our\s+)?(?:new\s+)?"
    r"(?:\w+\s+)?(?:building|floor|room|desk|team|department|dept|squad|project|account)\b)|"
    r"\b(?:we|i)(?:'ve|\s+have)?\s+(?:\w+\s+)?relocated\b|(?:gave|give|giving|handed\s+in|served)\s+"
    r"(?:our\s+|my\s+)?notice\s+on\s+(?:the|our|my)\b|(?:since|after)\s+(?:the|our|my)\s+"
    r"(?:big\s+)?move\b|keys\s+to\s+(?:the|my|our)\b|"
    r"closed\s+on\s+(?:the|a|our|my)\s+(?:\w+\s+)?(?:house|flat|"
    r"place|apartment|condo|home)\b|"
    # The home as the subject of its own sale: "the denver place closed yesterday".
    r"\b(?:the|our|my)\s+(?:\w+\s+)?(?:house|flat|place|apartment|condo)\s+(?:sale\s+)?"
    r"(?:closed|completed|sold|went\s+through)\b|"
    # A lease or a deed, not a car loan nor a petition.
    r"signed\s+(?:a|the|for\s+a|for\s+the)\b(?!.*\b(?:car|van|bike|loan|petition|waiver|nda)\b)|"
    r"unpack|boxes\b|moving\s+(?:day|van|truck|company)|packing\s+up|house\s*warming|"
    r"mudanza|mudan[cç]a|me\s+mud|nos\s+mud|se\s+mud"
)
_HOME_NOUNS = (
    r"\b(?:our|my)\s+(?:new\s+)?(?:\w+\s+)?(?:flat|apartment|apt|house|place)\b|"
    r"(?<!car\s)\blease\b|tenancy|landlord|commute|neighbou?rhood|vivo\s+en|vivimos\s+en|"
    r"moro\s+em|moramos\s+em|\brenting\b|\brent(?:ed|ing)?\s+a\s+(?:place|flat|room|house|"
    r"studio)\b|\b(?:one|two|three|four|\d)[\s-]*bed(?:room)?s?\b|\bstudio\s+(?:flat|apartment)|"
    # A household somewhere ("we're in the countryside now"); "i'm in lisbon" may be a trip.
    r"\b(?:we|i)(?:\s+now)?(?:\s+live|\s+are|'re|\s+(?:just\s+)?moved)\s+(?:\w+\s+)?(?:in|near|by)\b"
    rf"{NOT_A_HOME}"
)
_EMPLOYER = (
    rf"{_NEW}\s+(?:job|gig|company|employer|boss|manager|colleagues|contract|"
    rf"coworkers|co-workers|team(?:mates)?|trabajo|emprego|firm|startup|role)\b{ADVERTISED}|"
    # A badge or laptop handed in or first received, not what a badge says.
    r"handed\s+(?:in|back)\s+my\s+(?:\w+\s+)?(?:badge|laptop|keys|notice|resignation)|"
    r"got\s+my\s+(?:\w+\s+)?badge|onboarding|probation|exit\s+interview|leaving\s+(?:do|drinks|party)|"
    r"accepted\s+(?:the|an|their)\s+offer|signed\s+(?:the|my)\s+contract|"
    r"employment\s+contract|let\s+(?:me|us)\s+go|made\s+redundant|sacked|fired|laid\s+off|"
    r"resign|unemployed|between\s+jobs|out\s+of\s+work|out\s+of\s+(?:retail|hospitality|teaching|"
    r"nursing|academia|finance|consulting|law|tech|banking|corporate|the\s+rat\s+race)\b|"
    r"(?:quit|left|ditched|leaving)\s+(?:the\s+|my\s+)?(?:corporate|office|day|desk|9-5)\b|"
    r"(?:first|second|last)\s+(?:day|week|shift)\s+(?:at|of|in|with)\b|\bin-?house\b|"
    r"no\s+longer\s+(?:at|with|working)\b|\btook\s+me\s+on\b|\btaken\s+on\b|\bhired\s+me\b|"
    r"\bmud(?:ei|amos)\s+de\s+(?:emprego|trabalho)|cambi[eé]\s+de\s+(?:trabajo|empleo|curro)|"
    r"redundancy|contract\s+(?:wasn't|was\s+not|isn't|not)\s+(?:renewed|extended)|"
    r"between\s+(?:things|gigs|roles|contracts)|"
    r"\bsa[ií]\s+d[ao]\s+(?:empresa|emprego|firma|ag[eê]ncia|banco)|dej[eé]\s+(?:el|la|mi)\s+(?:trabajo|"
    r"empresa|curro)|renunci[eé]|pedi\s+(?:demiss[aã]o|as\s+contas)|me\s+despidieron|fui\s+demitid|(?:agency|corporate|office|startup|retail|consulting|"
    r"teaching|nursing|hospitality|big\s+tech|academic|freelance|locum|contractor|temp|agency)\s+"
    r"life\b|"
    r"leaving\s+(?:the|my)\s+(?:bank|company|firm|agency|startup|job|practice|hospital|"
    r"school|restaurant|cafe|store|shop|team)\b|"
    r"(?:old|former|previous|ex-?)\s+(?:team|job|company|employer|boss|manager|colleagues|"
    r"coworkers|office|workplace)\b|sent\s+me\s+off|send-?off|"
    r"(?:wrapped\s+up|finished|done)\s+(?:at|with)\b|onto\s+the\s+next|moving\s+on\s+from|"
    r"acquired|acquisition|merger|layoffs?|poached|headhunted|career\s+break|sabbatical|"
    r"(?:maternity|paternity|parental)\s+leave|\bretired\b|retirement|"
    r"(?:took|taking|got|landed)\s+a\s+(?:new\s+)?(?:job|role|position)\b|\b(?:got|landed)\s+the\s+job\b|"
    r"(?:start|started|starting|joined|joining)\s+(?:at|with)\b"
)
_EMPLOYER_NOUNS = (
    r"\bnotice\b|(?:job\s+)?offer\b|freelanc|self-?employed|work\s+for\s+myself|"
    r"my\s+own\s+boss|contracting\b|(?:run|running|open(?:ed|ing)?|start(?:ed|ing)?|launch(?:ed|ing)?)\s+(?:my|our)\s+own\b|"
    # A kind of place rather than its name: "at a bank these days", "office job now".
    rf"\b(?:at|for|with)\s+(?:a|an)\s+(?:\w+\s+)?(?:{_WORKPLACE})\b|"
    r"\b(?:office|desk|corporate|day|9-5|retail|warehouse)\s+job\b|"
    r"\bi\s+(?:now\s+)?(?:work|teach|lecture|nurse)\s+(?:at|for|in|nights|days|weekends)\b|"
    r"stay[\s-]at[\s-]home|full[\s-]time\s+(?:mum|mom|dad|parent)|standup|stand-up|"
    r"trabalho\s+(?:na|no|numa|num|em|pra|para)\b|trabajo\s+(?:en|para)\b"
)
_TITLE = (
    rf"(?:^|\bi\s+|\bi've\s+|\bi\s+have\s+|\bjust\s+)(?:moved|switched|went|transitioned|pivoted)\s+(?:from\s+(?:{_FUNCTION})\s+)?(?:in)?to\s+"
    rf"(?:{_FUNCTION})\b|"
    r"in\s+charge\s+of|heading\s+up|promot|bumped\s+(?:me\s+)?up|stepp(?:ed|ing)\s+up|"
    r"(?:took|taking|got|landed)\s+(?:a|the)\s+(?:\w+\s+){0,2}(?:job|role|position|title)\b|"
    r"\b(?:(?:made|making)\s+me|(?:was|been|got|am|i'm|im)\s+made)\s+(?:a\s+|an\s+|the\s+)?(?:\w+[\s-]+)?"
    rf"(?:{_JOB}|level|lead|head|manager|senior|director|partner)\b"
)
_TITLE_NOUNS = (
    rf"head\s+of|\bi\s+(?:now\s+)?work\s+as\b|\bjunior\b|mid-?level|\btrainee\b|apprentice|"
    r"\btitle\b|\brole\b|\bposition\b|\b(?:soy|sou)\s+(?:(?:el|la|o|a|un|una|um|uma)\s+)?(?:gerente|"
    r"diret[oa]r?|director[a]?|jef[ea]|coordena|coordina|engenheir|ingenier|analista|desarrollador|"
    r"desenvolvedor|enfermeir|enfermer|profesor|professor|m[eé]dic|abogad|advogad)|"
    rf"(?:senior|junior|lead|head|principal|staff)\s+(?:{_JOB})|"
    rf"(?:a|an|the)\s+(?:\w+\s+)?(?:{_JOB})\s+now\b|\b(?:{_JOB})\s+now\b|"
    rf"\b(?:been|became|become|becoming)\s+(?:a|an|the)\s+(?:\w+\s+){{0,2}}(?:{_JOB})\b|"
    # A fragment that opens on the title and the place: "mgr at brightwave since monday".
    rf"^(?:(?:a|an|the)\s+)?(?:new\s+)?(?:{_JOB})\s+(?:at|@|with)\s"
)
_LANGUAGES = (
    rf"(?:learning|studying|practi[cs]ing|picking\s+up)\s+(?:some\s+)?(?:{_LANGUAGE})\b|"
    rf"(?:{_LANGUAGE})\s+(?:classes|lessons|course|tutor|teacher)|duolingo|\bstreak\b|"
    r"language\s+(?:classes|exchange|course)"
)
_LANGUAGES_NOUNS = (
    rf"(?:my|mi|meu)\s+(?:{_LANGUAGE})\b|speaking\s+(?:{_LANGUAGE})\b|\bfluent|conversational"
)
_EDUCATION = (
    r"(?:transferr?ed|switched|changed|swapped)\s+(?:unis|universities|schools|colleges|courses|"
    r"majors?)\b|"
    r"thesis|dissertation|graduat|semester|enrol|admitted|acceptance\s+letter|"
    r"accepted\s+(?:in|into|to)\b|scholarship|\bviva\b|defended|dropped\s+out|bootcamp"
)
_EDUCATION_NOUNS = (
    r"diploma|\bdegree\b|bachelor|master|\bphd\b|doctorate|grad\s+school|undergrad|uni\b|"
    r"university|college|(?:grad|law|med|medical|nursing|night|art|business|film|summer)\s+"
    r"school|back\s+to\s+school|faculdade|universidad|\bmba\b|course\b|coursework|\bterm\b"
)
_PETS = (
    rf"adopt|rescue|rehom|{_RIP}|put\s+(?:\w+\s+){{0,3}}(?:down|to\s+sleep)\b|rainbow\s+bridge|"
    r"new\s+(?:family\s+)?member"
)
_PETS_NOUNS = rf"\b(?:{_PET})\b|\bvet\b"
_CONTACT_NOUNS = (
    r"(?:text|ping|email|e-mail|message|dm|whatsapp|reach|contact)\s+me\b"
    r"(?!\s+(?:a|an|the|your|back|later|tomorrow|tonight)\b)|"
    # "call me on my mobile" reaches the speaker; "call me Dee" names them.
    r"(?:call|ring|phone)\s+me\s+(?:on|at|instead|rather|via|any\s*time)\b|hit\s+me\s+up|"
    r"(?:on|via|over|by)\s+(?:slack|whatsapp|signal|telegram|sms|text|email|teams|imessage|"
    r"discord)\b|voice\s+notes?|\bdms?\b|prefer\s+(?:calls|texts|email|messages)"
)
_PRONOUNS_NOUNS = (
    r"pronouns|\b(?:she|he|they|ze|xe)\s*/\s*(?:her|him|them|they|she|he|hir|zir|xem)\b|"
    r"(?:use|using|go\s+by)\s+(?:she|he|they)\b"
)
_PREFERRED_NOUNS = (
    r"call\s+me\s+(?-i:[A-Z])|(?:call|calling)\s+me\s+\w+\s+(?:now|instead|from\s+now|please)|"
    r"\bgo(?:ing)?\s+by\b|nickname|prefer\s+(?:to\s+be\s+called|\w+\s+over)|"
    r"(?:just|only)\s+(?-i:[A-Z])\w+\s+(?:now|please|is\s+fine)|"
    r"\bit'?s\s+(?-i:[A-Z])\w+\s+(?:now|from\s+now|not\b)|\bbe\s+called\s+\w+"
)
_BIRTH = (
    r"\bturn(?:ed|ing|s)?\s+\d+|"
    r"\b(?:i'm|im|i\s+am)\s+(?:\d{1,2}|twenty|thirty|forty|fifty|sixty)\s+now\b"
)
_BIRTH_NOUNS = r"birthday|\bb-?day\b|\bdob\b|cumplea|anivers[aá]rio"
_RELATIONSHIP = (
    r"elope|proposed|said\s+yes|divorc|separat|split\s+up|broke\s+up|dumped|"
    r"\bwe(?:'ve|\s+have)?\s+split\b|"
    r"\b(?:with|seeing|dating)\s+\w+\s+(?:anymore|any\s+more)|called\s+it\s+quits|"
    r"ended\s+things|over\s+between\s+us|casamos|casei|me\s+cas[eé]|\bwed\b"
)
_RELATIONSHIP_NOUNS = (
    r"married|wedding|husband|wife|fianc|engaged|single\b|dating|seeing\s+someone|widow|"
    r"partner\b|(?:got|get|getting|back|moved\s+in|living|live|been)\s+together\b|"
    r"\btogether\s+(?:now|again|officially)\b|girlfriend|boyfriend|\bgf\b|\bbf\b|novi[oa]|namorad|casad|"
    r"solter[oa]|solteir[oa]"
)
# A child born, not the speaker's own birth: "born in valparaíso", "i was born in 1990".
_CHILD_BORN = (
    r"(?<!\bi\swas\s)(?<!\bim\s)(?:(?<=\bwas\s)|(?<=\bwere\s)|(?<=\bis\s)|(?<=\bare\s)|"
    r"(?<=\bgot\s)|(?<=\bbeen\s)|(?<=\bjust\s))born\b|\bborn\s+(?:last|this|yesterday|today|"
    r"early|at\s+\d|(?:on\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)day)"
)
_CHILDREN = (
    r"newborn|pregnan|became\s+(?:a\s+)?(?:mum|mom|dad|parents?|mother|father)|"
    r"(?:mum|mom|dad|parent)\s+of\s+(?:one|two|three|\d)|family\s+of\s+(?:three|four|five|six|\d)|"
    r"(?:i'm|im|i\s+am|we're|we\s+are|officially|finally)\s+(?:a\s+)?(?:mum|mom|dad|mother|father|"
    r"parents?)\b|"
    r"empty\s+nest|(?:baby\s+)?(?:#|no\.?\s*|number\s+)(?:\d|two|three|four|five)\w*\s+(?:is\s+here|"
    r"arrived|was\s+born)|baby\s+(?:#|no\.?\s*|number\s+)\w+|"
    r"\b(?:we|i)(?:'ve|\s+have|\s+just)?\s+(?:had|welcomed)\s+(?:a|our)\s+(?:little\s+|baby\s+|"
    r"beautiful\s+|healthy\s+)?(?:boy|girl|son|daughter|baby)\b"
)
_CHILDREN_NOUNS = (
    rf"\bbaby\b|{_CHILD_BORN}|\btwins\b|\bkids?\b|children|\bson\b|daughter|little\s+one|beb[eê]|"
    r"hij[oa]|filh[oa]"
)
_DIET = (
    r"animal\s+products|cut(?:ting)?\s+out\s+(?:all\s+)?(?:meat|dairy|animal|fish|gluten|sugar|"
    r"carbs)|(?:eat|eating|ate)\s+\w+\s+again|\b(?:meat|fish|dairy|bacon)\s+again\b"
)
_DIET_NOUNS = (
    r"\bvegan|vegetarian|veggie|pescatarian|plant-based|carnivore|\bketo\b|paleo|\bmeat\b|"
    r"\bfish\b|dairy|carne|pescado"
)
_DRUG = (
    r"(?:antidepressants?|antibiotics?|painkillers?|steroids?|insulin|birth\s+control|the\s+pill|"
    r"\bhrt\b|ssris?|beta\s+blockers?|statins?|blood\s+thinners?|"
    r"\w+(?:ine|pril|olol|statin|azole|pam|lam|pine|mab|sartan|cillin|mycin|done|xetine|"
    r"triptan|lukast|formin|pirin|oxin|pentin|tidine))\b"
)
_MEDICATION = (
    rf"(?:weaned|tapering|tapered|came|coming)\s+off\b|\b(?:on|off|taking|take|started|"
    rf"stopped|quit)\s+(?:the\s+|my\s+)?{_DRUG}|{_DRUG}\s+(?:now|instead)|"
    r"\bstart(?:ed|ing)?\s+(?:on|taking)\s+(?!the\b|a\b|an\b|my\b|our\b)\w+|"
    # What a prescriber did to the speaker's treatment.
    r"\b(?:gp|doc|doctor|psychiatrist|consultant|specialist|nurse)\s+(?:has\s+)?(?:switched|"
    r"changed|upped|lowered|put|took|moved|started|stopped)\s+me\b|"
    r"\b(?:gp|doc|doctor|psychiatrist|consultant|specialist)\s+(?:has\s+)?(?:halved|doubled|"
    r"upped|lowered|increased|reduced|changed|switched|stopped)\s+my\b"
)
_MEDICATION_NOUNS = (
    r"\bmeds\b|medication|\bpills?\b|tablets?\b|\bdose\b|dosage|(?:\b|\d)mg\b|prescri|inhaler"
)
_CONDITION = r"diagnos|tested\s+positive|in\s+remission|all\s+clear|turns\s+out\s+i\s+have"
_ARRANGEMENT = (
    r"\brto\b|return\s+to\s+office|(?:working|work)\s+from\s+(?:the\s+|my\s+)?(?:kitchen|bed|"
    r"sofa|couch)|desk\s+at|hot\s*desk"
)
_ARRANGEMENT_NOUNS = (
    r"\bremot(?:e|ely|ley|ly)\b|office\b|\bhybrid\b|\bwfh\b|from\s+home|days\s+(?:a|per)\s+week|"
    r"co-?working|in-office|on-?site|desde\s+casa|de\s+casa|\bremot[oa]\b|h[ií]brid[oa]|oficina|"
    r"escrit[oó]rio|presencial|home\s*office"
)
_NAME = (
    r"legal(?:ly)?\s+(?:changed|mine|now)|changed\s+it\s+legally|deed\s+poll|name\s+change|"
    r"changed\s+my\s+name|took\s+(?:his|her|their|my\s+(?:husband|wife|partner)'s)\s+(?:last\s+)?name|"
    r"\b(?:it's|i'm|im)\s+(?:mrs|ms|mr|mx|dr)\b"
)


def _compiled(patterns: dict[str, str]) -> dict[str, re.Pattern[str]]:
    return {attribute: re.compile(rf"(?:{p})", _I) for attribute, p in patterns.items()}


# Words that come with a change of a slot: a clause dated to lately is enough beside them.
TALK = _compiled(
    {
        "home_city": _HOME,
        "employer": _EMPLOYER,
        "job_title": _TITLE,
        "languages": _LANGUAGES,
        "education": _EDUCATION,
        "pets": _PETS,
        "date_of_birth": _BIRTH,
        "relationship_status": _RELATIONSHIP,
        "children_count": _CHILDREN,
        "diet": _DIET,
        "medications": _MEDICATION,
        "medical_conditions": _CONDITION,
        "work_arrangement": _ARRANGEMENT,
        "team": r"reorg|moved\s+me\s+(?:over\s+|across\s+)?to|transferr?ed\s+to|"
        r"(?:switched|changed|swapped|moved|switching|changing)\s+(?:teams|squads|departments|depts)\b",
        "plan": r"upgrad|downgrad|\b(?:down|up|back)\s+to\s+(?:the\s+)?(?:free|basic|starter|pro|"
        r"premium|team|business|enterprise)\b",
        # A new number, not a new handset: "new phone case arrived".
        "phone": rf"{_NEW}\s+(?:(?:phone\s+|mobile\s+)?number|sim|digits)|n[uú]mero\s+nuevo",
        "email": rf"{_NEW}\s+e-?mail|(?:e-?mail|gmail|outlook|hotmail|yahoo|proton\w*)\s+"
        r"(?:account\s+)?(?:got|was|has\s+been)\s+(?:hacked|compromised|deleted|closed)",
        "postal_address": rf"{_NEW}\s+(?:ad+res+|postcode|direcci[oó]n|endere[cç]o)|"
        r"\bad+res+\s+(?:\w+\s+){0,4}(?:is|'s)\s+(?:old|out\s+of\s+date|outdated)\b",
        "name": _NAME,
        "nationality": r"citizenship|naturali[sz]ed|sworn\s+in|renounc|"
        r"took\s+the\s+(?:citizenship\s+)?oath|"
        rf"officially\s+(?:an?\s+)?(?:{_DEMONYM})\b|"
        r"\b(?:a|an|now)\s+(?:\w+\s+)?citizen\b|"
        r"passport\s+(?:came\s+)?through|got\s+my\s+(?:\w+\s+)?passport\s+(?:through|at\s+last)",
    }
)
# A slot's plain nouns, beyond the cue words: the clause must say that something changed.
NOUNS = _compiled(
    {
        "home_city": _HOME_NOUNS,
        "employer": _EMPLOYER_NOUNS,
        "job_title": _TITLE_NOUNS,
        "languages": _LANGUAGES_NOUNS,
        "education": _EDUCATION_NOUNS,
        "pets": _PETS_NOUNS,
        "preferred_contact_method": _CONTACT_NOUNS,
        "pronouns": _PRONOUNS_NOUNS,
        "preferred_name": _PREFERRED_NOUNS,
        "date_of_birth": _BIRTH_NOUNS,
        "relationship_status": _RELATIONSHIP_NOUNS,
        "children_count": _CHILDREN_NOUNS,
        "diet": _DIET_NOUNS,
        "medications": _MEDICATION_NOUNS,
        "work_arrangement": _ARRANGEMENT_NOUNS,
        # The team plan is a plan.
        "team": r"\bteam\b(?!\s+(?:plan|tier|account|subscription|edition|licen[cs]e))|\bsquad\b|"
        r"department|\bdept\b",
        "plan": r"\bplan\b|\btier\b|subscription|\bpro\b|premium",
        "phone": rf"\bnumber\b|(?<!\bon\s)\b(?:phone|mobile|cell)\b(?!{HANDSET_WORDS})|"
        r"\bdigits\b|\bsim\b|n[uú]mero",
        "email": r"\be-?mail\b|\binbox\b|gmail|outlook|proton",
        "postal_address": r"\bad+res+\b|postcode|zip\s*code|direcci[oó]n|endere[cç]o|"
        r"c[oó]digo\s+postal|\bcep\b",
        "allergies": r"allerg|intoleran|epipen|anaphyla",
        "nationality": r"passport|nationality",
    }
)

# The clause puts a change in the present: it happened, is over, or holds from now. These
# are enough beside a slot's own noun ("fully remote as of this month").
AFOOT = re.compile(
    r"\b(?:now|new|nuev[oa]|nov[oa]|officially|"
    r"(?:first|second|third)\s+(?:day|week|month|night|weekend)s?|"
    r"(?:\d+|a\s+few|two|three)\s+(?:days?|weeks?|months?)\s+into|ya\s+no|j[aá]\s+n[aã]o|"
    r"since|as\s+of|from\s+(?:next|this|today|now|monday|the\s+\d+)|starting|started|begun|"
    r"began|switched|swapped|moved|upped|lowered|increased|reduced|off\s+the|"
    r"anymore|any\s+more|no\s+longer|these\s+days|nowadays|lately|instead|"
    r"is\s+done|(?:is|are|'s)\s+over|last\s+(?:day|shift)\s+(?:at|with)|"
    r"(?:went|came)\s+through|ended|agora|ahora|renounced|separating|divorcing|casei|me\s+cas[eé]|casamos|otra\s+vez|de\s+nuevo|de\s+novo|outra\s+vez|"
    # Events that are changes in themselves.
    r"(?:eat(?:ing)?|drink(?:ing)?|back\s+(?:on|to)|single|smoking)\s+(?:\w+\s+)?again|"
    r"let\s+(?:me|us)\s+go|redundant|fired|sacked|laid\s+off|resigned|promoted|graduated|"
    # Done to the speaker by the new employer: "Google hired me", "Stripe made me a lead".
    r"hired\s+(?:me|us)|(?:made|making)\s+me\s+(?:a|an|the)|"
    r"enrolled|adopted|rehomed|married|divorced|engaged|split|broke\s+up|arrived|"
    rf"{_CHILD_BORN}|"
    r"unpacked|settled|weaned|tapered|bumped|eloped|poached|headhunted|called\s+it\s+quits|"
    r"wrapped\s+up|(?:took|landed)\s+a\s+(?:new\s+)?(?:job|role|position)|"
    r"(?:gave|handed\s+in)\s+(?:\w+\s+)?notice|"
    r"put\s+me\s+in\s+charge|transferr?ed|relocated|acquired|layoffs?|onto\s+the\s+next)\b",
    _I,
)
# Words that date a clause to lately without saying what changed ("just", "got",
# "yesterday"): enough only beside words that come with a change (the keys to a new flat),
# not beside a slot's bare noun ("i just love my team").
LATELY = re.compile(
    r"\b(?:just|finally|recently|yesterday|last\s+(?:week|weekend|month|night|friday|monday|"
    r"tuesday|wednesday|thursday|saturday|sunday)|start|accepted|signed|handed|got|getting|"
    r"over|ya|ayer|ontem|(?:is|are)\s+here|ended\s+up|this\s+(?:term|semester|quarter|sprint)|bye|goodbye|farewell|adeus|tchau|"
    r"after\s+\d+\s+(?:yrs|years|months)|semana\s+pas+ada|mes\s+pasado|m[eê]s\s+passado|"
    r"out\s+of\s+date|outdated|(?:is|'s)\s+old)\b",
    _I,
)

# A value of a slot that holds several is taken away or altered, not joined by another:
# "doc upped my dose", "had to put our old dog down", "came off the pill".
LESS = re.compile(
    r"\b(?:upped|lowered|increased|reduced|doubled|halved|tapered|tapering|weaned|"
    r"came\s+off|coming\s+off|off\s+(?:the|my)|(?:took|taken|taking|takes)\s+me\s+off|"
    rf"{_RIP}|passed(?:\s+away)?|died|lost\s+(?:my|our)|"
    r"rainbow\s+bridge|said\s+goodbye|put\s+(?:\w+\s+){0,3}(?:down|to\s+sleep)|"
    r"rehomed|gave\s+up|stopped|no\s+more|"
    r"grew\s+out\s+of|outgrew|outgrown|cured|in\s+remission|all\s+clear)\b",
    _I,
)
