-- Put a member on a rating board, note when, and keep the board bounded: members not rated within the
-- ttl go, and past max members the least recently rated go; the board itself expires ttl after its
-- last rating.
-- KEYS: board zset (member -> rating), seen zset (member -> order of last rating: server microseconds,
--       made strictly increasing so that ratings within one microsecond keep their order)
-- ARGV: member, rating, ttl ms ('' = forever), max members ('' = no cap)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local latest = redis.call('ZREVRANGE', KEYS[2], 0, 0, 'WITHSCORES')
local at = now
if latest[2] and tonumber(latest[2]) >= at then at = tonumber(latest[2]) + 1 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[2], string.format('%d', at), ARGV[1])
local gone = {}
if ARGV[3] ~= '' then
  local cutoff = now - tonumber(ARGV[3]) * 1000
  gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', string.format('(%d', cutoff), 'LIMIT', 0, 1000)
end
for _, member in ipairs(gone) do
  redis.call('ZREM', KEYS[1], member)
  redis.call('ZREM', KEYS[2], member)
end
if ARGV[4] ~= '' then
  local excess = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[4])
  if excess > 0 then
    -- The least recently rated go first.
    for _, member in ipairs(redis.call('ZRANGE', KEYS[2], 0, excess - 1)) do
      redis.call('ZREM', KEYS[1], member)
      redis.call('ZREM', KEYS[2], member)
    end
  end
end
if ARGV[3] ~= '' then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
return #gone
