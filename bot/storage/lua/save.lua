-- Compare-and-set of one table document, with everything that must change with it, in one step.
-- KEYS: table, stream, [chat], [due, generation hash of the table's index shard: standalone Redis, with a
--       deadline given], users added..., users removed... (standalone Redis)
-- ARGV: expected version, document, write id, ttl ms, has event (1/0), event, stream maxlen, table id,
--       has chat (1/0), deadline mode (''/set/drop), deadline when, deadline token, #added, #removed,
--       user index ttl ms, users inline (1: their index keys are in KEYS, standalone Redis; 0: cluster),
--       then the user keys added, then those removed
-- Returns {1, new version, horizon, index score, index generation, user keys to keep...} on success (the
-- index pair '' unless the caller must put the table into its index shard), {0, stored version} on a
-- conflict.
--
-- The deadline lives in the table's hash (dw when, dt token, dg generation), written here with the
-- document. The due index only has to hold a lower bound of it: di is the score the table's entry is
-- known to be at most, so a deadline at or after di (most moves push the deadline later) needs no index
-- write at all, and an earlier one (or one with no entry known) is put here on standalone Redis, or by
-- the caller into the shard's slot on a cluster (see index.lua). A dropped deadline leaves the entry as
-- a stale lower bound, which the poller drops when it comes due.
--
-- The table remembers who it lists (field u, user keys joined by newlines) and until when all their
-- indexes are known to live (field x, server milliseconds). When the table's new expiry passes that
-- horizon, the horizon moves to now + max(user index ttl, 2 * ttl) and the reply names every listed
-- user, so the caller extends their indexes too (extend.lua): an index never expires under a live table
-- that lists it, and never lives longer than that without a join or a save needing it.
local tkey = KEYS[1]
local expected = tonumber(ARGV[1])
local cur = redis.call('HMGET', tkey, 'v', 'w', 'u', 'x', 'dw', 'dg', 'di')
local inline = ARGV[16] == '1'
local version = 0
if cur[1] then version = tonumber(cur[1]) end
local function listed(raw)
  local out = {}
  if raw and raw ~= '' then
    for user in string.gmatch(raw, '[^\n]+') do out[#out + 1] = user end
  end
  return out
end
if version ~= expected then
  -- A retried call whose first attempt was applied (the reply was lost): report success once more,
  -- with the users to keep (the first reply, and so its follow-up, may be what was lost).
  if version == expected + 1 and cur[2] == ARGV[3] then
    local again = {1, version, cur[4] or '0', '', ''}
    if not inline and cur[5] and cur[7] then
      -- The put the first reply asked for may be what was lost: ask again (a lower bound of dw).
      again[4], again[5] = cur[7], cur[6] or '0'
    end
    for _, user in ipairs(listed(cur[3])) do again[#again + 1] = user end
    return again
  end
  return {0, version}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = ARGV[4]
local table_id = ARGV[8]
local n_added = tonumber(ARGV[13])
local n_removed = tonumber(ARGV[14])
local index_ttl = tonumber(ARGV[15])
-- Who the table lists after this save.
local members = {}
local order = {}
for _, user in ipairs(listed(cur[3])) do
  if not members[user] then members[user] = true; order[#order + 1] = user end
end
local new_users = {}
for i = 1, n_added do
  local user = ARGV[16 + i]
  if not members[user] then members[user] = true; order[#order + 1] = user end
  new_users[#new_users + 1] = user
end
for i = 1, n_removed do members[ARGV[16 + n_added + i]] = nil end
local kept = {}
for _, user in ipairs(order) do
  if members[user] then kept[#kept + 1] = user end
end
local horizon = tonumber(cur[4] or '0')
local refresh = false
if #kept > 0 and horizon < now + tonumber(ttl) then
  horizon = now + math.max(index_ttl, 2 * tonumber(ttl))
  refresh = true
end
if #kept == 0 then horizon = 0 end
version = version + 1
redis.call('HSET', tkey, 'v', version, 'd', ARGV[2], 'w', ARGV[3], 'u', table.concat(kept, '\n'),
  'x', string.format('%d', horizon))
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
local put_score, put_gen = '', ''
if mode == 'set' then
  local when = ARGV[11]
  local g = next_gen(cur[6])
  redis.call('HSET', tkey, 'dw', when, 'dt', ARGV[12], 'dg', g)
  if not cur[7] or tonumber(when) < tonumber(cur[7]) then
    redis.call('HSET', tkey, 'di', when)
    if inline then
      index_put(KEYS[k], KEYS[k + 1], table_id, when, g)
    else
      put_score, put_gen = when, g
    end
  end
  if inline then k = k + 2 end
elseif mode == 'drop' and cur[5] then
  redis.call('HDEL', tkey, 'dw', 'dt')
  redis.call('HSET', tkey, 'dg', next_gen(cur[6]))
end
if inline then
  -- Standalone Redis: the users' index keys are here, added and kept alive in this step.
  for _ = 1, n_added do
    redis.call('SADD', KEYS[k], table_id)
    local left = redis.call('PTTL', KEYS[k])
    if left < 0 or now + left < horizon then
      redis.call('PEXPIREAT', KEYS[k], string.format('%d', horizon))
    end
    k = k + 1
  end
  for _ = 1, n_removed do
    redis.call('SREM', KEYS[k], table_id)
    k = k + 1
  end
end
local out = {1, version, string.format('%d', horizon), put_score, put_gen}
if refresh then
  -- Everyone listed, but those whose index this step already kept (so creating a table with its first
  -- player stays one round trip).
  local done = {}
  if inline then
    for _, user in ipairs(new_users) do done[user] = true end
  end
  for _, user in ipairs(kept) do
    if not done[user] then out[#out + 1] = user end
  end
elseif not inline then
  -- No index keys here (cluster): the caller adds the new users and keeps their indexes itself.
  for _, user in ipairs(new_users) do
    if members[user] then out[#out + 1] = user end
  end
end
return out
