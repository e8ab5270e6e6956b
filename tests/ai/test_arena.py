"""The arena: its JSON report, and short regression matches (a level may not lose to the one below)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from core.ai.arena import ArenaSpec, run_arena, wilson

KEYS = {"points_per_deal", "ci95", "win_share", "wilson95", "contracts_made", "decision_ms"}


def test_easy_beats_random_and_the_report_has_its_keys() -> None:
    report = run_arena(ArenaSpec("easy", "random", "polish", 3, seed=3), 30)
    assert set(report) >= KEYS
    assert report["deals"] >= 30
    low, high = report["ci95"]
    assert low <= report["points_per_deal"] <= high
    assert low > 0, report
    assert report["win_share"] > 1 / 3
    assert set(report["decision_ms"]) == {"easy", "random"}
    for t in report["decision_ms"].values():
        assert 0 <= t["p50"] <= t["p99"]
    made = report["contracts_made"]["candidate"]
    assert 0 <= made["made"] <= made["declared"]


def test_arena_figures_do_not_depend_on_workers() -> None:
    spec = ArenaSpec("easy", "random", "russian", 3, seed=5)
    for deals in (12, 40):  # at 40 the last batch needs one game seed: two workers must not play two
        one = run_arena(spec, deals, workers=1)
        two = run_arena(spec, deals, workers=2)
        for key in ("points_per_deal", "ci95", "win_share", "contracts_made", "deals"):
            assert one[key] == two[key], (deals, key)


def test_medium_does_not_lose_to_easy() -> None:
    spec = ArenaSpec("medium", "easy", "russian", 3, seed=7, candidate_budget=0.01)
    report = run_arena(spec, 15, workers=2)
    assert report["ci95"][1] > 0, report


def test_hard_does_not_lose_to_easy() -> None:
    """Hard cut to a fraction of its thinking still beats easy (hard against medium: the test below)."""
    spec = ArenaSpec("hard", "easy", "polish", 3, seed=9, candidate_budget=0.02, baseline_budget=0.01)
    report = run_arena(spec, 6, workers=2)
    assert report["ci95"][1] > 0, report


def test_cli_prints_one_json_object() -> None:
    """Through ``thousand arena`` itself, the command the issue names."""
    from adapters.cli import app

    result = CliRunner().invoke(
        app,
        [
            "arena",
            *("--candidate", "easy", "--baseline", "random", "--preset", "russian", "--players", "3"),
            *("--deals", "5", "--seed", "2", "--json", "--workers", "1"),
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report) >= KEYS
    bad = CliRunner().invoke(app, ["arena", "--candidate", "godlike", "--baseline", "easy"])
    assert bad.exit_code == 2


def test_wilson_interval() -> None:
    low, high = wilson(50, 100)
    assert 0.40 < low < 0.41 and 0.59 < high < 0.60
    assert wilson(0, 0) == (0.0, 1.0)


def test_hard_does_not_lose_to_medium_at_default_budgets() -> None:
    """One whole game seed (about 45 deals, three rotations) at the levels' own budgets."""
    report = run_arena(ArenaSpec("hard", "medium", "polish", 3, seed=9), 6, workers=2)
    assert report["ci95"][1] > 0, report
