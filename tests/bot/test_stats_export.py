"""Statistics and ratings after a game, `stats` and `top`, and `export` of the game record."""

from __future__ import annotations

import json
import random

from botkit import Harness, errors, make_user

from bot.model import ChatRef, Group, Private, Sender
from bot.stats import elo
from core.record import replay_text

ALA, BARTEK = make_user(0), make_user(1)


def test_elo_is_zero_sum_and_favours_the_winner() -> None:
    a, b = elo([1500.0, 1500.0], [1000, 400])
    assert a > 1500 > b and abs(a + b - 3000) < 1e-9
    same = elo([1500.0, 1500.0], [500, 500])
    assert same == [1500.0, 1500.0]
    three = elo([1600.0, 1500.0, 1400.0], [300, 1010, 600])
    assert abs(sum(three) - 4500) < 1e-9
    assert three[1] - 1500 > 0 and three[0] - 1600 < 0
    # The favourite gains less for beating the underdog than the underdog would.
    up, _ = elo([1700.0, 1300.0], [1000, 0])
    _, down_up = elo([1700.0, 1300.0], [0, 1000])
    assert up - 1700 < down_up - 1300


async def play_to_the_end(h: Harness) -> None:
    rng = random.Random(2)
    users = {0: ALA, 1: BARTEK}
    for _ in range(3000):
        _, doc = await h.doc()
        assert doc is not None
        if doc.status == "finished":
            return
        assert await h.play_turn(rng, users, sensible=True)
    raise AssertionError("the game did not end")


async def test_statistics_ratings_and_top(harness: Harness) -> None:
    h = harness
    await h.open_table([ALA, BARTEK], computers=1)
    await play_to_the_end(h)
    _, doc = await h.doc()
    assert doc is not None and doc.ended == "won"
    state = await h.state()
    for user, seat in ((ALA, 0), (BARTEK, 1)):
        overall = await h.store.get_stats(f"user:{user.key}")
        in_chat = await h.store.get_stats(f"chat:{h.chat.key}:user:{user.key}")
        assert overall == in_chat
        assert overall["games"] == 1 and overall["score_sum"] == state.totals[seat]
        declared = sum(1 for r in state.results if r.declarer == seat and r.ending != "redeal")
        assert overall["declared"] == declared
        assert overall["made"] == sum(1 for r in state.results if r.declarer == seat and r.made)
        assert overall["marriages"] == sum(len(r.marriages[seat]) for r in state.results)
    ratings = [await h.store.get_rating("rating", u.key) for u in (ALA, BARTEK)]
    assert None not in ratings and abs(sum(r for r in ratings if r) - 3000) < 1e-6
    assert (ratings[0] or 0) > (ratings[1] or 0) if state.totals[0] > state.totals[1] else True
    chat_games = await h.store.get_stats(f"chat:{h.chat.key}")
    assert chat_games["games"] == 1 and chat_games["deals"] == len(state.results)

    out = await h.text(ALA, "/stats")
    assert len(out) == 1 and isinstance(out[0].audience, Group) and "1" in out[0].text
    dm = ChatRef("t", ALA.user_id, "", private=True)
    out = await h.text(ALA, "/stats", chat=dm)
    assert isinstance(out[0].audience, Private) and "Ala" in out[0].text
    out = await h.text(BARTEK, "/top")
    assert out[0].kind == "top" and out[0].text.index("Ala") > 0 and "Bartek" in out[0].text
    # Nothing is counted twice by later commands.
    await h.text(ALA, "/score")
    await h.tick()
    assert (await h.store.get_stats(f"user:{ALA.key}"))["games"] == 1


async def test_export_during_and_after_a_game(harness: Harness) -> None:
    h = harness
    await h.open_table([ALA, BARTEK], computers=1)
    out = await h.text(ALA, "/export")
    assert [m.kind for m in out] == ["error"]  # no finished deal yet
    rng = random.Random(5)
    users = {0: ALA, 1: BARTEK}
    while (await h.state()).deal_number < 2:
        assert await h.play_turn(rng, users, sensible=True)
    out = await h.text(BARTEK, "/export")
    assert len(out) == 1 and isinstance(out[0].audience, Sender) and out[0].document is not None
    name, data = out[0].document
    assert name.endswith(".json")
    record = json.loads(data)
    state = await h.state()
    assert len(record["deals"]) == len(state.history), "the deal in progress is not exported"
    report = replay_text(data.decode())
    assert report["ok"] and report["totals"] == list(state.results[-1].totals)
    await play_to_the_end(h)
    out = await h.text(ALA, "/export")
    report = replay_text(out[0].document[1].decode())  # type: ignore[index]
    final = await h.state()
    assert report["ok"] and report["totals"] == list(final.totals)
    assert report["winner"] == (list(final.winner) if isinstance(final.winner, tuple) else final.winner)
    assert not errors(out)
