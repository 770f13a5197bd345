"""Email templates: ``{{name}}`` placeholders, nothing else.

No expressions, loops, filters or code: a placeholder is a name of letters, digits and
underscores between double braces, optionally padded with spaces. Values are HTML-escaped
in the body and kept as plain text in the subject, where line breaks are refused (they would
let a value add mail headers).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from markupsafe import escape

from leadmail.domain.email import MAX_SUBJECT, larger_than
from leadmail.domain.errors import FieldError, ValidationFailed
from leadmail.domain.text import NOT_ONE_LINE, breaks_line
from leadmail.domain.unsubscribe import SERVICE_VARIABLES

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z0-9_]+)\s*\}\}")
TEMPLATE_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


MAX_VARIABLES_BYTES = 64 * 1024  # a request's variables: names and values, UTF-8


def check_variables_size(values: Mapping[str, str], field: str = "variables") -> None:
    """A request's ``variables`` hold at most MAX_VARIABLES_BYTES of names and values
    (ValidationFailed naming ``field``): a value is copied into each recipient's message,
    and a send of 50 recipients would otherwise make 50 copies of however much came."""
    if sum(len(name) + len(value) for name, value in values.items()) * 4 <= MAX_VARIABLES_BYTES:
        return  # (a character is at most 4 bytes: no need to encode)
    every = "".join(f"{name}{value}" for name, value in values.items())
    if larger_than(every, MAX_VARIABLES_BYTES):
        raise ValidationFailed.one(
            field, f"is larger than {MAX_VARIABLES_BYTES // 1024} KB (names and values, UTF-8)"
        )


class InvalidTemplate(ValueError):
    """A template file breaks the format; the message says where."""


def variables_of(*texts: str) -> tuple[str, ...]:
    """Placeholder names, unique, in order of first use across ``texts``."""
    seen: dict[str, None] = {}
    for text in texts:
        for match in PLACEHOLDER.finditer(text):
            seen.setdefault(match.group(1), None)
    return tuple(seen)


MALFORMED = "use {{name}} with letters, digits and underscores"


@dataclass(frozen=True, slots=True)
class StrayBrace:
    """A ``{{`` or ``}}`` that is no part of a placeholder, and where it is (from 1)."""

    line: int
    column: int
    near: str  # the text from there, up to 40 characters

    def explained(self) -> str:
        return (
            f"line {self.line}, column {self.column}: a malformed placeholder near"
            f" {self.near!r}: {MALFORMED}"
        )


def stray_braces(text: str) -> Iterator[StrayBrace]:
    """Every "{{" and "}}" that opens or closes no valid placeholder: a typo such as
    "{{ first name }}" would otherwise reach recipients verbatim."""
    valid = [m.span() for m in PLACEHOLDER.finditer(text)]
    for stray in re.finditer(r"\{\{|\}\}", text):
        at = stray.start()
        if not any(start <= at < end for start, end in valid):
            line_start = text.rfind("\n", 0, at) + 1
            yield StrayBrace(text.count("\n", 0, at) + 1, at - line_start + 1, text[at:][:40])


def _check_braces(text: str, origin: str, part: str, first_line: int | None) -> None:
    """``first_line``: the file's line ``text`` starts on, to name the stray's (as
    ``origin:line:``, the form editors jump to)."""
    for stray in stray_braces(text):
        at = origin if first_line is None else f"{origin}:{first_line + stray.line - 1}"
        raise InvalidTemplate(
            f"{at}: the {part} has a malformed placeholder near {stray.near!r}: {MALFORMED}"
        )


class TemplateKind(StrEnum):
    """A template is sent; a layout wraps the templates that name it (``{{content}}``)."""

    TEMPLATE = "template"
    LAYOUT = "layout"


@dataclass(frozen=True, slots=True)
class Template:
    """A template at one version: a predefined one (the file catalog's, ``account_id``
    None) or an account's own. ``body`` is its HTML; ``created_at`` is when the template
    was first stored and ``updated_at`` when this version was made."""

    template_id: str
    name: str
    subject: str
    body: str
    created_at: datetime
    text: str | None = None  # the plain-text part as written; None: derived from the HTML
    layout_id: str | None = None  # the account's layout that wraps it
    kind: TemplateKind = TemplateKind.TEMPLATE
    account_id: str | None = None  # None: a predefined template, every account's
    version: int = 1
    updated_at: datetime | None = None  # None: as created_at (a first version)
    # Whether a send has the <style> rules inlined (html_parts.inline_css): an account's
    # templates do unless saved with inline_css false; the catalog's are sent as written.
    inline_css: bool = False

    @property
    def predefined(self) -> bool:
        return self.account_id is None

    @property
    def changed_at(self) -> datetime:
        """When this version was made."""
        return self.created_at if self.updated_at is None else self.updated_at

    @property
    def variables(self) -> tuple[str, ...]:
        return variables_of(self.subject, self.body, self.text or "")

    @property
    def client_variables(self) -> tuple[str, ...]:
        """The variables a send must give values for: every one but those the service
        fills itself for each recipient (``unsubscribe_url``)."""
        return tuple(name for name in self.variables if name not in SERVICE_VARIABLES)

    def render(self, values: Mapping[str, str]) -> RenderedTemplate:
        """Fill the placeholders. Raises ValidationFailed naming every missing variable and
        every value that cannot go in the subject. Extra values are ignored."""
        return self.compiled().render(values)

    def compiled(self) -> CompiledTemplate:
        """The template read once, for rendering it many times (a campaign's)."""
        return CompiledTemplate.of(self.subject, self.body, self.text)


@dataclass(frozen=True, slots=True)
class CompiledTemplate:
    """A subject and body split at their placeholders (``PLACEHOLDER.split``: text, name,
    text, ... text), so that each rendering joins parts instead of searching the text."""

    subject_parts: tuple[str, ...]
    body_parts: tuple[str, ...]
    variables: tuple[str, ...]  # as Template.variables
    in_subject: tuple[str, ...]  # the variables of the subject, in order
    text_parts: tuple[str, ...] | None = None  # the plain-text part's, when it has one

    @classmethod
    def of(cls, subject: str, body: str, text: str | None = None) -> CompiledTemplate:
        return cls(
            tuple(PLACEHOLDER.split(subject)),
            tuple(PLACEHOLDER.split(body)),
            variables_of(subject, body, text or ""),
            variables_of(subject),
            None if text is None else tuple(PLACEHOLDER.split(text)),
        )

    def render(self, values: Mapping[str, str]) -> RenderedTemplate:
        """As Template.render."""
        names, in_subject = self.variables, self.in_subject
        errors = [
            FieldError(f"variables.{name}", "is required by the template")
            for name in names
            if name not in values
        ]
        for name in names:
            value = values.get(name)
            if value is None:
                continue
            if "\x00" in value:
                errors.append(FieldError(f"variables.{name}", "must not contain NUL characters"))
            elif name in in_subject and breaks_line(value):
                errors.append(
                    FieldError(f"variables.{name}", f"is used in the subject, so it {NOT_ONE_LINE}")
                )
        if errors:
            raise ValidationFailed(errors)
        subject = _filled(self.subject_parts, values, str).strip()
        if len(subject) > MAX_SUBJECT:
            raise ValidationFailed(
                [
                    FieldError(
                        f"variables.{name}",
                        f"makes the subject longer than {MAX_SUBJECT} characters",
                    )
                    for name in in_subject
                ]
            )
        body = _filled(self.body_parts, values, escape)
        parts = self.text_parts
        text = None if parts is None else _filled(parts, values, str)  # plain text: as given
        return RenderedTemplate(subject=subject, html=body, text=text)


def _filled(
    parts: tuple[str, ...], values: Mapping[str, str], shown: Callable[[str], object]
) -> str:
    # Odd parts are placeholder names, even parts the text between them.
    return "".join(text if n % 2 == 0 else str(shown(values[text])) for n, text in enumerate(parts))


@dataclass(frozen=True, slots=True)
class RenderedTemplate:
    subject: str
    html: str
    text: str | None = None


@dataclass(frozen=True, slots=True)
class TemplateSource:
    """A template as written by a person, before it is stored."""

    template_id: str
    name: str
    subject: str
    body: str

    @classmethod
    def parse(cls, text: str, origin: str) -> TemplateSource:
        """Read a template file: a header between ``---`` lines with ``id``, ``name`` and
        ``subject``, then the HTML body."""
        lines = text.lstrip("\ufeff").splitlines(keepends=True)
        if not lines or lines[0].strip() != "---":
            raise InvalidTemplate(f"{origin}: must start with a '---' header line")
        header: dict[str, str] = {}
        line_of: dict[str, int] = {}  # each header key's line in the file
        for number, line in enumerate(lines[1:], start=2):
            if line.strip() == "---":
                body = "".join(lines[number:])
                line_of["body"] = number + 1
                break
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            key, sep, value = line.partition(":")
            if not sep:
                raise InvalidTemplate(f"{origin}:{number}: expected 'key: value'")
            header[key.strip().lower()] = value.strip()
            line_of[key.strip().lower()] = number
        else:
            raise InvalidTemplate(f"{origin}: the header has no closing '---' line")
        missing = [k for k in ("id", "name", "subject") if not header.get(k)]
        if missing:
            raise InvalidTemplate(f"{origin}: the header lacks {', '.join(missing)}")
        unknown = sorted(set(header) - {"id", "name", "subject"})
        if unknown:
            raise InvalidTemplate(f"{origin}: unknown header keys {', '.join(unknown)}")
        source = cls(header["id"], header["name"], header["subject"], body)
        source.check(origin, subject_line=line_of["subject"], body_line=line_of["body"])
        return source

    def check(
        self, origin: str, *, subject_line: int | None = None, body_line: int | None = None
    ) -> None:
        """InvalidTemplate naming ``origin`` (and, given the lines the subject and the body
        start on in the file, the line of a malformed placeholder)."""
        if not TEMPLATE_ID.fullmatch(self.template_id):
            raise InvalidTemplate(
                f"{origin}: id {self.template_id!r} must be 1-64 of a-z, 0-9, '-', '_'"
            )
        if len(self.subject) > MAX_SUBJECT:
            raise InvalidTemplate(f"{origin}: the subject is longer than {MAX_SUBJECT}")
        if not self.body.strip():
            raise InvalidTemplate(f"{origin}: the body is empty")
        _check_braces(self.subject, origin, "subject", subject_line)
        _check_braces(self.body, origin, "body", body_line)


# A layout's one placeholder: where the HTML (or text) of the template it wraps goes.
CONTENT = "content"


def within(outer: str, inner: str) -> str:
    """``outer`` with its one ``{{content}}`` placeholder replaced by ``inner``."""
    for match in PLACEHOLDER.finditer(outer):
        if match.group(1) == CONTENT:
            return outer[: match.start()] + inner + outer[match.end() :]
    raise ValueError("a layout holds {{content}}")


def composed(template: Template, layout: Template | None) -> Template:
    """The template inside its layout: the layout's ``{{content}}`` replaced by the
    template's HTML, and by its text when both have one. Its id, version and owner stay."""
    if layout is None:
        return template
    text = template.text
    if text is not None and layout.text is not None:
        text = within(layout.text, text)
    return replace(template, body=within(layout.body, template.body), text=text)


def as_sent(template: Template, layout: Template | None) -> Template:
    """The template as a send renders it: composed with its layout, with a plain-text part
    (its own, else derived from its HTML: html_parts.text_of), its ``<style>`` rules
    inlined when it asks (html_parts.inline_css)."""
    from leadmail.domain.html_parts import inline_css, text_of  # on first use

    sent = composed(template, layout)
    if sent.text is None:  # an HTML with no text in it has no text part ("" is None)
        sent = replace(sent, text=text_of(sent.body) or None)
    if not template.inline_css:
        return sent
    return replace(sent, body=inline_css(sent.body))
