-- POST /api/v1/email/template: the "welcome" template to 50 new addresses per request
-- (scenario 7).
package.path = debug.getinfo(1, "S").source:match("^@(.*/)") .. "?.lua;" .. package.path
local common = require("common")

local RECIPIENTS = 50
-- email_template_own.lua sets TEMPLATE_ID to the account's own copy (scenario 7a)
local TEMPLATE = TEMPLATE_ID or "welcome"
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
  local to = {}
  for i = 1, RECIPIENTS do
    to[i] = string.format('"student-%s-%d-%d@example.com"', prefix, counter, i)
  end
  local body = '{"to":[' .. table.concat(to, ",") .. '],"template_id":"' .. TEMPLATE .. '",'
    .. '"from":"Bench Academy <hello@bench.example.com>",'
    .. '"variables":{"first_name":"friend","school_name":"Bench Academy",'
    .. '"courses_link":"https://bench.example.com/courses",'
    .. '"contact_email":"hello@bench.example.com"}}'
  return wrk.format(nil, nil, nil, body)
end
