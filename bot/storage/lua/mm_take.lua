-- Start at once with computers in the empty seats (bot/matchmaking/redis_queue.py).
-- KEYS[1]: the entry; ARGV: head, player key, now, computers_after, match id, seat ms, record ms,
-- build grace seconds (the match waits in `pending` for mm_built, as mm_match's do).
-- Returns the match record (JSON), or false if the player is not queued or has not waited long enough.
local head, pk, now = ARGV[1], ARGV[2], tonumber(ARGV[3])
local e = redis.call('HMGET', KEYS[1], 'd', 'r', 'j', 'el', 'ps')
if not e[5] then return false end
if now - tonumber(e[3]) < tonumber(ARGV[4]) or tonumber(e[4]) > now then return false end
local first = string.match(e[5], '[^,]+')
local rating = tonumber(redis.call('ZSCORE', head .. 'pool:' .. first, pk) or e[2])
for pool in string.gmatch(e[5], '[^,]+') do
  redis.call('ZREM', head .. 'pool:' .. pool, pk)
  redis.call('ZREM', head .. 'wait:' .. pool, pk)
end
redis.call('DEL', KEYS[1])
redis.call('SET', head .. 'seat:' .. pk, ARGV[5], 'PX', tonumber(ARGV[6]))
local size = tonumber(string.match(first, ':(%d+):'))
local record = cjson.encode({id = ARGV[5], pool = first, c = size - 1, f = now,
  pl = {{pk, e[1], rating, tonumber(e[3]), tonumber(e[4])}}})
redis.call('SET', head .. 'match:' .. ARGV[5], record, 'PX', tonumber(ARGV[7]))
redis.call('ZADD', head .. 'pending', now + tonumber(ARGV[8]), ARGV[5])
redis.call('PEXPIRE', head .. 'pending', tonumber(ARGV[7]))
return record
