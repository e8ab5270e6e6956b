-- Add to several float counters of one hash in one step.
-- KEYS: stats hash; ARGV: field, increment, field, increment, ...
for i = 1, #ARGV, 2 do
  redis.call('HINCRBYFLOAT', KEYS[1], ARGV[i], ARGV[i + 1])
end
return 1
