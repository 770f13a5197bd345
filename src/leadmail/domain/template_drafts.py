"""What an account writes as a template of its own, and the rules it is held to when saved.

The file catalog's templates are the predefined ones (templates.py reads them); an
account's own are written over the API. Both are ``Template`` once stored. A draft is
checked whole, every broken rule named with its field (and, in template text, the line and
column), so one answer tells the client everything to fix.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import datetime

from leadmail.domain.email import MAX_HTML_BYTES, MAX_SUBJECT, larger_than
from leadmail.domain.errors import DomainError, FieldError, ValidationFailed
from leadmail.domain.templates import (
    CONTENT,
    PLACEHOLDER,
    TEMPLATE_ID,
    Template,
    TemplateKind,
    stray_braces,
)
from leadmail.domain.text import NOT_ONE_LINE, breaks_line

MAX_TEMPLATES = 500  # an account's own templates and layouts together
MAX_TEXT_BYTES = 256 * 1024
MAX_NAME = 200
ID_RULE = "must be 1-64 of a-z, 0-9, '-' and '_', starting with a letter or digit"


class TemplateExists(DomainError):
    """The account has a template of that id, or a predefined template has it."""

    code = "TEMPLATE_EXISTS"

    def __init__(self, template_id: str, *, predefined: bool) -> None:
        whose = "a predefined template" if predefined else "another of your templates"
        super().__init__(f"Template id {template_id!r} is taken by {whose}: choose another id")
        self.template_id = template_id


class TemplateReadOnly(DomainError):
    """A predefined template (the service's file catalog) cannot be changed over the API."""

    code = "TEMPLATE_READ_ONLY"

    def __init__(self, template_id: str) -> None:
        super().__init__(
            f"Template {template_id!r} is predefined and cannot be changed or deleted: create"
            " a template of your own (POST /api/v1/email/templates) from its content instead"
        )
        self.template_id = template_id


class TemplateInUse(DomainError):
    """Campaigns that have not ended use the template, or templates use the layout."""

    code = "TEMPLATE_IN_USE"

    def __init__(self, template_id: str, users: list[str], what: str) -> None:
        shown = ", ".join(repr(u) for u in users[:10]) + (" and more" if len(users) > 10 else "")
        super().__init__(
            f"Template {template_id!r} is used by {what} {shown}: it cannot be deleted"
        )
        self.template_id = template_id
        self.users = users


def too_many_templates() -> ValidationFailed:
    return ValidationFailed(
        [FieldError("id", f"is one template too many: an account holds at most {MAX_TEMPLATES}")]
    )


@dataclass(frozen=True, slots=True)
class TemplateDraft:
    """A template's content as the client writes it (``html`` is stored as its body)."""

    name: str
    subject: str
    html: str
    text: str | None = None
    layout_id: str | None = None
    kind: TemplateKind = TemplateKind.TEMPLATE
    inline_css: bool = True

    @classmethod
    def of(cls, template: Template) -> TemplateDraft:
        return cls(
            template.name,
            template.subject,
            template.body,
            template.text,
            template.layout_id,
            template.kind,
            template.inline_css,
        )

    def errors(self) -> list[FieldError]:
        """Every rule the draft breaks; whether ``layout_id`` names one of the account's
        layouts is the caller's to check (it takes storage)."""
        errors: list[FieldError] = []
        name = self.name.strip()
        if not name:
            errors.append(FieldError("name", "is empty"))
        elif len(self.name) > MAX_NAME:
            errors.append(FieldError("name", f"is longer than {MAX_NAME} characters"))
        elif breaks_line(self.name):
            errors.append(FieldError("name", NOT_ONE_LINE))
        if not self.subject.strip():
            errors.append(FieldError("subject", "is empty"))
        elif len(self.subject) > MAX_SUBJECT:
            errors.append(FieldError("subject", f"is longer than {MAX_SUBJECT} characters"))
        elif breaks_line(self.subject):
            errors.append(FieldError("subject", NOT_ONE_LINE))
        else:
            errors += _syntax("subject", self.subject)
        errors += self._text_errors("html", self.html, MAX_HTML_BYTES)
        if self.text is not None:
            errors += self._text_errors("text", self.text, MAX_TEXT_BYTES)
        if self.inline_css and not any(e.field == "html" for e in errors):
            from leadmail.domain.html_parts import InvalidHtml, inline_css  # on first use

            try:
                inline_css(self.html)
            except InvalidHtml as e:
                errors.append(FieldError("html", f"{e} (or save with inline_css false)"))
        if self.kind is TemplateKind.LAYOUT and self.layout_id is not None:
            errors.append(FieldError("layout_id", "is for a template: a layout names no layout"))
        return errors

    def checked(self) -> TemplateDraft:
        """The draft, or ValidationFailed naming every rule it breaks."""
        errors = self.errors()
        if errors:
            raise ValidationFailed(errors)
        return self

    def _text_errors(self, field: str, text: str, limit: int) -> list[FieldError]:
        if not text.strip():
            return [FieldError(field, "is empty")]
        if larger_than(text, limit):
            return [FieldError(field, f"is larger than {limit // 1024} KB (UTF-8)")]
        if "\x00" in text:
            return [FieldError(field, "must not contain NUL characters")]
        errors = _syntax(field, text)
        contents = [m for m in PLACEHOLDER.finditer(text) if m.group(1) == CONTENT]
        if self.kind is TemplateKind.LAYOUT:
            if len(contents) != 1:
                errors.append(
                    FieldError(
                        field,
                        f"must hold {{{{{CONTENT}}}}} exactly once, where the template it"
                        f" wraps goes (it holds it {len(contents)} times)",
                    )
                )
        elif contents:
            line, column = _position(text, contents[0].start())
            errors.append(
                FieldError(
                    field,
                    f"line {line}, column {column}: {{{{{CONTENT}}}}} is a layout's"
                    " placeholder; name a layout in `layout_id` to wrap this template",
                )
            )
        return errors


def _syntax(field: str, text: str) -> list[FieldError]:
    return [FieldError(field, stray.explained()) for stray in stray_braces(text)][:5]


def _position(text: str, at: int) -> tuple[int, int]:
    return text.count("\n", 0, at) + 1, at - (text.rfind("\n", 0, at) + 1) + 1


def id_errors(template_id: str) -> list[FieldError]:
    return [] if TEMPLATE_ID.fullmatch(template_id) else [FieldError("id", ID_RULE)]


_NOT_IN_AN_ID = re.compile(r"[^a-z0-9]+")


def generated_id(name: str) -> str:
    """An id for a template made without one: its name as a slug, and a random suffix
    (``"Spring open day!"`` -> ``"spring-open-day-3f9a1c"``)."""
    slug = _NOT_IN_AN_ID.sub("-", name.lower()).strip("-")[:48].strip("-")
    return f"{slug or 'template'}-{secrets.token_hex(3)}"


def first_version(
    account_id: str, template_id: str, draft: TemplateDraft, now: datetime
) -> Template:
    return Template(
        template_id=template_id,
        name=draft.name,
        subject=draft.subject,
        body=draft.html,
        created_at=now,
        text=draft.text,
        layout_id=draft.layout_id,
        kind=draft.kind,
        account_id=account_id,
        version=1,
        updated_at=now,
        inline_css=draft.inline_css,
    )


def next_version(current: Template, draft: TemplateDraft, now: datetime) -> Template:
    """The version after ``current`` with the draft's content (its kind stays)."""
    return Template(
        template_id=current.template_id,
        name=draft.name,
        subject=draft.subject,
        body=draft.html,
        created_at=current.created_at,
        text=draft.text,
        layout_id=draft.layout_id,
        kind=current.kind,
        account_id=current.account_id,
        version=current.version + 1,
        updated_at=now,
        inline_css=draft.inline_css,
    )
