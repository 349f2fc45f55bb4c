"""Offline extraction: deterministic rules for the schematized head, plus a cautious free-text tail.

Runs when no model is configured. Precision beats recall: a wrong
fact about a user is worse than a missed one, so every rule is anchored on a
first-person subject at the start of a clause, and a clause is dropped when it
is a question, a hypothetical or plan, a negation the schema cannot represent,
or about someone else ("my sister lives in Paris").

Text is split into sentences, then into clauses at conjunctions that start a
new first-person statement ("… and I work at Stripe"). Each clause goes
through the rules in order; the first rule that finds something wins. A
first-person past-tense statement no rule places ("I visited Lisbon in
March") becomes one free-text candidate (``attribute=None``) for the vector
and model path. Relative dates set ``valid_from`` and are rewritten to
absolute ones in the fact's text, which would otherwise go stale.

Where each part lives:

* :mod:`~processors.rules.clauses`: sentences and clauses, and the clauses dropped
  (questions, conditionals, hypotheticals and plans);
* :mod:`~processors.rules.head`: the schematized rules in the order they are tried,
  grouped by what they are about (identity, work, health, family);
* :mod:`~processors.rules.tail`: the free-text tail;
* :mod:`~processors.rules.extractor`: the extractor that runs them and builds candidates;
* :mod:`~processors.rules.words`, :mod:`~processors.rules.values` and
  :mod:`~processors.rules.wording`: the word lists, the reading of values, and the
  rewording of a clause into a fact about "User", shared by the rules.
"""

from __future__ import annotations

from slotwise.processors.rules.extractor import (
    MAX_CLAUSES,
    RulesExtractor,
    extract_candidates,
    extract_records,
)

__all__ = ["MAX_CLAUSES", "RulesExtractor", "extract_candidates", "extract_records"]
