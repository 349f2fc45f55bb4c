"""An agent loop that remembers: each turn reads the user's facts into the prompt, asks the
model, and publishes the turn so the memory learns from it.

    ANTHROPIC_API_KEY=... python examples/agent_loop.py --subject user-42 \
        "I just started at Stripe." "Where do I work?"

``ANTHROPIC_BASE_URL`` points the SDK elsewhere (the tests run it against
``slotwise.loadtest.fake_anthropic``); the memory is the deployment the
``SLOTWISE_*`` variables name.
"""

from __future__ import annotations

import argparse
import uuid
from datetime import UTC, datetime

import anthropic

from slotwise.client import Client, Observation


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subject", required=True, help="Whose memory this is.")
    parser.add_argument("--model", default="claude-haiku-4-5")
    parser.add_argument("turns", nargs="+", help="What the user says, one turn each.")
    args = parser.parse_args()
    model = anthropic.Anthropic()
    session = uuid.uuid4().hex[:8]
    with Client() as memory:
        for n, said in enumerate(args.turns):
            known = memory.facts(args.subject)
            system = "You are a helpful assistant. What you know about the user:\n" + (
                "\n".join(f"- {fact.text}" for fact in known) or "- nothing yet"
            )
            reply = model.messages.create(
                model=args.model,
                max_tokens=400,
                system=system,
                messages=[{"role": "user", "content": said}],
            )
            answer = "".join(b.text for b in reply.content if b.type == "text")
            print(f"user: {said}\nassistant: {answer}")
            turn = Observation(
                observation_id=f"{session}-{n}",
                subject_id=args.subject,
                session_id=session,
                text=said,
                observed_at=datetime.now(UTC),
            )
            memory.publish(turn)
            # Read-your-writes: the next turn's prompt sees what this one taught.
            memory.wait(args.subject, turn.observation_id, timeout=30)


if __name__ == "__main__":
    main()
