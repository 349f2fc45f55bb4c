"""A namespace names one deployment's resources; another namespace derives them all again."""

from __future__ import annotations

from pydantic import SecretStr

from slotwise.streams.config import Settings


def test_settings_moved_to_another_namespace_derive_every_name_and_keep_the_rest() -> None:
    base = Settings(
        namespace="prod",
        redis_url="redis://10.0.0.5:6379/2",
        milvus_token=SecretStr("s3cret"),
        topic_prefix="legacy",  # set by hand: another namespace replaces it too
    )

    moved = base.in_namespace("eval-1a2b")

    assert (moved.topic_prefix, moved.redis_prefix, moved.group_id) == (
        "eval-1a2b",
        "eval-1a2b",
        "eval-1a2b-worker",
    )
    assert moved.milvus_collection_prefix == "eval_1a2b_facts"
    assert moved.milvus_alias == "eval_1a2b_facts_current"
    assert moved.redis_url == base.redis_url
    assert moved.milvus_token is not None and moved.milvus_token.get_secret_value() == "s3cret"
    env = moved.to_env()
    assert env["SLOTWISE_NAMESPACE"] == "eval-1a2b" and env["SLOTWISE_TOPIC_PREFIX"] == "eval-1a2b"
