"""A subject's vector rows put back in line with its facts in Redis before a healing replay.

The plan is pure and tested alone; the heal itself against the real Redis and
Milvus: rows of lost facts go, a lost update's text is embedded again, a lost
forget pass's move is undone, another subject is not touched, and a second heal
finds nothing to do.
"""

from __future__ import annotations

import asyncio

import pytest

from slotwise.processors.model import VectorRow
from slotwise.streams.runtime.index_heal import IndexHeal, IndexHealPlan, plan_index_heal
from tests.streams.commands.test_forget import Rig, fact, opened, seed

NAME = fact("name", "name", "User's name is Ana.")
JOB = fact("job", "employer", "User works at Stripe.", supersedes="was")
WAS = fact(
    "was",
    "employer",
    "User works at Datadog.",
    status="superseded",
    valid_to=JOB.valid_from,
    superseded_by="job",
)


def test_rows_that_agree_with_the_store_need_nothing() -> None:
    rows = {"hot": {f.fact_id: f.text for f in (NAME, JOB, WAS)}, "cold": {}}
    assert plan_index_heal([NAME, JOB, WAS], rows).empty  # a superseded row stays hot


def test_a_row_of_a_fact_the_store_lost_goes_whichever_tier_it_is_in() -> None:
    rows = {"hot": {"name": NAME.text, "ghost": "User works at Figma."}, "cold": {"old": "x"}}
    assert plan_index_heal([NAME], rows) == IndexHealPlan(lost=("ghost", "old"))


def test_a_lost_update_and_a_fact_without_a_row_are_written_again() -> None:
    pets = fact("pets", "pets", "User has a cat.")
    rows = {"hot": {"name": NAME.text, "job": "User works at Figma."}, "cold": {}}
    # A retired fact's row too: never shown, it still takes a place among the hits
    # a search over-fetches, as it does in an uninterrupted run.
    plan = plan_index_heal([NAME, JOB, WAS, pets], rows)
    assert plan == IndexHealPlan(rewrite=(JOB, WAS, pets))


def test_rows_in_the_wrong_tier_for_their_status_are_moved_not_rewritten() -> None:
    archived = fact("trip", "current_location", "User is in Kyoto.", status="archived")
    rows = {"hot": {"trip": "User is in Kyoto."}, "cold": {"job": "User works at Figma."}}
    plan = plan_index_heal([JOB, archived], rows)
    assert plan.misplaced == (JOB, archived)  # the move embeds again where the text differs
    assert plan.rewrite == () and plan.lost == ()


@pytest.mark.redis
@pytest.mark.milvus
def test_the_heal_makes_the_rows_match_the_store(redis_url: str, milvus_uri: str) -> None:
    async def main() -> None:
        async with opened(redis_url, milvus_uri) as rig:
            await _heal_scenario(rig)

    asyncio.run(main())


async def _heal_scenario(rig: Rig) -> None:
    trip = fact("trip", "current_location", "User is in Kyoto this week.")
    pets = fact("pets", "pets", "User has a cat.")
    await seed(rig, [NAME, JOB, WAS, trip])
    # What the lost events left in Milvus: an update of the job, a new fact, a forget
    # pass that archived the trip, and a row still buffered when the store went back.
    await rig.store.apply(
        "ana", "pets", expected_version=1, facts=[pets], outputs=b"{}", now=pets.recorded_at
    )
    rig.index.add(
        [
            VectorRow("job", "ana", "User works at Figma.", None),
            VectorRow("ghost", "ana", "User moved to Lisbon.", None),
        ]
    )
    await rig.index.flush()
    await rig.tiers.settle("ana", [trip.model_copy(update={"status": "archived"})])
    other = VectorRow("bo-only", "bo", "User works at Figma.", None)
    rig.index.add([other])
    await rig.index.flush()
    rig.index.add([VectorRow("pending", "ana", "User plays the oboe.", None)])

    heal = IndexHeal(rig.store, rig.index, rig.tiers)
    plan = await heal("ana")
    assert plan.lost == ("ghost",)
    assert [f.fact_id for f in plan.misplaced] == ["trip"]
    assert {f.fact_id for f in plan.rewrite} == {"job", "pets"}
    assert rig.index.buffered("ana") == 0

    rows = await rig.tiers.rows_of("ana")
    assert rows == {"hot": {f.fact_id: f.text for f in (NAME, JOB, WAS, trip, pets)}, "cold": {}}
    nearest = await rig.index.nearest("ana", "User works at Stripe.", k=1, floor=0.0)
    assert nearest[0][0] == "job" and nearest[0][1] > 0.99  # embedded from the store's text
    assert (await rig.tiers.rows_of("bo"))["hot"] == {"bo-only": other.text}
    assert (await heal("ana")).empty
