-- Form tables (bot/matchmaking/redis_queue.py; MemoryQueue.match is the same algorithm in Python).
-- Runs whole or not at all, one script at a time on the {mm} slot, so with every process calling it a
-- player is taken by one match only: a matched entry is deleted from the entry key and every pool in the
-- same step that writes its seat. A cancelled (deleted) or expired entry is not found, so never seated.
-- KEYS[1]: any {mm} key (routes the call). ARGV: head, now, nonce, spread_base, spread_per_second,
-- spread_max, scan_anchors, scan_candidates, seat ms, record ms, build grace seconds, pool...
-- Per pool, oldest waiting first (the anchor): candidates within the anchor's window (which widens with
-- its wait), the nearest scan_candidates / 2 above and below, closest rating first; each must be eligible (leaver penalty over), on a platform with a live
-- process (alive:<platform>), blocked by none of those chosen nor blocking them, and keep the table's
-- rating spread within the window. Returns the formed matches' records (JSON).
local head, now, nonce = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local base, per_s, cap = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local anchors_max, cands_max = tonumber(ARGV[7]), tonumber(ARGV[8])
local seat_ms, record_ms, grace = tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11])
local alive_cache, taken, out = {}, {}, {}

local function alive(platform)
  local known = alive_cache[platform]
  if known == nil then
    known = redis.call('EXISTS', head .. 'alive:' .. platform) == 1
    alive_cache[platform] = known
  end
  return known
end

local function load(pk, pool)
  local e = redis.call('HMGET', head .. 'e:' .. pk, 'd', 'r', 'j', 'el', 'pl', 'ps')
  if not e[6] then
    -- expired (or cancelled between reads of an older script): drop it from the pool for good
    redis.call('ZREM', head .. 'pool:' .. pool, pk)
    redis.call('ZREM', head .. 'wait:' .. pool, pk)
    return nil
  end
  -- the rating in this pool (per preset: "any" waits with a different one in each)
  local r = redis.call('ZSCORE', head .. 'pool:' .. pool, pk)
  return {pk = pk, d = e[1], r = tonumber(r or e[2]), j = tonumber(e[3]), el = tonumber(e[4]), pl = e[5], ps = e[6]}
end

local function blocked(a, b)
  return redis.call('SISMEMBER', head .. 'block:' .. a, b) == 1
      or redis.call('SISMEMBER', head .. 'block:' .. b, a) == 1
end

local function form(pool, chosen)
  local id = nonce .. '.' .. (#out + 1)
  local players = {}
  for _, e in ipairs(chosen) do
    for p in string.gmatch(e.ps, '[^,]+') do
      redis.call('ZREM', head .. 'pool:' .. p, e.pk)
      redis.call('ZREM', head .. 'wait:' .. p, e.pk)
    end
    redis.call('DEL', head .. 'e:' .. e.pk)
    redis.call('SET', head .. 'seat:' .. e.pk, id, 'PX', seat_ms)
    taken[e.pk] = true
    players[#players + 1] = {e.pk, e.d, e.r, e.j, e.el}
  end
  local record = cjson.encode({id = id, pool = pool, c = 0, f = now, pl = players})
  redis.call('SET', head .. 'match:' .. id, record, 'PX', record_ms)
  -- until mm_built confirms the table, any process may claim it after the grace (mm_unbuilt)
  redis.call('ZADD', head .. 'pending', now + grace, id)
  redis.call('PEXPIRE', head .. 'pending', record_ms)
  out[#out + 1] = record
end

for i = 12, #ARGV do
  local pool = ARGV[i]
  local size = tonumber(string.match(pool, ':(%d+):'))
  local anchors = redis.call('ZRANGE', head .. 'wait:' .. pool, 0, anchors_max - 1)
  for _, apk in ipairs(anchors) do
    if not taken[apk] then
      local a = load(apk, pool)
      if a and a.el <= now and alive(a.pl) then
        local window = math.min(cap, base + per_s * math.max(0, now - a.j))
        -- the nearest on each side (a dense window holds more than one call should look at)
        local half = math.ceil(cands_max / 2)
        -- (above: strictly; below: from the anchor's own rating, the anchor itself among them)
        local up = redis.call('ZRANGEBYSCORE', head .. 'pool:' .. pool, '(' .. a.r, a.r + window,
          'WITHSCORES', 'LIMIT', 0, half)
        local down = redis.call('ZREVRANGEBYSCORE', head .. 'pool:' .. pool, a.r, a.r - window,
          'WITHSCORES', 'LIMIT', 0, half + 1)
        local cands, seen = {}, {}
        for _, around in ipairs({up, down}) do
          for k = 1, #around, 2 do
            local pk = around[k]
            if pk ~= apk and not taken[pk] and not seen[pk] then
              seen[pk] = true
              cands[#cands + 1] = {pk = pk, r = tonumber(around[k + 1])}
            end
          end
        end
        table.sort(cands, function(x, y)
          local dx, dy = math.abs(x.r - a.r), math.abs(y.r - a.r)
          if dx ~= dy then return dx < dy end
          if x.r ~= y.r then return x.r < y.r end
          return x.pk < y.pk
        end)
        local chosen, low, high = {a}, a.r, a.r
        for _, c in ipairs(cands) do
          if #chosen == size then break end
          if math.max(high, c.r) - math.min(low, c.r) <= window then
            local e = load(c.pk, pool)
            if e and e.el <= now and alive(e.pl) then
              local ok = true
              for _, x in ipairs(chosen) do
                if blocked(x.pk, e.pk) then ok = false break end
              end
              if ok then
                chosen[#chosen + 1] = e
                low, high = math.min(low, e.r), math.max(high, e.r)
              end
            end
          end
        end
        if #chosen == size then form(pool, chosen) end
      end
    end
  end
end
return out
