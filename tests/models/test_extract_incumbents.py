"""Extraction answering each free-text fact's slot question against the subject's facts.

The subject's current facts open the per-call part of the request, numbered, and
each item's ``incumbent`` becomes the candidate's ``incumbent_match``, read as
strictly as a slot-match answer: a number off the list or no answer is no match
(the worker then asks the slot question as before).
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import TypeVar

import anthropic
import pytest

from slotwise.loadtest.fake_anthropic import Delay, FakeAnthropic, ToolUse
from slotwise.loadtest.responders import extraction_reply
from slotwise.models.extractor import AnthropicExtractor, render_turns
from slotwise.models.incumbents import Incumbency
from slotwise.models.llm import ModelClient
from slotwise.models.resilience import RetryPolicy
from slotwise.processors.resolve import fact_id_for, new_fact
from slotwise.processors.schema import AttributeSchema
from slotwise.topics.records import CandidateFact, Fact, IncumbentMatch, Observation

T = TypeVar("T")
SCHEMA = AttributeSchema.load()
AT = datetime(2026, 3, 14, 10, 0, tzinfo=UTC)


class Store:
    """Current facts by subject; counts the reads."""

    def __init__(self, *facts: Fact) -> None:
        self.facts_by_subject: dict[str, list[Fact]] = {}
        for f in facts:
            self.facts_by_subject.setdefault(f.subject_id, []).append(f)
        self.reads: list[str] = []

    async def facts(self, subject_id: str) -> list[Fact]:
        self.reads.append(subject_id)
        return list(self.facts_by_subject.get(subject_id, []))


def stored(subject: str, n: int, text: str) -> Fact:
    candidate = CandidateFact(
        candidate_id=f"{subject}-c{n}",
        subject_id=subject,
        text=text,
        observed_at=AT - timedelta(days=10 - n),
    )
    return new_fact(candidate, None, now=AT - timedelta(days=10 - n), embedding_model="m")


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def run(
    fake: FakeAnthropic,
    store: Store,
    scenario: Callable[[AnthropicExtractor], Awaitable[T]],
    shown: int = 40,
) -> T:
    async def main() -> T:
        sdk = anthropic.AsyncAnthropic(api_key="k", base_url=fake.base_url, max_retries=0)
        client = ModelClient(
            sdk,
            model="claude-haiku-4-5",
            retry=RetryPolicy(max_retries=0),
            rng=random.Random(1),
        )
        try:
            incumbency = Incumbency(store, shown)
            extractor = AnthropicExtractor(client, SCHEMA, incumbency=incumbency)
            return await scenario(extractor)
        finally:
            await client.aclose()

    return asyncio.run(main())


def turn(n: int, text: str, subject: str = "u-1") -> Observation:
    return Observation(
        observation_id=f"{subject}-o-{n}",
        subject_id=subject,
        session_id=f"{subject}-s",
        text=text,
        observed_at=AT + timedelta(minutes=n),
    )


def item(text: str, **fields: object) -> dict[str, object]:
    return {
        "attribute": None, "value": None, "text": text, "category": "misc",
        "valid_from": None, "confidence": 0.9, "importance": 0.5, **fields,
    }  # fmt: skip


CAT = stored("u-1", 1, "User has a cat named Miso.")
MARATHON = stored("u-1", 2, "User is training for the Berlin marathon.")
OTHERS = stored("u-2", 1, "User's sister lives in Paris.")


def candidates(records: object) -> list[CandidateFact]:
    assert isinstance(records, list)
    return [r for r in records if isinstance(r, CandidateFact)]


def test_each_free_text_fact_carries_what_extraction_answered(fake: FakeAnthropic) -> None:
    store = Store(CAT, MARATHON, OTHERS)
    fake.script(
        ToolUse(
            {
                "facts": [
                    item("User gave up on the Berlin marathon.", incumbent=2),
                    item("User adopted a dog.", incumbent="NONE"),
                    item("User likes jazz.", incumbent=3),  # off the list
                    item("User plays chess."),  # no answer
                    item(
                        "User works at Stripe.", attribute="employer", value="Stripe", incumbent=1
                    ),
                ]
            }
        )
    )
    said = turn(1, "I gave up on the marathon, adopted a dog, I like jazz ...")
    marathon, dog, jazz, chess, stripe = candidates(
        run(fake, store, lambda extractor: extractor.extract(said))
    )

    (request,) = fake.requests
    # Only this subject's facts, in the per-call part; the cached prefix is untouched.
    assert request.user_text.startswith(
        "Memories already stored about the user:\n"
        f"  1. {CAT.text}\n  2. {MARATHON.text}\n\nObservation time: "
    )
    assert OTHERS.text not in request.raw
    assert all(CAT.text not in block["text"] for block in request.system_blocks)
    assert store.reads == ["u-1"]

    turn_facts = [fact_id_for(c) for c in (marathon, dog, jazz, chess, stripe)]
    shown = (CAT.fact_id, MARATHON.fact_id)
    assert marathon.incumbent_match == IncumbentMatch(
        fact_id=MARATHON.fact_id,
        considered=(*shown, *(f for f in turn_facts if f != fact_id_for(marathon))),
    )
    assert dog.incumbent_match is not None and dog.incumbent_match.fact_id is None
    assert fact_id_for(dog) not in dog.incumbent_match.considered
    assert fact_id_for(marathon) in dog.incumbent_match.considered
    assert jazz.incumbent_match is None and chess.incumbent_match is None
    # A slotted fact is decided by its key: no answer is kept.
    assert stripe.attribute == "employer" and stripe.incumbent_match is None


def test_the_prefix_is_the_same_bytes_with_or_without_stored_facts(
    fake: FakeAnthropic,
) -> None:
    fake.script(ToolUse({"facts": []}), ToolUse({"facts": []}))
    run(fake, Store(CAT), lambda extractor: extractor.extract(turn(1, "hello there")))
    run(fake, Store(), lambda extractor: extractor.extract(turn(1, "hello there")))
    with_facts, without = fake.requests
    assert with_facts.body["system"] == without.body["system"]
    assert with_facts.body["tools"] == without.body["tools"]
    assert without.user_text.startswith("Observation time: ")


def test_with_nothing_stored_every_free_text_fact_restates_nothing(fake: FakeAnthropic) -> None:
    fake.script(ToolUse({"facts": [item("User adopted a dog."), item("User likes jazz.")]}))
    dog, jazz = candidates(
        run(fake, Store(OTHERS), lambda extractor: extractor.extract(turn(1, "...")))
    )
    assert dog.incumbent_match == IncumbentMatch(fact_id=None, considered=(fact_id_for(jazz),))
    assert jazz.incumbent_match == IncumbentMatch(fact_id=None, considered=(fact_id_for(dog),))


def test_turns_of_several_subjects_list_nothing_and_answer_nothing(fake: FakeAnthropic) -> None:
    store = Store(CAT, OTHERS)
    turns = [turn(1, "I adopted a dog.", "u-1"), turn(2, "I like jazz.", "u-2")]
    fake.script(
        ToolUse(
            {
                "facts": [
                    item("User adopted a dog.", turn=1, incumbent="NONE"),
                    item("User likes jazz.", turn=2, incumbent=1),
                ]
            }
        )
    )
    first, second = run(fake, store, lambda extractor: extractor.extract_turns(turns))
    (request,) = fake.requests
    assert request.user_text == render_turns(turns)
    assert store.reads == []
    assert [c.incumbent_match for c in candidates(first) + candidates(second)] == [None, None]


def test_the_newest_facts_are_listed_up_to_the_limit(fake: FakeAnthropic) -> None:
    many = [stored("u-1", n, f"User visited city number {n}.") for n in range(1, 6)]
    fake.script(ToolUse({"facts": []}))
    run(fake, Store(*many), lambda extractor: extractor.extract(turn(1, "...")), shown=2)
    (request,) = fake.requests
    assert request.user_text.startswith(
        f"Memories already stored about the user:\n  1. {many[3].text}\n  2. {many[4].text}\n\n"
    )


def test_nothing_is_listed_when_the_limit_is_zero(fake: FakeAnthropic) -> None:
    store = Store(CAT)
    fake.script(ToolUse({"facts": [item("User adopted a dog.", incumbent="NONE")]}))
    (dog,) = candidates(
        run(fake, store, lambda extractor: extractor.extract(turn(1, "...")), shown=0)
    )
    (request,) = fake.requests
    assert request.user_text.startswith("Observation time: ")
    assert dog.incumbent_match is None


def test_the_fake_model_names_the_listed_memory_a_fact_restates() -> None:
    question = (
        "Memories already stored about the user:\n"
        "  1. User lives in Lisbon.\n  2. User has a cat named Miso.\n\n"
        "Observation time: 2026-03-14T10:00:00+00:00 (Saturday)\nSpeaker: user\n"
        "Message:\nI have a cat named Miso. I'm a software engineer."
    )
    reply = extraction_reply({"messages": [{"role": "user", "content": question}]})
    assert isinstance(reply, ToolUse)
    answers = {f["text"]: f.get("incumbent") for f in reply.input["facts"]}
    assert answers.get("User has a cat named Miso.") == 2, answers
    assert all(v in (2, "NONE") for v in answers.values()), answers
    unlisted = extraction_reply(
        {"messages": [{"role": "user", "content": question.split("\n\n", 1)[1]}]}
    )
    assert isinstance(unlisted, ToolUse)
    assert all("incumbent" not in f for f in unlisted.input["facts"])


def test_a_fact_extracted_before_but_not_stored_yet_is_listed_once(fake: FakeAnthropic) -> None:
    store = Store(CAT)
    fake.script(
        ToolUse({"facts": [item("User adopted a dog.", incumbent="NONE")]}),
        ToolUse({"facts": [item("User adopted a second dog.", incumbent=2)]}),
        ToolUse({"facts": []}),
    )

    async def three_turns(extractor: AnthropicExtractor) -> list[CandidateFact]:
        (dog,) = candidates(await extractor.extract(turn(1, "I adopted a dog.")))
        # The dog's candidate waits on the candidates topic: the store lacks it.
        (second,) = candidates(await extractor.extract(turn(2, "I adopted a second dog.")))
        # Now stored under the id its candidate gives it: listed once, not twice.
        store.facts_by_subject["u-1"].append(new_fact(dog, None, now=AT, embedding_model="m"))
        await extractor.extract(turn(3, "Anything else?"))
        return [dog, second]

    dog, second = run(fake, store, three_turns)
    first_ask, second_ask, third_ask = (r.user_text for r in fake.requests)
    assert first_ask.startswith(f"Memories already stored about the user:\n  1. {CAT.text}\n\n")
    listing = f"Memories already stored about the user:\n  1. {CAT.text}\n  2. {dog.text}\n\n"
    assert second_ask.startswith(listing)
    assert third_ask.startswith(listing.removesuffix("\n") + f"  3. {second.text}\n\n")
    assert second.incumbent_match == IncumbentMatch(
        fact_id=fact_id_for(dog), considered=(CAT.fact_id, fact_id_for(dog))
    )


def test_the_listing_is_cached_for_the_subjects_next_call_until_it_changes(
    fake: FakeAnthropic,
) -> None:
    store = Store(CAT, MARATHON)
    fake.script(*(ToolUse({"facts": []}) for _ in range(3)))

    async def three_turns(extractor: AnthropicExtractor) -> None:
        for n in range(3):
            await extractor.extract(turn(n, f"Turn number {n}."))

    run(fake, store, three_turns)
    requests = fake.requests
    listing, said = requests[1].body["messages"][0]["content"]
    # The listing is a block of its own, after the shared prefix, with a breakpoint.
    assert listing["text"].startswith("Memories already stored about the user:\n")
    assert listing["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in said and said["text"].startswith("Observation time: ")
    # All three calls list the same bytes: the later two read it back from the cache.
    assert len({json.dumps(r.body["messages"][0]["content"][0]) for r in requests}) == 1
    assert len({json.dumps(r.body["system"]) for r in requests}) == 1


def test_a_subjects_calls_run_in_order_each_listing_what_the_ones_before_found(
    fake: FakeAnthropic,
) -> None:
    """Two turns of one subject started together: the second call waits for the first,
    and lists what it found. Another subject's call does not wait."""
    fake.script(
        ToolUse({"facts": [item("User adopted a dog.", incumbent="NONE")]}),
        ToolUse({"facts": [item("User adopted a second dog.", incumbent=2)]}),
    )

    async def together(extractor: AnthropicExtractor) -> list[list[CandidateFact]]:
        first, second = await asyncio.gather(
            extractor.extract(turn(1, "I adopted a dog.")),
            extractor.extract(turn(2, "I adopted a second dog.")),
        )
        return [candidates(first), candidates(second)]

    [dog], [second] = run(fake, Store(CAT), together)
    assert fake.requests[1].user_text.startswith(
        f"Memories already stored about the user:\n  1. {CAT.text}\n  2. {dog.text}\n\n"
    )
    assert second.incumbent_match == IncumbentMatch(
        fact_id=fact_id_for(dog), considered=(CAT.fact_id, fact_id_for(dog))
    )


def test_other_subjects_calls_do_not_wait(fake: FakeAnthropic) -> None:
    """Every call held 0.3 s: three subjects' turns take one hold, one subject's three."""
    fake.script(*(Delay(0.3, ToolUse({"facts": []})) for _ in range(6)))

    def timed(subjects: list[str]) -> float:
        async def together(extractor: AnthropicExtractor) -> float:
            started = time.monotonic()
            said = [turn(n, "...", subject) for n, subject in enumerate(subjects)]
            await asyncio.gather(*(extractor.extract(t) for t in said))
            return time.monotonic() - started

        return run(fake, Store(CAT, OTHERS), together)

    assert timed(["u-1", "u-2", "u-3"]) < 0.85
    assert timed(["u-1", "u-1", "u-1"]) >= 0.9
