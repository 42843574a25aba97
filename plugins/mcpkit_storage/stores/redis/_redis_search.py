"""The SEARCH script of RedisStore: a bucket ranked by BM25 in one round trip, narrowed to the values holding a
term of every group of ``within`` when it is given (from the few holders of a small group, else from the terms'
postings with each would-be hit checked)."""

from __future__ import annotations

from mcpkit_search import K1, B

from ._redis_lua import HELPERS

__all__ = ["HOLDER_COST", "SEARCH", "SORTED_LIMIT"]

#: What ranking one holder of a small group costs, in postings read from a query term's list: its posting in the
#: group's list, its spec read, and a search of its spec per query term (``#terms + HOLDER_COST`` in all); checking
#: a ranked key against the groups costs ``HOLDER_COST`` too. The holders are read instead of the terms' postings
#: when they cost less than those postings and the checks of the keys that would enter the best so far.
HOLDER_COST = 2
#: Above this ``limit`` the hits are sorted whole rather than inserted one by one into the best so far.
SORTED_LIMIT = 128

# ARGV[3..7] = base, bucket, limit, the statistics to score with ('' for the bucket's own, else
# "documents length frequency..." with a frequency per term), how many groups ``within`` has; then each group's
# terms (16 hex digits each, space-separated; '' for a group no value holds), then the query's distinct terms.
# Drops the bucket's expired entries first, so the statistics count live ones only. BM25 as in mcpkit_search (k1
# and b below). Returns: documents, total length, a frequency per term (the whole bucket's, groups or not), then
# key, score (as a string) for the best ``limit`` keys holding a term of every group, best first, ties by key.
_SEARCH = """
local k1, b = %K1%, %B%
local p = place(ARGV[3], ARGV[4])
if trim(p) > 0 then
  refresh_index(p)
  refresh_owner(p)
end
local limit = tonumber(ARGV[5])
local total = redis.call('HGET', p.docs, '')
local documents = redis.call('HLEN', p.docs)
if total then
  documents = documents - 1
else
  total = '0'
end
local found = {documents, total}
local first = 8 + tonumber(ARGV[7])  -- the first query term
local terms = {}
for i = first, #ARGV do
  terms[#terms + 1] = ARGV[i]
end
local function counted(term)  -- how many values hold term, its postings counted, not read
  return redis.call('ZLEXCOUNT', p.postings, '[' .. term .. ':', '(' .. term .. ';')
end
local function listed(term)
  return redis.call('ZRANGEBYLEX', p.postings, '[' .. term .. ':', '(' .. term .. ';')
end
if limit <= 0 then -- statistics only (a typo's few hundred near spellings)
  for _, term in ipairs(terms) do
    found[#found + 1] = counted(term)
  end
  return found
end
-- The groups: each term as a value's spec ("length term:count ...") writes it, and how many postings they have.
local groups, smallest = {}, nil
for i = 8, first - 1 do
  local group = {needles = {}, set = {}, holders = 0, terms = {}}
  for term in string.gmatch(ARGV[i], '%x+') do
    group.terms[#group.terms + 1] = term
    group.needles[#group.needles + 1] = ' ' .. term .. ':'
    group.set[term] = true
    group.holders = group.holders + counted(term)
  end
  groups[#groups + 1] = group
  if smallest == nil or group.holders < smallest.holders then
    smallest = group
  end
end
local function holds(spec, group)  -- whether a value's spec holds one of the group's terms
  if #group.needles <= 8 then
    for _, needle in ipairs(group.needles) do
      if string.find(spec, needle, 1, true) then
        return true
      end
    end
    return false
  end
  for term in string.gmatch(spec, ' (%x+):') do
    if group.set[term] then
      return true
    end
  end
  return false
end
local function admitted(spec, but)  -- whether a value's spec holds a term of every group (but that one)
  if not spec then
    return false
  end
  for _, group in ipairs(groups) do
    if group ~= but and not holds(spec, group) then
      return false
    end
  end
  return true
end
local own, postings, sum = {}, nil, 0
if smallest ~= nil then
  for i, term in ipairs(terms) do
    own[i] = counted(term)
    sum = sum + own[i]
  end
end
-- From the holders when they cost less than the postings and the checks of the keys that would enter the best so
-- far (about limit / the share the smallest group admits, each a spec read and its search: 2 postings' worth).
local from_holders = smallest ~= nil and smallest.holders * (#terms + %HOLDER_COST%)
  < sum + %HOLDER_COST% * math.min(sum, limit * documents / math.max(smallest.holders, 1))
if not from_holders and (smallest == nil or smallest.holders > 0) then
  postings = {}
  for i, term in ipairs(terms) do
    postings[i] = listed(term)
    own[i] = #postings[i]
  end
end
for i = 1, #terms do
  found[#found + 1] = own[i]
end
if #terms == 0 or smallest ~= nil and smallest.holders == 0 then
  return found
end
local n, length, frequencies = documents, tonumber(total), own
if ARGV[6] ~= '' then
  local given = {}
  for number in string.gmatch(ARGV[6], '%S+') do
    given[#given + 1] = tonumber(number)
  end
  n, length, frequencies = given[1], given[2], {}
  for i = 1, #terms do
    frequencies[i] = given[2 + i]
  end
end
if n <= 0 then
  return found
end
local average = math.max(length / n, 1e-9)
local idf = {}
for i = 1, #terms do
  idf[i] = math.log(1 + (n - frequencies[i] + 0.5) / (frequencies[i] + 0.5))
end
local function part(i, count, size)  -- what term i, count times in a value of size words, adds to its score
  return idf[i] * count * (k1 + 1) / (count + k1 * (1 - b + b * size / average))
end
local scores, keys, checked = {}, {}, smallest ~= nil
if from_holders then  -- each holder of the small group scored from its own spec, in the terms' order
  checked = false
  local needles, seen = {}, {}
  for i, term in ipairs(terms) do
    needles[i] = ' ' .. term .. ':'
  end
  for _, held in ipairs(smallest.terms) do
    for _, member in ipairs(listed(held)) do
      local key = string.match(member, '^%x+:%d+:%d+:(.*)$')
      if not seen[key] then
        seen[key] = true
        local spec = redis.call('HGET', p.docs, key)
        if admitted(spec, smallest) then
          local size, score = tonumber(string.match(spec, '^(%d+)')), nil
          for i, needle in ipairs(needles) do
            local _, at = string.find(spec, needle, 1, true)
            if at then
              local add = part(i, tonumber(string.match(spec, '^(%d+)', at + 1)), size)
              score = score == nil and add or score + add
            end
          end
          if score ~= nil then
            keys[#keys + 1] = key
            scores[key] = score
          end
        end
      end
    end
  end
else
  for i = 1, #postings do
    for _, member in ipairs(postings[i]) do
      local count, size, key = string.match(member, '^%x+:(%d+):(%d+):(.*)$')
      local add = part(i, tonumber(count), tonumber(size))
      local score = scores[key]
      if score == nil then
        keys[#keys + 1] = key
        scores[key] = add
      else
        scores[key] = score + add
      end
    end
  end
end
-- The best ``limit`` keys, by insertion into a short sorted list (limit is small; most keys never enter it); with
-- groups, from the terms' postings, a key is checked against them only when it would enter it. A long list (a
-- filter listing its holders asks for thousands) is sorted whole instead: insertion would cost limit per key.
local best = {}
local function before(a, b)
  return scores[a] > scores[b] or scores[a] == scores[b] and a < b
end
if limit > %SORTED_LIMIT% then
  for _, key in ipairs(keys) do
    if not checked or admitted(redis.call('HGET', p.docs, key)) then
      best[#best + 1] = key
    end
  end
  table.sort(best, before)
  for i = #best, limit + 1, -1 do
    best[i] = nil
  end
  keys = {}
end
for _, key in ipairs(keys) do
  if (#best < limit or before(key, best[#best])) and (not checked or admitted(redis.call('HGET', p.docs, key))) then
    local at = #best + 1
    while at > 1 and before(key, best[at - 1]) do
      best[at] = best[at - 1]
      at = at - 1
    end
    best[at] = key
    if #best > limit then
      best[#best] = nil
    end
  end
end
for _, key in ipairs(best) do
  found[#found + 1] = key
  found[#found + 1] = string.format('%.17g', scores[key])
end
return found
"""


def _filled(text: str) -> str:
    for placeholder, value in {
        "%K1%": K1,
        "%B%": B,
        "%HOLDER_COST%": HOLDER_COST,
        "%SORTED_LIMIT%": SORTED_LIMIT,
    }.items():
        text = text.replace(placeholder, repr(value))
    return text


SEARCH = HELPERS + _filled(_SEARCH)
