"""In-process transport: a `telegram.request.BaseRequest` that hands requests to `FakeTelegram`.

PTB still builds URLs, JSON-encodes parameters and files exactly as for the network, and still
decodes the answer and maps status codes to its exceptions; only the socket is skipped. The client
timeout is honoured, so a hanging fake surfaces as `telegram.error.TimedOut` like on a network.
"""

from __future__ import annotations

import asyncio
import re
from urllib.parse import parse_qsl, unquote, urlsplit

from telegram._utils.defaultvalue import DefaultValue
from telegram._utils.types import ODVInput
from telegram.error import TimedOut
from telegram.request import BaseRequest, RequestData

from .fake import FakeTelegram
from .models import UploadedFile

API_PATH = re.compile(r"/bot(?P<token>[^/]+)/(?P<method>[A-Za-z0-9_]+)/?$")
FILE_PATH = re.compile(r"/file/bot(?P<token>[^/]+)/(?P<path>.+)$")


class InProcessRequest(BaseRequest):
    """Routes PTB's requests to a FakeTelegram without sockets.

    Use one instance for `.request(...)` and another for `.get_updates_request(...)`, as PTB
    expects two request objects.
    """

    def __init__(
        self,
        fake: FakeTelegram,
        *,
        read_timeout: float | None = 5.0,
    ) -> None:
        self._fake = fake
        self._read_timeout = read_timeout
        self._open = False

    @property
    def read_timeout(self) -> float | None:
        return self._read_timeout

    async def initialize(self) -> None:
        self._open = True

    async def shutdown(self) -> None:
        self._open = False

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        write_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        connect_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        pool_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        if not self._open:
            raise RuntimeError("This InProcessRequest is not initialized!")
        timeout = self._read_timeout if isinstance(read_timeout, DefaultValue) else read_timeout
        parts = urlsplit(url)
        path = unquote(parts.path)
        file_match = FILE_PATH.search(path)
        if file_match is not None:
            response = self._fake.download(file_match["token"], file_match["path"])
            return response.status, response.body
        api_match = API_PATH.search(path)
        if api_match is None:
            return 404, b'{"ok":false,"error_code":404,"description":"Not Found"}'
        params: dict[str, object] = dict(parse_qsl(parts.query))
        files: dict[str, UploadedFile] = {}
        if request_data is not None:
            params.update(request_data.json_parameters)
            for name, (filename, content, mimetype) in request_data.multipart_data.items():
                data = content if isinstance(content, bytes) else content.read()
                files[name] = UploadedFile(filename, data, mimetype)
        try:
            response = await asyncio.wait_for(
                self._fake.handle(api_match["token"], api_match["method"], params, files), timeout
            )
        except TimeoutError:
            raise TimedOut from None
        return response.status, response.body
