from __future__ import annotations

from dataclasses import dataclass

from leadmail.services.email import EmailService, TemplateService
from leadmail.services.keys import ApiKeyService
from leadmail.services.leads import LeadService


@dataclass(frozen=True, slots=True)
class Services:
    """Every use case, wired to its adapters by the composition root."""

    leads: LeadService
    keys: ApiKeyService
    email: EmailService
    templates: TemplateService
