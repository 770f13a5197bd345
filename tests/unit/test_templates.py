"""Template files and rendering: TemplateSource.parse, Template.variables, Template.render."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markupsafe import escape

from leadmail.domain.errors import ValidationFailed
from leadmail.domain.templates import InvalidTemplate, Template, TemplateSource

CREATED = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)
HTML_SPECIAL = "<>&\"'"


def template(subject: str, body: str) -> Template:
    return Template("t", "T", subject, body, CREATED)


def source_text(
    *,
    template_id: str = "welcome",
    name: str = "Welcome",
    subject: str = "Welcome, {{first_name}}",
    body: str = "<p>Hi {{first_name}}</p>\n",
    extra_header: str = "",
) -> str:
    return f"---\nid: {template_id}\nname: {name}\nsubject: {subject}\n{extra_header}---\n{body}"


def parse_error(text: str, origin: str = "welcome.html") -> str:
    with pytest.raises(InvalidTemplate) as caught:
        TemplateSource.parse(text, origin=origin)
    return str(caught.value)


def failed_fields(error: ValidationFailed) -> list[str]:
    return [e.field for e in error.errors]


# --- parsing: the header ------------------------------------------------------------


def test_a_well_formed_file_gives_its_id_name_subject_and_body() -> None:
    text = "---\nid: welcome\nname: Welcome\nsubject: Hi {{first_name}}\n---\n<p>Body</p>\n"

    source = TemplateSource.parse(text, origin="welcome.html")

    assert source == TemplateSource("welcome", "Welcome", "Hi {{first_name}}", "<p>Body</p>\n")


def test_header_values_are_trimmed_and_keys_are_case_insensitive() -> None:
    text = "---\n  ID :  welcome  \nName:Welcome\nSUBJECT:   Hi there   \n---\nbody"

    source = TemplateSource.parse(text, origin="welcome.html")

    assert (source.template_id, source.name, source.subject) == ("welcome", "Welcome", "Hi there")


def test_only_the_first_colon_separates_key_and_value() -> None:
    source = TemplateSource.parse(source_text(subject="Reminder: class at 10:30"), "x.html")

    assert source.subject == "Reminder: class at 10:30"


def test_blank_and_comment_lines_in_the_header_are_skipped() -> None:
    text = "---\n# shown on the dashboard\n\nid: welcome\nname: Welcome\nsubject: Hi\n---\nbody"

    assert TemplateSource.parse(text, origin="welcome.html").template_id == "welcome"


def test_a_byte_order_mark_and_windows_line_endings_are_accepted() -> None:
    text = "\ufeff---\r\nid: welcome\r\nname: Welcome\r\nsubject: Hi\r\n---\r\n<p>Body</p>\r\n"

    source = TemplateSource.parse(text, origin="welcome.html")

    assert source.subject == "Hi"
    assert source.body == "<p>Body</p>\r\n"


def test_the_body_is_everything_after_the_closing_line_kept_verbatim() -> None:
    body = "<p>One</p>\n\n---\n<p>Two: still body</p>\n"

    assert TemplateSource.parse(source_text(body=body), "x.html").body == body


def test_a_file_without_an_opening_header_line_is_refused() -> None:
    message = parse_error("id: welcome\nname: Welcome\nsubject: Hi\n---\nbody")

    assert message.startswith("welcome.html: ")
    assert "'---'" in message


def test_an_empty_file_is_refused() -> None:
    assert "'---'" in parse_error("")


def test_a_header_that_is_never_closed_is_refused() -> None:
    message = parse_error("---\nid: welcome\nname: Welcome\nsubject: Hi\n")

    assert message == "welcome.html: the header has no closing '---' line"


def test_a_header_line_without_a_colon_is_refused_with_its_line_number() -> None:
    message = parse_error("---\nid: welcome\nname Welcome\nsubject: Hi\n---\nbody")

    assert message.startswith("welcome.html:3: ")


@pytest.mark.parametrize("key", ["id", "name", "subject"])
def test_each_required_key_is_named_when_missing(key: str) -> None:
    lines = {"id": "id: welcome", "name": "name: Welcome", "subject": "subject: Hi"}
    del lines[key]
    text = "---\n" + "\n".join(lines.values()) + "\n---\nbody"

    message = parse_error(text)

    assert message == f"welcome.html: the header lacks {key}"


def test_an_empty_value_counts_as_missing() -> None:
    assert "lacks subject" in parse_error(source_text(subject="   "))


def test_every_missing_key_is_named_at_once() -> None:
    assert parse_error("---\nname: Welcome\n---\nbody").endswith("lacks id, subject")


def test_unknown_header_keys_are_refused_and_named() -> None:
    message = parse_error(source_text(extra_header="from: a@example.com\nlang: en\n"))

    assert message == "welcome.html: unknown header keys from, lang"


@pytest.mark.parametrize(
    "template_id", ["Welcome", "-welcome", "_welcome", "wel come", "wélcome", "a" * 65]
)
def test_ids_outside_the_allowed_alphabet_or_length_are_refused(template_id: str) -> None:
    message = parse_error(source_text(template_id=template_id))

    assert repr(template_id) in message


@pytest.mark.parametrize("template_id", ["a", "0", "payment-reminder", "class_2", "a" * 64])
def test_ids_of_lower_case_letters_digits_dashes_and_underscores_are_accepted(
    template_id: str,
) -> None:
    assert TemplateSource.parse(source_text(template_id=template_id), "x.html").template_id == (
        template_id
    )


def test_a_subject_of_998_characters_is_accepted_and_999_refused() -> None:
    assert TemplateSource.parse(source_text(subject="s" * 998), "x.html").subject == "s" * 998
    assert "longer than 998" in parse_error(source_text(subject="s" * 999))


@pytest.mark.parametrize("body", ["", "\n", "  \n\t\n"])
def test_an_empty_body_is_refused(body: str) -> None:
    assert parse_error(source_text(body=body)) == "welcome.html: the body is empty"


# --- parsing: placeholders ----------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        "{{ first name }}",
        "{{}}",
        "{{ }}",
        "{{a-b}}",
        "{{first.name}}",
        "{{ name | upper }}",
        "{{x",
        "{{ x }",
        "x }}",
        "{{prénom}}",
    ],
)
def test_malformed_placeholders_in_the_body_are_refused(bad: str) -> None:
    message = parse_error(source_text(body=f"<p>Hello {bad}, welcome.</p>"))

    # The file's line: the header's five, then the body's first.
    assert message.startswith("welcome.html:6: the body has a malformed placeholder")


def test_a_malformed_placeholder_in_the_subject_is_refused() -> None:
    message = parse_error(source_text(subject="Hi {{first name}}"))

    assert message.startswith("welcome.html:4: the subject has a malformed placeholder")
    assert "{{first name}}" in message


def test_the_line_named_is_the_file_line_of_the_placeholder() -> None:
    body = "<p>One</p>\n<p>Two</p>\n<p>Dear {{ first name }},</p>\n"
    header = "# a comment line\n\n"

    message = parse_error(source_text(body=body, extra_header=header), origin="/t/w.html")

    # ---, id, name, subject, the comment, a blank line, ---: the body starts on line 8.
    assert message.startswith("/t/w.html:10: the body has a malformed placeholder near")


def test_the_message_quotes_the_malformed_placeholder() -> None:
    message = parse_error(source_text(body="<p>Dear {{ first name }},</p>"))

    assert "'{{ first name }},</p>'" in message


def test_a_stray_closing_pair_is_quoted_in_the_message() -> None:
    # A person fixing the file needs to be pointed at the stray "}}", not at the top of the
    # body. Known bug: with no "{{" left, the quote starts at the beginning of the body.
    body = "<p>" + "Lorem ipsum dolor sit amet. " * 4 + "</p>\n<p>Dear name}},</p>\n"

    message = parse_error(source_text(body=body))
    quoted = re.search(r"near (.*): use ", message)

    assert quoted is not None
    assert "}}" in quoted.group(1)


@pytest.mark.parametrize(
    "good", ["{{x}}", "{{ x }}", "{{  first_name\t}}", "{{X_1}}", "{{1}}", "{{_}}"]
)
def test_placeholders_of_letters_digits_and_underscores_with_spaces_are_accepted(
    good: str,
) -> None:
    source = TemplateSource.parse(source_text(body=f"<p>{good}</p>"), "x.html")

    assert source.body == f"<p>{good}</p>"


def test_single_braces_such_as_css_are_not_placeholders() -> None:
    body = "<style>p { color: red; }</style><p>{not a placeholder}</p>"

    assert TemplateSource.parse(source_text(body=body), "x.html").body == body


# --- variables ----------------------------------------------------------------------


def test_variables_come_from_the_subject_then_the_body_in_order_of_first_use() -> None:
    t = template("{{course_name}} for {{first_name}}", "{{date}} {{first_name}} {{link}}")

    assert t.variables == ("course_name", "first_name", "date", "link")


def test_variables_are_unique_whatever_the_spacing() -> None:
    t = template("Hi", "{{x}} {{ x }} {{y}} {{  x}} {{y }}")

    assert t.variables == ("x", "y")


def test_variable_names_are_case_sensitive() -> None:
    assert template("Hi", "{{Name}} {{name}}").variables == ("Name", "name")


def test_a_template_without_placeholders_has_no_variables() -> None:
    assert template("Hello", "<p>Hello</p>").variables == ()


# --- rendering ----------------------------------------------------------------------


def test_placeholders_are_filled_in_subject_and_body() -> None:
    t = template("You're enrolled in {{course}}", "<p>Hi {{ name }}, {{course}} starts.</p>")

    rendered = t.render({"name": "Ada", "course": "Python 101"})

    assert rendered.subject == "You're enrolled in Python 101"
    assert rendered.html == "<p>Hi Ada, Python 101 starts.</p>"


def test_extra_values_are_ignored() -> None:
    rendered = template("Hi {{a}}", "<p>{{a}}</p>").render({"a": "1", "unused": "2"})

    assert (rendered.subject, rendered.html) == ("Hi 1", "<p>1</p>")


def test_every_missing_variable_is_named_in_order() -> None:
    t = template("{{course}} for {{name}}", "<p>{{name}} {{date}} {{link}}</p>")

    with pytest.raises(ValidationFailed) as caught:
        t.render({"name": "Ada"})

    assert failed_fields(caught.value) == ["variables.course", "variables.date", "variables.link"]
    assert all("required" in e.message for e in caught.value.errors)


def test_an_empty_value_is_a_value() -> None:
    assert template("Hi", "<p>[{{x}}]</p>").render({"x": ""}).html == "<p>[]</p>"


def test_the_rendered_subject_is_trimmed() -> None:
    assert template("{{a}} Hello {{b}}", "x").render({"a": "  ", "b": " \t"}).subject == "Hello"


@pytest.mark.parametrize("value", ["Python\r\n101", "Python\n101", "Python\r101", "\n"])
def test_a_line_break_in_a_subject_value_is_refused(value: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        template("Welcome to {{course}}", "<p>{{course}}</p>").render({"course": value})

    assert failed_fields(caught.value) == ["variables.course"]
    assert "line breaks" in caught.value.errors[0].message


def test_a_line_break_in_a_body_only_value_is_allowed() -> None:
    rendered = template("Hi", "<p>{{note}}</p>").render({"note": "one\ntwo"})

    assert rendered.html == "<p>one\ntwo</p>"


def test_missing_variables_and_subject_line_breaks_are_reported_together() -> None:
    t = template("{{a}} {{b}}", "{{c}}")

    with pytest.raises(ValidationFailed) as caught:
        t.render({"a": "x\ny"})

    assert failed_fields(caught.value) == ["variables.b", "variables.c", "variables.a"]


def test_values_are_html_escaped_in_the_body() -> None:
    t = template("Hi", '<p>{{name}}</p><a href="{{link}}">go</a>')

    rendered = t.render({"name": "<script>alert('x')</script> & co", "link": '" onclick="x()'})

    assert rendered.html == (
        "<p>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; co</p>"
        '<a href="&#34; onclick=&#34;x()">go</a>'
    )


def test_values_stay_plain_text_in_the_subject() -> None:
    t = template("{{course}} with {{teacher}}", "x")

    rendered = t.render({"course": "R&D <basics>", "teacher": 'O\'Brien "Bob"'})

    assert rendered.subject == 'R&D <basics> with O\'Brien "Bob"'


def test_a_value_used_in_both_places_is_plain_in_the_subject_and_escaped_in_the_body() -> None:
    rendered = template("{{c}}", "<h1>{{c}}</h1>").render({"c": "Tom & Jerry"})

    assert (rendered.subject, rendered.html) == ("Tom & Jerry", "<h1>Tom &amp; Jerry</h1>")


def test_a_value_that_looks_like_a_placeholder_is_inserted_literally() -> None:
    rendered = template("Re: {{a}}", "<p>{{a}} {{b}}</p>").render({"a": "{{b}}", "b": "B"})

    assert rendered.subject == "Re: {{b}}"
    assert rendered.html == "<p>{{b}} B</p>"


def test_backslashes_and_group_references_in_values_are_not_interpreted() -> None:
    values = {"a": r"\1 \2 \n C:\path"}

    rendered = template("{{a}}", "{{a}}").render(values)

    assert rendered.subject == values["a"]
    assert rendered.html == values["a"]


# --- properties ---------------------------------------------------------------------

# Values a person or an attacker might send, with the characters that matter over-weighted.
# NUL is refused in every value (test_a_nul_in_any_value_is_refused); the rest may come.
values = st.text(
    alphabet=st.one_of(
        st.sampled_from(
            list(HTML_SPECIAL + "{}\r\n\\ \x0b\x85\u2028\u202e\u2066\u200b\u200c\u200d")
        ),
        st.characters(codec="utf-8", exclude_characters="\x00"),
    ),
    max_size=40,
)


def test_a_nul_in_any_value_is_refused() -> None:
    with pytest.raises(ValidationFailed) as caught:
        template("Hi {{a}}", "<p>{{b}}</p>").render({"a": "x", "b": "y\x00"})
    assert failed_fields(caught.value) == ["variables.b"]


ENTITY = re.compile(r"&(amp|lt|gt|#34|#39);")


@given(value=values)
def test_body_values_never_come_out_with_html_special_characters(value: str) -> None:
    rendered = template("Hi", "[{{v}}]").render({"v": value})
    inserted = rendered.html[1:-1]

    assert rendered.html == f"[{escape(value)}]"
    assert not set(inserted) & set("<>\"'")
    # Every "&" that comes out starts one of the five entities markupsafe writes ...
    assert inserted.count("&") == len(ENTITY.findall(inserted))
    # ... and a browser reading them gets the value back.
    assert html.unescape(inserted) == value
    if set(value) & set("<>\"'"):
        assert value not in rendered.html


BIDI_AND_INVISIBLE = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
BIDI_AND_INVISIBLE |= set("\u200b\u2060\ufeff")
JOINERS = "\u200c\u200d"


def breaks_a_header(value: str) -> bool:
    """Line breaks and control characters (tab aside), bidirectional controls and invisible
    characters, and a joiner that joins nothing: refused in a subject value."""
    padded = f" {value} "
    return any(
        (ord(c) < 0x20 and c != "\t")
        or 0x7F <= ord(c) <= 0x9F
        or c in "\u2028\u2029"
        or c in BIDI_AND_INVISIBLE
        or (c in JOINERS and any(n.isspace() or n in JOINERS for n in (padded[i], padded[i + 2])))
        for i, c in enumerate(value)
    )


@given(value=values)
def test_a_rendered_subject_never_holds_cr_or_lf(value: str) -> None:
    t = template("Welcome to {{course}}!", "<p>{{course}}</p>")

    if breaks_a_header(value):
        with pytest.raises(ValidationFailed) as caught:
            t.render({"course": value})
        assert failed_fields(caught.value) == ["variables.course"]
    else:
        subject = t.render({"course": value}).subject
        assert "\r" not in subject
        assert "\n" not in subject
        assert subject == f"Welcome to {value}!".strip()


@given(
    value=st.from_regex(r"\{\{\s*[A-Za-z0-9_]+\s*\}\}", fullmatch=True)
    | st.text(alphabet="{}_ ab", max_size=20),
    other=values,
)
def test_values_are_never_rendered_again(value: str, other: str) -> None:
    t = template("{{first}} / {{other}}", "<p>{{first}}</p><p>{{other}}</p>")

    try:
        rendered = t.render({"first": value, "other": other})
    except ValidationFailed:
        assert breaks_a_header(value + other)
        return

    assert rendered.subject == f"{value} / {other}".strip()
    assert rendered.html == f"<p>{escape(value)}</p><p>{escape(other)}</p>"
