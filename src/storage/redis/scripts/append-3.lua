--[[
  append-3: lands a batch of records on a session log in one atomic step (interface 2.2,
  decisions rows 9 and 13). The idempotency check, the archived check, the cursor mint,
  `at` and the XADD of every record all happen here, so two processes appending to one
  stream can never interleave, and a batch lands whole or not at all.

  Input:
    KEYS[1] meta hash: head (last cursor), at (last `at`), archived ("1")
    KEYS[2] log stream: the record at cursor c is the entry "c-0"
    KEYS[3] keys hash: idempotency key -> "<first>:<last>:<fingerprint>"

    ARGV[1] the batch's idempotency key as "+<key>", or "-" for a one-off batch
    ARGV[2] the fingerprint of what was offered under the key
    ARGV[3] `at` in ms to stamp, or "" to take it from Redis TIME
    ARGV[4] the wake channel to SPUBLISH the new head on
    ARGV[5]   the form of the records' slots, "r" or "s":
      "r" (record by record) ARGV[6...] 5 slots per record, in batch order: kind
          ("<name>@<version>"), producer, to ("+<to>" or "-"), idem ("+<idem>" or "-"),
          body
      "s" (shared) ARGV[6] the producer of every record, ARGV[7] the `to` of every record
          ("+<to>" or "-"), ARGV[8] "+<prefix>" when record i (from 0) has the idem
          "<prefix>i", "-" when none has one, ARGV[9] "+<kind>" when every record has that
          kind, "-" when each names its own; ARGV[10...] per record in batch order its kind
          (only when ARGV[9] is "-") and its body

  Every key and the wake channel carry the session's hash tag: one slot on a cluster. The
  channel is an ARGV, not a KEY: a channel never exists as a key, and a declared key that
  does not exist makes the script answer TRYAGAIN for as long as its slot migrates.

  Each record is the entry "<cursor>-0" with fields a (at), k (kind), p (producer), t (to,
  when not null), i (idem, when not null) and b (body); its size is the body's bytes.

  Output:
    { 1, first, at }  landed: the records hold cursors first, first + 1, ... all at `at`
    { 2, entries }    replayed: the key already holds this batch; its entries as XRANGE
    { -1 }            the stream is archived: nothing landed
    { -2 }            the key holds a batch with another fingerprint: nothing landed
]]

-- TIME differs between master and replica: scripts must replicate their effects, not
-- their source. That is the default from Redis 5 (which XADD needs) and the only mode
-- from Redis 7, where this call is a no-op kept for old servers configured otherwise.
if redis.replicate_commands then redis.replicate_commands() end

local meta, log, keys = KEYS[1], KEYS[2], KEYS[3]

-- A held key answers first, so a resend lands nothing even on an archived stream.
-- Whether the batch has a key is read off ARGV[1] itself: the key may be any text, "-"
-- among them, which would read as no key once its "+" is taken off.
local keyed = ARGV[1] ~= '-'
local key = string.sub(ARGV[1], 2)
if keyed then
  local held = redis.call('HGET', keys, key)
  if held then
    local first, last, fingerprint = string.match(held, '^(%d+):(%d+):(.*)$')
    if fingerprint ~= ARGV[2] then return { -2 } end
    return { 2, redis.call('XRANGE', log, first, last) }
  end
end

local state = redis.call('HMGET', meta, 'head', 'at', 'archived')
if state[3] == '1' then return { -1 } end

local at
if ARGV[3] == '' then
  local time = redis.call('TIME')
  at = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  at = tonumber(ARGV[3])
end
-- `at` never goes back along the cursors, even when the server clock steps back.
if state[2] and tonumber(state[2]) > at then at = tonumber(state[2]) end
local stamp = string.format('%.0f', at)

-- "+<value>" or "-" as the value or nil.
local function nullable(slot)
  if slot == '-' then return nil end
  return string.sub(slot, 2)
end

-- The record at index i (from 0): its kind, producer, to, idem (nil for none) and body.
local count, record
if ARGV[5] == 's' then
  local producer, to, prefix, kind = ARGV[6], nullable(ARGV[7]), nullable(ARGV[8]), nullable(ARGV[9])
  local width = kind and 1 or 2
  count = (#ARGV - 9) / width
  record = function(i)
    local a = 10 + i * width
    return kind or ARGV[a], producer, to, prefix and prefix .. i, ARGV[a + width - 1]
  end
else
  count = (#ARGV - 5) / 5
  record = function(i)
    local a = 6 + i * 5
    return ARGV[a], ARGV[a + 1], nullable(ARGV[a + 2]), nullable(ARGV[a + 3]), ARGV[a + 4]
  end
end

local first = tonumber(state[1] or '0') + 1
if count > 0 then
  first = redis.call('HINCRBY', meta, 'head', count) - count + 1
  redis.call('HSET', meta, 'at', stamp)
end

for i = 0, count - 1 do
  local id = string.format('%.0f-0', first + i)
  local kind, producer, to, idem, body = record(i)
  -- A record a client lands has an idem slot and no `to`: one call without a table.
  if not to and idem then
    redis.call('XADD', log, id, 'a', stamp, 'k', kind, 'p', producer, 'i', idem, 'b', body)
  else
    local fields = { 'a', stamp, 'k', kind, 'p', producer }
    if to then
      fields[#fields + 1] = 't'
      fields[#fields + 1] = to
    end
    if idem then
      fields[#fields + 1] = 'i'
      fields[#fields + 1] = idem
    end
    fields[#fields + 1] = 'b'
    fields[#fields + 1] = body
    redis.call('XADD', log, id, unpack(fields))
  end
end

if keyed then
  redis.call('HSET', keys, key, string.format('%.0f:%.0f:', first, first + count - 1) .. ARGV[2])
end

-- Readers subscribe to this channel on the slot's master (a standalone server is the one
-- master) and read when it names a head past where they stand (`wake-reader.ts`).
if count > 0 then
  redis.call('SPUBLISH', ARGV[4], string.format('%.0f', first + count - 1))
end

return { 1, first, at }
