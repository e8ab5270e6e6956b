-- Remove a table and what points at it, optionally as a compare-and-delete.
-- KEYS: table, stream, [chat], [due, generation hash of the table's index shard], users...
-- ARGV: expected version ('' for any), table id, has chat (1/0), has index keys (1/0), #users
-- Returns {1, removed (1/0), generation to drop from the index ('' if none, or dropped here)} or
-- {0, stored version} on a version conflict. The deadline goes with the table's hash.
local tkey = KEYS[1]
local cur = redis.call('HMGET', tkey, 'v', 'dg')
local stored = cur[1]
local version = 0
if stored then version = tonumber(stored) end
if ARGV[1] ~= '' and tonumber(ARGV[1]) ~= version then
  return {0, version}
end
local table_id = ARGV[2]
local removed = redis.call('DEL', tkey)
redis.call('DEL', KEYS[2])
local k = 3
if ARGV[3] == '1' then
  if redis.call('GET', KEYS[k]) == table_id then
    redis.call('DEL', KEYS[k])
  end
  k = k + 1
end
local dropped = cur[2] or ''
if ARGV[4] == '1' then
  if dropped ~= '' then index_drop(KEYS[k], KEYS[k + 1], table_id, dropped) end
  dropped = ''
  k = k + 2
end
for _ = 1, tonumber(ARGV[5]) do
  redis.call('SREM', KEYS[k], table_id)
  k = k + 1
end
return {1, removed, dropped}
