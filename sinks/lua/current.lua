-- Current facts of one slot (ARGV[1] = slot field), or of every slot (no ARGV),
-- in one round trip.
--
-- KEYS: slots, current, facts
-- Returns the fact records (JSON).

local ids = {}
if ARGV[1] then
  local prefix = ARGV[1] .. '\0'
  local members = redis.call('ZRANGE', KEYS[1], '[' .. prefix, '(' .. ARGV[1] .. '\1', 'BYLEX')
  for i, member in ipairs(members) do
    ids[i] = string.sub(member, #prefix + 1)
  end
else
  ids = redis.call('HKEYS', KEYS[2])
end

-- unpack() is bounded by the Lua stack: read in chunks.
local found = {}
for first = 1, #ids, 1000 do
  local chunk = {}
  for i = first, math.min(first + 999, #ids) do
    chunk[#chunk + 1] = ids[i]
  end
  for _, body in ipairs(redis.call('HMGET', KEYS[3], unpack(chunk))) do
    if body then
      found[#found + 1] = body
    end
  end
end
return found
