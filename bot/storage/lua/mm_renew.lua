-- Keep waiting entries alive (bot/matchmaking/redis_queue.py): one call for all of a process's waiting
-- players. KEYS[1]: any {mm} key (routes the call); ARGV: head, entry ms, player key...
-- Returns how many were still queued. Pools are extended with them, so a pool outlives its entries.
local head, entry_ms = ARGV[1], tonumber(ARGV[2])
local renewed, seen = 0, {}
for i = 3, #ARGV do
  local key = head .. 'e:' .. ARGV[i]
  local pools = redis.call('HGET', key, 'ps')
  if pools then
    renewed = renewed + 1
    redis.call('PEXPIRE', key, entry_ms)
    for pool in string.gmatch(pools, '[^,]+') do
      if not seen[pool] then
        seen[pool] = true
        redis.call('PEXPIRE', head .. 'pool:' .. pool, entry_ms)
        redis.call('PEXPIRE', head .. 'wait:' .. pool, entry_ms)
      end
    end
  end
end
return renewed
