"""The replay page's data (the record's steps with every hand open, the players, the labels) and the
self-contained page `thousand replay FILE --html OUT.html` writes: `static/replay.html` with its style
and scripts put inline and the data in a `<script type="application/json">` element, so the file opens
from disk anywhere, with nothing loaded from elsewhere.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from adapters.web.strings import ui_strings
from bot.i18n import negotiate
from core.replay_steps import steps_of_text

__all__ = ["replay_data", "replay_html"]

STATIC = Path(__file__).parent / "static"


def replay_data(record_text: str, lang: str = "en") -> dict[str, Any]:
    """What the replay page draws; raises `core.record.RecordError` for a file that is not a record."""
    record, steps = steps_of_text(record_text)
    lang = negotiate(lang) or "en"
    return {
        "format": "thousand-replay/1",
        "lang": lang,
        "preset": record.rules.preset,
        "players": list(record.players),
        "strings": ui_strings(lang),
        "steps": steps,
    }


def _script_json(data: dict[str, Any]) -> str:
    # Inside <script> only "</" could end the element early; JSON allows "<\/" for it.
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")


def replay_html(record_text: str, lang: str = "en") -> str:
    """One page holding everything: the template, app.css, cards.js, replay.js and the steps."""
    page = (STATIC / "replay.html").read_text(encoding="utf-8")
    css = (STATIC / "app.css").read_text(encoding="utf-8")
    page = page.replace('<link rel="stylesheet" href="/static/app.css">', f"<style>\n{css}</style>")

    def inline(match: re.Match[str]) -> str:
        source = (STATIC / match.group(1)).read_text(encoding="utf-8").replace("</script", "<\\/script")
        return f"<script>\n{source}</script>"

    data = _script_json(replay_data(record_text, lang))
    page = page.replace(
        "</head>", f'<script type="application/json" id="replay-data">{data}</script>\n</head>'
    )
    # Scripts inline run at once: the page's load handler still waits for DOMContentLoaded.
    return re.sub(r'<script src="/static/([a-z]+\.js)" defer></script>', inline, page)
