-- Count one hit in the key's current fixed window (the first hit opens a window of the given length).
-- KEYS: counter
-- ARGV: window in ms
-- Returns {hits in the window including this one, ms until the window closes}.
local n = redis.call('INCR', KEYS[1])
if n == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  -- A counter without an expiry (written by hand, or the expiry lost): start the window now.
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  left = tonumber(ARGV[1])
end
return {n, left}
