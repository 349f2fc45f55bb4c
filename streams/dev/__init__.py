"""The one-machine stack and the worker processes that tests and benchmarks drive."""
