-- Take every message handed over for one table, in one step: of several takers, one gets them.
-- KEYS: the table's handover hash
-- Returns the hash's fields and values, flat.
local all = redis.call('HGETALL', KEYS[1])
if #all > 0 then
  redis.call('DEL', KEYS[1])
end
return all
