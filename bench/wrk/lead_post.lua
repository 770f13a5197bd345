-- POST a new lead with a unique email to the URL's path (scenarios 1, 2, 3 and 8).
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
    '{"name":"Bench Lead %d","email":"lead-%s-%d@example.com",'
      .. '"source":"bench","note":"Asked about evening classes"}',
    counter, prefix, counter)
  return wrk.format(nil, nil, nil, body)
end
