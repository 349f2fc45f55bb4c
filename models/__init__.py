"""Model providers behind the processors' ports: the Anthropic client (retries, breaker,
concurrency cap), the model extractor and slot matcher, and the embedders.

Nothing here imports ``slotwise.streams``: the wiring (``streams/wiring/app.py``) builds
these from settings, as it builds the stores in ``sinks/``.
"""
