"""``slotwise eval``: matching and extraction quality measured on a labelled set.

The mechanisms and the table follow “A contradiction is only visible when memories share a key”.

* :mod:`~.data` reads the labelled pairs and turns (``datasets/``);
* :mod:`~.offline` runs the real stages in-process over the in-memory ports;
* :mod:`~.scoring` turns what they did into the article's table, per kind and per pair;
* :mod:`~.report` prints the table and writes the JSON; :mod:`~.plot` the PR plot;
* :mod:`~.end_to_end` replays the pairs through real topics and a running worker.
"""

from __future__ import annotations

__all__: list[str] = []
