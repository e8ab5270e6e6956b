-- Take one send from several sliding-window buckets at once, or none.
-- KEYS: per bucket: log zset, hold key
-- ARGV: now ('' = server time), unique member id, then per bucket: limit, window seconds
-- Returns the seconds to wait as a string ('0' when the send was recorded in every bucket).
local now
if ARGV[1] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) + tonumber(t[2]) / 1000000
else
  now = tonumber(ARGV[1])
end
local function fmt(x) return string.format('%.17g', x) end
local n = #KEYS / 2
local wait = 0
for i = 1, n do
  local log = KEYS[2 * i - 1]
  local limit = tonumber(ARGV[1 + 2 * i])
  local window = tonumber(ARGV[2 + 2 * i])
  local hold = redis.call('GET', KEYS[2 * i])
  if hold and tonumber(hold) - now > wait then
    wait = tonumber(hold) - now
  end
  redis.call('ZREMRANGEBYSCORE', log, '-inf', fmt(now - window))
  local count = redis.call('ZCARD', log)
  if count >= limit then
    local oldest = redis.call('ZRANGE', log, count - limit, count - limit, 'WITHSCORES')
    local w = tonumber(oldest[2]) + window - now
    if w > wait then wait = w end
  end
end
if wait > 0 then
  return fmt(wait)
end
for i = 1, n do
  local log = KEYS[2 * i - 1]
  local window = tonumber(ARGV[2 + 2 * i])
  redis.call('ZADD', log, fmt(now), ARGV[2])
  redis.call('PEXPIRE', log, math.ceil(window * 1000) + 1000)
end
return '0'
