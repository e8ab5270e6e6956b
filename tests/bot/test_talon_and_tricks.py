"""Everybody entitled to see the talon and every trick sees them (issue 18, part 2).

- A public talon is on the group's table from when it is shown until the first trick is over, and named
  again in the deal's result, whoever won the auction: a computer declarer takes it, gives and fixes its
  contract before anyone's view is drawn. A secret talon is never shown, a computer declaring or not.
- Every trick taken reaches the group: the last cards play themselves, so a command often takes two
  tricks at once, and the one before the last was lost (the terminal lost a deal by a trick never seen).
- A defender's rounded score says from what ("raw 63 → 65"), and /rules says how rounding works.
"""

from __future__ import annotations

import random

from botkit import Clock, Harness, errors, make_user, quiet_settings

from bot.handlers import Handlers
from bot.i18n import LANGUAGES, translator
from bot.markup import to_plain
from bot.model import Group, Message
from bot.render_result import render_result
from bot.render_rules import render_rules
from bot.service import Service
from bot.storage import MemoryStore
from bot.table import ChatSettings
from bot.views import SeatLabel, public_view
from core.cards import cards_of
from core.deal import Phase, new_deal
from core.game import GameState, unroll
from core.rules import preset
from core.scoring import DealResult
from fakes import cardspy

ALA, BARTEK, CELINA = make_user(0), make_user(1), make_user(2)


async def _harness(clock: Clock, seed: int, **values: object) -> Harness:
    store = MemoryStore(clock=clock)
    service = Service(
        store, quiet_settings(**values), handlers=Handlers, clock=clock, rng=random.Random(seed)
    )
    return Harness(service, store, clock)


def _group(messages: list[Message], kind: str) -> list[Message]:
    return [m for m in messages if isinstance(m.audience, Group) and m.kind == kind]


async def _computer_declares(clock: Clock, preset_name: str) -> tuple[Harness, list[Message]]:
    """A table of Ala and two computers where Ala passes and a computer wins the auction; the messages
    of Ala's last bidding command (the computer took the talon and play began within it)."""
    for seed in range(1, 40):
        h = await _harness(clock, seed)
        await h.open_table([ALA], computers=2, preset=preset_name)
        replies: list[Message] = []
        while (state := await h.state()).phase in (Phase.BIDDING, Phase.BLIND) and state.to_act == 0:
            line = "/pass" if any(a.__class__.__name__ == "Pass" for a in state.legal_actions(0)) else None
            if line is None:
                break
            replies = await h.text(ALA, line)
            assert not errors(replies)
        state = await h.state()
        if state.deal.declarer not in (-1, 0) and state.phase == Phase.PLAY and state.deal.tricks == 0:
            return h, replies
        await h.service.close()
    raise AssertionError("no seed where a computer declares")


async def _play_deal(h: Harness, number: int) -> list[Message]:
    """Ala plays on (as the easy computer would) until deal `number` has its result."""
    rng = random.Random(7)
    sent = len(h.sent)
    for _ in range(60):
        if any(m.kind == "result" for m in h.sent[sent:]):
            break
        assert await h.play_turn(rng, {0: ALA}, sensible=True)
    results = _group(h.sent[sent:], "result")
    assert results and f"Deal {number + 1}: result" in to_plain(results[-1].text)
    return h.sent[sent:]


async def test_a_public_talon_is_shown_when_a_computer_declares(clock: Clock) -> None:
    h, replies = await _computer_declares(clock, "russian")
    try:
        state = await h.state()
        t = translator("en")
        talon = state.deal.talon_as_dealt
        shown = t._("Talon: {cards}").format(cards=t.cards(talon))
        tables = _group(replies, "table")
        assert tables and shown in to_plain(tables[-1].text), tables[-1].text
        _, doc = await h.doc()
        assert doc is not None
        view = public_view(doc, state)
        assert view.talon == talon and view.talon_on_table
        rest = await _play_deal(h, state.deal.number)
        # After the first trick the table shows tricks, not the talon; the result names it and who took it.
        later = [m for m in _group(rest, "table") if "Trick 1:" not in to_plain(m.text)]
        assert later and all(shown not in to_plain(m.text) for m in later)
        result = to_plain(_group(rest, "result")[-1].text)
        declarer = doc.seats[state.deal.declarer].name
        assert f"Talon taken by {declarer} 🤖: {t.cards(talon)}" in result, result
    finally:
        await h.service.close()


async def test_a_secret_talon_is_not_shown_when_a_computer_declares(clock: Clock) -> None:
    h, replies = await _computer_declares(clock, "estonian")
    try:
        state = await h.state()
        talon = state.deal.talon_as_dealt
        assert not state.deal.talon_public
        _, doc = await h.doc()
        assert doc is not None
        view = public_view(doc, state)
        assert view.talon == () and not view.talon_on_table
        # Nothing the group or Ala was sent shows a card of the talon, now (they are in the declarer's
        # hand) or in the deal's result (the talon's cards are in new hands by then).
        others = cardspy.secret_cards(state) - set(cards_of(state.deal.hands[0]))
        assert set(talon) <= others
        for m in replies:
            assert not cardspy.leaks(cardspy.message_parts(m.text, m.buttons), others, ["en"]), m.text
        t = translator("en")
        assert all(t.cards(talon) not in m.text for m in h.sent)
        rest = await _play_deal(h, state.deal.number)
        result = _group(rest, "result")[-1]
        assert "Talon" not in to_plain(result.text)
        finished = (await h.state()).results[-1]
        assert finished.talon == ()
    finally:
        await h.service.close()


def _deal_tricks(state: GameState, index: int) -> list[tuple[tuple[int, ...], tuple[int, ...], int]]:
    """Deal `index`'s tricks (cards, seats, winner), replayed from the game's history."""
    layout, log = state.history[index]
    deal, _ = new_deal(
        state.rules, state.players, layout, number=index, bomb_allowed=(1 << state.players) - 1
    )
    for seat, action in unroll(log):
        deal.apply(seat, action, [])
    history = deal.trick_history
    out = []
    for i, (cards, seats, _) in enumerate(history):
        winner = history[i + 1][1][0] if i + 1 < len(history) else deal.last_winner
        out.append((cards, seats, winner))
    return out


async def test_every_trick_taken_reaches_the_group(clock: Clock) -> None:
    """Three people play whole deals; every trick of every finished deal is on a group message of its
    deal as "cards → winner" (the table's last trick, a trick taken unseen, the result's final trick)."""
    h = await _harness(clock, 3, table_updates="every_action")
    users = {0: ALA, 1: BARTEK, 2: CELINA}
    names = ["Ala", "Bartek", "Celina"]
    try:
        await h.open_table([ALA, BARTEK, CELINA], preset="polish")
        rng = random.Random(11)
        for _ in range(220):
            if not await h.play_turn(rng, users, sensible=True):
                break
        state = await h.state()
        finished = [r.number for r in state.results if r.ending == "played"]
        assert len(finished) >= 2
        t = translator("en")
        group = [to_plain(m.text) for m in h.sent if isinstance(m.audience, Group)]
        unseen = sum(text.count("→") - text.count("Last trick") for text in group if "Trick " in text)
        for number in finished:
            for cards, seats, winner in _deal_tricks(state, number):
                shown = " · ".join(f"{names[s]} {t.card(c)}" for c, s in zip(cards, seats, strict=True))
                assert any(f"{shown} → {names[winner]}" in text for text in group), (number, shown)
        assert unseen >= 1  # some deal ended with two tricks in one command
    finally:
        await h.service.close()


def _labels() -> list[SeatLabel]:
    return [SeatLabel(n, False, None, False) for n in ("Ala", "Bartek", "Celina")]


def _result(**fields: object) -> DealResult:
    base: dict[str, object] = {
        "number": 0,
        "dealer": 0,
        "declarer": 1,
        "contract": 100,
        "made": True,
        "points": (63, 105, 12),
        "marriages": ((), (), ()),
        "scores": (65, 100, 10),
        "totals": (65, 100, 10),
        "ending": "played",
    }
    base.update(fields)
    return DealResult(**base)  # type: ignore[arg-type]


def test_a_rounded_score_says_from_what() -> None:
    t = translator("en")
    polish = preset("polish")
    text = to_plain(render_result(t, _result(), _labels(), rules=polish).text)
    assert "Ala: +65 → 65 (raw 63 → 65)" in text
    assert "Celina: +10 → 10 (raw 12 → 10)" in text
    assert "Bartek: +100 → 100\n" in text + "\n"  # the declarer scores the contract: nothing rounded
    # No rounding in the rules, or points that need none: nothing said.
    exact = preset("russian", {"rounding": "exact"})
    assert "raw" not in render_result(t, _result(scores=(63, 100, 12)), _labels(), rules=exact).text
    even = _result(points=(60, 105, 15), scores=(60, 100, 15))
    assert "raw" not in render_result(t, even, _labels(), rules=polish).text
    # On the barrel a defender's points do not count: no rounding to speak of.
    on_barrel = render_result(t, _result(scores=(0, 100, 10)), _labels(), rules=polish, barrel_before=(True,))
    assert "raw 63" not in on_barrel.text
    for lang in LANGUAGES:
        other = render_result(translator(lang), _result(), _labels(), rules=polish).text
        assert ("63 → 65" in other and "raw" not in other) or lang == "en"


def test_the_rules_explain_rounding() -> None:
    settings = ChatSettings(preset="polish", language="en", turn_seconds=0, ai_level="easy")
    t = translator("en")
    polish = to_plain(render_rules(t, preset("polish"), settings, 3).text)
    assert "rounded to the nearest 5" in polish and "63 → 65" in polish
    estonian = to_plain(render_rules(t, preset("estonian"), settings, 3).text)
    assert "exactly" in estonian and "nearest 5" not in estonian
