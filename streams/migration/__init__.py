"""An embedding-model upgrade: the dual index, its backfill and the query-time adapter."""
