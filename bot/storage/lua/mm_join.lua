-- Queue a player (bot/matchmaking/redis_queue.py). Every key is tagged {mm}: KEYS[1] is the entry, the
-- rest are built from ARGV[1] (the "<prefix>:{mm}:" head), so the script touches one hash slot.
-- ARGV: head, player key, now, encoded player+options, rating (first pool's), entry ms, platform,
--       leave_free, leave_penalty_seconds, leave_penalty_max, then pool, rating in that pool, ...
-- Returns {"seated", id} | {"already"} | {"queued", eligible_at}.
local head, pk, now = ARGV[1], ARGV[2], tonumber(ARGV[3])
local entry_ms = tonumber(ARGV[6])
local seat = redis.call('GET', head .. 'seat:' .. pk)
if seat then return {'seated', seat} end
if redis.call('EXISTS', KEYS[1]) == 1 then return {'already'} end
local leaves = tonumber(redis.call('GET', head .. 'leaves:' .. pk) or '0')
local extra = math.max(0, leaves - tonumber(ARGV[8]))
local eligible = now + math.min(tonumber(ARGV[10]), extra * tonumber(ARGV[9]))
local pools = {}
for i = 11, #ARGV, 2 do pools[#pools + 1] = ARGV[i] end
redis.call('HSET', KEYS[1], 'd', ARGV[4], 'r', ARGV[5], 'j', ARGV[3], 'el', string.format('%.17g', eligible),
  'pl', ARGV[7], 'ps', table.concat(pools, ','))
redis.call('PEXPIRE', KEYS[1], entry_ms)
for i = 11, #ARGV, 2 do
  local pool = ARGV[i]
  redis.call('ZADD', head .. 'pool:' .. pool, ARGV[i + 1], pk)
  redis.call('ZADD', head .. 'wait:' .. pool, ARGV[3], pk)
  redis.call('PEXPIRE', head .. 'pool:' .. pool, entry_ms)
  redis.call('PEXPIRE', head .. 'wait:' .. pool, entry_ms)
end
return {'queued', string.format('%.17g', eligible)}
