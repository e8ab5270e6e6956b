"""Reading method parameters the way the Bot API does, whatever encoding the client chose.

Parameters arrive as JSON values (application/json) or as strings (query string, urlencoded or
multipart forms, where objects are JSON-encoded strings); the Bot API accepts both, so must we.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .errors import ApiError
from .models import UploadedFile


class Params:
    def __init__(self, raw: Mapping[str, object], files: Mapping[str, UploadedFile] | None = None) -> None:
        self.raw = dict(raw)
        self.files = dict(files or {})

    def has(self, name: str) -> bool:
        return self.raw.get(name) not in (None, "")

    def text(self, name: str) -> str | None:
        value = self.raw.get(name)
        if value is None:
            return None
        if isinstance(value, str):
            return value
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int | float):
            return str(value)
        return json.dumps(value)

    def integer(self, name: str, *, error: str | None = None) -> int | None:
        value = self.raw.get(name)
        if value is None or value == "":
            return None
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                pass
        raise ApiError.bad_request(error or f'field "{name}" must be of type Integer')

    def flag(self, name: str) -> bool:
        value = self.raw.get(name)
        if isinstance(value, str):
            return value.strip().lower() in ("true", "1")
        return bool(value)

    def json(self, name: str, *, error: str) -> Any:
        value = self.raw.get(name)
        if value is None or value == "":
            return None
        if isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError:
                raise ApiError.bad_request(error) from None
        return value

    def upload(self, name: str) -> UploadedFile | str | None:
        """A file parameter: an uploaded part, or a string (file_id, URL, attach://<part>)."""
        if name in self.files:
            return self.files[name]
        value = self.text(name)
        if value and value.startswith("attach://"):
            part = self.files.get(value.removeprefix("attach://"))
            if part is None:
                raise ApiError.bad_request(f'can\'t find attached file "{value}"')
            return part
        return value or None
