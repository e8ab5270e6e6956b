-- Set one message reference and return the one it replaced (one step, so concurrent writers each learn
-- what they displaced).
-- KEYS: refs hash
-- ARGV: name, value, ttl in ms
local previous = redis.call('HGET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return previous
