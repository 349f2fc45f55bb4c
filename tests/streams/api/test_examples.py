"""Each example in examples/ run as a user would, against the local stack and a worker: the
agent loop (against the fake model), the supersession subscriber, the CSV importer, the
curl client and the MCP script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest

from slotwise.loadtest.fake_anthropic import FakeAnthropic
from slotwise.streams.config import Settings
from tests.streams.api.server import Seeded

pytestmark = [pytest.mark.redis, pytest.mark.kafka, pytest.mark.milvus]

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _env(settings: Settings, **extra: str) -> dict[str, str]:
    return {**os.environ, **settings.to_env(), **extra}


def _run(argv: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=240, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return done.stdout


def _subject() -> str:
    return f"x-{uuid.uuid4().hex[:8]}"


def test_the_agent_loop_reads_what_the_previous_turn_taught(
    served: tuple[Settings, Seeded], written: str
) -> None:
    subject = _subject()
    with FakeAnthropic() as model:
        env = _env(served[0], ANTHROPIC_BASE_URL=model.base_url, ANTHROPIC_API_KEY="test")
        said = _run(
            [sys.executable, str(EXAMPLES / "agent_loop.py"), "--subject", subject,
             "I work at Initrode.", "Where do I work?"],
            env,
        )  # fmt: skip
        prompts = [" ".join(b["text"] for b in r.system_blocks) for r in model.requests]
    assert said.count("assistant: OK") == 2
    assert "Initrode" not in prompts[0] and "Initrode" in prompts[1]


def test_the_subscriber_sees_a_change_and_the_importer_imports(
    served: tuple[Settings, Seeded], written: str, tmp_path: Path
) -> None:
    subject = _subject()
    env = _env(served[0])
    subscriber = subprocess.Popen(
        [sys.executable, str(EXAMPLES / "supersession_subscriber.py"), "--group",
         f"g-{subject}", "--max", "1", "--idle", "120"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    table = tmp_path / "facts.csv"
    table.write_text(
        "attribute,value,text,observed_at\n"
        "employer,Acme,User works at Acme.,2026-01-01T09:00:00Z\n"
        "home_city,Porto,User lives in Porto.,2026-01-01T09:00:00Z\n",
        encoding="utf-8",
    )
    importer = [sys.executable, str(EXAMPLES / "import_csv.py"), "--subject", subject,
                "--url", written, str(table)]  # fmt: skip
    first = json.loads(_run(importer, env))
    assert first == {"rows": 2, "decisions": {"ADD": 2}}
    again = json.loads(_run(importer, env))
    assert "ADD" not in again["decisions"]  # the same facts again change nothing

    change = {"candidates": [{"attribute": "employer", "value": "Globex",
                              "text": "User works at Globex.", "stated_change": True,
                              "observed_at": "2026-02-01T09:00:00Z"}]}  # fmt: skip
    path = f"{written}/v1/subjects/{subject}/candidates"
    assert httpx.post(path, json=change, params={"wait": 30}, timeout=60).status_code == 200
    out, err = subscriber.communicate(timeout=180)
    assert subscriber.returncode == 0, err[-3000:]
    assert f"{subject}: employer changed 'Acme' -> 'Globex'" in out


def test_the_curl_client_writes_reads_searches_and_erases(
    served: tuple[Settings, Seeded], written: str
) -> None:
    subject = _subject()
    out = _run(["bash", str(EXAMPLES / "http_client.sh"), subject],
               _env(served[0], SLOTWISE_URL=written))  # fmt: skip
    answers = [json.loads(line) for line in out.splitlines() if line.strip()]
    added, facts, _found, erased = answers
    assert added["written"][0]["applied"]
    assert [f["value"] for f in facts["facts"]] == ["Globex"]
    assert erased["attestation"]["verified"]


def test_the_mcp_script_and_its_desktop_configuration(
    served: tuple[Settings, Seeded], written: str
) -> None:
    config = json.loads((EXAMPLES / "mcp" / "claude_desktop_config.json").read_text())
    assert config["mcpServers"]["memory"]["args"][:2] == ["mcp", "--subject"]
    subject = _subject()
    out = _run(
        [sys.executable, str(EXAMPLES / "mcp" / "drive_mcp.py"), "--subject", subject,
         "I live in Lisbon.", "where does the user live"],
        _env(served[0]),
    )  # fmt: skip
    assert "add_memory, delete_memory, get_facts, list_reviews, resolve_review" in out
    assert '"value": "Lisbon"' in out
