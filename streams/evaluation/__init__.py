"""``slotwise eval``: matching and extraction quality measured on a labelled set (seed 004).

* :mod:`~.data` reads the labelled pairs and turns (``datasets/``);
* :mod:`~.offline` runs the real stages in-process over the in-memory ports;
* :mod:`~.scoring` turns what they did into the seed's table, per kind and per pair;
* :mod:`~.report` prints the table and writes the JSON; :mod:`~.plot` the PR plot;
* :mod:`~.end_to_end` replays the pairs through real topics and a running worker.
"""

from __future__ import annotations

__all__: list[str] = []
