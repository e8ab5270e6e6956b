-- Refuse sends through a bucket until a time (never shortening an existing hold).
-- KEYS: hold key
-- ARGV: now ('' = server time), seconds
local now
if ARGV[1] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) + tonumber(t[2]) / 1000000
else
  now = tonumber(ARGV[1])
end
local seconds = tonumber(ARGV[2])
local untl = now + seconds
local old = redis.call('GET', KEYS[1])
if old and tonumber(old) > untl then
  return 0
end
redis.call('SET', KEYS[1], string.format('%.17g', untl), 'PX', math.ceil(seconds * 1000) + 1000)
return 1
