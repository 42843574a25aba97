"""The Lua every script of ``RedisStore`` shares: the helper functions, and the owner's register of buckets in
its two forms (a SET on one node, a ZSET of deadlines on a cluster). ``_redis_scripts`` assembles the scripts."""

from __future__ import annotations

from .. import INDEX_BYTES_PER_WORD

__all__ = ["CLUSTER_REGISTRY", "HELPERS", "STANDALONE_REGISTRY"]

# The owner's register of buckets, on one Redis node: a SET, refreshed by looking at every bucket's index.
STANDALONE_REGISTRY = """
local function enlist(p)
  redis.call('SADD', p.owner, p.bucket)
end

local function buckets(base)
  return redis.call('SMEMBERS', base .. ':b')
end

-- Let the owner's bucket set live exactly as long as its longest-lived index; forget empty buckets.
local function refresh_owner(p)
  local longest = nil
  for _, name in ipairs(redis.call('SMEMBERS', p.owner)) do
    local ms = deadline(p.base .. ':i:' .. name)
    if ms == nil then
      redis.call('SREM', p.owner, name)
    elseif longest == nil or longest ~= -1 and (ms == -1 or ms > longest) then
      longest = ms
    end
  end
  if longest ~= nil then
    expire_at(p.owner, longest)
  end
end
"""

# On a Redis Cluster a script may touch only the keys it declares (the others may be mid-migration to another
# node), so the register is a ZSET of each bucket's deadline (``base:o``): refreshing one bucket reads only that
# bucket's index and the register, and the register lives as long as its highest score.
CLUSTER_REGISTRY = """
local function enlist(p)
  redis.call('ZADD', p.owner, 'NX', 'inf', p.bucket)
end

local function buckets(base)
  return redis.call('ZRANGE', base .. ':o', 0, -1)
end

local function refresh_owner(p)
  local ms = deadline(p.index)
  if ms == nil then
    redis.call('ZREM', p.owner, p.bucket)
  else
    redis.call('ZADD', p.owner, ms == -1 and 'inf' or string.format('%.3f', ms / 1000), p.bucket)
  end
  local longest = deadline(p.owner)
  if longest ~= nil then
    expire_at(p.owner, longest)
  end
end
"""

HELPERS = """
local now, margin = tonumber(ARGV[1]), tonumber(ARGV[2])
local now_ms = now * 1000

-- What a value of size bytes with the postings spec ("length term:count ...", or '') counts against a quota.
local function charged(size, spec)
  return size + %INDEX_BYTES_PER_WORD% * tonumber(string.match(spec, '^(%d+)') or '0')
end

-- The names of one owner's bucket.
local function place(base, bucket)
  return {base = base, bucket = bucket, values = base .. ':v:' .. bucket .. ':', index = base .. ':i:' .. bucket,
          sizes = base .. ':z:' .. bucket, owner = base .. '%OWNER%', docs = base .. ':d:' .. bucket,
          postings = base .. ':x:' .. bucket, created = base .. ':c:' .. bucket}
end

-- Take key's postings out of the bucket's search index (if it has any).
local function unindex(p, key)
  local doc = redis.call('HGET', p.docs, key)
  if not doc then
    return
  end
  local length, terms = string.match(doc, '^(%d+)(.*)$')
  local members = {}
  for term, count in string.gmatch(terms, '(%x+):(%d+)') do
    members[#members + 1] = term .. ':' .. count .. ':' .. length .. ':' .. key
    if #members == 1000 then
      redis.call('ZREM', p.postings, unpack(members))
      members = {}
    end
  end
  if #members > 0 then
    redis.call('ZREM', p.postings, unpack(members))
  end
  redis.call('HDEL', p.docs, key)
  redis.call('HINCRBY', p.docs, '', -tonumber(length))
end

-- Put key's postings (spec: "length term:count ...") into the bucket's search index.
local function index(p, key, spec)
  local length, terms = string.match(spec, '^(%d+)(.*)$')
  local members = {}
  for term, count in string.gmatch(terms, '(%x+):(%d+)') do
    members[#members + 1] = 0
    members[#members + 1] = term .. ':' .. count .. ':' .. length .. ':' .. key
    if #members == 2000 then
      redis.call('ZADD', p.postings, unpack(members))
      members = {}
    end
  end
  if #members > 0 then
    redis.call('ZADD', p.postings, unpack(members))
  end
  redis.call('HSET', p.docs, key, spec)
  redis.call('HINCRBY', p.docs, '', tonumber(length))
end

-- Whether raw value bytes (or a GETRANGE of their header) are readable at now.
local function live(raw)
  return raw ~= false and #raw >= 8 and struct.unpack('>d', raw) > now
end

-- Let a key live until ms on the framework clock (-1: forever), measured from now, plus the margin.
local function expire_at(name, ms)
  if ms == -1 then
    redis.call('PERSIST', name)
  else
    redis.call('PEXPIRE', name, string.format('%.0f', math.max(1, math.ceil(ms - now_ms)) + margin))
  end
end

-- Remove one key of a bucket: its value, index member and size. Returns 1 if the value was there.
local function remove(p, member)
  local size = redis.call('HGET', p.sizes, member)
  if size then
    redis.call('HDEL', p.sizes, member)
    redis.call('HINCRBY', p.sizes, '', -tonumber(size))
  end
  redis.call('HDEL', p.created, member)
  redis.call('ZREM', p.index, member)
  unindex(p, member)
  return redis.call('DEL', p.values .. member)
end

-- Delete this bucket's values whose deadline has passed. Returns how many values went.
local function trim(p)
  local gone = 0
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', p.index, '-inf', ARGV[1])) do
    if not live(redis.call('GETRANGE', p.values .. member, 0, 7)) then
      gone = gone + remove(p, member)
    end
  end
  return gone
end

-- When the index's longest-lived member expires: nil (no index), -1 (never) or a time in ms.
local function deadline(index)
  local top = redis.call('ZRANGE', index, -1, -1, 'WITHSCORES')
  if #top == 0 then
    return nil
  elseif top[2] == 'inf' then
    return -1
  end
  return math.ceil(tonumber(top[2]) * 1000)
end

-- Let the index and size table live exactly as long as the longest-lived member; drop them when empty.
local function refresh_index(p)
  local ms = deadline(p.index)
  if ms == nil then
    redis.call('DEL', p.sizes, p.docs, p.postings, p.created)
  else
    expire_at(p.index, ms)
    expire_at(p.sizes, ms)
    if redis.call('EXISTS', p.created) == 1 then
      expire_at(p.created, ms)
    end
    if redis.call('EXISTS', p.docs) == 1 then
      expire_at(p.docs, ms)
      expire_at(p.postings, ms)
    end
  end
end

%REGISTRY%
-- 0 when writing size bytes at key keeps the bucket within its quota, else QUOTA_VALUES or QUOTA_BYTES.
local function quota(p, key, size, max_values, max_bytes)
  if max_values == '' and max_bytes == '' then
    return 0
  end
  trim(p)
  local total = tonumber(redis.call('HGET', p.sizes, '') or '0')
  local new_total = total - tonumber(redis.call('HGET', p.sizes, key) or '0') + size
  if max_values ~= '' and not redis.call('ZSCORE', p.index, key)
      and redis.call('ZCARD', p.index) + 1 > tonumber(max_values) then
    return -1
  end
  if max_bytes ~= '' and new_total > tonumber(max_bytes) and new_total > total then
    return -2
  end
  return 0
end

-- The first-write time a write leaves when it is given none: of the live entries it replaces ({p, key} each), the
-- earliest (false when one of them has none: unknown), else now (a new key).
local function first_written(entries)
  local first = nil
  for _, e in ipairs(entries) do
    if live(redis.call('GETRANGE', e[1].values .. e[2], 0, 7)) then
      local kept = redis.call('HGET', e[1].created, e[2])
      if not kept then
        return false
      end
      if first == nil or tonumber(kept) < tonumber(first) then
        first = kept
      end
    end
  end
  return first or ARGV[1]
end

-- Store value (header + data) at key; px: relative ms for Redis' expiry or ''; score: deadline or 'inf';
-- spec: the key's search postings ("length term:count ...") or '' for none; created: its first-write time ('': the
-- replaced live entry's, else now; false: unknown).
-- The bookkeeping comes first: if Redis refuses a command half-way (out of memory), what is left is an
-- index entry without a value (skipped by every read, replaced by the next write), never a value that
-- no index knows and so no listing, forget_all or purge would find.
local function write(p, key, value, px, score, spec, created)
  if created == '' then
    created = first_written({{p, key}})
  end
  if created then
    redis.call('HSET', p.created, key, created)
  else
    redis.call('HDEL', p.created, key)
  end
  enlist(p)
  redis.call('ZADD', p.index, score, key)
  unindex(p, key)
  if spec ~= '' then
    index(p, key, spec)
  end
  local old = tonumber(redis.call('HGET', p.sizes, key) or '0')
  local size = charged(#value - 8, spec)
  redis.call('HSET', p.sizes, key, size)
  redis.call('HINCRBY', p.sizes, '', size - old)
  if px == '' then
    redis.call('SET', p.values .. key, value)
  else
    redis.call('SET', p.values .. key, value, 'PX', px)
  end
  trim(p)
  refresh_index(p)
  refresh_owner(p)
end

-- Whether the value at name holds what a compare-and-set expects: flag '0' none live, '1' these bytes.
local function holds(name, flag, expected)
  local current = redis.call('GET', name)
  if live(current) then
    return flag == '1' and string.sub(current, 9) == expected
  end
  return flag == '0'
end
""".replace("%INDEX_BYTES_PER_WORD%", str(INDEX_BYTES_PER_WORD))
