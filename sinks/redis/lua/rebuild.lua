-- Put one subject's facts back from the facts topic (see sinks/redis/rebuild.py).
--
-- KEYS: facts, slots, current, meta, observations, archived (one hash tag)
-- ARGV: version floor, now_iso, then per fact: fact_id, slot field,
--       state ('c' current, 'a' archived, 'o' any other status, 'x' erased: a tombstone),
--       fact JSON ('' for a tombstone), observation_id ('' for none), recorded_at ms
-- Returns the number of facts written or deleted.
--
-- Idempotent: a batch written twice (a rebuild resumed after a crash) ends the same.

-- include: slot_index.lua

local facts, slots, current, meta = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local observations, archived = KEYS[5], KEYS[6]

-- A version no decision made against the lost store can hold (the fence stays a fence).
local version = tonumber(redis.call('HGET', meta, 'version') or '0')
if version < tonumber(ARGV[1]) then
  redis.call('HSET', meta, 'version', ARGV[1])
end
redis.call('HSET', meta, 'updated_at', ARGV[2])

local count = 0
for i = 3, #ARGV, 6 do
  local fact_id, field, state, body = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local observation_id, recorded_ms = ARGV[i + 4], ARGV[i + 5]
  index_slot(slots, current, fact_id, field, state == 'c')
  redis.call('ZREM', archived, field .. '\0' .. fact_id)
  if state == 'a' then
    redis.call('ZADD', archived, 0, field .. '\0' .. fact_id)
  end
  if state == 'x' then
    redis.call('HDEL', facts, fact_id)
  else
    redis.call('HSET', facts, fact_id, body)
    if observation_id ~= '' then
      -- read-your-writes: the observation is applied, and the newest one is the watermark
      redis.call('ZADD', observations, recorded_ms, observation_id)
      local mark = redis.call('HGET', meta, 'watermark')
      local at = mark and redis.call('ZSCORE', observations, mark)
      if not at or tonumber(at) <= tonumber(recorded_ms) then
        redis.call('HSET', meta, 'watermark', observation_id)
      end
    end
  end
  count = count + 1
end
return count
