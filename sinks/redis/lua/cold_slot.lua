-- The archived facts of one slot, or how many the subject has (see sinks/redis/cold.py).
--
-- KEYS: archived, facts (one hash tag)
-- ARGV: slot field ('' for the count only)
-- Returns {archived count, fact JSON...}
--
-- The index is a hint kept beside RedisStore's slot index: a fact the write path
-- superseded (or an erasure deleted) while it was archived is still named here.
-- Every entry read is checked against the fact itself and dropped if stale.

local archived, facts = KEYS[1], KEYS[2]
local field = ARGV[1]
local reply = {0}
if field ~= '' then
  local prefix = field .. '\0'
  local members = redis.call('ZRANGE', archived, '[' .. prefix, '(' .. field .. '\1', 'BYLEX')
  for _, member in ipairs(members) do
    local body = redis.call('HGET', facts, string.sub(member, #prefix + 1))
    local ok, fact = false, nil
    if body then
      ok, fact = pcall(cjson.decode, body)
    end
    if ok and type(fact) == 'table' and fact['status'] == 'archived' then
      reply[#reply + 1] = body
    else
      redis.call('ZREM', archived, member)
    end
  end
end
reply[1] = redis.call('ZCARD', archived)
return reply
