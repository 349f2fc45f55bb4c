"""What a setting does, for the ones whose field carries neither a description nor a comment.

The configuration reference prefers the field's own ``description`` and its comment
in the settings class; these notes fill the rest until the fields carry their own.
``tests/streams/cli/test_docs_reference.py`` fails on a note for a setting that no
longer exists, so none outlives its field.
"""

from __future__ import annotations

__all__ = ["NOTES"]

NOTES: dict[str, str] = {
    "SLOTWISE_FORGET_THRESHOLD": "An archive pass archives a fact whose score is below this.",
    "SLOTWISE_FORGET_BUDGET": "Keep at most this many hot facts per subject (unset: no budget).",
    "SLOTWISE_FORGET_DELTA": "The score's bonus for a fact verified within the window (δ).",
    "SLOTWISE_FORGET_VERIFIED_WINDOW_DAYS": "How recent a verification earns the bonus.",
    "SLOTWISE_FORGET_DEFAULT_HALF_LIFE_DAYS": "The half-life of a category with none of its own.",
    "SLOTWISE_FORGET_CLOSED_TO_COLD": "Move superseded facts' rows to the cold tier as well.",
    "SLOTWISE_FORGET_HALF_LIVES": 'Free-text categories\' half-lives in days: {"travel": 90}.',
    "SLOTWISE_FORGET_CALIBRATE_REFRESH_S": "How often the calibration app refits (seconds).",
    "SLOTWISE_FORGET_CALIBRATE_CONFIDENCE": "The level of the fitted half-lives' intervals.",
    "SLOTWISE_KAFKA_BOOTSTRAP": "The Kafka brokers, host:port[,host:port].",
    "SLOTWISE_KAFKA_SASL_MECHANISM": "librdkafka's sasl.mechanism (PLAIN, SCRAM-SHA-512, …).",
    "SLOTWISE_KAFKA_SASL_USERNAME": "librdkafka's sasl.username.",
    "SLOTWISE_KAFKA_SASL_PASSWORD": "librdkafka's sasl.password (a secret).",
    "SLOTWISE_TOPIC_PREFIX": "The topics' prefix: <prefix>.observations.v1, …",
    "SLOTWISE_PARTITIONS": "Partitions of every subject-keyed topic; fixed once data exists.",
    "SLOTWISE_REPLICATION_FACTOR": "The topics' replication factor when slotwise creates them.",
    "SLOTWISE_REDIS_URL": "The state store (redis:// or rediss://, with the database).",
    "SLOTWISE_REDIS_SENTINEL_MASTER": "The master name the Sentinels know the primary by.",
    "SLOTWISE_REDIS_PREFIX": "The prefix of every Redis key of this deployment.",
    "SLOTWISE_REDIS_WAIT_TIMEOUT_MS": "How long a commit's WAIT waits for the replicas.",
    "SLOTWISE_MILVUS_URI": "The Milvus server (or the local Milvus Lite server).",
    "SLOTWISE_MILVUS_TOKEN": "Milvus credentials, user:password or an API key (a secret).",
    "SLOTWISE_MILVUS_ALIAS": "The alias searches go through; a migration's switch moves it.",
    "SLOTWISE_MILVUS_COLLECTION_PREFIX": "The prefix of the per-model collections.",
    "SLOTWISE_MILVUS_FLUSH_EVERY": "Flush after this many unflushed rows, at most once a second.",
    "SLOTWISE_ANTHROPIC_API_KEY": "The model's key; without it the offline providers run.",
    "SLOTWISE_ANTHROPIC_BASE_URL": "Another Messages API endpoint (a proxy, or the fake model).",
    "SLOTWISE_LLM_MODEL": "The model that extracts and matches.",
    "SLOTWISE_LLM_MAX_CONCURRENCY": "Model calls in flight per process.",
    "SLOTWISE_LLM_TIMEOUT_S": "One model call's timeout, in seconds.",
    "SLOTWISE_LLM_MAX_RETRIES": "Retries of a failed model call before it counts as failed.",
    "SLOTWISE_TOP_K": "How many of the subject's nearest facts the vector fetch compares.",
    "SLOTWISE_VECTOR_FLOOR": "Below this cosine a neighbour is not asked about.",
    "SLOTWISE_REVIEW_SIMILARITY": "Offline, pairs at or above this cosine go to review.",
    "SLOTWISE_GROUP_ID": "The workers' consumer group.",
    "SLOTWISE_TRANSACTIONAL_ID": "A fixed transactional id; never for a fleet (replicas fence).",
    "SLOTWISE_MAX_IN_FLIGHT": "Records a worker holds for its next transaction.",
    "SLOTWISE_COMMIT_INTERVAL_MS": "How often a worker commits its transaction.",
    "SLOTWISE_MAX_MESSAGE_BYTES": "A larger message is dead-lettered.",
    "SLOTWISE_MAX_TEXT_BYTES": "A longer text is dead-lettered.",
    "SLOTWISE_METRICS_PORT": "The worker's /metrics and /healthz port.",
    "SLOTWISE_SHUTDOWN_TIMEOUT_S": "How long a stopping worker drains before it exits.",
    "SLOTWISE_DATA_DIR": "Where the local stack keeps its data and logs.",
}
