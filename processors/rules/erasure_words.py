"""How people ask a memory to forget, and how they name what: the tables ``erasure`` reads.

English first, with the Spanish and Portuguese people mix in. Every pattern is
matched against lower-cased text with straight apostrophes.
"""

from __future__ import annotations

import re

__all__ = [
    "ALL_OF_ME",
    "ASK_OBJECT",
    "LEAD",
    "MEMORY",
    "NAMED",
    "NOT_MEMORY",
    "POINTER",
    "TOPICS",
    "UNCLEAR",
    "VERB",
    "WANT_GONE",
]

# Politeness and hedges before the verb: "ok so can you please just forget…".
LEAD = (
    r"(?:(?:please|pls|plz|kindly|can\s+you|can\s+u|could\s+you|would\s+you|will\s+you|"
    r"i\s+want\s+you\s+to|i'd\s+like\s+you\s+to|i\s+need\s+you\s+to|you\s+can|you\s+should|"
    r"just|and|also|so|ok|okay|yo|hey|actually|honestly|changed\s+my\s+mind,?|then|"
    r"por\s+favor,?|pode(?:s)?|puedes|podr[ií]as)\s+)*"
)
# The verb of a request to the memory, imperative.
VERB = (
    r"(?:forget|delete|erase|remove|wipe|clear|drop|scratch|purge|unlearn|unsave|nuke|lose|"
    r"get\s+rid\s+of|take|reset|stop\s+using|stop\s+(?:remembering|storing|keeping|saving|holding)|"
    r"(?:don't|dont|do\s+not|never)\s+(?:store|keep|save|remember|hold\s+on\s+to|hold\s+onto|"
    r"retain|record)|not\s+remember|"
    # Spanish and Portuguese.
    r"olvida(?:lo|la|r)?|olvid[ea]|borra(?:r)?|b[oó]rralo|elimina(?:r)?|no\s+guardes|"
    r"no\s+recuerdes|esquece(?:r)?|esque[cç]a|apaga(?:r)?|apague|n[aã]o\s+guard(?:es|e))"
)
# "I want my data deleted", "I'd like my email address forgotten", "I'd rather you didn't
# remember…": the request said as a wish.
WANT_GONE = re.compile(
    r"^(?:i\s+want|i'd\s+like|i\s+would\s+like|i\s+need)\s+(?P<what>.+?)\s+"
    r"(?:deleted|removed|erased|wiped|forgotten|gone|purged)\b(?P<rest>.*)$"
    r"|^i'd\s+(?:rather|prefer)\s+you\s+(?:didn't|did\s+not|don't)\s+"
    r"(?:remember|know|keep|store|have)\s+(?P<what2>.+)$"
    r"|^you\s+(?:don't|do\s+not)\s+need\s+to\s+(?:know|remember|keep)\s+(?P<what3>.+)$"
    r"|^i(?:'m|\s+am)?\s+exercising\s+my\s+right\s+to\s+(?:erasure|be\s+forgotten)\b(?P<rest3>.*)$",
)
# Words that point the request at the memory rather than at a calendar, a draft or a file.
MEMORY = re.compile(
    r"\b(?:(?:about|on|for|of)\s+me\b|you\s+(?:know|remember|have|think|stored|saved|"
    r"hold|keep)|you've\s+(?:got|saved|stored)|i\s+(?:just\s+|ever\s+|once\s+)?(?:told|said|"
    r"mentioned|gave|shared)|telling\s+you|your\s+(?:memory|notes|records|files|database)|"
    r"(?:from|in|of)\s+(?:your\s+)?memory|ur\s+memory|on\s+file|from\s+what\s+you|"
    r"my\s+(?:memory\s+)?profile|my\s+(?:personal\s+)?(?:data|info|information|details)|"
    r"stored|saved|anymore|any\s+more|for\s+now|private|not\s+comfortable|nobody's\s+business|"
    r"tu\s+memoria|da\s+tua\s+mem[oó]ria|da\s+sua\s+mem[oó]ria)",
)
# Everything about the speaker.
ALL_OF_ME = re.compile(
    r"\b(?:everything|all|every\s+(?:single\s+)?thing|anything)\s+(?:(?:that\s+)?you(?:'ve)?\s+"
    r"(?:know|have|remember|stored|saved|hold|got)|(?:about|on|of)\s+me\b|"
    r"(?:my\s+)?(?:personal\s+)?(?:data|info|information|details|stuff)\b(?!\s+(?:about|on)\s+my))"
    r"|\ball\s+(?:of\s+)?(?:my|the)\s+(?:personal\s+)?(?:data|info|information|details|stuff)\b"
    r"(?!\s+(?:about|on)\s+my)|\ball\s+personal\s+data|\ball\s+of\s+it\s+about\s+me\b"
    r"|\b(?:my|your)\s+(?:memory\s+)?profile\b|\byour\s+memory\s+of\s+me\b"
    r"|^me(?:\s+(?:please|pls|completely|entirely|for\s+good))?$"
    r"|\b(?:me|about\s+me)\s+(?:from|out\s+of)\s+(?:your\s+)?memory\b"
    r"|\bstart\s+(?:fresh|over)\b|\bfresh\s+start\b"
    r"|\btodo\s+lo\s+que\s+sabes|\btodos\s+mis\s+datos|\btoda\s+mi\s+informaci[oó]n\b(?!\s+de)"
    r"|\btudo\s+o\s+que\s+sab|\btodos\s+os\s+meus\s+dados",
)
# A group of attributes asked for together, by the schema's category.
TOPICS: tuple[tuple[str, str], ...] = (
    (r"health|medical|salud|sa[uú]de", "health"),
    (r"work|job|career|trabajo|trabalho|emprego", "work"),
    (r"contact\s+(?:details|info|information|data)|contact\s+stuff", "contact"),
    (r"family|familia|fam[ií]lia", "family"),
    (r"billing\s+(?:info|details|stuff)|subscription\s+and\s+payments?|payments?\s+and\s+"
     r"(?:billing|subscription)|pagos|pagamentos", "plan"),
)  # fmt: skip
# A pronoun or a pointer at what was just said: the scope is in the previous clause, or
# nowhere the reader can see.
POINTER = re.compile(r"^(?:it|that|this|them|those|lo|la|isso|isto)\b")
# A request about one thing that was said, whose slot the reader may not be able to name:
# read what follows, else ask a human.
ASK_OBJECT = re.compile(
    r"^(?:about\s+)?(?:what|everything|anything)\s+i\s+(?:just\s+|ever\s+)?(?:told|said|mentioned|"
    r"shared)|^(?:the\s+)?last\s+(?:thing|message|bit)|^that\s+(?:last\s+)?(?:message|bit|thing)\b|"
    r"^(?:the|that)\s+(?:thing|bit|part|stuff|info)\s+(?:about|on|regarding)\b|"
    r"^(?:that\s+)?i\s+(?:ever\s+|just\s+)?(?:said|told\s+you|mentioned)\b|^that\b|"
    r"^what\s+you\s+(?:know|have)\s+(?:about|on)\b|"
    r"^lo\s+que\s+te\s+(?:acabo\s+de\s+)?(?:dije|decir|cont[eé])|^o\s+que\s+(?:eu\s+)?(?:disse|te\s+"
    r"disse|contei)",
)
# How people name an attribute in a request; a longer name claims its words first.
NAMED: tuple[tuple[str, str], ...] = (
    (r"e-?mail(?:\s+address)?|correo|mail\b", "email"),
    (r"(?:phone|mobile|cell)(?:\s+(?:number|#|no\.?))?|phone\s*#|(?:my|the)\s+number|n[uú]mero(?:\s+de\s+"
     r"tel[eé]fono)?|telefone|tel[eé]fono", "phone"),
    (r"(?:postal|home|mailing|street)\s+address|(?:my|the|o\s+meu|mi)\s+address|endere[cç]o|"
     r"direcci[oó]n|\baddress\b", "postal_address"),
    (r"home\s+city|city\s+i\s+live\s+in|what\s+city|where\s+i\s+live|i\s+live\s+in|living\s+in|"
     r"where\s+i'm\s+based|d[oó]nde\s+vivo|onde\s+(?:eu\s+)?moro|my\s+city\b", "home_city"),
    (r"where\s+i\s+(?:am|'m)\b(?!\s+(?:based|from))|wherever\s+you\s+think\s+i\s+am|my\s+location|"
     r"where\s+i'm\s+staying|where\s+i\s+am\s+rn|current\s+location", "current_location"),
    (r"date\s+of\s+birth|birth\s*day|\bdob\b|my\s+age|how\s+old|fecha\s+de\s+nacimiento|"
     r"data\s+de\s+nascimento|anivers[aá]rio|cumplea[nñ]os", "date_of_birth"),
    (r"birthplace|where\s+i\s+was\s+born|place\s+of\s+birth", "birthplace"),
    (r"hometown|home\s+town|where\s+i\s+grew\s+up|city\s+i\s+grew\s+up\s+in", "hometown"),
    (r"nationality|citizenship|nacionalidad|nacionalidade", "nationality"),
    (r"nickname|preferred\s+name|what\s+to\s+call\s+me|apodo|apelido", "preferred_name"),
    (r"pronouns", "pronouns"),
    (r"(?:my\s+)?(?:full\s+|real\s+|legal\s+|first\s+|last\s+)?name\b|surname|nombre|nome\b",
     "name"),
    (r"contact\s+(?:preference|method)s?|how\s+to\s+(?:reach|contact)\s+me|preferred\s+contact",
     "preferred_contact_method"),
    (r"time\s*zone", "timezone"),
    (r"job\s+title|my\s+title|my\s+role|what\s+i\s+do\s+for\s+(?:a\s+)?(?:living|work)",
     "job_title"),
    (r"employer|where\s+i\s+work|i\s+work\s+(?:at|for)|my\s+company|"
     r"onde\s+(?:eu\s+)?trabalho|d[oó]nde\s+trabajo", "employer"),
    (r"(?:my|which|what)\s+team|team\s+i'm\s+on", "team"),
    (r"work\s+(?:remote|from\s+home|arrangement)|remote\s+or|hybrid|office\s+days?",
     "work_arrangement"),
    (r"database", "database"),
    (r"programming\s+languages?|(?:languages?|stack)\s+i\s+(?:code|program)",
     "programming_languages"),
    (r"(?:my|which|what)\s+(?:school|university|uni|college|degree)|education|uni\s+i\s+went|"
     r"where\s+i\s+studied", "education"),
    (r"payment\s+(?:info|method|details)|card\s+details|my\s+card|how\s+i\s+pay\b(?!\s+monthly)",
     "payment_method"),
    (r"billing\s+cycle|monthly\s+or\s+(?:yearly|annual)|(?:yearly|annual)\s+or\s+monthly|"
     r"how\s+often\s+i\s+pay", "billing_cycle"),
    (r"(?:my|which|what)\s+plan\b|plan\s+i'm\s+on|subscription\s+(?:tier|plan)", "plan"),
    (r"\bdiet\b|dieta|vegan|vegetarian|pescatarian", "diet"),
    (r"allerg|alerg", "allergies"),
    (r"\bmeds\b|medication|medicine|prescription|pills|medicamento|antidepressant", "medications"),
    (r"diagnosis|(?:health|medical)\s+condition|\bcondition\b|illness|diabet|asthma|adhd|"
     r"depression|diagn[oó]stico", "medical_conditions"),
    (r"relationship|marital|married|divorc|partner|boyfriend|girlfriend|husband|wife",
     "relationship_status"),
    (r"\bkids?\b|children|\bchild\b|hijos|filhos", "children_count"),
    (r"\bdogs?\b|\bcats?\b|\bpets?\b|mascota|animal\s+de\s+estima[cç][aã]o", "pets"),
    (r"hobb|pastime", "hobbies"),
    (r"mother\s+tongue|first\s+language|native\s+language|l[ií]ngua\s+materna|lengua\s+materna",
     "native_language"),
    (r"languages?\s+i\s+speak|\blanguages\b|idiomas", "languages"),
)  # fmt: skip
# Names people use for either of two slots: "my job" is where they work or what they do
# there. A request naming one is asked of a human; erasing both would be wider than asked,
# erasing one a guess. A longer name ("my job title") claims its words first.
UNCLEAR: tuple[tuple[str, tuple[str, ...]], ...] = (
    (r"my\s+(?:current\s+|old\s+|new\s+)?(?:job|work)\b(?!\s*(?:title|e-?mail|phone|"
     r"mobile|cell|number|address|stuff|info|details|schedule|hours|arrangement))|mi\s+trabajo|o\s+meu\s+(?:trabalho|emprego)",
     ("employer", "job_title")),
)  # fmt: skip
# Things of the speaker's that are not memories: asking to delete them is a task.
NOT_MEMORY = re.compile(
    r"\b(?:password|passcode|pin|login|calendar|meeting|appointment|standup|event|reminder|"
    r"photos?|pics?|picture|image|attachment|draft|email\s+you\s+drafted|message\s+i\s+sent|"
    r"paragraph|line|lines|sentence|recipe|bullet|(?:the|a|that)\s+file|files|folder|document|"
    r"inbox|spam|onions|cilantro|chat|group|conversation\s+history|whiteboard|cart|basket|list|"
    r"sheet|mailing\s+list|newsletter|account|app|apple\s+id|\bid\b|hotel|restaurant|flight|"
    r"booking|dinner|plans?\b(?!\s+(?:i'm|info|details))|itinerary|tab|browser|cache|slide|task|"
    r"to-?do\s+list|alarm|timer|tweet|post|comment|repo|branch|table|rows?|column|query|queue|filters?|"
    r"contraseña|senha|foto|rascunho|borrador)\b",
)
