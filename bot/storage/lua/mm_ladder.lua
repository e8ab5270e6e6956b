-- Apply one public game to the ladder (bot/matchmaking/ladder_store.py), once: KEYS[1] is the game's
-- "applied" marker; every other key is built from ARGV[1], the "<prefix>:{ladder:<preset>}:" head, so
-- the whole ladder of a preset is one hash slot.
-- ARGV: head, now, marker ms, rating ms, history length, top size, provisional rd, game id,
--       then per player: key, games expected, rating, rd, volatility, games, name.
-- Returns "applied", "already" (the marker exists: a retry), or "stale" (a player's rating changed
-- since it was read: read again and recompute).
local head, now = ARGV[1], ARGV[2]
local marker_ms, rating_ms = tonumber(ARGV[3]), tonumber(ARGV[4])
local history, top_size, provisional = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local game = ARGV[8]
if redis.call('EXISTS', KEYS[1]) == 1 then return 'already' end
for i = 9, #ARGV, 7 do
  local games = redis.call('HGET', head .. 'r:' .. ARGV[i], 'n') or '0'
  if tonumber(games) ~= tonumber(ARGV[i + 1]) then return 'stale' end
end
local top = head .. 'top'
for i = 9, #ARGV, 7 do
  local pk, r, rd = ARGV[i], ARGV[i + 2], ARGV[i + 3]
  local rkey, hkey = head .. 'r:' .. pk, head .. 'h:' .. pk
  redis.call('HSET', rkey, 'r', r, 'rd', rd, 'vol', ARGV[i + 4], 'n', ARGV[i + 5], 't', now, 'name', ARGV[i + 6])
  redis.call('PEXPIRE', rkey, rating_ms)
  redis.call('RPUSH', hkey, cjson.encode({t = tonumber(now), r = tonumber(r), rd = tonumber(rd), g = game}))
  redis.call('LTRIM', hkey, -history, -1)
  redis.call('PEXPIRE', hkey, rating_ms)
  if tonumber(rd) <= provisional then
    redis.call('ZADD', top, r, pk)
  else
    redis.call('ZREM', top, pk)
  end
end
redis.call('ZREMRANGEBYRANK', top, 0, -(top_size + 1))
redis.call('PEXPIRE', top, rating_ms)
redis.call('SET', KEYS[1], '1', 'PX', marker_ms)
return 'applied'
