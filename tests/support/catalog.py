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
# A variable in a template's subject or body: ``{{name}}``, spaces allowed inside.
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z0-9_]+)\s*\}\}")
