-- Follow a fact's supersession chain to its current head, in one round trip
-- (see sinks/redis/provenance.py).
--
-- KEYS: facts (hash fact_id -> Fact JSON)
-- ARGV: fact_id, max_hops
-- Returns {} for an unknown fact, else {head fact JSON, id of every fact on the way, the
-- asked one first and the head last}. A successor that is not stored ends the walk.

local facts = KEYS[1]
local id = ARGV[1]
local body = redis.call('HGET', facts, id)
if not body then
  return {}
end
local reply = {false}
for _ = 1, tonumber(ARGV[2]) do
  reply[#reply + 1] = id
  local fact = cjson.decode(body)
  local successor = fact['superseded_by']
  if fact['status'] ~= 'superseded' or type(successor) ~= 'string' then
    break
  end
  local next_body = redis.call('HGET', facts, successor)
  if not next_body then
    break
  end
  id, body = successor, next_body
end
reply[1] = body
return reply
