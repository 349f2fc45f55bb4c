-- Record the next offset of each partition a commit covers, unless the store lost one.
-- KEYS[1]  the commit marks hash
-- ARGV     triples: field ("<topic>:<partition>"), the mark this writer last recorded
--          for it (-1: none yet), the mark to record
-- Returns the fields whose stored mark is missing or below the last recorded one, and
-- then records nothing: the lower mark is what tells the worker where to replay from.
local behind = {}
for i = 1, #ARGV, 3 do
  local last = tonumber(ARGV[i + 1])
  if last >= 0 then
    local stored = redis.call('HGET', KEYS[1], ARGV[i])
    if not stored or tonumber(stored) < last then
      behind[#behind + 1] = ARGV[i]
    end
  end
end
if #behind == 0 then
  for i = 1, #ARGV, 3 do
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 2])
  end
end
return behind
