-- One shard of the due index (or the legacy global index, for 'take').
-- KEYS: due zset, generation hash
-- ARGV[1] op:
--   'put'   then (id, score, generation) triples: each applied unless the entry is newer (`index_put`)
--   'drop'  then (id, generation) pairs (`index_drop`)
--   'claim' now ('' = server time), lease seconds ('' = remove), limit: the entries due at now, earliest
--           first, up to limit, each postponed to now + lease (its generation kept) or removed. Returns
--           {now, id, score, generation, ...} (generation '' when the hash has none)
--   'take'  id, score: remove the entry if it still has that score (legacy migration); 1 if removed
-- Returns the number of entries changed for put/drop.
local op = ARGV[1]
if op == 'put' then
  local n = 0
  for i = 2, #ARGV, 3 do n = n + index_put(KEYS[1], KEYS[2], ARGV[i], ARGV[i + 1], ARGV[i + 2]) end
  return n
elseif op == 'drop' then
  local n = 0
  for i = 2, #ARGV, 2 do n = n + index_drop(KEYS[1], KEYS[2], ARGV[i], ARGV[i + 1]) end
  return n
elseif op == 'claim' then
  local now
  if ARGV[2] == '' then
    local t = redis.call('TIME')
    now = tonumber(t[1]) + tonumber(t[2]) / 1000000
  else
    now = tonumber(ARGV[2])
  end
  local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', num(now), 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[4]))
  local out = {num(now)}
  for i = 1, #due, 2 do
    local id = due[i]
    local g = redis.call('HGET', KEYS[2], id) or ''
    if ARGV[3] == '' then
      redis.call('ZREM', KEYS[1], id)
      redis.call('HDEL', KEYS[2], id)
    else
      redis.call('ZADD', KEYS[1], num(now + tonumber(ARGV[3])), id)
    end
    out[#out + 1] = id
    out[#out + 1] = due[i + 1]
    out[#out + 1] = g
  end
  return out
elseif op == 'take' then
  local score = redis.call('ZSCORE', KEYS[1], ARGV[2])
  if score and tonumber(score) == tonumber(ARGV[3]) then
    redis.call('ZREM', KEYS[1], ARGV[2])
    redis.call('HDEL', KEYS[2], ARGV[2])
    return 1
  end
  return 0
end
return redis.error_reply('unknown index op ' .. op)
