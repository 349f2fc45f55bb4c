"""Sinks and stores: Redis state, Milvus vectors, Kafka publishers."""
