"""The example records and `thousand replay` as a command: output and exit status (replay-format.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from core.record import replay_text

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "tests" / "data" / "examples"
RECORDS = sorted(p for p in EXAMPLES.glob("*.json") if not p.name.endswith(".expected.json"))


def _without_error_text(report: dict[str, Any]) -> dict[str, Any]:
    """README: "Everything must match except the error's `code` and `message` strings"."""
    out = json.loads(json.dumps(report))
    if "error" in out:
        out["error"].pop("code", None)
        out["error"].pop("message", None)
    return out


def expected_of(path: Path) -> dict[str, Any]:
    return json.loads(
        path.with_name(path.name.replace(".json", ".expected.json")).read_text(encoding="utf-8")
    )


def run_replay(path: Path | str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from adapters.cli import main; main()", "replay", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )


def test_there_are_examples_for_every_preset() -> None:
    """tests/data/examples/README.md: "Each `NAME.json` is a game record; `NAME.expected.json` is what
    `thousand replay NAME.json` must print." """
    assert len(RECORDS) >= 8
    for preset in ("polish", "estonian", "russian"):
        assert any(p.name.startswith(preset) for p in RECORDS)


@pytest.mark.parametrize("path", RECORDS, ids=[p.stem for p in RECORDS])
def test_example_replays_to_its_expected_output(path: Path) -> None:
    """tests/data/examples/README.md: "Everything must match except the error's `code` and `message` strings,
    which are free (the deal and action indexes must match)." """
    report = replay_text(path.read_text(encoding="utf-8"))
    assert _without_error_text(report) == _without_error_text(expected_of(path))


def test_replay_command_exit_0_and_1_with_json_on_stdout() -> None:
    """replay-format.md: "Printed on standard output as one JSON object. Exit status 0 when every action was
    legal, 1 when one was not"."""
    for path in RECORDS:
        done = run_replay(path)
        expected = expected_of(path)
        assert done.returncode == (0 if expected["ok"] else 1), (path.name, done.stderr)
        assert _without_error_text(json.loads(done.stdout)) == _without_error_text(expected)
        if "illegal" in path.name:
            assert done.returncode == 1


def test_replay_command_exit_1_for_a_deal_that_is_not_one_deck(tmp_path: Path) -> None:
    """docs/RULES.md: "a deal whose hands/talon are not one deck (duplicates, wrong counts) is reported with
    `ok:false, action:null`, exit 1"."""
    data = json.loads((EXAMPLES / "polish-3p-s101-g000.json").read_text(encoding="utf-8"))
    data["deals"][1]["hands"][0][0] = data["deals"][1]["hands"][1][0]
    path = tmp_path / "dup.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    done = run_replay(path)
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["ok"] is False and report["error"]["deal"] == 1 and report["error"]["action"] is None
    assert len(report["deals"]) == 1


def _good() -> dict[str, Any]:
    return json.loads((EXAMPLES / "russian-3p-s101-g000.json").read_text(encoding="utf-8"))


def _with(change: Any) -> str:
    data = _good()
    change(data)
    return json.dumps(data)


BAD_FILES: list[tuple[str, str]] = [
    ("bad JSON", '{"format": "thousand-record/1", "rules": '),
    ("not an object", "[1, 2, 3]"),
    ("unknown preset", _with(lambda d: d["rules"].__setitem__("preset", "bridge"))),
    ("unknown option", _with(lambda d: d["rules"].__setitem__("options", {"jokers": 2}))),
    ("bad player count", _with(lambda d: d.__setitem__("players", ["a", "b"]))),
    ("unknown action", _with(lambda d: d["deals"][0]["actions"][0].__setitem__("action", "redouble"))),
    ("bad card token", _with(lambda d: d["deals"][0]["hands"][0].__setitem__(0, "11H"))),
    ("missing field", _with(lambda d: d["deals"][0].pop("talon"))),
    ("missing action field", _with(lambda d: d["deals"][0]["actions"][0].pop("seat"))),
]


@pytest.mark.parametrize(("why", "text"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_replay_command_exit_2_for_a_file_that_is_not_a_record(why: str, text: str, tmp_path: Path) -> None:
    """replay-format.md: "2 when the file could not be read as a record (with a message on standard error)";
    "Exit status 2 (and nothing on standard output)"."""
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    done = run_replay(path)
    assert done.returncode == 2, (why, done.stdout, done.stderr)
    assert done.stdout == ""
    message = done.stderr.strip()
    assert message and "Traceback" not in message
    assert "bad.json" in message


def test_replay_command_exit_2_for_a_missing_file(tmp_path: Path) -> None:
    """replay-format.md: "2 when the file could not be read as a record"."""
    done = run_replay(tmp_path / "nope.json")
    assert done.returncode == 2 and done.stdout == "" and done.stderr.strip()
