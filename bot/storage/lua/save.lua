-- Compare-and-set of one table document, with everything that must change with it, in one step.
-- KEYS: table, stream, [chat], [deadlines due, deadlines token], users added..., users removed...
-- ARGV: expected version, document, write id, ttl ms, has event (1/0), event, stream maxlen, table id,
--       has chat (1/0), deadline mode (''/set/drop), deadline when, deadline token, #added, #removed
-- Returns {1, new version} on success, {0, stored version} on a version conflict.
local tkey = KEYS[1]
local expected = tonumber(ARGV[1])
local cur = redis.call('HMGET', tkey, 'v', 'w')
local version = 0
if cur[1] then version = tonumber(cur[1]) end
if version ~= expected then
  -- A retried call whose first attempt was applied (the reply was lost): report success once more.
  if version == expected + 1 and cur[2] == ARGV[3] then
    return {1, version}
  end
  return {0, version}
end
local ttl = ARGV[4]
local table_id = ARGV[8]
version = version + 1
redis.call('HSET', tkey, 'v', version, 'd', ARGV[2], 'w', ARGV[3])
redis.call('PEXPIRE', tkey, ttl)
if ARGV[5] == '1' then
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[7], '*', 'e', ARGV[6])
end
redis.call('PEXPIRE', KEYS[2], ttl)
local k = 3
if ARGV[9] == '1' then
  redis.call('SET', KEYS[k], table_id, 'PX', ttl)
  k = k + 1
end
local mode = ARGV[10]
if mode == 'set' then
  redis.call('ZADD', KEYS[k], ARGV[11], table_id)
  redis.call('HSET', KEYS[k + 1], table_id, ARGV[12])
  k = k + 2
elseif mode == 'drop' then
  redis.call('ZREM', KEYS[k], table_id)
  redis.call('HDEL', KEYS[k + 1], table_id)
  k = k + 2
end
for _ = 1, tonumber(ARGV[13]) do
  redis.call('SADD', KEYS[k], table_id)
  k = k + 1
end
for _ = 1, tonumber(ARGV[14]) do
  redis.call('SREM', KEYS[k], table_id)
  k = k + 1
end
return {1, version}
