--[[
  archive-2: lands a session's final record and archives the session in one atomic
  step (interface 3.1, decisions row 60). Idempotent: on an archived session it lands
  nothing and answers the final record that archived it.

  Input:
    KEYS[1] meta hash: head (last cursor), at (last `at`), archived ("1")
    KEYS[2] log stream: the record at cursor c is the entry "c-0"

    ARGV[1] `at` in ms to stamp, or "" to take it from Redis TIME
    ARGV[2] the wake channel to SPUBLISH the new head on
    ARGV[3...7] the final record: kind ("<name>@<version>"), producer,
            to ("+<to>" or "-"), idem ("+<idem>" or "-"), body; its entry has the fields
            of append-3.lua's, and f ("1")

  Output:
    { 1, cursor, at }  landed: the final record holds `cursor` and `at`
    { 2, entries }     already archived: the final record's entry as XRANGE
]]

-- See append-3.lua: TIME needs effects replication, the default from Redis 5.
if redis.replicate_commands then redis.replicate_commands() end

local meta, log = KEYS[1], KEYS[2]

local state = redis.call('HMGET', meta, 'head', 'at', 'archived')
-- Nothing lands after the final record, so the head is its cursor.
if state[3] == '1' then return { 2, redis.call('XRANGE', log, state[1], state[1]) } end

local at
if ARGV[1] == '' then
  local time = redis.call('TIME')
  at = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  at = tonumber(ARGV[1])
end
if state[2] and tonumber(state[2]) > at then at = tonumber(state[2]) end
local stamp = string.format('%.0f', at)

local cursor = redis.call('HINCRBY', meta, 'head', 1)
redis.call('HSET', meta, 'at', stamp, 'archived', '1')

-- `f` marks the archiving record, so a tail ends after it without another read.
local fields = { 'a', stamp, 'k', ARGV[3], 'p', ARGV[4] }
if ARGV[5] ~= '-' then
  fields[#fields + 1] = 't'
  fields[#fields + 1] = string.sub(ARGV[5], 2)
end
if ARGV[6] ~= '-' then
  fields[#fields + 1] = 'i'
  fields[#fields + 1] = string.sub(ARGV[6], 2)
end
fields[#fields + 1] = 'b'
fields[#fields + 1] = ARGV[7]
fields[#fields + 1] = 'f'
fields[#fields + 1] = '1'
redis.call('XADD', log, string.format('%.0f-0', cursor), unpack(fields))

-- See append-3.lua: the readers of every process wait on this channel.
redis.call('SPUBLISH', ARGV[2], string.format('%.0f', cursor))

return { 1, cursor, at }
