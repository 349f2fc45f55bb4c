"""React when a fact changes: every supersession event (old value → new value) as it is
committed, e.g. to refresh a cached profile or tell a human.

    python examples/supersession_subscriber.py --group my-agent [--max 10] [--idle 30]
"""

from __future__ import annotations

import argparse
import time

from slotwise.client import Client, SupersessionEvent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--group", required=True, help="The consumer group: where it resumes.")
    parser.add_argument("--from-beginning", action="store_true")
    parser.add_argument("--max", type=int, default=None, help="Stop after N events.")
    parser.add_argument("--idle", type=float, default=None, help="Stop after S quiet seconds.")
    args = parser.parse_args()
    seen = 0
    with (
        Client() as memory,
        memory.subscribe("supersessions", args.group, from_beginning=args.from_beginning) as events,
    ):
        quiet_since = time.monotonic()
        while args.idle is None or time.monotonic() - quiet_since < args.idle:
            event = events.poll(1.0)
            if not isinstance(event, SupersessionEvent):
                continue
            quiet_since = time.monotonic()
            print(
                f"{event.subject_id}: {event.attribute} changed "
                f"{event.old_value!r} -> {event.new_value!r} ({event.decided_by})",
                flush=True,
            )
            events.commit()
            seen += 1
            if args.max is not None and seen >= args.max:
                return


if __name__ == "__main__":
    main()
