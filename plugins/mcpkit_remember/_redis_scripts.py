"""The Lua scripts behind RedisStore: each multi-key operation in one atomic round trip.

Keys of one owner share the hash tag ``{owner}`` (one Cluster slot), so a
script may build the names of that owner's other keys itself. Names, from
``base = prefix .. "{" .. owner .. "}"``:

- ``base:v:<bucket>:<key>`` the value: 8-byte big-endian double deadline
  (``inf``: none) followed by the data; real expiry PEXPIREAT at the deadline;
- ``base:i:<bucket>`` a ZSET of the bucket's keys scored by deadline (``inf``);
  it expires with its longest-lived member;
- ``base:b`` a SET of the owner's bucket names; it expires with its
  longest-lived index;
- ``base:s:<sha1 of the value's name><sha1 of the written bytes>`` a marker that a swap was applied, kept
  for ``SWAP_MARKER_MS``: a swap resent after a dropped connection finds it and
  reports success instead of a conflict, even if another writer came in between.

The ``v``/``i``/``b``/``s`` markers keep a value's name from ever equalling an index's,
whatever the bucket and key. Writes also drop the bucket's expired values, so
nothing outlives its deadline by much even when the clock runs ahead of Redis.
Needs Redis 6.2 or newer (``SET ... PXAT``).

Every script takes ``ARGV[1] = base``, ``ARGV[2] = bucket``, ``ARGV[3] = now``.
"""

from __future__ import annotations

__all__ = ["DELETE", "DELETE_BUCKET", "DELETE_OWNER", "KEYS", "PURGE", "PUT", "SWAP"]

#: How long a swap's "applied" marker lives: far longer than a reconnect and resend take.
SWAP_MARKER_MS = 10_000

_HELPERS = """
local base, bucket, now = ARGV[1], ARGV[2], tonumber(ARGV[3])
local values = base .. ':v:' .. bucket .. ':'

-- Whether raw value bytes (or a GETRANGE of their header) are readable at now.
local function live(raw)
  return raw ~= false and #raw >= 8 and struct.unpack('>d', raw) > now
end

-- Delete this bucket's values whose deadline has passed, and their index members.
local function trim(index)
  local gone = 0
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', index, '-inf', ARGV[3])) do
    if not live(redis.call('GETRANGE', values .. member, 0, 7)) then
      gone = gone + redis.call('DEL', values .. member)
      redis.call('ZREM', index, member)
    end
  end
  return gone
end

-- When the index's longest-lived member expires: nil (no index), -1 (never) or a Unix time in ms.
local function deadline(index)
  local top = redis.call('ZRANGE', index, -1, -1, 'WITHSCORES')
  if #top == 0 then
    return nil
  elseif top[2] == 'inf' then
    return -1
  end
  return math.ceil(tonumber(top[2]) * 1000)
end

-- Let a key live until ms (-1: forever).
local function expire_at(name, ms)
  if ms == -1 then
    redis.call('PERSIST', name)
  else
    redis.call('PEXPIREAT', name, string.format('%.0f', ms))
  end
end

-- Let the index live exactly as long as its longest-lived member.
local function refresh_index(index)
  local ms = deadline(index)
  if ms ~= nil then
    expire_at(index, ms)
  end
end

-- Let the owner's bucket set live exactly as long as its longest-lived index; forget empty buckets.
local function refresh_owner(buckets)
  local longest = nil
  for _, name in ipairs(redis.call('SMEMBERS', buckets)) do
    local ms = deadline(base .. ':i:' .. name)
    if ms == nil then
      redis.call('SREM', buckets, name)
    elseif longest == nil or longest ~= -1 and (ms == -1 or ms > longest) then
      longest = ms
    end
  end
  if longest ~= nil then
    expire_at(buckets, longest)
  end
end

-- KEYS = value, index, buckets; ARGV[4..7] = key, value bytes, PXAT ms or '', score.
local function write()
  if ARGV[6] == '' then
    redis.call('SET', KEYS[1], ARGV[5])
  else
    redis.call('SET', KEYS[1], ARGV[5], 'PXAT', ARGV[6])
  end
  redis.call('ZADD', KEYS[2], ARGV[7], ARGV[4])
  redis.call('SADD', KEYS[3], bucket)
  trim(KEYS[2])
  refresh_index(KEYS[2])
  refresh_owner(KEYS[3])
end
"""

PUT = (
    _HELPERS
    + """
write()
return 1
"""
)

# ARGV[8] = '1' when an expected value follows in ARGV[9], '0' for "no live entry".
SWAP = (
    _HELPERS
    + """
local done = base .. ':s:' .. redis.sha1hex(KEYS[1]) .. redis.sha1hex(ARGV[5])
if redis.call('EXISTS', done) == 1 then
  return 1  -- this very swap, resent by the client after a dropped connection: it was applied
end
local current = redis.call('GET', KEYS[1])
if live(current) then
  if ARGV[8] == '0' or string.sub(current, 9) ~= ARGV[9] then
    return 0
  end
elseif ARGV[8] == '1' then
  return 0
end
write()
redis.call('SET', done, '1', 'PX', """
    + str(SWAP_MARKER_MS)
    + """)
return 1
"""
)

# KEYS = value, index, buckets; ARGV[4] = key. Returns 1 when a live entry went.
DELETE = (
    _HELPERS
    + """
local was_live = live(redis.call('GETRANGE', KEYS[1], 0, 7))
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[4])
refresh_index(KEYS[2])
refresh_owner(KEYS[3])
return was_live and 1 or 0
"""
)

# KEYS = index, buckets. Returns the live keys, unsorted.
KEYS = (
    _HELPERS
    + """
if trim(KEYS[1]) > 0 then
  refresh_index(KEYS[1])
  refresh_owner(KEYS[2])
end
return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[3], '+inf')
"""
)

# KEYS = index, buckets. Returns how many live entries went.
DELETE_BUCKET = (
    _HELPERS
    + """
local gone = 0
local scored = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
for i = 1, #scored, 2 do
  if redis.call('DEL', values .. scored[i]) == 1 and tonumber(scored[i + 1]) > now then
    gone = gone + 1
  end
end
redis.call('DEL', KEYS[1])
refresh_owner(KEYS[2])
return gone
"""
)

# KEYS = buckets; ARGV[2] and ARGV[3] are unused. Returns how many entries went.
DELETE_OWNER = (
    _HELPERS
    + """
local gone = 0
for _, name in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local index = base .. ':i:' .. name
  for _, member in ipairs(redis.call('ZRANGE', index, 0, -1)) do
    gone = gone + redis.call('DEL', base .. ':v:' .. name .. ':' .. member)
  end
  redis.call('DEL', index)
end
redis.call('DEL', KEYS[1])
return gone
"""
)

# KEYS = index, buckets. Returns how many expired entries went.
PURGE = (
    _HELPERS
    + """
local gone = trim(KEYS[1])
refresh_index(KEYS[1])
refresh_owner(KEYS[2])
return gone
"""
)
