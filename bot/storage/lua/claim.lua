-- Claim due deadlines: read and remove (or postpone) in one atomic step, so each goes to one caller.
-- KEYS: deadlines due, deadlines token
-- ARGV: now ('' = server time), limit, lease seconds ('' = remove)
-- Returns a flat list: table id, token, table id, token, ...
local now
if ARGV[1] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) + tonumber(t[2]) / 1000000
else
  now = tonumber(ARGV[1])
end
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%.17g', now),
  'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, table_id in ipairs(due) do
  local token = redis.call('HGET', KEYS[2], table_id) or ''
  if ARGV[3] == '' then
    redis.call('ZREM', KEYS[1], table_id)
    redis.call('HDEL', KEYS[2], table_id)
  else
    redis.call('ZADD', KEYS[1], string.format('%.17g', now + tonumber(ARGV[3])), table_id)
  end
  out[#out + 1] = table_id
  out[#out + 1] = token
end
return out
