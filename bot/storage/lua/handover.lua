-- Keep messages a stopping process hands over, for one table: per name (audience and key) the one with
-- the newest table version; an older one is dropped. The hash expires after the last hand-over.
-- KEYS: the table's handover hash
-- ARGV: ttl in ms, then per message: name, version ('' when unknown), encoded message
-- Returns how many were kept.
local kept = 0
for i = 2, #ARGV, 3 do
  local name, version, value = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local keep = true
  if version ~= '' then
    local old = redis.call('HGET', KEYS[1], name)
    if old then
      local old_version = string.match(old, '^(%d+)\n')
      if old_version and tonumber(old_version) > tonumber(version) then
        keep = false
      end
    end
  end
  if keep then
    redis.call('HSET', KEYS[1], name, version .. '\n' .. value)
    kept = kept + 1
  end
end
if kept > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return kept
