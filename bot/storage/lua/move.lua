-- Move a table to another id (a chat whose platform id changed), in parts that a Redis Cluster can run
-- slot by slot, or all at once on a standalone server.
-- ARGV[1] part:
--   'all'  KEYS: old table, old stream, old chat, moved, new table, new stream, new chat, old due, old
--                generations, new due, new generations (the two ids' index shards), users...
--   'in'   KEYS: new table, new stream, new chat     (the new id's slot: the copy)
--   'out'  KEYS: old table, old stream, old chat, moved   (the old id's slot: compare-and-delete)
--   'undo' KEYS: new table, new stream, new chat     (the copy, when 'out' found the table changed)
-- ARGV[2..]: expected version, document, write id, ttl ms, old id, new id, has chat keys (1/0),
--            stream maxlen, #users, #events, events..., #listed, the user keys the table lists...,
--            then the deadline the copy carries ('in': dw, dt, dg as read from the old table, '' for none;
--            'all' reads them itself)
-- The deadline (dw, dt, dg of the table hash) moves with the table; the copy has no di, and the index
-- entries are renamed: 'all' here, on a cluster the caller after 'out' (see index.lua).
-- The copy lists those users with an index horizon of 0, so its next save extends their indexes
-- (see save.lua).
-- A chat key is always in its table's slot here (the caller passes '0' otherwise and moves it itself).
-- Returns {1, 0} on success, {0, stored version, which ('old'/'new')} on a conflict.
local part = ARGV[1]
local expected = tonumber(ARGV[2])
local document, write_id, ttl = ARGV[3], ARGV[4], ARGV[5]
local old_id, new_id, has_chat = ARGV[6], ARGV[7], ARGV[8] == '1'
local maxlen, n_users, n_events = ARGV[9], tonumber(ARGV[10]), tonumber(ARGV[11])

local function check_out(t)
  local stored = redis.call('HGET', t, 'v')
  local version = 0
  if stored then version = tonumber(stored) end
  if version ~= expected or version == 0 then
    return {0, version, 'old'}
  end
  return nil
end

local function check_in(t)
  local cur = redis.call('HMGET', t, 'v', 'w')
  if cur[1] and cur[2] ~= write_id then
    return {0, tonumber(cur[1]), 'new'}
  end
  return nil
end

local listed = {}
local n_listed = tonumber(ARGV[12 + n_events] or '0')
for i = 1, n_listed do listed[#listed + 1] = ARGV[12 + n_events + i] end
local dl = {ARGV[13 + n_events + n_listed] or '', ARGV[14 + n_events + n_listed] or '',
  ARGV[15 + n_events + n_listed] or ''}

local function copy_in(t, s, c, deadline)
  redis.call('DEL', s)
  redis.call('HSET', t, 'v', expected, 'd', document, 'w', write_id, 'u', table.concat(listed, '\n'), 'x', 0)
  if deadline[1] ~= '' then
    redis.call('HSET', t, 'dw', deadline[1], 'dt', deadline[2], 'dg', deadline[3])
  end
  redis.call('PEXPIRE', t, ttl)
  for i = 1, n_events do
    redis.call('XADD', s, 'MAXLEN', '~', maxlen, '*', 'e', ARGV[11 + i])
  end
  if n_events > 0 then redis.call('PEXPIRE', s, ttl) end
  if has_chat then redis.call('SET', c, new_id, 'PX', ttl) end
end

local function delete_out(t, s, c, m)
  redis.call('DEL', t, s)
  if has_chat and redis.call('GET', c) == old_id then redis.call('DEL', c) end
  redis.call('SET', m, new_id, 'PX', ttl)
end


if part == 'all' then
  local conflict = check_out(KEYS[1]) or check_in(KEYS[5])
  if conflict then return conflict end
  local d = redis.call('HMGET', KEYS[1], 'dw', 'dt', 'dg')
  local deadline = {d[1] or '', d[2] or '', d[3] or ''}
  copy_in(KEYS[5], KEYS[6], KEYS[7], deadline)
  delete_out(KEYS[1], KEYS[2], KEYS[3], KEYS[4])
  if deadline[3] ~= '' then index_drop(KEYS[8], KEYS[9], old_id, deadline[3]) end
  if deadline[1] ~= '' then
    redis.call('HSET', KEYS[5], 'di', deadline[1])
    index_put(KEYS[10], KEYS[11], new_id, deadline[1], deadline[3])
  end
  for i = 1, n_users do
    redis.call('SREM', KEYS[11 + i], old_id)
    redis.call('SADD', KEYS[11 + i], new_id)
    -- Never an index without an expiry: at least as long as the moved table (its next save extends it).
    local left = redis.call('PTTL', KEYS[11 + i])
    if left < tonumber(ttl) then redis.call('PEXPIRE', KEYS[11 + i], ttl) end
  end
  return {1, 0}
elseif part == 'in' then
  local conflict = check_in(KEYS[1])
  if conflict then return conflict end
  copy_in(KEYS[1], KEYS[2], KEYS[3], dl)
  if dl[1] ~= '' then redis.call('HSET', KEYS[1], 'di', dl[1]) end
  return {1, 0}
elseif part == 'out' then
  local conflict = check_out(KEYS[1])
  if conflict then return conflict end
  delete_out(KEYS[1], KEYS[2], KEYS[3], KEYS[4])
  return {1, 0}
elseif part == 'undo' then
  if redis.call('HGET', KEYS[1], 'w') == write_id then
    redis.call('DEL', KEYS[1], KEYS[2])
    if has_chat and redis.call('GET', KEYS[3]) == new_id then redis.call('DEL', KEYS[3]) end
  end
  return {1, 0}
end
return redis.error_reply('unknown part ' .. part)
