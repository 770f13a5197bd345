"""The OpenAPI document's request body examples, by wire class (examples.py has the
successes and failures)."""

from __future__ import annotations

from typing import Any

from leadmail.adapters.http import (
    action_schemas,
    campaign_examples,
    campaign_schemas,
    privacy_schemas,
    samples,
    schemas,
    suppression_schemas,
    template_schemas,
)

_WELCOME_VARIABLES = {
    "school_name": "Northwind Academy",
    "first_name": "Ada",
    "courses_link": "https://northwind.example.com/courses",
    "contact_email": "hello@northwind.example.com",
}
# An import's file (its body is CSV, not a wire class).
IMPORT_CSV = (
    "email,name,phone,tags,course_of_interest,city\r\n"
    "ada@example.com,Ada Lovelace,+44 20 7946 0958,evening;open-day,Data science,Leeds\r\n"
    'grace@example.com,"Hopper, Grace",,open-day,Statistics,York\r\n'
)
REQUESTS: dict[type[Any], dict[str, Any]] = {
    schemas.LeadIn: {
        "name": "Ada Lovelace",
        "email": "ada@example.com",
        "source": "open-day",
        "note": "Asked about the March cohort",
        "phone": "+44 20 7946 0958",
        "tags": ["open-day", "Evening"],
        "fields": {
            "city": "Leeds",
            "course_of_interest": "Data science",
            "age": 34,
            "newsletter": True,
        },
    },
    schemas.LeadPatchIn: {
        "note": "Enrolled in the March cohort",
        "tags": ["march-cohort"],
        "fields": {"newsletter": None, "cohort": "2026-03"},
    },
    schemas.TagsIn: {"add": ["March-Cohort"], "remove": ["open-day"]},
    schemas.SendEmailIn: {
        "to": "ada@example.com",
        "subject": "Your open day place",
        "html": "<p>See you on Saturday at 10:00.</p>",
        "from": samples.SENDER,
    },
    schemas.SendTemplateIn: {
        "to": ["ada@example.com", "grace@example.com"],
        "template_id": "welcome",
        "variables": _WELCOME_VARIABLES,
        "from": samples.SENDER,
    },
    # Not the address the send examples mail: a fuzzer adds it, then sends them.
    suppression_schemas.SuppressionIn: {"email": "former.student@example.com"},
    privacy_schemas.EraseIn: {"email": "former.student@example.com"},
    template_schemas.TemplateIn: {
        "id": samples.OPEN_DAY.template_id,
        "name": samples.OPEN_DAY.name,
        "subject": samples.OPEN_DAY.subject,
        "html": samples.OPEN_DAY.body,
        "text": samples.OPEN_DAY.text,
    },
    template_schemas.PreviewIn: {"variables": {"first_name": "Ada"}},
    template_schemas.TestSendIn: {
        "to": "ada@example.com",
        "variables": {"first_name": "Ada", "date": "Saturday 14 March"},
        "from": samples.SENDER,
    },
    template_schemas.TemplateChangeIn: {
        "subject": "{{first_name}}, our open day is on {{date}}: come and see",
    },
    action_schemas.LeadActionIn: {
        "action": "add_tags",
        "tags": ["cohort-b"],
        "filter": {"tag": "open-day", "source": "fair"},
    },
    campaign_schemas.CampaignChangeIn: {
        "name": "March open day: second call",
        "send_at": "2026-03-09T09:00:00Z",
    },
    campaign_schemas.CampaignIn: {
        "name": campaign_examples.CAMPAIGN.name,
        "template_id": "welcome",
        "audience": campaign_examples.AUDIENCE,
        "variables": campaign_examples.VARIABLES,
        "from": samples.SENDER,
    },
}
