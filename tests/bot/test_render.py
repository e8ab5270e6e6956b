"""What the messages say: the table, the hand's moves per phase, results, rules, the chart."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from botkit import Harness, errors, make_user

from bot.chart import score_chart
from bot.commands import decode_payload, encode_payload
from bot.i18n import LANGUAGES, translator
from bot.markup import to_plain
from bot.render import page_start, render_hand, render_table
from bot.render_rules import render_rules
from bot.table import ChatSettings, SeatDoc, TableDoc
from bot.views import public_view, seat_labels
from core.actions import (
    BLIND_NO,
    BLIND_YES,
    BOMB,
    CONCEDE,
    CRAWL,
    PASS,
    SELL,
    Action,
    Bid,
    Contract,
    Discard,
    Give,
    Play,
    TakeTalon,
)
from core.cards import CARD_NAMES
from core.deal import Phase
from core.game import GameState, new_game
from core.rules import PRESETS, preset
from core.scoring import MatchTally
from core.view import seat_view

NAMES = ["Ala", "Bartek", "Celina", "Dorota"]


def table_doc(players: int, name: str = "polish") -> TableDoc:
    settings = ChatSettings(preset=name, language="en", turn_seconds=90, ai_level="easy")
    seats = [SeatDoc(kind="human", name=NAMES[i], user=f"t:{i}") for i in range(players)]
    return TableDoc(
        id="t:-1", serial="s", platform="t", chat_id="-1", creator="t:0", settings=settings, seats=seats,
        created=0, updated=0,
    )  # fmt: skip


def play_until(state: GameState, rng: random.Random, done: object) -> GameState:
    for _ in range(2000):
        if done(state):  # type: ignore[operator]
            return state
        seat = state.to_act
        assert seat is not None
        legal = state.legal_actions(seat)
        state.apply_action(seat, legal[rng.randrange(len(legal))])
    raise AssertionError("state not reached")


def test_the_table_shows_bids_trick_trump_turn_scores_and_barrels() -> None:
    rules = preset("polish")
    doc = table_doc(3)
    rng = random.Random(3)
    state = new_game(rules, 3, 8)[0]
    state = play_until(
        state, rng, lambda s: s.deal.phase == Phase.PLAY and s.deal.trump >= 0 and s.deal.trick
    )
    state = state.clone()
    state.tally = MatchTally((810, 120, -40), (False,) * 3, (0,) * 3, (0,) * 3)
    text = to_plain(render_table(translator("en"), public_view(doc, state)).text)
    view = public_view(doc, state)
    assert "Bids: " in text and all(NAMES[s] in text for s, _ in view.auction)
    assert "Trump: " + translator("en").suit(state.deal.trump) in text
    assert f"Trick {state.deal.tricks + 1}: " in text
    assert all(translator("en").card(c) in text for c in state.deal.trick)
    assert f"Turn: {NAMES[state.deal.to_act]}" in text
    assert "Ala 810 🛢" in text and "Bartek 120 ·" in text and "Celina -40" in text
    assert "Declarer: " in text and f"contract {state.deal.contract}" in text
    for lang in LANGUAGES:
        assert render_table(translator(lang), view).text


def _button_action(name: str, args: tuple[str, ...], state: GameState, seat: int) -> Action | None:
    card = {n: i for i, n in enumerate(CARD_NAMES)}
    match name:
        case "play":
            return Play(card[args[0]], len(args) > 1)
        case "bid" | "contract" if page_start(args[0]) is not None:
            return None  # a page of values: redraws the hand
        case "bid":
            return Bid(int(args[0]))
        case "contract":
            return Contract(int(args[0]))
        case "pass":
            return PASS
        case "take":
            return TakeTalon(int(args[0]) - 1 if args else 0)
        case "sell":
            return SELL
        case "blind":
            return BLIND_YES if args[0] == "yes" else BLIND_NO
        case "bomb":
            return BOMB
        case "concede":
            return CONCEDE
        case "crawl":
            return CRAWL
        case "discard":
            return Discard(tuple(sorted(card[a] for a in args))) if len(args) == 2 else None
        case "give":
            from bot.render import give_order

            order = give_order(state.deal.active, seat)
            if len(args) < len(order):
                return None
            return Give(tuple(sorted(zip(order, (card[a] for a in args), strict=True))))
    raise AssertionError(name)


@pytest.mark.parametrize(
    ("name", "players"), [(n, p) for n in sorted(PRESETS) for p in PRESETS[n].player_counts]
)
def test_every_button_of_a_hand_is_a_legal_move(name: str, players: int) -> None:
    options = {"sell_talon": True} if name == "estonian" else {"concede": True} if name == "russian" else None
    rules = preset(name, options)
    doc = table_doc(players, name)
    rng = random.Random(players)
    state = new_game(rules, players, players)[0]
    phases: set[str] = set()
    for _ in range(400):
        if state.finished:
            break
        seat = state.to_act
        assert seat is not None
        legal = list(state.legal_actions(seat))
        payload = lambda n, a: encode_payload(n, a, 7, "t:-1")  # noqa: E731
        rendered = render_hand(translator("en"), seat_view(state, seat), seat_labels(doc), legal, payload)
        buttons = [b.payload for row in rendered.buttons for b in row]
        assert buttons, (state.deal.phase, rendered.text)
        phases.add(state.deal.phase)
        for p in buttons:
            cmd, args, version, table = decode_payload(p)
            assert (version, table) == (7, "t:-1")
            action = _button_action(cmd, args, state, seat)
            assert action is None or action in legal, (cmd, args)
        assert "Your turn:" in to_plain(rendered.text)
        others = [s for s in range(players) if s != seat]
        idle = render_hand(translator("en"), seat_view(state, others[0]), seat_labels(doc), (), payload)
        assert idle.buttons == ()
        state.apply_action(seat, legal[rng.randrange(len(legal))])
    assert {Phase.BIDDING, Phase.PLAY} <= phases


@pytest.mark.parametrize("lang", LANGUAGES)
def test_rules_summaries(lang: str) -> None:
    settings = ChatSettings(preset="polish", language=lang, turn_seconds=0, ai_level="hard", options={"x": 1})
    for name, rules in PRESETS.items():
        t = translator(lang)
        text = render_rules(t, rules, settings, 3).text
        assert t.preset(name) in text and "1000" in text  # the preset as the reader names it


def test_chart_is_a_png() -> None:
    png = score_chart(["Ala", "Борис"], [[100, -50], [220, 60]], title="t", xlabel="x", ylabel="y")
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000


async def test_a_short_game_ends_with_the_score_sheet_and_chart(harness: Harness) -> None:
    h = harness
    h.service.settings.charts = True
    ala, bartek = make_user(0), make_user(1)
    admin = make_user(5, admin=True)
    for text in ("/set barrel off", "/set target 200"):
        assert not errors(await h.text(admin, text)), text
    await h.open_table([ala, bartek], computers=1)
    rng = random.Random(9)
    final: Sequence[object] = []
    for _ in range(2000):
        _, doc = await h.doc()
        assert doc is not None
        if doc.status == "finished":
            final = [m for m in h.sent if m.kind == "final"]
            break
        assert await h.play_turn(rng, {0: ala, 1: bartek}, sensible=True)
    assert len(final) == 1
    message = final[0]
    assert message.image is not None and message.image.startswith(b"\x89PNG")  # type: ignore[attr-defined]
    assert "Score sheet" in message.text and "🏆" in message.text  # type: ignore[attr-defined]
