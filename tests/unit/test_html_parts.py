"""The parts derived from a template's HTML: inline_css and text_of."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from leadmail.domain.html_parts import InvalidHtml, inline_css, text_of

COURSE_EMAIL = """<!DOCTYPE html>
<html>
<head>
  <meta charset="utf-8">
  <title>Week 1</title>
  <style>h1 { color: #333 } p { margin: 0 0 12px }</style>
</head>
<body>
  <div style="display: none">Your first lesson is waiting</div>
  <h1>Welcome to Python 101, {{first_name}}!</h1>
  <p>Your first lesson is ready.
     Here is what you will learn &amp; do:</p>
  <ul>
    <li>Variables &amp; types</li>
    <li>Loops<br>and functions</li>
  </ul>
  <p>Start here: <a href="https://courses.example.com/python-101/lesson-1">Lesson 1</a>.</p>
  <p>Or paste <a href="https://courses.example.com/start">https://courses.example.com/start</a>
     into your browser.</p>
  <p>Questions? <a href="mailto:help@example.com">help@example.com</a></p>
  <script>track()</script>
  <p style="font-size: 12px">Not for you? <a href="{{unsubscribe_url}}">Unsubscribe</a></p>
</body>
</html>
"""

COURSE_EMAIL_TEXT = """\
Welcome to Python 101, {{first_name}}!

Your first lesson is ready. Here is what you will learn & do:

  * Variables & types
  * Loops
    and functions

Start here: Lesson 1 (https://courses.example.com/python-101/lesson-1).

Or paste https://courses.example.com/start into your browser.

Questions? help@example.com

Not for you? Unsubscribe ({{unsubscribe_url}})"""

NAMES = st.from_regex(r"[A-Za-z0-9_]{1,12}", fullmatch=True)


# --- inline_css -----------------------------------------------------------------------


def test_a_style_block_is_inlined_into_the_style_attributes_of_a_document() -> None:
    html = (
        "<html><head><style>p { color: red } .note { font-size: 12px }</style></head>"
        '<body><p class="note">Hi</p></body></html>'
    )

    assert inline_css(html) == (
        "<html><head></head>"
        '<body><p class="note" style="color: red;font-size: 12px;">Hi</p></body></html>'
    )


def test_a_style_attribute_of_the_template_wins_over_a_rule() -> None:
    html = '<style>p { color: red; margin: 0 }</style><p style="color: blue">Hi</p>'

    assert inline_css(html) == '<p style="margin: 0;color: blue">Hi</p>'


def test_media_queries_stay_in_a_style_block_and_the_rest_of_it_goes() -> None:
    html = (
        "<html><head><style>p { color: red }"
        " @media (max-width: 600px) { p { font-size: 18px } }</style></head>"
        "<body><p>Hi</p></body></html>"
    )

    assert inline_css(html) == (
        "<html><head><style>@media (max-width: 600px) { p { font-size: 18px } } </style></head>"
        '<body><p style="color: red;">Hi</p></body></html>'
    )


def test_placeholders_survive_in_text_and_in_href_src_and_other_attributes() -> None:
    html = (
        "<style>a { color: blue }</style>"
        '<p title="For {{ first_name }}">Hi {{first_name}} &amp; {{ last_name }}</p>'
        '<a href="{{unsubscribe_url}}">Unsubscribe</a><img src="{{logo_url}}" alt="{{name}}">'
    )

    assert inline_css(html) == (
        '<p title="For {{ first_name }}">Hi {{first_name}} &amp; {{ last_name }}</p>'
        '<a href="{{unsubscribe_url}}" style="color: blue;">Unsubscribe</a>'
        '<img src="{{logo_url}}" alt="{{name}}">'
    )


def test_placeholders_survive_in_style_attributes_and_rules() -> None:
    html = (
        "<style>p { background: url({{banner_url}}) }</style>"
        '<p style="color: {{brand_colour}}">Hi</p>'
    )

    assert inline_css(html) == (
        '<p style="background: url({{banner_url}});color: {{brand_colour}}">Hi</p>'
    )


def test_a_fragment_comes_back_as_a_fragment_led_by_its_media_queries() -> None:
    html = (
        "<style>p { color: red } @media (max-width: 600px) { p { margin: 0 } }</style>\n"
        "<p>Hi {{first_name}}</p>\n"
    )

    assert inline_css(html) == (
        "<style>@media (max-width: 600px) { p { margin: 0 } } </style>"
        '\n<p style="color: red;">Hi {{first_name}}</p>\n'
    )


def test_a_fragment_without_css_comes_back_unchanged() -> None:
    html = '<p>Hi {{first_name}}, <a href="{{url}}">read on</a>.</p>'

    assert inline_css(html) == html


def test_plain_text_and_empty_html_come_back_as_they_were() -> None:
    assert inline_css("Hi {{first_name}}") == "Hi {{first_name}}"
    assert inline_css("") == ""


def test_stylesheet_links_are_neither_fetched_nor_read_but_dropped() -> None:
    html = (
        '<html><head><link rel="stylesheet" href="https://cdn.example.com/mail.css">'
        '<link rel="stylesheet" href="/etc/hostname"></head><body><p>Hi</p></body></html>'
    )

    assert inline_css(html) == "<html><head></head><body><p>Hi</p></body></html>"


def test_css_that_cannot_be_inlined_is_refused_with_a_reason() -> None:
    html = '<style>p { color: red }</style><p style="color{">Hi</p>'

    with pytest.raises(InvalidHtml) as caught:
        inline_css(html)

    assert str(caught.value).startswith("The CSS of this HTML cannot be inlined: ")
    assert isinstance(caught.value, ValueError)


@given(NAMES)
def test_any_placeholder_name_survives_inlining(name: str) -> None:
    html = f'<style>a {{ color: red }}</style><a href="{{{{{name}}}}}">{{{{ {name} }}}}</a>'

    assert inline_css(html) == f'<a href="{{{{{name}}}}}" style="color: red;">{{{{ {name} }}}}</a>'


# --- text_of --------------------------------------------------------------------------


def test_a_course_email_reads_as_tidy_text_with_its_links_spelled_out() -> None:
    assert text_of(COURSE_EMAIL) == COURSE_EMAIL_TEXT


def test_the_text_of_the_inlined_email_is_the_same() -> None:
    assert text_of(inline_css(COURSE_EMAIL)) == COURSE_EMAIL_TEXT


def test_a_link_reads_as_its_text_then_its_url() -> None:
    html = '<p>See <a href=" https://example.com/a?b=1&amp;c=2 ">the <b>notes</b></a>.</p>'

    assert text_of(html) == "See the notes (https://example.com/a?b=1&c=2)."


def test_a_link_without_text_reads_as_its_url() -> None:
    html = '<a href="https://example.com/"><img src="logo.png" alt="Logo"></a>'

    assert text_of(html) == "https://example.com/"


def test_a_mail_link_with_other_text_keeps_its_mailto_url() -> None:
    assert text_of('<a href="mailto:help@example.com">Write to us</a>') == (
        "Write to us (mailto:help@example.com)"
    )


def test_anchors_and_links_within_the_page_read_as_their_text() -> None:
    assert text_of('<a name="top">Top</a> <a href="#top">Back up</a>') == "Top Back up"


def test_headings_paragraphs_numbered_lists_and_line_breaks_stay_apart() -> None:
    html = "<h2>Plan</h2><p>Line one<br>line two</p><ol><li>First</li><li>Second</li></ol>"

    assert text_of(html) == "Plan\n\nLine one\nline two\n\n 1. First\n 2. Second"


def test_layout_tables_read_as_lines_not_as_a_grid() -> None:
    html = (
        '<table width="600"><tr><td align="center"><p>Lesson 2 is out.</p></td></tr>'
        "<tr><td>Week 2</td><td>Functions</td></tr></table>"
    )

    assert text_of(html) == "Lesson 2 is out.\n\nWeek 2 Functions"


def test_placeholders_are_kept_as_written_never_escaped() -> None:
    html = "<p>Hi {{first_name}}, your code is <em>{{ access_code }}</em>.</p>"

    assert text_of(html) == "Hi {{first_name}}, your code is {{ access_code }}."


def test_entities_are_decoded() -> None:
    html = "<p>Q&amp;A &lt;live&gt; &eacute;t&eacute; &#8212;&nbsp;today&nbsp;</p>"

    assert text_of(html) == "Q&A <live> été — today"


def test_head_style_and_script_are_left_out() -> None:
    html = (
        "<html><head><title>Subject</title><style>p { color: red }</style></head>"
        "<body><script>var x = 1;</script><p>Body</p></body></html>"
    )

    assert text_of(html) == "Body"


def test_blank_lines_never_pile_up_and_lines_have_no_trailing_spaces() -> None:
    html = "<p>One   </p><p></p><div><p> </p></div><br><br><br><p>Two&nbsp;</p>"

    assert text_of(html) == "One\n\nTwo"


@pytest.mark.parametrize("html", ["", "   ", "\n\t\n", "<!-- nothing -->", "<p> </p>"])
def test_empty_html_has_empty_text(html: str) -> None:
    assert text_of(html) == ""


@given(NAMES)
def test_any_placeholder_name_survives_in_text_and_in_links(name: str) -> None:
    html = f'<p>{{{{{name}}}}} <a href="{{{{{name}}}}}">link</a></p>'

    assert text_of(html) == f"{{{{{name}}}}} link ({{{{{name}}}}})"
