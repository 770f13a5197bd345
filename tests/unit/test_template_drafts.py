"""An account's own templates: TemplateDraft's rules, ids, versions and the errors of
template_drafts.py, with the parts of templates.py they stand on (stray braces, kinds)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from leadmail.domain.errors import FieldError, ValidationFailed
from leadmail.domain.template_drafts import (
    ID_RULE,
    TemplateDraft,
    TemplateExists,
    TemplateInUse,
    TemplateReadOnly,
    first_version,
    generated_id,
    id_errors,
    next_version,
    too_many_templates,
)
from leadmail.domain.templates import (
    MALFORMED,
    TEMPLATE_ID,
    StrayBrace,
    Template,
    TemplateKind,
    stray_braces,
)
from leadmail.domain.text import NOT_ONE_LINE

CREATED = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)
LATER = CREATED + timedelta(days=2, hours=3)
LAYOUT = TemplateKind.LAYOUT
CONTENT_IN_A_TEMPLATE = (
    "{{content}} is a layout's placeholder; name a layout in `layout_id` to wrap this template"
)


def draft(
    *,
    name: str = "Welcome",
    subject: str = "Welcome, {{first_name}}",
    html: str = "<p>Hi {{first_name}}</p>",
    text: str | None = None,
    layout_id: str | None = None,
    kind: TemplateKind = TemplateKind.TEMPLATE,
    inline_css: bool = True,
) -> TemplateDraft:
    return TemplateDraft(name, subject, html, text, layout_id, kind, inline_css)


def layout(*, html: str = "<main>{{content}}</main>", text: str | None = None) -> TemplateDraft:
    return draft(name="Base", subject="Base", html=html, text=text, kind=LAYOUT)


def malformed(line: int, column: int, near: str) -> str:
    return f"line {line}, column {column}: a malformed placeholder near {near!r}: {MALFORMED}"


def once(times: int) -> str:
    return (
        "must hold {{content}} exactly once, where the template it wraps goes"
        f" (it holds it {times} times)"
    )


# --- stray braces -------------------------------------------------------------------


def test_stray_braces_are_found_with_their_line_column_and_the_text_from_there() -> None:
    strays = list(stray_braces("ab\n cd }} x {{y}} {{ z"))

    assert strays == [StrayBrace(2, 5, "}} x {{y}} {{ z"), StrayBrace(2, 16, "{{ z")]


def test_the_text_near_a_stray_brace_is_cut_at_40_characters() -> None:
    (stray,) = stray_braces("{{ " + "x" * 100)

    assert stray.near == "{{ " + "x" * 37


def test_valid_placeholders_and_single_braces_are_no_stray_braces() -> None:
    assert list(stray_braces("<style>p { color: red }</style>{{a}} {{ b_1 }}")) == []


def test_a_stray_brace_is_explained_with_its_line_column_and_the_text_near_it() -> None:
    explained = StrayBrace(3, 7, "{{ first name }}").explained()

    assert explained == (
        "line 3, column 7: a malformed placeholder near '{{ first name }}':"
        " use {{name}} with letters, digits and underscores"
    )


# --- kinds and stored templates -----------------------------------------------------


def test_the_kinds_are_template_and_layout_by_their_wire_names() -> None:
    assert [str(kind) for kind in TemplateKind] == ["template", "layout"]
    assert TemplateKind("layout") is TemplateKind.LAYOUT


def test_a_template_without_an_account_is_predefined_and_one_with_an_account_is_not() -> None:
    assert Template("t", "T", "S", "B", CREATED).predefined is True
    assert Template("t", "T", "S", "B", CREATED, account_id="acc_1").predefined is False


def test_a_template_is_changed_at_its_creation_until_a_version_says_otherwise() -> None:
    assert Template("t", "T", "S", "B", CREATED).changed_at == CREATED
    assert Template("t", "T", "S", "B", CREATED, updated_at=LATER).changed_at == LATER


# --- the name ------------------------------------------------------------------------


def test_a_well_formed_draft_breaks_no_rule() -> None:
    assert draft().errors() == []


@pytest.mark.parametrize("name", ["", "   ", "\t\n"])
def test_an_empty_or_blank_name_is_refused(name: str) -> None:
    assert draft(name=name).errors() == [FieldError("name", "is empty")]


def test_a_name_of_200_characters_is_accepted_and_201_refused() -> None:
    assert draft(name="n" * 200).errors() == []
    assert draft(name="n" * 201).errors() == [FieldError("name", "is longer than 200 characters")]


@pytest.mark.parametrize("name", ["Spring\nopen day", "Spring\r\nopen day", "Spring\u2028day"])
def test_a_name_with_a_line_break_is_refused(name: str) -> None:
    assert draft(name=name).errors() == [FieldError("name", NOT_ONE_LINE)]


# --- the subject ---------------------------------------------------------------------


@pytest.mark.parametrize("subject", ["", "  "])
def test_an_empty_or_blank_subject_is_refused(subject: str) -> None:
    assert draft(subject=subject).errors() == [FieldError("subject", "is empty")]


def test_a_subject_of_998_characters_is_accepted_and_999_refused() -> None:
    assert draft(subject="s" * 998).errors() == []
    assert draft(subject="s" * 999).errors() == [
        FieldError("subject", "is longer than 998 characters")
    ]


@pytest.mark.parametrize("subject", ["Hello\nBcc: x@example.com", "Hello\r", "Hi\x0bthere"])
def test_a_subject_with_a_line_break_is_refused(subject: str) -> None:
    assert draft(subject=subject).errors() == [FieldError("subject", NOT_ONE_LINE)]


def test_a_stray_brace_in_the_subject_is_refused_with_its_column() -> None:
    errors = draft(subject="Hi {{first name}}").errors()

    assert errors == [
        FieldError("subject", malformed(1, 4, "{{first name}}")),
        FieldError("subject", malformed(1, 16, "}}")),
    ]


# --- html and text: size, NUL, placeholders --------------------------------------------


@pytest.mark.parametrize("html", ["", " \n\t "])
def test_an_empty_html_is_refused(html: str) -> None:
    assert draft(html=html).errors() == [FieldError("html", "is empty")]


def test_html_over_512_kb_of_utf8_is_refused_though_its_characters_are_fewer() -> None:
    html = "€" * 200_000  # 600,000 bytes

    assert draft(html=html).errors() == [FieldError("html", "is larger than 512 KB (UTF-8)")]


def test_html_under_512_kb_is_accepted() -> None:
    assert draft(html="<p>" + "x" * 500_000 + "</p>").errors() == []
    assert draft(html="€" * (512 * 1024 // 3), inline_css=False).errors() == []


def test_html_with_a_nul_is_refused() -> None:
    errors = draft(html="<p>Hi\x00</p>").errors()

    assert errors == [FieldError("html", "must not contain NUL characters")]


def test_text_over_256_kb_is_refused_and_256_kb_accepted() -> None:
    assert draft(text="t" * (256 * 1024)).errors() == []
    assert draft(text="t" * (256 * 1024 + 1)).errors() == [
        FieldError("text", "is larger than 256 KB (UTF-8)")
    ]


def test_an_empty_text_or_one_with_a_nul_is_refused() -> None:
    assert draft(text=" ").errors() == [FieldError("text", "is empty")]
    assert draft(text="Hi\x00").errors() == [FieldError("text", "must not contain NUL characters")]


def test_no_text_is_no_error() -> None:
    assert draft(text=None).errors() == []


def test_a_malformed_placeholder_in_the_html_is_named_with_its_line_and_column() -> None:
    html = "<p>Dear all,</p>\n<p>See you</p>\n<p> {{ first name }}</p>"

    errors = draft(html=html).errors()

    assert errors == [
        FieldError("html", malformed(3, 5, "{{ first name }}</p>")),
        FieldError("html", malformed(3, 19, "}}</p>")),
    ]


def test_a_malformed_placeholder_in_the_text_is_named_with_its_line_and_column() -> None:
    errors = draft(text="Hello\n\n  name}} here").errors()

    assert errors == [FieldError("text", malformed(3, 7, "}} here"))]


def test_at_most_five_syntax_errors_are_named_per_field() -> None:
    errors = draft(html="{{a " * 7, text="x }}\n" * 9).errors()

    assert [(e.field, e.message[:18]) for e in errors] == [
        ("html", "line 1, column 1: "),
        ("html", "line 1, column 5: "),
        ("html", "line 1, column 9: "),
        ("html", "line 1, column 13:"),
        ("html", "line 1, column 17:"),
        ("text", "line 1, column 3: "),
        ("text", "line 2, column 3: "),
        ("text", "line 3, column 3: "),
        ("text", "line 4, column 3: "),
        ("text", "line 5, column 3: "),
    ]


def test_css_that_cannot_be_inlined_is_refused_unless_inlining_is_off() -> None:
    html = '<style>p { color: red }</style><p style="color{">Hi</p>'

    (error,) = draft(html=html).errors()

    assert error.field == "html"
    assert error.message.startswith("The CSS of this HTML cannot be inlined: ")
    assert error.message.endswith(" (or save with inline_css false)")
    assert draft(html=html, inline_css=False).errors() == []


# --- layouts and {{content}} -----------------------------------------------------------


def test_a_layout_with_content_once_in_html_and_text_breaks_no_rule() -> None:
    assert layout(html="<main>{{ content }}</main>", text="Hi\n{{content}}\nBye").errors() == []


def test_a_layout_without_content_is_refused() -> None:
    assert layout(html="<main></main>").errors() == [FieldError("html", once(0))]


def test_a_layout_with_content_twice_says_how_many_times() -> None:
    errors = layout(html="{{content}}<hr>{{ content }}").errors()

    assert errors == [FieldError("html", once(2))]


def test_a_layout_s_text_must_hold_content_exactly_once_too() -> None:
    assert layout(text="No place for it").errors() == [FieldError("text", once(0))]
    assert layout(text="{{content}}{{content}}{{content}}").errors() == [
        FieldError("text", once(3))
    ]


def test_a_template_using_content_is_refused_with_its_line_and_column() -> None:
    errors = draft(html="<p>Hi</p>\n  {{content}}", text="Hi\n\n   {{ content }}").errors()

    assert errors == [
        FieldError("html", f"line 2, column 3: {CONTENT_IN_A_TEMPLATE}"),
        FieldError("text", f"line 3, column 4: {CONTENT_IN_A_TEMPLATE}"),
    ]


def test_a_layout_naming_a_layout_is_refused_on_layout_id() -> None:
    errors = draft(html="{{content}}", kind=LAYOUT, layout_id="base").errors()

    assert errors == [FieldError("layout_id", "is for a template: a layout names no layout")]


def test_a_template_may_name_a_layout() -> None:
    assert draft(layout_id="base").errors() == []


def test_every_broken_field_is_named_in_one_list_in_field_order() -> None:
    broken = draft(
        name="",
        subject="Hi {{first_name",
        html=" ",
        text="Hi\x00",
        layout_id="base",
        kind=LAYOUT,
    )

    assert [e.field for e in broken.errors()] == ["name", "subject", "html", "text", "layout_id"]


# --- checked ------------------------------------------------------------------------


def test_checked_raises_validation_failed_with_every_error() -> None:
    broken = draft(name="", subject="", html="")

    with pytest.raises(ValidationFailed) as caught:
        broken.checked()

    assert caught.value.errors == (
        FieldError("name", "is empty"),
        FieldError("subject", "is empty"),
        FieldError("html", "is empty"),
    )


def test_checked_returns_a_draft_that_breaks_no_rule() -> None:
    fine = draft()

    assert fine.checked() is fine


# --- ids ------------------------------------------------------------------------------


@pytest.mark.parametrize("template_id", ["a", "0", "welcome_2", "x-y", "a" * 64])
def test_ids_of_lower_case_letters_digits_dashes_and_underscores_are_accepted(
    template_id: str,
) -> None:
    assert id_errors(template_id) == []


@pytest.mark.parametrize("template_id", ["", "-a", "_a", "A", "a" * 65, "a b", "é"])
def test_other_ids_are_refused_on_field_id(template_id: str) -> None:
    assert id_errors(template_id) == [FieldError("id", ID_RULE)]


def test_a_generated_id_is_the_name_as_a_slug_and_six_hex_characters() -> None:
    made = generated_id("Spring open day!")

    assert made.startswith("spring-open-day-")
    assert len(made) == len("spring-open-day-") + 6
    assert int(made[-6:], 16) >= 0
    assert made[-6:] == made[-6:].lower()
    assert TEMPLATE_ID.fullmatch(made)


def test_a_name_of_only_symbols_gives_a_template_id() -> None:
    made = generated_id("!!! ???")

    assert made.startswith("template-")
    assert len(made) == len("template-") + 6
    assert TEMPLATE_ID.fullmatch(made)


def test_a_generated_id_keeps_only_ascii_letters_and_digits_of_the_name() -> None:
    assert generated_id("  Été 2026: Café_Club  ")[:-6] == "t-2026-caf-club-"


def test_a_generated_id_of_a_very_long_name_stays_within_64_characters() -> None:
    for name in ["a" * 300, "a b " * 100, "x" * 47 + " " + "y" * 100]:
        made = generated_id(name)

        assert len(made) <= 64
        assert TEMPLATE_ID.fullmatch(made)
        assert "--" not in made


def test_two_generated_ids_of_one_name_differ() -> None:
    assert generated_id("Welcome") != generated_id("Welcome")


# --- versions -----------------------------------------------------------------------


def test_a_first_version_is_version_1_of_the_account_made_now() -> None:
    written = draft(text="Hi {{first_name}}", layout_id="base", inline_css=False)

    template = first_version("acc_1", "welcome", written, CREATED)

    assert template == Template(
        template_id="welcome",
        name="Welcome",
        subject="Welcome, {{first_name}}",
        body="<p>Hi {{first_name}}</p>",
        created_at=CREATED,
        text="Hi {{first_name}}",
        layout_id="base",
        kind=TemplateKind.TEMPLATE,
        account_id="acc_1",
        version=1,
        updated_at=CREATED,
        inline_css=False,
    )
    assert template.changed_at == CREATED
    assert template.predefined is False


def test_a_first_version_of_a_layout_is_a_layout() -> None:
    assert first_version("acc_1", "base", layout(), CREATED).kind is LAYOUT


def test_the_next_version_takes_the_draft_and_keeps_id_creation_kind_and_account() -> None:
    current = first_version("acc_1", "base", layout(), CREATED)
    changed = draft(name="Base 2", subject="New", html="<div>{{content}}</div>", text="{{content}}")

    following = next_version(current, changed, LATER)

    assert following == Template(
        template_id="base",
        name="Base 2",
        subject="New",
        body="<div>{{content}}</div>",
        created_at=CREATED,
        text="{{content}}",
        layout_id=None,
        kind=LAYOUT,
        account_id="acc_1",
        version=2,
        updated_at=LATER,
        inline_css=True,
    )
    assert following.changed_at == LATER


def test_versions_count_up_one_by_one() -> None:
    template = first_version("acc_1", "welcome", draft(), CREATED)
    for days in range(1, 4):
        template = next_version(template, draft(), CREATED + timedelta(days=days))

    assert (template.version, template.created_at) == (4, CREATED)
    assert template.updated_at == CREATED + timedelta(days=3)


def test_a_draft_of_a_stored_template_gives_the_same_template_back() -> None:
    written = draft(text="Hi", layout_id="base", inline_css=False)
    stored = first_version("acc_1", "welcome", written, CREATED)

    assert TemplateDraft.of(stored) == written
    assert first_version("acc_1", "welcome", TemplateDraft.of(stored), CREATED) == stored


def test_a_draft_of_a_layout_is_a_layout_draft() -> None:
    stored = first_version("acc_1", "base", layout(text="{{content}}"), CREATED)

    assert TemplateDraft.of(stored) == layout(text="{{content}}")


# --- errors -----------------------------------------------------------------------------


def test_a_taken_id_says_by_whom() -> None:
    own = TemplateExists("welcome", predefined=False)
    predefined = TemplateExists("welcome", predefined=True)

    assert own.code == "TEMPLATE_EXISTS"
    assert own.template_id == "welcome"
    assert own.message == (
        "Template id 'welcome' is taken by another of your templates: choose another id"
    )
    assert predefined.message == (
        "Template id 'welcome' is taken by a predefined template: choose another id"
    )


def test_a_predefined_template_is_read_only_and_the_message_says_what_to_do() -> None:
    error = TemplateReadOnly("welcome")

    assert error.code == "TEMPLATE_READ_ONLY"
    assert error.template_id == "welcome"
    assert str(error) == (
        "Template 'welcome' is predefined and cannot be changed or deleted: create a template"
        " of your own (POST /api/v1/email/templates) from its content instead"
    )


def test_a_template_in_use_names_its_users() -> None:
    error = TemplateInUse("base", ["welcome", "reminder"], "templates")

    assert error.code == "TEMPLATE_IN_USE"
    assert (error.template_id, error.users) == ("base", ["welcome", "reminder"])
    assert error.message == (
        "Template 'base' is used by templates 'welcome', 'reminder': it cannot be deleted"
    )


def test_a_template_in_use_names_ten_users_at_most_then_and_more() -> None:
    ten = [f"c{n}" for n in range(10)]
    shown = ", ".join(repr(u) for u in ten)

    assert TemplateInUse("t", ten, "campaigns").message == (
        f"Template 't' is used by campaigns {shown}: it cannot be deleted"
    )
    assert TemplateInUse("t", [*ten, "c10", "c11"], "campaigns").message == (
        f"Template 't' is used by campaigns {shown} and more: it cannot be deleted"
    )
    assert TemplateInUse("t", [*ten, "c10"], "campaigns").users == [*ten, "c10"]


def test_one_template_too_many_is_refused_on_id_naming_the_limit() -> None:
    error = too_many_templates()

    assert isinstance(error, ValidationFailed)
    assert error.errors == (
        FieldError("id", "is one template too many: an account holds at most 500"),
    )
