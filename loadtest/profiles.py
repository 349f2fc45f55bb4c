"""Read a py-spy profile in collapsed-stack form (``py-spy record --format raw``).

    python -m slotwise.loadtest.profiles exact-run0.txt --top 25

Prints the functions with the most samples on the CPU: *self* (the frame on
top of the stack) and *total* (anywhere in the stack), as shares of all
samples, so two profiles of different lengths compare directly.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Profile", "read_collapsed"]

_LINE = re.compile(r"^(?P<stack>.*) (?P<count>\d+)$")
_LOCATION = re.compile(r" \((?P<file>[^:()]+):\d+\)$")


def _function(frame: str) -> str:
    """``name (path/file.py:123)`` → ``name (path/file.py)``: one entry per function."""
    return _LOCATION.sub(lambda m: f" ({m['file']})", frame.strip())


@dataclass(frozen=True, slots=True)
class Profile:
    samples: int
    own: Counter[str]
    total: Counter[str]

    def top(self, n: int, *, by: str = "own") -> list[tuple[str, float]]:
        counter = self.own if by == "own" else self.total
        return [(name, count / self.samples) for name, count in counter.most_common(n)]


def read_collapsed(lines: Iterable[str]) -> Profile:
    own: Counter[str] = Counter()
    total: Counter[str] = Counter()
    samples = 0
    for line in lines:
        found = _LINE.match(line.rstrip("\n"))
        if found is None:
            continue
        count = int(found["count"])
        frames = [_function(f) for f in found["stack"].split(";") if f]
        if not frames:
            continue
        samples += count
        own[frames[-1]] += count
        for name in set(frames):
            total[name] += count
    return Profile(samples, own, total)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m slotwise.loadtest.profiles",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("profile", type=Path)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--match", help="only functions whose name or file contains this")
    args = parser.parse_args(argv)
    with args.profile.open() as lines:
        profile = read_collapsed(lines)
    print(f"{profile.samples} samples")
    for by in ("own", "total"):
        print(f"\n{by}:")
        ranked = profile.top(10 * args.top, by=by)
        if args.match:
            ranked = [(n, s) for n, s in ranked if args.match in n]
        for name, share in ranked[: args.top]:
            print(f"  {share:6.1%}  {name}")


if __name__ == "__main__":
    main()
