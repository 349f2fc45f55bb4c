-- The slot index rule, included by every script that writes a fact (sinks/redis/scripts.py):
-- a fact is in the slot index (slots: "<slot>\0<fact_id>", current: fact_id -> slot) iff
-- it is current. Puts fact_id under field if is_current, takes it out of the index if not.
local function index_slot(slots, current, fact_id, field, is_current)
  local was = redis.call('HGET', current, fact_id)
  if was and (was ~= field or not is_current) then
    redis.call('ZREM', slots, was .. '\0' .. fact_id)
    redis.call('HDEL', current, fact_id)
  end
  if is_current and was ~= field then
    redis.call('ZADD', slots, 0, field .. '\0' .. fact_id)
    redis.call('HSET', current, fact_id, field)
  end
end
