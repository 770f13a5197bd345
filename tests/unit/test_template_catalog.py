"""FileTemplateCatalog: the catalog shipped with leadmail and catalogs in a directory."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import pytest

from leadmail.adapters.catalog.files import FileTemplateCatalog
from leadmail.domain.templates import InvalidTemplate, Template, TemplateSource
from tests.support.catalog import PACKAGED_TEMPLATE_IDS

CREATED = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)
PACKAGED = FileTemplateCatalog(None).load()
VOID_ELEMENTS = {"br", "meta", "img", "hr", "input", "link"}


def as_template(source: TemplateSource) -> Template:
    return Template(source.template_id, source.name, source.subject, source.body, CREATED)


def template_file(template_id: str, *, subject: str = "Hi {{first_name}}") -> str:
    return (
        f"---\nid: {template_id}\nname: {template_id.title()}\nsubject: {subject}\n---\n<p>x</p>\n"
    )


def by_id(template_id: str) -> Template:
    return next(as_template(s) for s in PACKAGED if s.template_id == template_id)


class TagBalance(HTMLParser):
    """Records elements that are closed without being open, or left open."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID_ELEMENTS:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.open[-1:] or 'nothing'}")
        else:
            self.open.pop()


# --- the packaged catalog -----------------------------------------------------------


def test_the_packaged_catalog_has_the_course_templates_with_unique_ids() -> None:
    ids = [s.template_id for s in PACKAGED]

    assert len(ids) >= 5
    assert len(set(ids)) == len(ids)
    assert set(ids) == PACKAGED_TEMPLATE_IDS


def test_the_packaged_catalog_is_in_file_name_order() -> None:
    # Every packaged file is named after its id.
    ids = [s.template_id for s in PACKAGED]

    assert ids == sorted(ids)


@pytest.mark.parametrize("source", PACKAGED, ids=lambda s: s.template_id)
def test_each_packaged_template_renders_with_all_its_variables(source: TemplateSource) -> None:
    template = as_template(source)
    values = {name: f"[{name} value]" for name in template.variables}

    rendered = template.render(values)

    assert "{{" not in rendered.subject
    assert "}}" not in rendered.subject
    assert "{{" not in rendered.html
    assert "}}" not in rendered.html
    for name, value in values.items():
        assert value in rendered.subject or value in rendered.html, name


@pytest.mark.parametrize("source", PACKAGED, ids=lambda s: s.template_id)
def test_each_packaged_template_is_self_contained_email_html(source: TemplateSource) -> None:
    body = source.body.lower()

    assert body.lstrip().startswith("<!doctype html>")
    assert '<meta name="viewport"' in body
    assert 'role="presentation"' in body
    assert "max-width:600px" in body
    assert "display:none" in body, "a hidden preheader"
    for banned in ("<script", "<img", "<link", "<style", "<iframe", "<form", "url("):
        assert banned not in body, banned
    assert "http://" not in body
    assert "https://" not in body


@pytest.mark.parametrize("source", PACKAGED, ids=lambda s: s.template_id)
def test_every_link_of_a_packaged_template_is_a_variable(source: TemplateSource) -> None:
    hrefs = re.findall(r'href="([^"]*)"', source.body)

    assert hrefs
    for href in hrefs:
        assert re.fullmatch(r"(mailto:)?\{\{[a-z_]+\}\}", href), href


@pytest.mark.parametrize("source", PACKAGED, ids=lambda s: s.template_id)
def test_each_packaged_template_has_balanced_tags(source: TemplateSource) -> None:
    checker = TagBalance()
    checker.feed(source.body)
    checker.close()

    assert checker.problems == []
    assert checker.open == []


@pytest.mark.parametrize("source", PACKAGED, ids=lambda s: s.template_id)
def test_each_packaged_template_greets_the_student_and_names_the_school(
    source: TemplateSource,
) -> None:
    variables = as_template(source).variables

    assert {"first_name", "school_name", "contact_email"} <= set(variables)


def test_the_enrolment_confirmation_says_which_course() -> None:
    rendered = by_id("enrolment-confirmation").render(
        {
            "first_name": "Ada",
            "course_name": "Pottery for Beginners",
            "start_date": "Monday 2 March",
            "school_name": "Clay & Co",
            "course_link": "https://school.example/c/1?a=1&b=2",
            "contact_email": "hello@school.example",
        }
    )

    assert rendered.subject == "You're enrolled in Pottery for Beginners"
    assert "Clay &amp; Co" in rendered.html
    assert 'href="https://school.example/c/1?a=1&amp;b=2"' in rendered.html
    assert 'href="mailto:hello@school.example"' in rendered.html


def test_the_payment_reminder_shows_amount_date_and_link() -> None:
    template = by_id("payment-reminder")

    assert {"amount_due", "due_date", "payment_link", "course_name"} <= set(template.variables)
    rendered = template.render({name: f"<{name}>" for name in template.variables})
    assert 'href="&lt;payment_link&gt;"' in rendered.html
    assert rendered.subject == (
        "Payment reminder: <amount_due> for <course_name> is due on <due_date>"
    )


def test_the_packaged_catalog_reads_the_same_twice() -> None:
    assert FileTemplateCatalog(None).load() == FileTemplateCatalog().load() == PACKAGED


# --- a catalog in a directory -------------------------------------------------------


def test_a_directory_catalog_loads_html_files_in_name_order(tmp_path: Path) -> None:
    (tmp_path / "b.html").write_text(template_file("beta"), encoding="utf-8")
    (tmp_path / "a.html").write_text(template_file("alpha"), encoding="utf-8")
    (tmp_path / "c.html").write_text(template_file("gamma"), encoding="utf-8")

    sources = FileTemplateCatalog(tmp_path).load()

    assert [s.template_id for s in sources] == ["alpha", "beta", "gamma"]
    assert sources[0] == TemplateSource("alpha", "Alpha", "Hi {{first_name}}", "<p>x</p>\n")


def test_files_that_are_not_html_are_ignored(tmp_path: Path) -> None:
    (tmp_path / "a.html").write_text(template_file("alpha"), encoding="utf-8")
    (tmp_path / "README.md").write_text("not a template", encoding="utf-8")
    (tmp_path / "a.html.bak").write_text("---\nbroken", encoding="utf-8")
    (tmp_path / "sub.html").mkdir()

    assert [s.template_id for s in FileTemplateCatalog(tmp_path).load()] == ["alpha"]


def test_every_load_reads_the_files_again(tmp_path: Path) -> None:
    catalog = FileTemplateCatalog(tmp_path)
    (tmp_path / "a.html").write_text(template_file("alpha"), encoding="utf-8")
    assert [s.subject for s in catalog.load()] == ["Hi {{first_name}}"]

    (tmp_path / "a.html").write_text(template_file("alpha", subject="Hello"), encoding="utf-8")
    (tmp_path / "b.html").write_text(template_file("beta"), encoding="utf-8")

    assert [(s.template_id, s.subject) for s in catalog.load()] == [
        ("alpha", "Hello"),
        ("beta", "Hi {{first_name}}"),
    ]


def test_a_duplicate_id_is_refused_naming_both_files(tmp_path: Path) -> None:
    (tmp_path / "welcome.html").write_text(template_file("welcome"), encoding="utf-8")
    (tmp_path / "welcome-copy.html").write_text(template_file("welcome"), encoding="utf-8")

    with pytest.raises(InvalidTemplate) as caught:
        FileTemplateCatalog(tmp_path).load()

    message = str(caught.value)
    assert "welcome.html" in message
    assert "welcome-copy.html" in message
    assert "'welcome'" in message


def test_a_broken_file_is_refused_with_its_file_name(tmp_path: Path) -> None:
    (tmp_path / "a.html").write_text(template_file("alpha"), encoding="utf-8")
    (tmp_path / "broken.html").write_text(
        template_file("broken").replace("<p>x</p>", "<p>{{ first name }}</p>"), encoding="utf-8"
    )

    with pytest.raises(InvalidTemplate) as caught:
        FileTemplateCatalog(tmp_path).load()

    # The file by its path, and the line: an operator's folder, opened in an editor.
    assert str(caught.value).startswith(f"{tmp_path / 'broken.html'}:6: the body has a ")
    assert "malformed placeholder" in str(caught.value)


def test_a_file_that_is_not_utf8_is_refused_with_its_file_name(tmp_path: Path) -> None:
    (tmp_path / "latin1.html").write_bytes(template_file("caf\xe9").encode("latin-1"))

    with pytest.raises(InvalidTemplate, match=r"^/.*/latin1\.html: .*UTF-8"):
        FileTemplateCatalog(tmp_path).load()


def test_an_empty_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("no templates here", encoding="utf-8")

    with pytest.raises(InvalidTemplate, match=r"has no \.html files") as caught:
        FileTemplateCatalog(tmp_path).load()

    assert str(tmp_path) in str(caught.value)


def test_a_missing_directory_is_refused(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"

    with pytest.raises(InvalidTemplate, match="does not exist") as caught:
        FileTemplateCatalog(missing).load()

    assert str(missing) in str(caught.value)


def test_a_file_given_as_the_directory_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.html"
    path.write_text(template_file("alpha"), encoding="utf-8")

    with pytest.raises(InvalidTemplate, match="not a folder"):
        FileTemplateCatalog(path).load()


def test_a_copy_of_the_packaged_catalog_loads_the_same(tmp_path: Path) -> None:
    # What an operator does to customise the templates: copy them and edit the copies.
    import leadmail.templates

    packaged = Path(leadmail.templates.__file__).parent
    for path in packaged.glob("*.html"):
        (tmp_path / path.name).write_bytes(path.read_bytes())

    assert FileTemplateCatalog(tmp_path).load() == PACKAGED
