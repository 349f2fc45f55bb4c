"""Topic catalogue and the message records that travel on it."""
