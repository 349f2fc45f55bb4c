"""The worker application, its scheduling, the local stack and CLI wiring."""
