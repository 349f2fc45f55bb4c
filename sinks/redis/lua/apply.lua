-- Apply one event's writes to one subject, atomically (see sinks/redis/store.py).
--
-- KEYS: facts, slots, current, meta, applied, applied_at, observations (one hash tag)
-- ARGV: event_id, expected_version, outputs, now_ms, now_iso, cutoff_ms,
--       observation_id ('' for none), channel, prune_limit,
--       the run_id of the server the writer accepted ('' for any: sinks/redis/identity.py),
--       then per fact: fact_id, slot field, '1' if current else '0', fact JSON
-- Returns {'already_applied', version, outputs} | {'stale', version} | {'applied', version}
--         | {'fenced', 0}: this is another server than the accepted one; nothing written
--
-- Every step is O(log n) in the subject's size: no JSON is decoded here.

-- include: slot_index.lua

local facts, slots, current = KEYS[1], KEYS[2], KEYS[3]
local meta, applied, applied_at, observations = KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local event_id = ARGV[1]

if ARGV[10] ~= '' then
  local id = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
  if id ~= ARGV[10] then
    return {'fenced', 0}
  end
end

local version = tonumber(redis.call('HGET', meta, 'version') or '0')
local stored = redis.call('HGET', applied, event_id)
if stored then
  return {'already_applied', version, stored}
end
if version ~= tonumber(ARGV[2]) then
  return {'stale', version}
end

for i = 11, #ARGV, 4 do
  local fact_id, field, is_current, body = ARGV[i], ARGV[i + 1], ARGV[i + 2] == '1', ARGV[i + 3]
  index_slot(slots, current, fact_id, field, is_current)
  redis.call('HSET', facts, fact_id, body)
end

version = version + 1
redis.call('HSET', meta, 'version', version, 'updated_at', ARGV[5])
redis.call('HSET', applied, event_id, ARGV[3])
redis.call('ZADD', applied_at, ARGV[4], event_id)

-- Bounded, so one apply never pays for a long backlog; every apply prunes some.
local cutoff = '(' .. ARGV[6]
local expired = redis.call('ZRANGE', applied_at, '-inf', cutoff, 'BYSCORE', 'LIMIT', 0, ARGV[9])
if #expired > 0 then
  redis.call('HDEL', applied, unpack(expired))
  redis.call('ZREM', applied_at, unpack(expired))
end

local observation_id = ARGV[7]
if observation_id ~= '' then
  redis.call('HSET', meta, 'watermark', observation_id)
  redis.call('ZADD', observations, ARGV[4], observation_id)
  redis.call('ZREMRANGEBYSCORE', observations, '-inf', cutoff)
  redis.call('PUBLISH', ARGV[8], observation_id)
end
return {'applied', version}
