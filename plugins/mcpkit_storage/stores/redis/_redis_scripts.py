"""The Lua scripts behind RedisStore: each multi-key operation in one atomic round trip."""

from __future__ import annotations

from ._redis_lua import CLUSTER_REGISTRY, HELPERS, STANDALONE_REGISTRY
from ._redis_search import SEARCH as SEARCH  # assembled with the others by ``_variant``

__all__ = ["CLUSTER", "CLUSTER_SWAP_MARKER_MS", "QUOTA_BYTES", "QUOTA_VALUES", "STANDALONE", "SWAP_MARKER_MS"]

#: How long a swap's "applied" marker lives: far longer than a reconnect and resend take.
SWAP_MARKER_MS = 10_000
#: The same on a Redis Cluster, whose client tries a command again for longer (a failover takes seconds, and it
#: tries eight times, each with a 2 s connection timeout, and the store for 10 s more while a slot moves).
CLUSTER_SWAP_MARKER_MS = 60_000

#: Return codes of PUT and SWAP besides 1 (done) and 0 (another writer got there first).
QUOTA_VALUES, QUOTA_BYTES = -1, -2


# ARGV[3..12] = base, bucket, key, value bytes, px, score, max values, max bytes ('' for none), index spec
# ('' for none), first-write time ('' for the replaced live entry's, else now).
PUT = (
    HELPERS
    + """
local p = place(ARGV[3], ARGV[4])
local refused = quota(p, ARGV[5], charged(#ARGV[6] - 8, ARGV[11]), ARGV[9], ARGV[10])
if refused ~= 0 then
  return refused
end
write(p, ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[11], ARGV[12])
return 1
"""
)

# ARGV[3..12] as PUT; ARGV[13] = '1' when the expected bytes follow in ARGV[14], '0' for "no live entry";
# ARGV[15] = how many other addresses must hold their expected bytes (and are deleted: a value moving keeps the
# earliest first-write time), then for each: base, bucket, key, flag, expected.
SWAP = (
    HELPERS
    + """
local p = place(ARGV[3], ARGV[4])
local name = p.values .. ARGV[5]
local done = ARGV[3] .. ':s:' .. redis.sha1hex(name) .. redis.sha1hex(ARGV[6])
if redis.call('EXISTS', done) == 1 or redis.call('GET', name) == ARGV[6] then
  return 1  -- this very swap, resent by the client after a dropped connection: it was applied
end
if not holds(name, ARGV[13], ARGV[14]) then
  return 0
end
local others, moved = {}, {{p, ARGV[5]}}
for i = 1, tonumber(ARGV[15]) do
  local at = 15 + (i - 1) * 5
  local other = place(ARGV[at + 1], ARGV[at + 2])
  if not holds(other.values .. ARGV[at + 3], ARGV[at + 4], ARGV[at + 5]) then
    return 0
  end
  others[i] = {other, ARGV[at + 3]}
  moved[i + 1] = others[i]
end
local created = ARGV[12]
if created == '' and #others > 0 then
  created = first_written(moved)
end
local refused = quota(p, ARGV[5], charged(#ARGV[6] - 8, ARGV[11]), ARGV[9], ARGV[10])
if refused ~= 0 then
  return refused
end
write(p, ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[11], created)
for _, other in ipairs(others) do
  remove(other[1], other[2])
  refresh_index(other[1])
  refresh_owner(other[1])
end
redis.call('SET', done, '1', 'PX', %MARKER_MS%)
return 1
"""
)

# ARGV[3] = how many writes, then for each: SWAP's ARGV[3..14], how many other addresses, and for each of those
# base, bucket, key, flag, expected. All of them or none (``swap_many(whole=True)``): every expectation and every
# quota (each counting the writes before it) is checked before the first write. Returns {code, which}: {1, 0} done,
# else nothing written and {0, i} (write i's expectation failed) or {QUOTA_*, i} (write i's quota refused it).
SWAP_ALL = (
    HELPERS
    + """
local writes, at, resent = {}, 4, true
for i = 1, tonumber(ARGV[3]) do
  local w = {base = ARGV[at], p = place(ARGV[at], ARGV[at + 1]), key = ARGV[at + 2], value = ARGV[at + 3],
    px = ARGV[at + 4], score = ARGV[at + 5], max_values = ARGV[at + 6], max_bytes = ARGV[at + 7],
    spec = ARGV[at + 8], created = ARGV[at + 9], flag = ARGV[at + 10], expected = ARGV[at + 11], others = {}}
  w.name = w.p.values .. w.key
  w.done = w.base .. ':s:' .. redis.sha1hex(w.name) .. redis.sha1hex(w.value)
  local count = tonumber(ARGV[at + 12])
  at = at + 13
  for j = 1, count do
    w.others[j] = {place(ARGV[at], ARGV[at + 1]), ARGV[at + 2], ARGV[at + 3], ARGV[at + 4]}
    at = at + 5
  end
  writes[i] = w
  if redis.call('EXISTS', w.done) == 0 and redis.call('GET', w.name) ~= w.value then
    resent = false
  end
end
if resent then
  return {1, 0}  -- this very batch, resent by the client after a dropped connection: it was applied
end
for i, w in ipairs(writes) do
  if not holds(w.name, w.flag, w.expected) then
    return {0, i}
  end
  for _, other in ipairs(w.others) do
    if not holds(other[1].values .. other[2], other[3], other[4]) then
      return {0, i}
    end
  end
end
local pending = {}  -- per place: the bytes, the new keys and the sizes the writes before this one make
for i, w in ipairs(writes) do
  local p = w.p
  local batch = pending[p.values]
  if batch == nil then
    if w.max_values ~= '' or w.max_bytes ~= '' then
      trim(p)
    end
    batch = {bytes = 0, added = 0, sizes = {}}
    pending[p.values] = batch
  end
  local size = charged(#w.value - 8, w.spec)
  local old = batch.sizes[w.key] or tonumber(redis.call('HGET', p.sizes, w.key) or '0')
  local known = batch.sizes[w.key] ~= nil or redis.call('ZSCORE', p.index, w.key)
  local total = tonumber(redis.call('HGET', p.sizes, '') or '0') + batch.bytes
  local new_total = total - old + size
  if w.max_values ~= '' and not known and redis.call('ZCARD', p.index) + batch.added + 1 > tonumber(w.max_values) then
    return {-1, i}
  end
  if w.max_bytes ~= '' and new_total > tonumber(w.max_bytes) and new_total > total then
    return {-2, i}
  end
  if not known then
    batch.added = batch.added + 1
  end
  batch.bytes = batch.bytes - old + size
  batch.sizes[w.key] = size
end
for _, w in ipairs(writes) do
  local created = w.created
  if created == '' and #w.others > 0 then  -- a value moving keeps the earliest first-write time
    local moved = {{w.p, w.key}}
    for j, other in ipairs(w.others) do
      moved[j + 1] = {other[1], other[2]}
    end
    created = first_written(moved)
  end
  write(w.p, w.key, w.value, w.px, w.score, w.spec, created)
  for _, other in ipairs(w.others) do
    remove(other[1], other[2])
    refresh_index(other[1])
    refresh_owner(other[1])
  end
  redis.call('SET', w.done, '1', 'PX', %MARKER_MS%)
end
return {1, 0}
"""
)

# ARGV[3] = how many addresses, then base, bucket, key for each. Returns how many live entries went.
DELETE_MANY = (
    HELPERS
    + """
local gone = 0
for i = 1, tonumber(ARGV[3]) do
  local at = 3 + (i - 1) * 3
  local p = place(ARGV[at + 1], ARGV[at + 2])
  if live(redis.call('GETRANGE', p.values .. ARGV[at + 3], 0, 7)) then
    gone = gone + 1
  end
  remove(p, ARGV[at + 3])
  refresh_index(p)
  refresh_owner(p)
end
return gone
"""
)

# ARGV[3..4] = base, bucket. Returns key, value bytes, key, value bytes, ... of the live entries.
ENTRIES = (
    HELPERS
    + """
local p = place(ARGV[3], ARGV[4])
if trim(p) > 0 then
  refresh_index(p)
  refresh_owner(p)
end
local found = {}
for _, member in ipairs(redis.call('ZRANGEBYSCORE', p.index, '(' .. ARGV[1], '+inf')) do
  local raw = redis.call('GET', p.values .. member)
  if live(raw) then
    found[#found + 1] = member
    found[#found + 1] = raw
  end
end
return found
"""
)

# ARGV[3..4] = base, bucket. Returns how many live entries went.
DELETE_BUCKET = (
    HELPERS
    + """
local p = place(ARGV[3], ARGV[4])
local gone = 0
local scored = redis.call('ZRANGE', p.index, 0, -1, 'WITHSCORES')
for i = 1, #scored, 2 do
  if redis.call('DEL', p.values .. scored[i]) == 1 and tonumber(scored[i + 1]) > now then
    gone = gone + 1
  end
end
redis.call('DEL', p.index, p.sizes, p.docs, p.postings, p.created)
refresh_owner(p)
return gone
"""
)

# ARGV[3] = base. Returns how many entries went.
DELETE_OWNER = (
    HELPERS
    + """
local base = ARGV[3]
local gone = 0
for _, name in ipairs(buckets(base)) do
  local p = place(base, name)
  for _, member in ipairs(redis.call('ZRANGE', p.index, 0, -1)) do
    gone = gone + redis.call('DEL', p.values .. member)
  end
  redis.call('DEL', p.index, p.sizes, p.docs, p.postings, p.created)
end
redis.call('DEL', base .. '%OWNER%')
return gone
"""
)

# ARGV[3..4] = base, bucket. Returns how many expired entries went.
PURGE = (
    HELPERS
    + """
local p = place(ARGV[3], ARGV[4])
local gone = trim(p)
refresh_index(p)
refresh_owner(p)
return gone
"""
)

_NAMES = ("DELETE_BUCKET", "DELETE_MANY", "DELETE_OWNER", "ENTRIES", "PURGE", "PUT", "SEARCH", "SWAP", "SWAP_ALL")


def _variant(owner: str, registry: str, marker_ms: int) -> dict[str, str]:
    fill = {"%OWNER%": owner, "%REGISTRY%": registry, "%MARKER_MS%": str(marker_ms)}
    scripts = {}
    for name in _NAMES:
        text = globals()[name]
        for placeholder, value in fill.items():
            text = text.replace(placeholder, value)
        scripts[name] = text
    return scripts


#: The scripts for one Redis node, by name.
STANDALONE = _variant(":b", STANDALONE_REGISTRY, SWAP_MARKER_MS)
#: The scripts for a Redis Cluster, by name: the same, with the cluster's register of buckets and a swap marker
#: that outlives the cluster client's retries across a failover.
CLUSTER = _variant(":o", CLUSTER_REGISTRY, CLUSTER_SWAP_MARKER_MS)
