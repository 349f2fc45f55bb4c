"""The worker's run loop and what keeps it honest: checkpoint, offsets, positions, retry,
dead letters, scheduling, health, metrics, tracing."""
