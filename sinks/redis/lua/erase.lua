-- The three atomic steps of one erase command on one subject (see sinks/redis/erasure.py).
--
-- KEYS: meta, applied, applied_at, erasing, facts, slots, current (one hash tag),
--       then, for a whole-subject 'delete', every other key of the subject to delete
-- ARGV: op ('begin' | 'delete' | 'finish'), command_id, expected_version, then per op:
--   begin:  progress, force ('1': replace a recorded plan)
--   delete: progress, now_iso, whole ('1' | '0'), n, n erased fact ids,
--           m, m × (fact_id, slot field, '1' if current else '0', fact JSON) relinked facts,
--           r, r × (event_id, outputs) rewritten outputs of earlier events
--   finish: outputs, now_ms, now_iso
-- Returns {'already_applied', version, outputs} once the command finished, else
--   begin:  {'resumed', version, progress} | {'stale', version} | {'planned', version, progress}
--   delete: {'missing', version} | {'stale', version} | {'deleted', version}
--   finish: {'stale', version} | {'applied', version}

-- include: slot_index.lua

local meta, applied, applied_at, erasing = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local facts, slots, current = KEYS[5], KEYS[6], KEYS[7]
local op, command_id = ARGV[1], ARGV[2]

local version = tonumber(redis.call('HGET', meta, 'version') or '0')
local stored = redis.call('HGET', applied, command_id)
if stored then
  return {'already_applied', version, stored}
end

if op == 'begin' then
  local existing = redis.call('HGET', erasing, command_id)
  if existing and ARGV[5] ~= '1' then
    return {'resumed', version, existing}
  end
  if version ~= tonumber(ARGV[3]) then
    return {'stale', version}
  end
  redis.call('HSET', erasing, command_id, ARGV[4])
  return {'planned', version, ARGV[4]}
end

if version ~= tonumber(ARGV[3]) then
  return {'stale', version}
end

if op == 'delete' then
  if redis.call('HEXISTS', erasing, command_id) == 0 then
    return {'missing', version}
  end
  local i = 7
  local erased = tonumber(ARGV[i])
  if ARGV[6] == '1' then
    redis.call('DEL', facts, slots, current)
    for k = 8, #KEYS do
      redis.call('DEL', KEYS[k])
    end
  else
    for k = i + 1, i + erased do
      local fact_id = ARGV[k]
      redis.call('HDEL', facts, fact_id)
      index_slot(slots, current, fact_id, '', false)
    end
  end
  i = i + erased + 1
  local relinked = tonumber(ARGV[i])
  for k = i + 1, i + 4 * relinked, 4 do
    local fact_id, field, is_current, body = ARGV[k], ARGV[k + 1], ARGV[k + 2] == '1', ARGV[k + 3]
    index_slot(slots, current, fact_id, field, is_current)
    redis.call('HSET', facts, fact_id, body)
  end
  i = i + 4 * relinked + 1
  local rewrites = tonumber(ARGV[i])
  for k = i + 1, i + 2 * rewrites, 2 do
    -- Only entries still held: one pruned since is past any replay.
    if redis.call('HEXISTS', applied, ARGV[k]) == 1 then
      redis.call('HSET', applied, ARGV[k], ARGV[k + 1])
    end
  end
  redis.call('HSET', erasing, command_id, ARGV[4])
  version = version + 1
  redis.call('HSET', meta, 'version', version, 'updated_at', ARGV[5])
  return {'deleted', version}
end

if op == 'finish' then
  redis.call('HSET', applied, command_id, ARGV[4])
  redis.call('ZADD', applied_at, ARGV[5], command_id)
  redis.call('HDEL', erasing, command_id)
  version = version + 1
  redis.call('HSET', meta, 'version', version, 'updated_at', ARGV[6])
  return {'applied', version}
end

return redis.error_reply('unknown erase step ' .. tostring(op))
