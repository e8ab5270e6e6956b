-- Add to several float counters of one hash in one step, and keep the hash a while longer.
-- KEYS: stats hash; ARGV: ttl ms ('' = keep forever), field, increment, field, increment, ...
for i = 2, #ARGV, 2 do
  redis.call('HINCRBYFLOAT', KEYS[1], ARGV[i], ARGV[i + 1])
end
if ARGV[1] ~= '' then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return 1
