"""The web table's aiohttp application: the page, its API and live updates (the contract: docs/WEB.md).

`make_app(web)` builds an `Application` around a `WebContext` (the service, the store, signing keys,
the adapter's delivery); it runs alone (`thousand web`, `thousand play --web`) or as a sub-application of
the Telegram webhook server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from aiohttp import web

from adapters.web.security import security_headers

__all__ = ["STATIC_DIR", "make_static_app"]

STATIC_DIR: Final = Path(__file__).parent / "static"
STATIC_KEY: Final = web.AppKey("static_dir", Path)


async def _index(request: web.Request) -> web.StreamResponse:
    static = request.app[STATIC_KEY]
    page = static / "index.html"
    if not page.is_file():
        raise web.HTTPNotFound(text="the table page is not built")
    return web.FileResponse(page, headers={"Cache-Control": "no-cache"})


def add_static_routes(app: web.Application, static_dir: Path = STATIC_DIR) -> None:
    """`GET /` (the page) and `/static/<name>` (its scripts, styles and pictures)."""
    app[STATIC_KEY] = static_dir
    app.router.add_get("/", _index)
    if static_dir.is_dir():
        app.router.add_static("/static/", static_dir, append_version=False)


def make_static_app(static_dir: Path = STATIC_DIR) -> web.Application:
    """The page alone (for building the page against, before the API answers)."""
    app = web.Application(middlewares=[security_headers], client_max_size=8 * 1024)
    add_static_routes(app, static_dir)
    return app
