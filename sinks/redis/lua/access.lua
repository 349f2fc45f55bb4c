-- Record reads of one subject's facts (see sinks/redis/access.py).
--
-- KEYS: access_at (zset: fact_id by last read, epoch ms), access_n (hash: fact_id -> reads)
-- ARGV: per fact: fact_id, reads to add ('0' for none), read at (epoch ms)
-- Both updates commute (a counter and a maximum), so recordings may land in any order.

local at, counts = KEYS[1], KEYS[2]
for i = 1, #ARGV, 3 do
  local fact_id, reads, stamp = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  if reads > 0 then
    redis.call('HINCRBY', counts, fact_id, reads)
  end
  local was = redis.call('ZSCORE', at, fact_id)
  if not was or tonumber(was) < stamp then
    redis.call('ZADD', at, stamp, fact_id)
  end
end
return #ARGV / 3
