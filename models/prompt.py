"""The one prompt prefix every model call shares: instructions, vocabulary, tools.

Anthropic caches a prompt's prefix (tools, then system, up to a
``cache_control`` breakpoint) only when it is at least the model's floor long:
4,096 tokens for Claude Haiku 4.5 (:mod:`models.pricing`). Each task's own
prompt is far shorter (slot matching's is ~250 tokens, extraction's ~2,200),
so the API would silently cache none of them and bill every call's whole
prompt at the input rate. One prefix for all the tasks (every task's
instructions and worked examples, the vocabulary, every tool) is over the floor
and byte-identical across call kinds, so extraction, slot matching, the
consolidation pass, re-slotting and re-derivation all read the same cache
entry. A call says which task it is by the tool it forces; the per-call part
(the message, the candidate and its neighbours…) comes after the breakpoint.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from anthropic.types import TextBlockParam, ToolParam

from slotwise.processors.schema import AttributeSchema

__all__ = [
    "ANSWER_SLOT",
    "FILL_ATTRIBUTE",
    "MAX_FACTS",
    "MAX_TURNS",
    "RECORD_FACTS",
    "REVALIDATE",
    "Prefix",
    "extraction_tool",
    "memory_prefix",
    "system_prompt",
]

RECORD_FACTS = "record_facts"
ANSWER_SLOT = "answer_slot"
FILL_ATTRIBUTE = "fill_attribute"
REVALIDATE = "revalidate"
MAX_FACTS = 20
# The most turns one extraction call reads (streams/write/extract_window.py batches them).
MAX_TURNS = 8

_PREAMBLE = """\
You maintain the long-term memory of an AI assistant about one person, "the user".
Every request asks for one of the four tasks below; the tool the request makes you
call says which one. Call that tool exactly once, following its task's rules.
"""

_EXTRACT = """\
# Task record_facts: what a message says about the user

Each request shows one message from a conversation with the time it was sent, or
several consecutive turns of one conversation, numbered, each with its own time and
speaker. Record the durable facts the message states about the user by calling
record_facts exactly once. If there is nothing to record, call it with an empty list.
When the turns are numbered, every fact and erase item gives the number of the turn
that states it as turn, and its dates are resolved against that turn's time; a later
turn may make an earlier one clear ("Which city?" / "Porto."), the fact then belongs
to the turn that states it.
When the request first lists memories stored about the user, each fact's incumbent
answers task answer_slot for it: the number of the memory recording the same
property (restated, updated or contradicted), or "NONE".

Rules:
- Only facts about the user themself. A fact about someone else is not a fact about
  the user ("my sister lives in Paris" records nothing; "I have a sister" does).
- Nothing for questions, requests, hypotheticals, wishes, jokes, quotes, or what the
  user may do ("I might move to Berlin" records nothing). Firm plans count
  ("I start at Stripe on Monday" records the new employer, valid from that Monday).
- If the speaker is not the user, record only what it reports the user saying.
- text: one short, self-contained, third-person sentence that starts with "User"
  ("User works at Stripe."). Never "I" or "you".
- attribute: the vocabulary name below when the fact fills exactly that slot,
  otherwise null. Never invent a name.
- value: the slot's value, short and canonical ("Stripe", "Lisbon", "vegetarian"): one
  string, number or boolean, never a list. An attribute with several values
  (languages, allergies) is recorded as one fact per value. null when there is none.
- category: for a vocabulary attribute, its category; otherwise one lowercase word
  naming the topic (one of the vocabulary's categories when one fits).
- valid_from: when the fact became or becomes true, as ISO-8601 with a timezone.
  Resolve relative dates ("on Monday", "last March", "two years ago") against the
  observation time given in the message. null when the message does not say.
- confidence: how firmly the message states it (plain statement 0.9, hedged 0.5).
- importance: how useful the fact is for future conversations (0 to 1).
- stated_change: true when the user says the value changed or corrects it ("my email
  changed, it's ... now", "oops typo, it's ..."), otherwise false.
- erase: only when the user asks you to forget or delete what they told you ("forget
  where I live", "delete everything you know about me"): one item per thing to forget,
  with the vocabulary attribute it names, or everything true (and attribute null) for an
  explicit request to forget everything about them; then facts is empty. Nothing for
  "I forgot my password", "forget it, never mind", calendar entries, files, drafts.

Examples (observation time 2026-03-14T10:00:00+00:00, a Saturday):
- "I start at Stripe on Monday." -> employer "Stripe", valid_from 2026-03-16,
  text "User works at Stripe."
- "We moved to Porto last month, my wife and I." -> home_city "Porto", valid_from
  2026-02-01, text "User lives in Porto."; and "User is married." (relationship_status).
- "My sister lives in Paris." -> a fact about the sister only: record nothing unless
  the message also says something about the user ("User has a sister.").
- "Should I learn Rust?" / "If I were vegan I'd..." / "Maybe I'll quit." -> nothing.
- "I speak Portuguese and Spanish." -> two facts, languages "Portuguese" and
  languages "Spanish".
- "I'm allergic to peanuts, by the way" -> allergies "peanuts", confidence 0.9.
- "Hey! How was your weekend?" / "Thanks, that really helps." / "Haha, fair enough."
  -> nothing: greetings, thanks and small talk state no durable fact.
- "Oops, typo: my email is ana.silva@proton.me, not ana.silva@proton.com." -> email
  "ana.silva@proton.me", stated_change true, text "User's email is ana.silva@proton.me."
- "I've been playing the cello since I was twelve." -> hobbies "cello",
  text "User plays the cello."
- "My daughter just turned five and my son is two." -> children_count 2,
  text "User has two children."
- Speaker "assistant": "Since you told me you're vegetarian, here are three recipes."
  -> diet "vegetarian", confidence 0.8: the assistant reports what the user said.
- "Please forget where I live." -> erase one item, attribute home_city, everything
  false, quote "Please forget where I live."; facts empty.
- "Delete everything you know about me." -> erase one item, attribute null,
  everything true; facts empty.
- "I forgot my password again, can you help?" -> nothing: not a request of the memory.
- "I'm thinking about switching to a night shift, not sure yet." -> nothing: undecided.
- "I take metformin every morning for my type 2 diabetes." -> medications "metformin"
  and medical_conditions "type 2 diabetes", two facts.
- "Two years ago I left Google for a startup called Linear." -> employer "Linear",
  valid_from 2024-03-14, text "User works at Linear."
- "Since last March I work fully remote." -> work_arrangement "remote", valid_from
  2025-03-01.
- "I was born in Recife but grew up in Sao Paulo." -> birthplace "Recife" and
  hometown "Sao Paulo", two facts.
- "Call me Bia, everyone does." -> preferred_name "Bia".
- "I switched to the annual Pro plan." -> plan "Pro" and billing_cycle "annual", both
  stated_change true.
- "I'm in Tokyo this week for a conference." -> current_location "Tokyo", valid_from
  the observation time; home_city is unchanged.
- "I used to live in Berlin." -> attribute null, text "User used to live in Berlin.":
  a past home is not the current home_city.
- "My colleague Sam is allergic to shellfish." -> nothing: a fact about Sam.
- "We run everything on Postgres at work." -> database "Postgres".
- "Text me instead of emailing, please." -> preferred_contact_method "text message".
"""

_SLOT_MATCH = """\
# Task answer_slot: which stored memory fills the same slot

Each request shows a new observation about the user and a numbered list of memories
already stored about them, so that the memory stays free of contradictions. Decide
which memory, if any, records the SAME property of the user as the observation (the
same slot: employer, home city, diet...), so that both could not be true at once
unless that property allows several values. Related topics are not the same slot:
"lives in Lisbon" and "visited Lisbon" are different slots.

Answer by calling answer_slot exactly once with the memory's number from the list,
or with "NONE" when no memory fills the same slot. Use only numbers shown in the list.

Examples:
- Observation "User works at Stripe."; memories 1. "User is a backend engineer at
  Datadog." 2. "User lives in Lisbon." -> 1: both name the user's employer.
- Observation "User visited Lisbon in May."; memories 1. "User lives in Lisbon."
  -> NONE: a trip and a home are different slots.
- Observation "User is vegan."; memories 1. "User has a cat." 2. "User is
  vegetarian." -> 2: both state the user's diet.
- Observation "User is training for the Berlin marathon in September."; memories
  1. "User ran the Lisbon half marathon last year." -> NONE: two different events.
- Observation "User's favourite film is Heat."; memories 1. "User likes thrillers."
  2. "User's favourite film is Alien." -> 2: one favourite film at a time.
- Observation "User has a dog named Rex."; memories 1. "User's sister has a dog."
  -> NONE: the sister's dog is not the user's pet.
- Observation "User is a product manager."; memories 1. "User works at Stripe."
  2. "User is a software engineer." -> 2: the job title, not the employer.
- Observation "User is in Tokyo this week."; memories 1. "User lives in Lisbon."
  -> NONE: where the user is now is not where the user lives.
- Observation "User moved to Porto."; memories 1. "User likes Porto wine." 2. "User
  lives in Lisbon." -> 2: a new home replaces the old one.
- Observation "User's email is ana@proton.me."; memories 1. "User's phone number is
  +351 912 345 678." 2. "User's email is ana@gmail.com." -> 2.
- Observation "User has two children."; memories 1. "User has one child." -> 1.
"""

_RESLOT = """\
# Task fill_attribute: does an old free-text memory state a new attribute

The vocabulary of attributes has grown, and memories stored as free text before may
state one of the new attributes. For the memory shown, decide whether it states the
user's value of the named attribute.

Call fill_attribute exactly once: "fills" with the value when the memory states it
plainly, "no" when it does not state it (a related topic is not enough), and
"ambiguous" when it might but a person should decide (hedged, several values, about
someone else).

Examples:
- Memory "User drives a 2019 Honda Civic."; attribute car -> fills "Honda Civic".
- Memory "User enjoys long road trips."; attribute car -> no.
- Memory "User is thinking about buying a Tesla."; attribute car -> ambiguous.
"""

_REDERIVE = """\
# Task revalidate: does a derived memory still follow from its sources

Some memories were derived from others (a summary, an inference). One of the sources
of the derived memory shown has since been replaced by a newer fact. Given the sources
as they stand now, decide whether the derived memory still follows from them.

Call revalidate exactly once: "keep" when it still follows as written, "rewrite" with
the corrected memory (one sentence about the user) when it follows only in other
words, "unsure" when a person should decide.

Examples:
- Derived "User eats no meat."; sources now 1. "User is vegan." -> keep.
- Derived "User lives with their partner in Porto."; sources now 1. "User lives in
  Lisbon." 2. "User lives with their partner." -> rewrite "User lives with their
  partner in Lisbon."
- Derived "User commutes to the office by bike."; sources now 1. "User works from
  home." -> unsure.
"""


_VOCABULARY = """\
# The attribute vocabulary

Every task uses the vocabulary below. Each attribute is a slot of the user's profile:
- "one value" means the slot holds one value at a time: a new value replaces the old
  one (a new employer, a new home city, a corrected email), and two memories with
  different values of it contradict each other.
- "many values" means the slot holds several values at once (languages, allergies,
  pets): a new value is added beside the others, and only a correction ("I'm not
  allergic to nuts after all") or an explicit change replaces one of them.
- The category groups related attributes; free-text memories use it to name their
  topic. An attribute's description says what belongs in it; a fact that fits no
  description exactly has no attribute, however close the topic.
"""


def system_prompt(schema: AttributeSchema) -> str:
    """Every task's instructions and examples, then the vocabulary: the cached system text."""
    lines = [
        f"- {spec.name} ({spec.cardinality} value{'s' if spec.cardinality == 'many' else ''}; "
        f"category {spec.category}): {spec.description}"
        for spec in schema
    ]
    tasks = "\n".join((_PREAMBLE, _EXTRACT, _SLOT_MATCH, _RESLOT, _REDERIVE))
    return (
        f"{tasks}\n{_VOCABULARY}\nAttribute vocabulary (version {schema.version}):\n"
        + "\n".join(lines)
    )


_TURN = {
    "type": "integer",
    "minimum": 1,
    "description": "The number of the turn that states it, when the turns are numbered.",
}


def extraction_tool(schema: AttributeSchema) -> ToolParam:
    names: list[str | None] = [spec.name for spec in schema]
    item = {
        "type": "object",
        "properties": {
            "attribute": {"type": ["string", "null"], "enum": [*names, None]},
            "value": {"type": ["string", "number", "boolean", "null"]},
            "text": {"type": "string", "description": "Third-person sentence starting 'User'."},
            "category": {"type": ["string", "null"]},
            "valid_from": {"type": ["string", "null"], "description": "ISO-8601 or null."},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "importance": {"type": "number", "minimum": 0, "maximum": 1},
            "stated_change": {"type": "boolean"},
            "turn": _TURN,
            "incumbent": {
                "anyOf": [{"type": "integer", "minimum": 1}, {"type": "string", "enum": ["NONE"]}],
                "description": "A listed memory's number, or NONE.",
            },
        },
        "required": [
            "attribute",
            "value",
            "text",
            "category",
            "valid_from",
            "confidence",
            "importance",
        ],
    }
    erase = {
        "type": "object",
        "properties": {
            "attribute": {"type": ["string", "null"], "enum": [*names, None]},
            "everything": {"type": "boolean"},
            "quote": {"type": "string", "description": "The user's words asking for it."},
            "turn": _TURN,
        },
        "required": ["attribute", "everything", "quote"],
    }
    return {
        "name": RECORD_FACTS,
        "description": "Record the facts the message states about the user (possibly none), "
        "or what the user asks you to forget.",
        "input_schema": {
            "type": "object",
            "properties": {
                "facts": {"type": "array", "items": item, "maxItems": MAX_FACTS * MAX_TURNS},
                "erase": {"type": "array", "items": erase, "maxItems": MAX_FACTS * MAX_TURNS},
            },
            "required": ["facts"],
        },
    }


_SLOT_TOOL: ToolParam = {
    "name": ANSWER_SLOT,
    "description": "Give the number of the memory that fills the observation's slot, or NONE.",
    "input_schema": {
        "type": "object",
        "properties": {
            "memory": {
                "anyOf": [{"type": "integer", "minimum": 1}, {"type": "string", "enum": ["NONE"]}],
                "description": 'A number from the list, or "NONE".',
            },
        },
        "required": ["memory"],
    },
}

_FILL_TOOL: ToolParam = {
    "name": FILL_ATTRIBUTE,
    "description": "Say whether the memory states the attribute, and its value.",
    "input_schema": {
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": ["fills", "no", "ambiguous"]},
            "value": {"type": ["string", "null"], "description": "The value, for fills."},
        },
        "required": ["verdict"],
    },
}

_REVALIDATE_TOOL: ToolParam = {
    "name": REVALIDATE,
    "description": "Keep, rewrite or refer the derived memory.",
    "input_schema": {
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": ["keep", "rewrite", "unsure"]},
            "text": {"type": ["string", "null"], "description": "The memory, for rewrite."},
        },
        "required": ["verdict"],
    },
}


@dataclass(frozen=True, slots=True)
class Prefix:
    """Tools and system blocks, identical on every call, cached up to the last block."""

    system: tuple[TextBlockParam, ...]
    tools: tuple[ToolParam, ...]

    def estimated_tokens(self) -> int:
        """About four characters a token, as the fake model counts (the API counts more)."""
        chars = sum(len(json.dumps(tool, sort_keys=True)) for tool in self.tools)
        return (chars + sum(len(block["text"]) for block in self.system)) // 4


def memory_prefix(schema: AttributeSchema) -> Prefix:
    """The shared prefix for ``schema``'s vocabulary: the same bytes for every call kind."""
    return Prefix(
        system=(
            {
                "type": "text",
                "text": system_prompt(schema),
                "cache_control": {"type": "ephemeral"},
            },
        ),
        tools=(extraction_tool(schema), _SLOT_TOOL, _FILL_TOOL, _REVALIDATE_TOOL),
    )
