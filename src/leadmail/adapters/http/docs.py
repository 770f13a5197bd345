"""The pages under /schema: Swagger UI served by the app itself, and the document as YAML.

Litestar's render plugins load their UI from a CDN by default (and link a favicon on
another host): a blank page offline, and whatever version the CDN serves. Here the UI's
files come from the ``openapi-ui-bundles`` package (pinned in pyproject.toml), served
under ``<schema path>/assets/swagger-ui-<version>/``, so the page references only its own
origin. The versioned path lets browsers cache the files until the version changes.
"""

from __future__ import annotations

from typing import Any

from litestar import Router
from litestar.datastructures import CacheControlHeader
from litestar.openapi.plugins import OpenAPIRenderPlugin, SwaggerRenderPlugin, YamlRenderPlugin
from litestar.static_files import create_static_files_router
from openapi_ui_bundles import swagger_ui

# The Swagger UI release bundled in openapi-ui-bundles 0.3.0 (its swagger-ui-bundle.js
# says so; a test holds this to the served file).
SWAGGER_UI_VERSION = "5.17.14"
ASSETS = f"/assets/swagger-ui-{SWAGGER_UI_VERSION}"
ONE_DAY = 24 * 60 * 60


class OfflineSwaggerRenderPlugin(SwaggerRenderPlugin):
    """Swagger UI whose JavaScript, stylesheet and favicon the schema router serves."""

    def __init__(self, schema_path: str, **kwargs: Any) -> None:
        assets = schema_path.rstrip("/") + ASSETS
        super().__init__(
            version=SWAGGER_UI_VERSION,
            js_url=f"{assets}/swagger-ui-bundle.js",
            css_url=f"{assets}/swagger-ui.css",
            standalone_preset_js_url=f"{assets}/swagger-ui-standalone-preset.js",
            favicon=f"<link rel='icon' type='image/png' href='{assets}/favicon-32x32.png'>",
            **kwargs,
        )

    def receive_router(self, router: Router) -> None:
        super().receive_router(router)
        router.register(
            create_static_files_router(
                path=ASSETS,
                directories=[swagger_ui.static_path],
                name="swagger-ui-assets",
                cache_control=CacheControlHeader(max_age=ONE_DAY, public=True),
            )
        )


def docs_plugins(schema_path: str) -> list[OpenAPIRenderPlugin]:
    """The render plugins of the OpenAPI router at ``schema_path``: Swagger UI first (the
    page at ``schema_path`` itself), then ``openapi.yaml``/``openapi.yml``. Litestar adds
    ``openapi.json``."""
    return [OfflineSwaggerRenderPlugin(schema_path), YamlRenderPlugin()]
