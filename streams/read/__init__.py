"""The read side, once: facts at a valid or transaction time, search, a subject's logged events.

A leaf the client imports: nothing here imports the worker, the API or a model."""
