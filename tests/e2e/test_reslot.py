"""Re-slotting end to end: a vocabulary version adds ``car``; the free-text facts that state
it move into the slot, the ambiguous ones reach review, and nothing else moves."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from slotwise.loadtest.fake_anthropic import FakeAnthropic
from slotwise.processors.resolve import fact_id_for
from slotwise.processors.schema import DEFAULT_SCHEMA
from tests.e2e.harness import Pipeline
from tests.e2e.lifecycle import (
    Rules,
    apply,
    candidate,
    cli,
    facts,
    open_items,
    settle,
    with_model,
)

pytestmark = [pytest.mark.kafka, pytest.mark.redis, pytest.mark.milvus]

CAR = {
    "cardinality": "one",
    "category": "vehicles",
    "half_life_days": 1095,
    "stakes": "normal",
    "description": "The car the user drives (make and model).",
}
FILLS = {"Volvo": "Volvo XC60", "Renault": "Renault Clio"}
AMBIGUOUS = ("Fiat", "Tesla")


@pytest.fixture
def model() -> Iterator[FakeAnthropic]:
    rules = Rules(
        fills={
            **{word: {"verdict": "fills", "value": value} for word, value in FILLS.items()},
            **{word: {"verdict": "ambiguous", "value": None} for word in AMBIGUOUS},
        }
    )
    with FakeAnthropic(responder=rules) as fake:
        yield fake


def _vocabulary(directory: Path) -> Path:
    shipped = Path(__file__).resolve().parents[2] / "processors" / DEFAULT_SCHEMA
    document = json.loads(shipped.read_text())
    document["version"] = "2"
    document["attributes"]["car"] = CAR
    path = directory / "attributes.v2.json"
    path.write_text(json.dumps(document))
    return path


def _report(pipeline: Pipeline, *args: str) -> dict[str, object]:
    out = cli(pipeline, "reslot", "--attribute", "car", "--json", *args, timeout=300).stdout
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_reslotting_moves_exactly_the_facts_that_fill_the_new_attribute(
    pipeline: Pipeline, model: FakeAnthropic, tmp_path: Path
) -> None:
    with_model(pipeline, model)
    pipeline.extra_env["SLOTWISE_VOCABULARY"] = str(_vocabulary(tmp_path))
    pipeline.worker().wait_healthy()
    one, two = (f"{name}-{uuid.uuid4().hex[:6]}" for name in ("ana", "bo"))
    planted = [
        candidate(one, "User drove a Fiat Panda for years.", day=1),
        candidate(one, "User drives a Volvo XC60.", day=5),
        candidate(one, "User visited Lisbon in March.", day=6),
        candidate(one, "User likes jazz.", day=7),
        candidate(one, "User might buy a Tesla for their sister.", day=8),
        candidate(two, "User drives a Renault Clio.", day=2),
    ]
    apply(pipeline, planted)
    before = {s: facts(pipeline, s) for s in (one, two)}

    dry = _report(pipeline, "--dry-run")
    assert (dry["facts_walked"], dry["model_calls"], dry["fills"], dry["ambiguous"]) == (6, 6, 2, 2)
    assert dry["ambiguous_share"] == round(2 / 6, 4) and dry["estimated_usd"] == 0.0018
    settle(pipeline)
    assert {s: facts(pipeline, s) for s in (one, two)} == before, "a dry run changes nothing"

    report = _report(pipeline)
    assert report["commands"] == 4
    settle(pipeline)
    moved = {f.text: f for s in (one, two) for f in facts(pipeline, s) if f.attribute == "car"}
    assert {t: (f.value, f.status) for t, f in moved.items()} == {
        "User drives a Volvo XC60.": ("Volvo XC60", "current"),
        "User drives a Renault Clio.": ("Renault Clio", "current"),
    }
    for record in planted:
        if record.text in moved:
            assert moved[record.text].fact_id == fact_id_for(record), "moved in place"
    untouched = [f for f in facts(pipeline, one) if f.attribute is None]
    assert {f.text for f in untouched} == {p.text for p in planted[:5]} - set(moved)
    items = {i.candidate.text: i for i in open_items(pipeline, one)}
    assert set(items) == {planted[0].text, planted[4].text}
    assert {(i.origin, i.kind) for i in items.values()} == {("reslot", "ambiguous")}

    # A human: the Fiat was a car (older than the Volvo: closed history); the Tesla not.
    cli(pipeline, "review", "edit", items[planted[0].text].review_id, "--value", "Fiat Panda")
    cli(pipeline, "review", "reject", items[planted[4].text].review_id)
    fiat = next(f for f in facts(pipeline, one) if f.fact_id == fact_id_for(planted[0]))
    assert (fiat.attribute, fiat.value, fiat.status) == ("car", "Fiat Panda", "history")
    again = _report(pipeline)
    assert (again["facts_walked"], again["commands"]) == (2, 0), "the Tesla is not asked again"

    # The worker's exact path knows the new attribute: a new car supersedes the Volvo.
    apply(pipeline, [candidate(one, "User drives a Saab 900.", day=10, attribute="car",
                               value="Saab 900", category="vehicles")])  # fmt: skip
    current = [
        f.value for f in facts(pipeline, one) if f.attribute == "car" and f.status == "current"
    ]
    assert current == ["Saab 900"]
