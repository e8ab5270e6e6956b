-- Add to (ARGV[1] = "add") or remove from ("del") a player's block list (bot/matchmaking/redis_queue.py).
-- KEYS[1]: the blocker's set; ARGV: op, blocked key, lifetime ms (the list lives that long after its
-- last addition).
if ARGV[1] == 'add' then
  redis.call('SADD', KEYS[1], ARGV[2])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
else
  redis.call('SREM', KEYS[1], ARGV[2])
end
return 1
