-- POST /api/v1/email/send: one message to one new address per request (scenario 6).
package.path = debug.getinfo(1, "S").source:match("^@(.*/)") .. "?.lua;" .. package.path
local common = require("common")

local prefix
local counter = 0

setup = common.setup
done = common.done

function init(args)
  prefix = common.init(args, "application/json")
  wrk.method = "POST"
end

function request()
  counter = counter + 1
  local body = string.format(
    '{"to":"Bench Student <student-%s-%d@example.com>",'
      .. '"from":"Bench Academy <hello@bench.example.com>",'
      .. '"subject":"Your place is saved","html":"<p>See you on Monday!</p>"}',
    prefix, counter)
  return wrk.format(nil, nil, nil, body)
end
