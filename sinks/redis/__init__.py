"""The state store in Redis: one key layout, Lua scripts, and the helpers around them."""
