"""bench/web.py runs end to end (a server child process, open pages, moves from this process) and its
JSON says every page got every move."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_web_small_run(redis_url: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "web.py"),
            "--pages",
            "12",
            "--moves",
            "4",
            "--redis-url",
            redis_url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=True,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["pages"] == 12 and result["missed"] == 0
    assert result["samples"] >= 12 * 3
    assert 0 < result["p50_ms"] <= result["p99_ms"] < 2000
    assert "pages open: 12/12" in out.stderr
