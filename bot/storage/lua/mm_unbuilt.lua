-- Matches whose table was not confirmed in time (the forming process died?), leased to this caller
-- (bot/matchmaking/redis_queue.py). KEYS[1]: the pending zset; ARGV: head, now, lease seconds, limit.
-- Returns their records; a match whose record expired is dropped.
local head, now = ARGV[1], tonumber(ARGV[2])
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'LIMIT', 0, tonumber(ARGV[4]))
local out = {}
for _, id in ipairs(due) do
  local record = redis.call('GET', head .. 'match:' .. id)
  if record then
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), id)
    out[#out + 1] = record
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return out
