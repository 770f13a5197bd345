"""The packaged template catalog (src/leadmail/templates) as the tests know it: written out
by hand from the template files, not computed by the service's own code."""

from __future__ import annotations

import re

# Every template shipped with leadmail, by id.
PACKAGED_TEMPLATE_IDS = {
    "certificate-ready",
    "class-reminder",
    "enrolment-confirmation",
    "lead-follow-up",
    "payment-reminder",
    "trial-class-invitation",
    "welcome",
}
# A value for every variable of the packaged "welcome" template.
WELCOME_VARIABLES = {
    "school_name": "Northwind Academy",
    "first_name": "Ada",
    "courses_link": "https://example.com/courses",
    "contact_email": "hello@example.com",
}
# A variable in a template's subject or body: ``{{name}}``, spaces allowed inside.
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z0-9_]+)\s*\}\}")
