"""The pages under /schema work offline and without an API key: the UI page references only
its own origin and the app serves every file it needs; the document is also YAML."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any
from urllib.parse import urlsplit

import yaml

from leadmail.adapters.http.docs import SWAGGER_UI_VERSION
from tests.api.support import Api

PAGE = "/schema"
# What each kind of asset must be served as.
CONTENT_TYPES = {
    ".js": ("text/javascript", "application/javascript"),
    ".css": ("text/css",),
    ".png": ("image/png",),
}


class _Links(HTMLParser):
    """Every ``src`` and ``href`` of a page, with the tag that carries it."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.links += [(tag, value) for name, value in attrs if name in ("src", "href") and value]


def links_of(html: str) -> list[tuple[str, str]]:
    parser = _Links()
    parser.feed(html)
    parser.close()
    return parser.links


def same_origin(url: str) -> bool:
    """Relative or rooted at "/": no scheme, no host (so not "//host/..." either)."""
    parts = urlsplit(url)
    return not parts.scheme and not parts.netloc and not url.startswith("//")


async def page(api: Api) -> tuple[str, list[tuple[str, str]]]:
    assert "authorization" not in api.client.headers
    response = await api.client.get(PAGE)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/html")
    return response.text, links_of(response.text)


async def test_the_schema_page_references_only_its_own_origin(api: Api) -> None:
    _, links = await page(api)

    assert [url for _, url in links if not same_origin(url)] == []
    tags = {tag for tag, _ in links}
    assert {"script", "link"} <= tags, links


async def test_every_asset_the_page_references_is_served_without_a_key(api: Api) -> None:
    _, links = await page(api)
    urls = [url for _, url in links]
    assert {url.rsplit(".", 1)[-1] for url in urls} >= {"js", "css"}, urls

    for url in urls:
        response = await api.client.get(url)

        assert response.status_code == 200, url
        suffix = "." + url.rsplit(".", 1)[-1]
        assert response.headers["content-type"].startswith(CONTENT_TYPES[suffix]), url
        assert response.content, url


async def test_the_page_serves_the_pinned_swagger_ui(api: Api) -> None:
    html, links = await page(api)
    bundle = next(url for tag, url in links if tag == "script" and "swagger-ui-bundle" in url)

    assert "SwaggerUIBundle(" in html
    assert SWAGGER_UI_VERSION in bundle
    served = (await api.client.get(bundle)).text
    assert f'PACKAGE_VERSION:"{SWAGGER_UI_VERSION}"' in served


async def test_the_document_is_served_as_yaml_without_a_key(api: Api, spec: dict[str, Any]) -> None:
    assert "authorization" not in api.client.headers
    response = await api.client.get(PAGE + "/openapi.yaml")

    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/vnd.oai.openapi")
    assert yaml.safe_load(response.text) == spec


async def test_an_unknown_asset_is_404(api: Api) -> None:
    response = await api.client.get(f"{PAGE}/assets/swagger-ui-{SWAGGER_UI_VERSION}/nope.js")

    assert response.status_code == 404
