-- A waiting player's status, renewing the entry (bot/matchmaking/redis_queue.py).
-- KEYS[1]: the entry; ARGV: head, player key, entry ms.
-- Returns {"queued", joined, eligible_at, waiting in the fullest of its pools} | {"matched", id} | {"none"}.
local head, pk, entry_ms = ARGV[1], ARGV[2], tonumber(ARGV[3])
local e = redis.call('HMGET', KEYS[1], 'j', 'el', 'ps')
if e[3] then
  redis.call('PEXPIRE', KEYS[1], entry_ms)
  local waiting = 0
  for pool in string.gmatch(e[3], '[^,]+') do
    redis.call('PEXPIRE', head .. 'pool:' .. pool, entry_ms)
    redis.call('PEXPIRE', head .. 'wait:' .. pool, entry_ms)
    waiting = math.max(waiting, redis.call('ZCARD', head .. 'pool:' .. pool))
  end
  return {'queued', e[1], e[2], waiting}
end
local seat = redis.call('GET', head .. 'seat:' .. pk)
if seat then return {'matched', seat} end
return {'none'}
