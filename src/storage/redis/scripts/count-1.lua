--[[
  count-1: takes `take` counts at once from a rate-limit bucket's fixed window, for a
  process that hands them out to its requests one by one (`rate-counts.ts`).

  Input:
    KEYS[1] the bucket's count in its current window (a string integer)

    ARGV[1] counts to take (an integer >= 1)
    ARGV[2] the window in ms: the count expires that long after the window's first take

  Output:
    { count, ttl }  the count after this take (this take holds count - take + 1 .. count)
                    and the window's time left in ms
]]

local key = KEYS[1]
local count = redis.call('INCRBY', key, ARGV[1])
local ttl = redis.call('PTTL', key)
-- A new count (or one a crash left without an expiry) opens its window now.
if ttl < 0 then
  ttl = tonumber(ARGV[2])
  redis.call('PEXPIRE', key, ttl)
end
return { count, ttl }
