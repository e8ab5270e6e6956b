"""The replay page's data (the record's steps with every hand open, the players, the labels) and the
self-contained page `thousand replay FILE --html OUT.html` writes: `static/replay.html` with its style
and scripts put inline and the data in a `<script type="application/json">` element, so the file opens
from disk anywhere, with nothing loaded from elsewhere.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path
from typing import Any

from adapters.web.strings import ui_strings
from bot.i18n import negotiate
from core.ai.review import COSTLY
from core.cards import CARD_NAMES, parse_card
from core.replay_steps import steps_of_text

__all__ = ["replay_data", "replay_html"]

STATIC = Path(__file__).parent / "static"


def replay_data(
    record_text: str, lang: str = "en", marks: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """What the replay page draws; raises `core.record.RecordError` for a file that is not a record.
    `marks`: `thousand review --json`'s objects; the card plays among them costing `COSTLY` points or more
    are marked on their trick with the better card."""
    record, steps = steps_of_text(record_text)
    if marks:
        mark_costly(steps, marks)
    lang = negotiate(lang) or "en"
    return {
        "format": "thousand-replay/1",
        "lang": lang,
        "preset": record.rules.preset,
        "players": list(record.players),
        "strings": ui_strings(lang),
        "steps": steps,
    }


def mark_costly(steps: list[dict[str, Any]], marks: list[dict[str, Any]]) -> None:
    """Put `review: {cost, best}` on each trick entry of every step that shows a costly card play."""
    costly: dict[tuple[int, int, str], dict[str, Any]] = {}
    for m in marks:
        if m["phase"] != "play" or m["cost"] < COSTLY:
            continue
        chosen, best = m["chosen"].split(), m["best"].split()
        if len(chosen) < 2 or len(best) < 2:
            continue
        card = CARD_NAMES[parse_card(chosen[1])]
        costly[(m["deal"], m["seat"], card)] = {
            "cost": round(m["cost"]),
            "best": CARD_NAMES[parse_card(best[1])],
        }
    for step in steps:
        for entry in step["trick"]:
            found = costly.get((step["deal"], entry["seat"], entry["card"]))
            if found is not None:
                entry["review"] = found


def _script_json(data: dict[str, Any]) -> str:
    """JSON that cannot end or change its `<script>` element: every `<` (so no `</script>`, `<!--` or
    `<script` that would swallow the rest of the page), `>` and `&` written as JSON escapes."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode() + "'"


def replay_html(record_text: str, lang: str = "en", marks: list[dict[str, Any]] | None = None) -> str:
    """One page holding everything: the template, app.css, cards.js, replay.js and the steps, with a
    Content-Security-Policy of its own (a meta element) that lets only these scripts and this style run,
    by their hashes, and loads nothing from anywhere."""
    page = (STATIC / "replay.html").read_text(encoding="utf-8")
    css = (STATIC / "app.css").read_text(encoding="utf-8")
    style = f"\n{css}"
    page = page.replace('<link rel="stylesheet" href="/static/app.css">', f"<style>{style}</style>")
    scripts: list[str] = []

    def inline(match: re.Match[str]) -> str:
        source = (STATIC / match.group(1)).read_text(encoding="utf-8")
        if re.search(r"</script|<!--", source, re.I):
            raise ValueError(f"{match.group(1)} cannot be put inline: it holds </script or <!--")
        body = f"\n{source}"
        scripts.append(body)
        return f"<script>{body}</script>"

    data = _script_json(replay_data(record_text, lang, marks))
    page = page.replace(
        "</head>", f'<script type="application/json" id="replay-data">{data}</script>\n</head>'
    )
    # Scripts inline run at once: the page's load handler still waits for DOMContentLoaded.
    page = re.sub(r'<script src="/static/([a-z]+\.js)" defer></script>', inline, page)
    policy = (
        "default-src 'none'; "
        f"script-src {' '.join(_hash(s) for s in scripts)}; "
        f"style-src {_hash(style)}; img-src data:; base-uri 'none'; form-action 'none'"
    )
    meta = f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
    return page.replace('<meta charset="utf-8">', f'<meta charset="utf-8">\n{meta}', 1)
