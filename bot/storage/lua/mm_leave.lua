-- Count a leave of a started public game (bot/matchmaking/redis_queue.py); the count lives ARGV[1] ms
-- after the last leave. KEYS[1]: the player's leaves key. Returns the count.
local n = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]))
return n
