"""Templates on the wire: an account's own written and changed, and every template shown
(adapters/http/templates.py)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from leadmail.adapters.http.schemas import LeadId, TemplateId
from leadmail.adapters.http.timestamps import to_iso
from leadmail.domain.email import MAX_SUBJECT
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.template_drafts import MAX_NAME, TemplateDraft
from leadmail.domain.templates import TemplateKind
from leadmail.services.template_authoring import TemplateChange
from leadmail.services.template_trials import Preview
from leadmail.services.templates import TemplateView

HTML_TEXT = (
    "The HTML body, with `{{name}}` placeholders (letters, digits, `_`); up to 512 KB. A"
    " layout holds `{{content}}` once, where the template it wraps goes. Shown as `body`"
)
TEXT_TEXT = (
    "The plain-text part, with placeholders as the HTML; up to 256 KB. Absent: derived from"
    " the HTML when sent"
)
LAYOUT_TEXT = "The id of one of your layouts, which wraps this template (not for a layout)"
INLINE_TEXT = (
    "Whether a send inlines the `<style>` rules into `style` attributes (for mail clients"
    " that drop `<style>`); the HTML is stored as written"
)
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_NAME)]
Subject = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_SUBJECT)]
Html = Annotated[str, msgspec.Meta(min_length=1, description=HTML_TEXT)]
Text = Annotated[str, msgspec.Meta(min_length=1, description=TEXT_TEXT)]
LayoutId = Annotated[TemplateId, msgspec.Meta(description=LAYOUT_TEXT)]
Kind = Literal["template", "layout"]


class TemplateIn(msgspec.Struct, forbid_unknown_fields=True):
    name: Name
    subject: Subject
    html: Html
    id: (
        Annotated[
            TemplateId,
            msgspec.Meta(
                description="Unique among your templates and the predefined ones; absent:"
                " made from the name (`spring-open-day-3f9a1c`)"
            ),
        ]
        | None
    ) = None
    text: Text | None = None
    layout_id: LayoutId | None = None
    kind: Annotated[
        Kind, msgspec.Meta(description="`layout`: wraps the templates that name it")
    ] = "template"
    inline_css: Annotated[bool, msgspec.Meta(description=INLINE_TEXT)] = True

    def draft(self) -> TemplateDraft:
        return TemplateDraft(
            name=self.name,
            subject=self.subject,
            html=self.html,
            text=self.text,
            layout_id=self.layout_id,
            kind=TemplateKind(self.kind),
            inline_css=self.inline_css,
        )


class TemplateChangeIn(msgspec.Struct, forbid_unknown_fields=True):
    """Any subset of the fields; omitted ones stay. `text` and `layout_id` null: none."""

    name: Name | msgspec.UnsetType = msgspec.UNSET
    subject: Subject | msgspec.UnsetType = msgspec.UNSET
    html: Html | msgspec.UnsetType = msgspec.UNSET
    text: Text | msgspec.UnsetType | None = msgspec.UNSET
    layout_id: LayoutId | msgspec.UnsetType | None = msgspec.UNSET
    inline_css: Annotated[bool, msgspec.Meta(description=INLINE_TEXT)] | msgspec.UnsetType = (
        msgspec.UNSET
    )

    def change(self) -> TemplateChange:
        if all(getattr(self, name) is msgspec.UNSET for name in self.__struct_fields__):
            listed = ", ".join(self.__struct_fields__)
            raise ValidationFailed.one("body", f"must set at least one of {listed}")
        cleared = {
            name for name in ("text", "layout_id") if getattr(self, name, msgspec.UNSET) is None
        }
        return TemplateChange(
            name=_given(self.name),
            subject=_given(self.subject),
            html=_given(self.html),
            text=_given(self.text),
            layout_id=_given(self.layout_id),
            inline_css=None if self.inline_css is msgspec.UNSET else self.inline_css,
            clear=frozenset(cleared),
        )


def _given(value: str | msgspec.UnsetType | None) -> str | None:
    return None if value is msgspec.UNSET or value is None else value


class TemplateOut(msgspec.Struct):
    id: TemplateId
    name: str
    subject: str
    body: Annotated[str, msgspec.Meta(description="The HTML, as written (`html` when saved)")]
    variables: Annotated[
        list[str],
        msgspec.Meta(
            description="The variables a send must give values for, its layout's among them"
            " (`{{unsubscribe_url}}`, which the service fills with each recipient's own"
            " link, is not one)."
        ),
    ]
    created_at: str
    owner: Annotated[
        Literal["predefined", "account"],
        msgspec.Meta(description="`predefined`: the service's catalog, read-only"),
    ]
    kind: Kind
    version: Annotated[int, msgspec.Meta(ge=1, description="Each change makes the next")]
    updated_at: Annotated[str, msgspec.Meta(description="When this version was made")]
    text: str | None
    layout_id: TemplateId | None
    inline_css: bool

    @classmethod
    def of(cls, view: TemplateView) -> TemplateOut:
        template = view.template
        return cls(
            id=template.template_id,
            name=template.name,
            subject=template.subject,
            body=template.body,
            variables=list(view.variables),
            created_at=to_iso(template.created_at),
            owner="predefined" if template.predefined else "account",
            kind=template.kind.value,
            version=template.version,
            updated_at=to_iso(template.changed_at),
            text=template.text,
            layout_id=template.layout_id,
            inline_css=template.inline_css,
        )


Variables = Annotated[
    dict[str, str],
    msgspec.Meta(description="Values by variable name; a lead's own values go over them"),
]
LeadIdIn = Annotated[
    LeadId, msgspec.Meta(description="A lead of yours: its values fill the template")
]


class PreviewIn(msgspec.Struct, forbid_unknown_fields=True):
    variables: Variables = msgspec.field(default_factory=dict)
    lead_id: LeadIdIn | None = None
    version: Annotated[int, msgspec.Meta(ge=1, le=999_999_999)] | None = None


class PreviewOut(msgspec.Struct):
    id: TemplateId
    version: Annotated[int, msgspec.Meta(description="The version rendered")]
    subject: str
    html: Annotated[str, msgspec.Meta(description="As sent: in its layout, CSS inlined")]
    text: Annotated[str | None, msgspec.Meta(description="The plain-text part, as sent")]
    missing: Annotated[
        list[str],
        msgspec.Meta(description="Variables no value was given for, shown as `{{name}}`"),
    ]

    @classmethod
    def of(cls, preview: Preview) -> PreviewOut:
        return cls(
            id=preview.template.template_id,
            version=preview.template.version,
            subject=preview.subject,
            html=preview.html,
            text=preview.text,
            missing=list(preview.missing),
        )


class TestSendIn(msgspec.Struct, forbid_unknown_fields=True):
    to: Annotated[str, msgspec.Meta(description="One address")]
    variables: Variables = msgspec.field(default_factory=dict)
    lead_id: LeadIdIn | None = None
    sender: str | None = msgspec.field(default=None, name="from")


class TemplateVersionsOut(msgspec.Struct):
    versions: Annotated[list[TemplateOut], msgspec.Meta(description="Newest first")]
    next_cursor: Annotated[
        str | None, msgspec.Meta(description="Pass back as `cursor` for older versions")
    ]
