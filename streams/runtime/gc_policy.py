"""The worker's garbage collector: the setup heap frozen, collections far apart.

CPython's default thresholds (700, 10, 10) suit a short script, not a process
that allocates a few hundred small objects per record and keeps a large heap
alive for hours. Measured in one 5,000-observation cascade run: 2,268 young
and 18 full collections took 5.2 s of the worker's 36 s of CPU, each full one
~200 ms with the event loop, the poll thread and every in-flight record
stopped, walking the rules' tables, the vocabulary, the clients and the
embedder that setup built and nothing will ever free (docs/performance.md).

So, once setup is done: one collection, then :func:`gc.freeze` moves every
survivor out of all later collections, and the young threshold is raised so a
collection runs per tens of thousands of allocations rather than per 700.
Reference cycles are still collected (an exception's traceback, a cancelled
task); they live a little longer. The working set of a running worker (records
in flight, outputs awaiting a commit, the caches) is what later full
collections walk, and CPython's own rule still holds them back until the
objects that survived the last one have grown by a quarter.
"""

from __future__ import annotations

import gc

__all__ = ["settle_heap"]

# Older generations are collected after this many collections of the one below.
_OLDER_EVERY = 20


def settle_heap(young_threshold: int) -> None:
    """Freeze what setup built and space collections out; 0 keeps CPython's defaults."""
    if young_threshold <= 0:
        return
    gc.collect()
    gc.freeze()
    gc.set_threshold(young_threshold, _OLDER_EVERY, _OLDER_EVERY)
