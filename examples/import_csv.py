"""Import structured facts from a CSV file over the HTTP API: each row a candidate the write
path decides against what the subject already has (so a re-import changes nothing).

    python examples/import_csv.py --subject user-42 facts.csv [--url http://127.0.0.1:8080]

Columns: ``attribute,value,text`` and optionally ``observed_at`` (RFC 3339). The token,
if the server needs one, comes from ``SLOTWISE_TOKEN`` (``slotwise token create
--subjects user-42 --scopes write``).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from urllib.parse import quote

import httpx

BATCH = 100  # the API's batch limit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subject", required=True)
    parser.add_argument("--url", default="http://127.0.0.1:8080")
    parser.add_argument("--wait", type=float, default=30.0, help="Seconds to wait per batch.")
    parser.add_argument("csv_file")
    args = parser.parse_args()
    token = os.environ.get("SLOTWISE_TOKEN")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with open(args.csv_file, newline="", encoding="utf-8") as source:
        rows = [
            {key: value for key, value in row.items() if value not in (None, "")}
            for row in csv.DictReader(source)
        ]
    path = f"{args.url}/v1/subjects/{quote(args.subject, safe='')}/candidates"
    decided: dict[str, int] = {}
    for start in range(0, len(rows), BATCH):
        answer = httpx.post(
            path,
            json={"candidates": rows[start : start + BATCH]},
            params={"wait": args.wait},
            headers=headers,
            timeout=args.wait + 30,
        )
        if answer.status_code >= 400:
            problem = answer.json()
            sys.exit(f"row {start + 1}+: {problem['message']} (field {problem['field']})")
        for written in answer.json()["written"]:
            for decision in written["decisions"]:
                decided[decision["decision"]] = decided.get(decision["decision"], 0) + 1
    print(json.dumps({"rows": len(rows), "decisions": decided}))


if __name__ == "__main__":
    main()
