-- PUT a changed note on existing leads, round-robin over the ids in a file (scenario 4):
--   wrk ... -s lead_put.lua http://host:port -- <key> <run id> <file of lead ids>
package.path = debug.getinfo(1, "S").source:match("^@(.*/)") .. "?.lua;" .. package.path
local common = require("common")

local prefix
local ids = {}
local counter = 0

setup = common.setup
done = common.done

function init(args)
  local ids_file
  prefix, ids_file = common.init(args, "application/json")
  for line in io.lines(ids_file) do
    if line ~= "" then
      ids[#ids + 1] = line
    end
  end
  -- Threads start at different places, so they rarely update the same lead at once.
  counter = (thread_no or 0) * 7919
end

function request()
  counter = counter + 1
  local id = ids[counter % #ids + 1]
  local body = string.format('{"note":"Updated %s-%d"}', prefix, counter)
  return wrk.format("PUT", "/api/v1/leads/" .. id, nil, body)
end
