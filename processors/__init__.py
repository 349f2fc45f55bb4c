"""The write path's stages: pure typed logic behind injected ports.

Nothing in this package imports Kafka, Redis, Milvus or an SDK: the ports in
:mod:`processors.ports` are implemented in ``sinks/`` and ``streams/``.
"""
