-- Leave the queue (bot/matchmaking/redis_queue.py). KEYS[1]: the entry; ARGV: head, player key.
-- Returns {"cancelled"} | {"matched", id} | {"none"}. Atomic with mm_match: either the entry is still
-- there (then it is removed from every pool and can never be seated) or the match already took it.
local head, pk = ARGV[1], ARGV[2]
local pools = redis.call('HGET', KEYS[1], 'ps')
if pools then
  for pool in string.gmatch(pools, '[^,]+') do
    redis.call('ZREM', head .. 'pool:' .. pool, pk)
    redis.call('ZREM', head .. 'wait:' .. pool, pk)
  end
  redis.call('DEL', KEYS[1])
  return {'cancelled'}
end
local seat = redis.call('GET', head .. 'seat:' .. pk)
if seat then return {'matched', seat} end
return {'none'}
