"""What the worker applies from a subject's log besides candidates: erase, forget, restore,
review, consolidate, reslot — each through the one apply loop."""
