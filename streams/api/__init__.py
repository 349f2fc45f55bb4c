"""The HTTP API and the memory inspector, served by ``slotwise serve``."""
