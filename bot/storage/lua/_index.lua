-- Shared by the scripts that touch a deadline (prepended to save, deadline, delete, move and index).
--
-- A shard of the due index is a zset (table id -> a lower bound of the table's deadline) and a hash
-- (table id -> the generation of that entry). Every change of a table's deadline raises its generation
-- (field dg of the table hash), so writes to the index from different processes, arriving in any order,
-- settle on the newest: a put applies unless the entry holds a newer generation, a drop only removes an
-- entry of its own generation or older.
local function index_put(due, gen, id, score, g)
  local cur = redis.call('HGET', gen, id)
  if cur and tonumber(g) < tonumber(cur) then return 0 end
  redis.call('ZADD', due, score, id)
  redis.call('HSET', gen, id, g)
  return 1
end

local function index_drop(due, gen, id, g)
  local cur = redis.call('HGET', gen, id)
  if cur and tonumber(g) < tonumber(cur) then return 0 end
  redis.call('ZREM', due, id)
  redis.call('HDEL', gen, id)
  return 1
end

-- The next generation of a table's deadline: above the last one, and at least the server's clock in
-- microseconds, so that a table deleted or expired and opened again under its id starts above what its
-- predecessor left in the index.
local function next_gen(old)
  local t = redis.call('TIME')
  local clock = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local g = (tonumber(old or '0') or 0) + 1
  if clock > g then g = clock end
  return string.format('%d', g)
end

local function num(x)
  return string.format('%.17g', x)
end
