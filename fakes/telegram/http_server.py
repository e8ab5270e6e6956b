"""Loopback HTTP transport: an aiohttp server speaking the Bot API's URL scheme.

`/bot<token>/<method>` accepts GET or POST with query string, JSON, urlencoded or multipart bodies
(as the real server does), and `/file/bot<token>/<file_path>` serves downloads, so an unmodified
PTB (`.base_url(server.base_url)`) or any other client can talk to the fake over a socket.
"""

from __future__ import annotations

import json

from aiohttp import web

from .fake import ApiResponse, FakeTelegram
from .models import UploadedFile

_MAX_BODY = 60 * 1024 * 1024


class FakeTelegramServer:
    """Serves a FakeTelegram on 127.0.0.1 (a free port unless one is given)."""

    def __init__(self, fake: FakeTelegram, *, port: int = 0) -> None:
        self.fake = fake
        self._requested_port = port
        self._runner: web.AppRunner | None = None
        self._port: int | None = None

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("the server is not started")
        return self._port

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """For `ApplicationBuilder.base_url`: PTB appends the token."""
        return f"{self.root_url}/bot"

    @property
    def base_file_url(self) -> str:
        """For `ApplicationBuilder.base_file_url`."""
        return f"{self.root_url}/file/bot"

    async def start(self) -> None:
        app = web.Application(client_max_size=_MAX_BODY)
        app.router.add_route("*", "/bot{token}/{method}", self._api)
        app.router.add_get("/file/bot{token}/{path:.+}", self._file)
        runner = web.AppRunner(app, handler_cancellation=True, shutdown_timeout=1.0, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", self._requested_port)
        await site.start()
        self._runner = runner
        self._port = int(runner.addresses[0][1])

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeTelegramServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @staticmethod
    def _reply(response: ApiResponse) -> web.Response:
        return web.Response(status=response.status, body=response.body, content_type=response.content_type)

    async def _api(self, request: web.Request) -> web.Response:
        params: dict[str, object] = dict(request.query)
        files: dict[str, UploadedFile] = {}
        if request.method == "POST" and request.can_read_body:
            if request.content_type == "application/json":
                try:
                    body = await request.json()
                except ValueError:
                    body = None
                if not isinstance(body, dict):
                    error = {"ok": False, "error_code": 400, "description": "Bad Request: can't parse JSON"}
                    return web.Response(status=400, text=json.dumps(error), content_type="application/json")
                params.update(body)
            elif request.content_type in ("multipart/form-data", "application/x-www-form-urlencoded"):
                form = await request.post()
                for name, value in form.items():
                    if isinstance(value, web.FileField):
                        files[name] = UploadedFile(value.filename, value.file.read(), value.content_type)
                    else:
                        params[name] = value
        response = await self.fake.handle(
            request.match_info["token"], request.match_info["method"], params, files
        )
        return self._reply(response)

    async def _file(self, request: web.Request) -> web.Response:
        return self._reply(self.fake.download(request.match_info["token"], request.match_info["path"]))
