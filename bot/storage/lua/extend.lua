-- Keep one user's table index alive until a horizon: list the table (again) and push the expiry out,
-- never in (another table may need the index longer).
-- KEYS: user index; ARGV: table id, horizon in server milliseconds ('at', the default: a time; 'in':
-- that many milliseconds from now), mode
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local horizon = tonumber(ARGV[2])
if ARGV[3] == 'in' then horizon = now + horizon end
redis.call('SADD', KEYS[1], ARGV[1])
local left = redis.call('PTTL', KEYS[1])
if left < 0 or now + left < horizon then
  redis.call('PEXPIREAT', KEYS[1], string.format('%d', horizon))
end
return 1
