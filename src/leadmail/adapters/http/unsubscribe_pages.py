"""GET and POST /u/{token}: the one-click unsubscribe pages (RFC 8058), for people and
their mail clients, not API clients.

No API key (the signed token is the gate) and no query check; left out of the OpenAPI
document. GET only shows a page with a form that POSTs back: mail scanners follow links,
and a GET must never unsubscribe anyone. POST (a mail client's one click, body
``List-Unsubscribe=One-Click``, or that form) puts the token's address on its account's
suppression list; the body is not required, the token alone says who. A token this
installation did not sign: 400 and a page saying so.
"""

from __future__ import annotations

import structlog
from litestar import Response, get, post
from litestar.enums import MediaType
from litestar.handlers import HTTPRouteHandler
from litestar.params import FromPath
from markupsafe import Markup, escape

from leadmail.domain.suppressions import is_digest
from leadmail.domain.unsubscribe import ONE_CLICK, PATH_PREFIX, UnsubscribeTokenInvalid
from leadmail.services.unsubscribes import Unsubscribes

UNSUBSCRIBE = PATH_PREFIX  # no API key, no query check: the signed token instead
log = structlog.get_logger("leadmail.unsubscribe")
# The token is in the URL: no page is cached, framed, or tells another site where it was.
_HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
}
_FIELD, _, _VALUE = ONE_CLICK.partition("=")


def _page(status: int, title: str, body: Markup) -> Response[str]:
    html = Markup(
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>{title}</title><style>body{{font-family:sans-serif;max-width:32rem;"
        "margin:4rem auto;padding:0 1rem;line-height:1.5}}</style></head>"
        "<body><h1>{title}</h1>{body}</body></html>"
    ).format(title=title, body=body)
    return Response(str(html), status_code=status, media_type=MediaType.HTML, headers=_HEADERS)


def _not_valid() -> Response[str]:
    return _page(
        400,
        "This link is not valid",
        Markup(
            "<p>This unsubscribe link is not one we made, or it was changed on the way."
            " Use the link in the email you received, as it is.</p>"
        ),
    )


def unsubscribe_routes(links: Unsubscribes) -> list[HTTPRouteHandler]:
    @get(f"{UNSUBSCRIBE}{{token:str}}", include_in_schema=False, name="unsubscribe page")
    async def confirm(token: FromPath[str]) -> Response[str]:
        try:
            target = await links.target(token)
        except UnsubscribeTokenInvalid:
            return _not_valid()
        form = Markup(
            "<p>Stop emails to <strong>{address}</strong> from this sender?</p>"
            '<form method="post"><input type="hidden" name="{field}" value="{value}">'
            '<button type="submit">Unsubscribe</button></form>'
        ).format(address=escape(target.address), field=_FIELD, value=_VALUE)
        return _page(200, "Unsubscribe", form)

    @post(
        f"{UNSUBSCRIBE}{{token:str}}",
        status_code=200,
        include_in_schema=False,
        name="unsubscribe",
    )
    async def unsubscribe(token: FromPath[str]) -> Response[str]:
        try:
            entry = await links.unsubscribe(token)
        except UnsubscribeTokenInvalid:
            return _not_valid()
        # The account only: the address is personal data.
        log.info("unsubscribed", account_id=entry.account_id, reason=str(entry.reason))
        # (An entry erased since holds a digest, not the address: not shown.)
        shown = "This address" if is_digest(entry.email) else entry.email
        done = Markup(
            "<p><strong>{address}</strong> will get no more emails from this sender."
            " If that was a mistake, ask the sender to add you back.</p>"
        ).format(address=escape(shown))
        return _page(200, "You are unsubscribed", done)

    return [confirm, unsubscribe]
