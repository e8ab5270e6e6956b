-- Remove a chat's index entry only if it still points at the given table (a newer table keeps its entry).
-- KEYS: chat; ARGV: table id
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
