"""Kafka adapters: the publishers, topic creation and retention as the broker reports it."""
