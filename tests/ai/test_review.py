"""The review of a deal (`core.ai.review`): a known blunder is reported with its cost, the JSON's shape,
the same review for the same seed, and `thousand review`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from reviewkit import blunder_deal

from bot.review_job import decisions_json, review_text_json
from core.actions import Play
from core.ai.review import Limits, review_deal
from core.deal import Phase
from core.record import build_record

ROOT = Path(__file__).resolve().parents[2]
SMALL = Limits(samples=6, early_samples=2, nodes=300_000)


def test_a_card_that_loses_the_contract_is_reported_with_its_cost() -> None:
    start, actions, step, _ = blunder_deal()
    seat = actions[step][0]
    review = review_deal(start, actions, seat, steps={step}, seed=0)
    assert [d.step for d in review.decisions] == [step]
    d = review.decisions[0]
    assert d.chosen == actions[step][1] and d.phase == Phase.PLAY
    assert d.contract_lost, "open hands make the contract with another card"
    assert d.best != d.chosen and d.cost >= 10
    chosen = d.option(d.chosen)
    best_open = max(o.open_hands or 0 for o in d.options)
    assert chosen.open_hands is not None and chosen.open_hands < review.contract <= best_open
    assert review.makeable is not None  # the declarer is told whether open hands make it from the first lead


def test_review_is_the_same_for_the_same_seed_and_json_has_its_shape() -> None:
    start, actions, step, _ = blunder_deal()
    seat = actions[step][0]
    own_steps = [i for i, (s, _) in enumerate(actions) if s == seat]
    steps = {*own_steps[:3], step}
    one = review_deal(start, actions, seat, seed=3, limits=SMALL, steps=steps)
    two = review_deal(start, actions, seat, seed=3, limits=SMALL, steps=steps)
    assert one == two
    assert all(SMALL.min_samples <= d.samples <= SMALL.samples for d in one.decisions)
    objects = decisions_json(one, start)
    assert objects and all(o["step"] in steps for o in objects)
    phases = {o["phase"] for o in objects}
    assert Phase.PLAY in phases and phases & {Phase.BIDDING, Phase.EXCHANGE, Phase.CONTRACT}
    for o in objects:
        assert {"deal", "seat", "step", "phase", "chosen", "options", "cost"} <= set(o)
        assert o["deal"] == 1 and o["seat"] == seat and o["cost"] >= 0
        actions_named = [opt["action"] for opt in o["options"]]
        assert o["chosen"] in actions_named and all(a.startswith("/") for a in actions_named)
        for opt in o["options"]:
            assert isinstance(opt["expected"], float)
            assert ("open_hands" in opt) == (o["phase"] == Phase.PLAY)
        best = max(opt["expected"] for opt in o["options"])
        chosen = next(opt["expected"] for opt in o["options"] if opt["action"] == o["chosen"])
        assert o["cost"] == pytest.approx(best - chosen, abs=0.02)
    card = next(o for o in objects if o["step"] == step)
    played = actions[step][1]
    assert isinstance(played, Play) and card["chosen"].startswith("/play ")


def record_file(tmp_path: Path) -> tuple[Path, int, int]:
    _, actions, step, end = blunder_deal()
    record: dict[str, Any] = build_record(end, ["Ann", "Bob", "Cy"])
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    return path, actions[step][0], step


def test_review_text_json_reviews_only_the_asked_seat(tmp_path: Path) -> None:
    path, seat, _ = record_file(tmp_path)
    calls: list[tuple[int, int, int, int]] = []
    reviews, objects = review_text_json(
        path.read_text(), [seat], seed=1, limits=SMALL, progress=lambda *a: calls.append(a)
    )
    assert [(r.deal, r.seat) for r in reviews] == [(1, seat)] and calls == [(0, 1, 1, seat)]
    assert {o["seat"] for o in objects} == {seat}


def test_thousand_review_prints_json_and_progress(tmp_path: Path) -> None:
    path, seat, step = record_file(tmp_path)
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "from adapters.cli import main; main()",
            "review",
            str(path),
            "--seat",
            str(seat),
            "--json",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    objects = json.loads(out.stdout)
    assert {o["seat"] for o in objects} == {seat}
    blunder = next(o for o in objects if o["step"] == step)
    assert blunder["contract_lost"] and blunder["cost"] > 0
    assert "deal 1, seat" in out.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-c", "from adapters.cli import main; main()", "review", str(bad)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 2 and "not a game record" in out.stderr
