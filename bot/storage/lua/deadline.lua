-- Set or clear one table's deadline; the zset and the token hash change together.
-- KEYS: deadlines due, deadlines token
-- ARGV: mode (set/clear), table id, when (set), token (set; for clear: '' for any, else must match)
-- Returns 1 if something was set or removed, else 0.
local table_id = ARGV[2]
if ARGV[1] == 'set' then
  redis.call('ZADD', KEYS[1], ARGV[3], table_id)
  redis.call('HSET', KEYS[2], table_id, ARGV[4])
  return 1
end
if ARGV[4] ~= '' and redis.call('HGET', KEYS[2], table_id) ~= ARGV[4] then
  return 0
end
local removed = redis.call('ZREM', KEYS[1], table_id)
redis.call('HDEL', KEYS[2], table_id)
return removed
