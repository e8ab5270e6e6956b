"""`thousand replay FILE --html OUT.html`: one self-contained page with the record's steps embedded."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "data" / "examples"
GAMES = sorted(p for p in EXAMPLES.glob("*.json") if not p.name.endswith(".expected.json"))


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from adapters.cli import main; main()", "replay", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def embedded(page: str) -> dict[str, object]:
    match = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', page, re.S)
    assert match is not None
    data: dict[str, object] = json.loads(match.group(1))
    return data


@pytest.mark.parametrize("game", GAMES, ids=[p.stem for p in GAMES])
def test_every_example_record_becomes_one_page(game: Path, tmp_path: Path) -> None:
    out = tmp_path / "replay.html"
    done = run(str(game), "--html", str(out), "--lang", "pl")
    expected = json.loads(game.with_name(game.stem + ".expected.json").read_text())
    assert done.returncode == (0 if expected["ok"] else 1), done.stderr
    page = out.read_text(encoding="utf-8")
    # Self-contained: no file or address to load, the scripts and style inline.
    assert not re.search(r'\b(?:src|href)="(?!data:)', page)
    assert "function face(" in page and "function nextTrick(" in page and "<style>" in page
    data = embedded(page)
    record = json.loads(game.read_text())
    steps = data["steps"]
    assert isinstance(steps, list) and data["players"] == record["players"]
    assert data["strings"]["pass"] == "Pas"  # type: ignore[index]
    # One step for each deal as dealt and one for each action, every hand open in each step.
    legal = sum(len(d["actions"]) for d in record["deals"]) + len(record["deals"])
    if expected["ok"]:
        assert len(steps) == legal
    else:
        assert len(steps) < legal
    dealt = steps[0]["hands"]
    assert [len(h) for h in dealt] == [len(h) for h in record["deals"][0]["hands"]]
    finished = [s["result"] for s in steps if s["result"]]
    totals = [r["totals"] for r in finished]
    wanted = [d["totals"] for d in expected["deals"] if d.get("complete")]
    # An illegal action stops the steps there; the deals before it are all shown.
    assert totals == wanted if expected["ok"] else totals[: len(wanted)] == wanted


def test_a_file_that_is_not_a_record_writes_no_page(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}')
    out = tmp_path / "out.html"
    done = run(str(bad), "--html", str(out))
    assert done.returncode == 2 and "not a game record" in done.stderr
    assert not out.exists()


def test_names_like_markup_stay_inside_the_data_and_only_the_pages_scripts_may_run() -> None:
    """No `<` in the embedded JSON (a name holding `<!--<script>` would swallow the page), and the page's
    meta Content-Security-Policy names exactly its inline scripts and style by their hashes."""
    import base64
    import hashlib

    from adapters.web.replay_page import replay_html

    game = next(p for p in GAMES if json.loads(p.with_name(p.stem + ".expected.json").read_text())["ok"])
    record = json.loads(game.read_text())
    names = ["A<!--<script>", "</script><b>&amp;", "Zoë \u2028 >"][: len(record["players"])]
    record["players"] = names
    page = replay_html(json.dumps(record), "en")
    raw = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', page, re.S)
    assert raw is not None and "<" not in raw.group(1) and ">" not in raw.group(1) and "&" not in raw.group(1)
    assert embedded(page)["players"] == names
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', page)
    assert policy is not None and page.index(policy.group(0)) < page.index("<script")
    directives = {d.split()[0]: d.split()[1:] for d in policy.group(1).split(";") if d.strip()}

    def digest(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    styles = re.findall(r"<style>(.*?)</style>", page, re.S)
    assert len(scripts) == 3 and len(styles) == 1
    assert directives["script-src"] == [digest(s) for s in scripts]
    assert directives["style-src"] == [digest(s) for s in styles]
    assert directives["default-src"] == ["'none'"] and "'unsafe-inline'" not in policy.group(1)
