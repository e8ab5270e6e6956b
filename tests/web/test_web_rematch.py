"""Play again at a public table from the web page's API (`/api/rematch`, `bot.public.rematch`).

Two web guests (English, Polish) matched by Play now play a short public game (target 200: the rules'
`preset` patched for the test) through `/api/view` and `/api/act`, against the real aiohttp app, a real
redis-server and `RedisQueue`. The finished table's view carries the offer (`rematch`); a session of
someone who never sat there, an unknown answer and a late answer are refused and change nothing; the
first guest agrees (the offer stays open, her mark shown to the other), the second agrees, and both get
a session for the new table, which seats the same two. A second short game: one agrees, one declines:
the new table seats the one who agreed and a computer.
"""

from __future__ import annotations

import random
import time
from typing import Any

import pytest
from test_web_queue import QRig, qrig  # noqa: F401  (the fixture)

import bot.handlers.lobby as lobby
from bot.table import TableDoc
from bot.weblinks import Claims
from core.rules import preset as real_preset

TWO = {"preset": "estonian", "players": 2, "pace": "slow"}


@pytest.fixture(autouse=True)
def short_games(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        lobby, "preset", lambda name, options=None: real_preset(name, {"target": 200, "barrel_at": 100})
    )


async def view(rig: QRig, session: str) -> dict[str, Any]:
    status, data = await rig.post("/api/view", {"session": session})
    assert status == 200, data
    return data


async def play_out(rig: QRig, sessions: list[str], seed: int) -> dict[str, Any]:
    """Each seat to act presses one of its actions (at random) until the game is over; the last view."""
    rng = random.Random(seed)
    for _ in range(5000):
        views = [await view(rig, s) for s in sessions]
        if views[0]["finished"]:
            return views[0]
        for session, v in zip(sessions, views, strict=True):
            actions = [a for a in v.get("actions") or [] if a["kind"] not in ("back", "again")]
            if actions:
                action = _choose(actions, rng)
                status, data = await rig.post("/api/act", {"session": session, "payload": action["payload"]})
                assert status == 200 and data.get("ok"), data
                break
    raise AssertionError("the game did not end")


def _choose(actions: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    """What makes a game end soon: pass the auction (the forced declarer plays 100), the lowest contract,
    any card."""
    for kind in ("pass", "contract", "bid"):
        found = [a for a in actions if a["kind"] == kind]
        if found:
            return min(found, key=lambda a: a.get("value", 0))
    return rng.choice(actions)


async def matched(rig: QRig) -> tuple[list[str], list[str], str]:
    tokens = [await rig.guest("Ann"), await rig.guest("Bolek", "pl")]
    for token in tokens:
        await rig.post("/api/queue/join", {"player": token, "options": TWO})
    seated = [await rig.wait_state(t, "seated") for t in tokens]
    assert seated[0]["table"] == seated[1]["table"]
    return tokens, [s["session"] for s in seated], seated[0]["table"]


async def rematch(rig: QRig, session: str, answer: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"session": session}
    if answer is not None:
        body["answer"] = answer
    status, data = await rig.post("/api/rematch", body)
    assert status == 200, data
    return data


async def doc_of(rig: QRig, table_id: str) -> tuple[int, TableDoc]:
    stored = await rig.store.load(table_id)
    assert stored is not None
    return stored.version, TableDoc.model_validate_json(stored.document)


async def test_two_guests_agree_then_one_declines(qrig: QRig) -> None:  # noqa: F811
    rig = qrig
    tokens, sessions, first = await matched(rig)
    end = await play_out(rig, sessions, 3)
    assert end["public"] is True and end["rematch"]["state"] == "open"
    assert end["rematch"]["labels"] == {"yes": "Play again", "no": "No thanks"}
    assert [p["mark"] for p in end["rematch"]["people"]] == ["…", "…"]
    polish = (await view(rig, sessions[1]))["rematch"]
    assert polish["labels"]["no"] == "Nie, dziękuję" and 0 < polish["seconds_left"] <= 60

    # Someone who never sat there (a session of their own for this table id, as a forged page would
    # need): not seated, nothing changes. An unknown answer: refused.
    version, _ = await doc_of(rig, first)
    stranger = rig.web.session_for(Claims("session", first, "intruder", "Eve", "en", "web", 0))
    data = await rematch(rig, stranger, "yes")
    assert data["error"] == "You are not sitting at this table." and data["rematch"] is None
    status, bad = await rig.post("/api/rematch", {"session": sessions[0], "answer": "maybe"})
    assert status == 400 and bad["error"]
    assert (await doc_of(rig, first))[0] == version

    data = await rematch(rig, sessions[0], "yes")
    assert "error" not in data and data["rematch"]["state"] == "open" and data["rematch"]["answer"] == "yes"
    other = await rematch(rig, sessions[1])
    assert [p["mark"] for p in other["rematch"]["people"]] == ["✓", "…"] and "session" not in other
    data = await rematch(rig, sessions[1], "yes")
    assert data["rematch"]["state"] == "started" and data["session"] and data["seat"] in (0, 1)
    second = data["rematch"]["next"]
    mine = await rematch(rig, sessions[0])
    assert mine["rematch"]["next"] == second and mine["session"]
    _, new = await doc_of(rig, second)
    assert sorted(s.user or "" for s in new.seats if s.human) == sorted(rig.key_of(t) for t in tokens)
    # Late: refused, in Polish, nothing changes.
    before, _ = await doc_of(rig, first)
    late = await rematch(rig, sessions[1], "no")
    assert late["error"] == "Na ponowną grę przy tym stole jest już za późno."
    assert (await doc_of(rig, first))[0] == before
    for token in tokens:
        status, data = await rig.post("/api/queue/status", {"player": token})
        assert data["state"] == "seated" and data["table"] == second

    # The second game: Ann agrees, Bolek declines: at once (everyone answered), Ann and a computer.
    sessions = [mine["session"], data["session"]]
    await play_out(rig, sessions, 4)
    await rematch(rig, sessions[0], "yes")
    data = await rematch(rig, sessions[1], "no")
    assert data["rematch"]["state"] == "started" and "session" not in data
    third = data["rematch"]["next"]
    _, new = await doc_of(rig, third)
    assert [s.user for s in new.seats if s.human] == [rig.key_of(tokens[0])]
    assert [s.kind for s in new.seats].count("ai") == 1
    assert (await rig.queue.seated_at(rig.key_of(tokens[1]))) is None
    assert time.time() > 0
