-- GET the URL's path (scenario 5, and the GET variant of ceiling A); the key, if any,
-- goes in the Authorization header.
package.path = debug.getinfo(1, "S").source:match("^@(.*/)") .. "?.lua;" .. package.path
local common = require("common")

setup = common.setup
done = common.done

function init(args)
  common.init(args, nil)
  wrk.method = "GET"
end
