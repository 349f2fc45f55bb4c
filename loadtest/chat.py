"""The ``locomo`` scenario: real chat turns through the model path, the fake model answering.

The cascade scenario's traffic is generated, and every message in it states
something. Real chat mostly does not: greetings, questions, talk about other
people. This replays the LoCoMo conversations (:mod:`loadtest.locomo`, each
speaker a subject, turns in order) through the worker against the fake model
(:func:`loadtest.responders.bench`), and reports what the model cost per
observation beside throughput and decisions. ``--count`` takes that many
turns from the interleaved replay (all of them, once, by default; more than the
corpus holds replays it under fresh subjects).
"""

from __future__ import annotations

import itertools
import math
import uuid

from slotwise.loadtest.locomo import observations, read_turns
from slotwise.loadtest.scenarios import Options, RunResult, through_the_model

__all__ = ["locomo"]


def locomo(options: Options) -> RunResult:
    turns = read_turns()
    count = options.count or len(turns)
    replicas = math.ceil(count / len(turns))
    prefix = f"b{uuid.uuid4().hex[:6]}-"
    replay = list(itertools.islice(observations(turns, replicas, prefix=prefix), count))
    subjects = len({o.subject_id for o in replay})
    return through_the_model(options, "locomo", replay, count, subjects)
