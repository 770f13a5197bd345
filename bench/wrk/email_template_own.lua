-- POST /api/v1/email/template: scenario 7's requests on the account's own copy of the
-- "welcome" template (scenario 7a).
package.path = debug.getinfo(1, "S").source:match("^@(.*/)") .. "?.lua;" .. package.path
TEMPLATE_ID = "welcome-own"
require("email_template")
