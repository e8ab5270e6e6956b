"""The end-of-game chart shows players' names as they are: a name is text, never mathtext or LaTeX
(`$\\nosuchcommand$` made matplotlib raise while drawing: a game with such a player ended without its
chart, the after-save step failing)."""

from __future__ import annotations

import random

import pytest
from botkit import Harness, errors, make_user

from bot.chart import draw_chart, score_chart
from bot.model import UserRef

ODD_NAMES = [
    "$\\nosuchcommand$",
    "$x^$",
    "$$",
    "a$b$c$",
    "\\$5 $\\frac{1}{0}$",
    "${}$ _{x}",
    "100% $\\$",
]


@pytest.mark.parametrize("name", ODD_NAMES)
def test_a_name_with_dollar_signs_is_drawn_as_it_is(name: str) -> None:
    names = [name, "Ala"]
    png = score_chart(names, [[100, -50], [220, 60]], title="Score $1$", xlabel="$x", ylabel="y$")
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000
    fig = draw_chart(names, [[100, -50]], title="Score $1$", xlabel="x", ylabel="y")
    ax = fig.axes[0]
    legend = ax.get_legend()
    assert legend is not None
    shown = legend.get_texts()
    assert [t.get_text() for t in shown] == names
    for text in [*shown, ax.title, ax.xaxis.label, ax.yaxis.label]:
        assert text.get_parse_math() is False and text.get_usetex() is False


async def test_a_game_with_such_a_player_ends_with_its_chart(harness: Harness) -> None:
    h = harness
    h.service.settings.charts = True
    odd = UserRef("t", "100", "$\\nosuchcommand$", "en", False)
    bartek = make_user(1)
    admin = make_user(5, admin=True)
    for text in ("/set barrel off", "/set target 200"):
        assert not errors(await h.text(admin, text)), text
    await h.open_table([odd, bartek], computers=1)
    rng = random.Random(9)
    for _ in range(2000):
        _, doc = await h.doc()
        assert doc is not None
        if doc.status == "finished":
            break
        assert await h.play_turn(rng, {0: odd, 1: bartek}, sensible=True)
    final = [m for m in h.sent if m.kind == "final"]
    assert len(final) == 1 and not [m for m in h.sent if "went wrong" in m.text]
    assert final[0].image is not None and final[0].image.startswith(b"\x89PNG")
