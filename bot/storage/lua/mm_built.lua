-- A match's table exists (bot/matchmaking/redis_queue.py): take it off `pending` and seat each of its
-- players at the table id, in one step. KEYS[1]: the match record; ARGV: head, match id, table id, seat ms.
-- Returns the number of players seated, or -1 if the record is gone (expired).
local head, id = ARGV[1], ARGV[2]
local record = redis.call('GET', KEYS[1])
redis.call('ZREM', head .. 'pending', id)
if not record then return -1 end
local data = cjson.decode(record)
for _, p in ipairs(data.pl) do
  local seat = head .. 'seat:' .. p[1]
  local current = redis.call('GET', seat)
  -- a player unseated meanwhile (left, or the table ended) is not seated again
  if current == id or current == ARGV[3] then
    redis.call('SET', seat, ARGV[3], 'PX', tonumber(ARGV[4]))
  end
end
return #data.pl
