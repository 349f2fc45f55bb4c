"""The extract stage without a model: the offline rules extractor.

This module is the stage's stable entry point. The rules themselves live in
:mod:`processors.rules`: word lists (``words``), value parsing (``values``),
clause splitting and exclusions (``clauses``), the schematized head
(``head``), the free-text tail (``tail``) and the extractor that runs them
(``extractor``).
"""

from __future__ import annotations

from slotwise.processors.rules import (
    MAX_CLAUSES,
    RulesExtractor,
    extract_candidates,
    extract_records,
)

__all__ = ["MAX_CLAUSES", "RulesExtractor", "extract_candidates", "extract_records"]
