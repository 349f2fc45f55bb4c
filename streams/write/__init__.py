"""The write path: what the worker does with one record, and the outputs it leaves."""
