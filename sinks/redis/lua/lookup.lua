-- Everything deciding one event reads, in one round trip (see sinks/redis/store.py).
--
-- KEYS: meta, applied, facts, slots, current (one hash tag)
-- ARGV: event_id ('' for none), own fact id ('' for none),
--       slot field ('' for none, '*' for every slot)
-- Returns {version, stored outputs or '', own fact JSON or '', current fact JSON...}
-- An event applied before returns its outputs and nothing else: it is not decided again.

local meta, applied, facts, slots, current = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local event_id, own_id, field = ARGV[1], ARGV[2], ARGV[3]

local reply = {redis.call('HGET', meta, 'version') or '0', '', ''}
if event_id ~= '' then
  local stored = redis.call('HGET', applied, event_id)
  if stored then
    reply[2] = stored
    return reply
  end
end
if own_id ~= '' then
  reply[3] = redis.call('HGET', facts, own_id) or ''
end
if field == '' then
  return reply
end

local ids = {}
if field == '*' then
  ids = redis.call('HKEYS', current)
else
  local prefix = field .. '\0'
  local members = redis.call('ZRANGE', slots, '[' .. prefix, '(' .. field .. '\1', 'BYLEX')
  for i, member in ipairs(members) do
    ids[i] = string.sub(member, #prefix + 1)
  end
end

-- unpack() is bounded by the Lua stack: read in chunks.
for first = 1, #ids, 1000 do
  local chunk = {}
  for i = first, math.min(first + 999, #ids) do
    chunk[#chunk + 1] = ids[i]
  end
  for _, body in ipairs(redis.call('HMGET', facts, unpack(chunk))) do
    if body then
      reply[#reply + 1] = body
    end
  end
end
return reply
