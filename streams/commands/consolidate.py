"""The ``consolidate`` command: a pass's findings, applied at their place in the log.

The pass (``streams/passes/consolidate.py``) decided nothing: it asked the model
about a snapshot and published what it heard, with the fingerprint of every
fact each finding was decided against. Here, through the
:class:`~slotwise.streams.commands.apply.Applier` (idempotent by ``command_id``,
fenced by the subject's version), the facts are read as they stand *now*:

* a finding whose facts changed since (superseded, erased, archived, edited by
  a write that arrived during the pass) is dropped, and counted; the next
  pass asks again about what is still open;
* a pair a human rejected is skipped;
* the rest is resolved by the write path's policy
  (``processors.consolidation.apply_findings``): SUPERSEDE with one event,
  ``decided_by: consolidation``; a high-stakes pair becomes a review item;
  a flagged derived fact is kept, rewritten, or sent to review.

Once applied, the pairs the pass asked about are remembered, so a later pass
does not pay for them again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from slotwise.processors.change import Change
from slotwise.processors.consolidation import Finding, apply_findings
from slotwise.processors.ports import SubjectSnapshot
from slotwise.processors.review_policy import pair_key
from slotwise.processors.schema import AttributeSchema
from slotwise.sinks.redis.review import RedisReviews
from slotwise.streams.commands.apply import Applier, MalformedCommand
from slotwise.streams.write.outputs import StoredOutputs
from slotwise.topics.outbound import Outbound
from slotwise.topics.records import Command

__all__ = ["ConsolidateHandler"]


@dataclass(frozen=True, slots=True)
class ConsolidateHandler:
    applier: Applier
    reviews: RedisReviews
    schema: AttributeSchema
    embedding_model: str | None

    async def __call__(self, command: Command) -> tuple[Outbound, ...]:
        try:
            findings = [Finding.load(body) for body in command.params.get("findings", [])]
            compared = compared_keys(command)
        except (KeyError, TypeError, ValueError) as exc:
            raise MalformedCommand(f"consolidate command {command.command_id}: {exc}") from None

        async def decided(seen: SubjectSnapshot) -> Change:
            return await self._decide(command, findings, seen)

        async def remember(_outputs: StoredOutputs) -> None:
            await self.applier.follow.provenance.remember_compared(command.subject_id, compared)

        return await self.applier.run(command, decided, after=remember)

    async def _decide(
        self, command: Command, findings: list[Finding], seen: SubjectSnapshot
    ) -> Change:
        subject = command.subject_id
        ids = sorted({i for f in findings for i in f.ids()})
        facts = {f.fact_id: f for f in await seen.get_facts(subject, ids)} if ids else {}
        keys = [pair_key(f.new, f.old) for f in findings if f.old is not None]
        rejected = await self.reviews.rejected(subject, keys)
        change, dropped = apply_findings(
            findings,
            facts,
            self.schema,
            now=self.applier.now(),
            command_id=command.command_id,
            rejected=rejected,
            embedding_model=self.embedding_model,
        )
        summary = (
            f"consolidation: {len(findings)} finding(s), {dropped} dropped "
            f"(their facts changed since the pass read them)"
        )
        decision = change.decision if not change.empty else "NOOP"
        return replace(change, decision=decision, reason=f"{summary}; {change.reason}".rstrip("; "))


def compared_keys(command: Command) -> list[str]:
    """The pair keys a ``consolidate`` command asked about (remembered when applied)."""
    keys = [pair_key(a, b) for a, b in command.params.get("compared", [])]
    for body in command.params.get("findings", []):
        if body.get("old") is not None:
            keys.append(pair_key(str(body["new"]), str(body["old"])))
    return keys
