-- File review items of one subject: new ones open, resolution records close them
-- (see sinks/redis/review.py).
--
-- KEYS: review (hash id -> item JSON), review_open (zset id by created ms),
--       rejected (set of rejection keys)   (one hash tag)
-- ARGV: per item: review_id, status, created_ms, item JSON, n, then n rejection keys
-- Returns, per item, 1 if it is open after this call, else 0.
--
-- A resolved item is final: nothing reopens or rewrites it, so a replayed creation
-- after the resolution, or a second decision, changes nothing.

local items, open, rejected = KEYS[1], KEYS[2], KEYS[3]
local reply = {}
local i = 1
while i <= #ARGV do
  local id, status, created, body = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local n = tonumber(ARGV[i + 4])
  local exists = redis.call('HEXISTS', items, id) == 1
  local was_open = redis.call('ZSCORE', open, id)
  if not exists or (was_open and status ~= 'open') then
    redis.call('HSET', items, id, body)
    if status == 'open' then
      redis.call('ZADD', open, created, id)
    else
      redis.call('ZREM', open, id)
      for k = 1, n do
        redis.call('SADD', rejected, ARGV[i + 4 + k])
      end
    end
  end
  reply[#reply + 1] = redis.call('ZSCORE', open, id) and 1 or 0
  i = i + 5 + n
end
return reply
