-- A table's turn deadline, kept in the table's hash: dw (when), dt (token), dg (generation), di (the
-- score the table's entry in the due index is known to be at most; absent: no entry is known).
-- KEYS: table, [due, generation hash of the table's shard: standalone Redis, where the index is written
--       here; on a cluster the caller writes it after, as the reply says]
-- ARGV: op, table id, then per op:
--   'set'     when, token: replace the deadline (only on a live table). Returns {set (1/0), put score,
--             put generation} with '' when the index needs no write (or it was written here)
--   'clear'   token ('' = any): remove the deadline if its token matches. Returns {removed, drop
--             generation ('' when nothing to drop or dropped here)}
--   'check'   now ('' = server time), generation of the claimed entry: what a claimed entry means.
--             Returns {'gone'|'none', drop generation} (no table, or no deadline: the entry goes),
--             {'later', put score, put generation} (not due: the entry goes back to the true time),
--             or {'due', when, token} (the entry stays leased; di is forgotten so that the next
--             deadline set is indexed again, over the lease, whatever its time)
--   'reindex' (the repair sweep) index the deadline at its true time. Returns {score, generation} (put
--             here on standalone Redis, by the caller on a cluster) or {'', ''} when there is none
local tkey = KEYS[1]
local inline = #KEYS >= 3
local op, id = ARGV[1], ARGV[2]
local function put(score, g)
  if inline then
    index_put(KEYS[2], KEYS[3], id, score, g)
    return {'', ''}
  end
  return {score, g}
end
local function drop(g)
  if inline then
    index_drop(KEYS[2], KEYS[3], id, g)
    return ''
  end
  return g
end
if op == 'set' then
  local cur = redis.call('HMGET', tkey, 'v', 'dg', 'di')
  if not cur[1] then return {0, '', ''} end
  local when = ARGV[3]
  local g = next_gen(cur[2])
  redis.call('HSET', tkey, 'dw', when, 'dt', ARGV[4], 'dg', g)
  if cur[3] and tonumber(when) >= tonumber(cur[3]) then return {1, '', ''} end
  redis.call('HSET', tkey, 'di', when)
  local out = put(when, g)
  return {1, out[1], out[2]}
elseif op == 'clear' then
  local cur = redis.call('HMGET', tkey, 'dw', 'dt', 'dg')
  if not cur[1] then return {0, ''} end
  if ARGV[3] ~= '' and cur[2] ~= ARGV[3] then return {0, ''} end
  local g = next_gen(cur[3])
  redis.call('HDEL', tkey, 'dw', 'dt', 'di')
  redis.call('HSET', tkey, 'dg', g)
  return {1, drop(g)}
elseif op == 'check' then
  local cur = redis.call('HMGET', tkey, 'v', 'dw', 'dt', 'dg')
  if not cur[1] then
    local g = ARGV[4]
    if g == '' then g = '0' end
    return {'gone', drop(g)}
  end
  if not cur[2] then
    redis.call('HDEL', tkey, 'di')
    local g = cur[4] or ARGV[4]
    if g == '' then g = '0' end
    return {'none', drop(g)}
  end
  local now
  if ARGV[3] == '' then
    local t = redis.call('TIME')
    now = tonumber(t[1]) + tonumber(t[2]) / 1000000
  else
    now = tonumber(ARGV[3])
  end
  if tonumber(cur[2]) > now then
    redis.call('HSET', tkey, 'di', cur[2])
    local out = put(cur[2], cur[4])
    return {'later', out[1], out[2]}
  end
  redis.call('HDEL', tkey, 'di')
  return {'due', cur[2], cur[3]}
elseif op == 'reindex' then
  local cur = redis.call('HMGET', tkey, 'v', 'dw', 'dg')
  if not cur[1] or not cur[2] then return {'', ''} end
  local g = cur[3]
  if not g then
    g = next_gen(nil)
    redis.call('HSET', tkey, 'dg', g)
  end
  redis.call('HSET', tkey, 'di', cur[2])
  put(cur[2], g)
  return {cur[2], g}
end
return redis.error_reply('unknown deadline op ' .. op)
