"""What a move costs in Bot API calls, and what people see for it (issue 13).

Three people play whole games through the real adapter and the fake Bot API. After every move the test
checks what reached each private chat: the player who must act now got exactly one new message that
notifies them (a turn that continues their own run is redrawn in place instead); nobody else was notified
except at a new deal; no message written after a card was played shows that card in a hand; the hands
replaced during a deal are gone once the next deal's hand is there. And the whole game costs at most 1.5
calls per move (every send, edit and deletion, `tgkit.COUNTED_METHODS`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from tgkit import Rig, Table, seat_everyone

from bot.i18n import translator
from bot.table import TableDoc
from core.actions import Play
from core.game import GameState
from fakes.telegram import FakeMessage, FakeUser


@dataclass
class Seen:
    """What each private chat showed after the previous move: message ids and their edit counts."""

    written: dict[int, dict[int, int]] = field(default_factory=dict)

    def changes(self, table: Table, user: FakeUser) -> tuple[list[FakeMessage], list[FakeMessage]]:
        """(new messages, edited messages) in the user's private chat since the last call."""
        before = self.written.setdefault(user.id, {})
        new, edited = [], []
        now: dict[int, int] = {}
        for m in table.rig.fake.bot_messages(user):
            if m.deleted:
                continue
            now[m.message_id] = len(m.history)
            if m.message_id not in before:
                new.append(m)
            elif before[m.message_id] != len(m.history):
                edited.append(m)
        self.written[user.id] = now
        return new, edited


def _hand_cards(message: FakeMessage) -> set[str]:
    """The card labels on the hand line of a hand message (the line after "Your hand")."""
    lines = (message.text or "").splitlines()
    for i, line in enumerate(lines):
        if "Your hand" in line and i + 1 < len(lines):
            return set(lines[i + 1].split())
    return set()


def _deal_shown(message: FakeMessage) -> int | None:
    """The deal number a hand message shows ("Your hand · deal 3 · play"), None for other messages."""
    for line in (message.text or "").splitlines():
        if "Your hand" in line and "deal " in line:
            return int(line.split("deal ", 1)[1].split(" ", 1)[0])
    return None


def _played(state: GameState) -> set[int]:
    return {a.card for _, a in state.actions_this_deal() if type(a) is Play}


def _user(table: Table, doc: TableDoc, seat: int) -> FakeUser | None:
    s = doc.seats[seat]
    if not s.present or s.user_id is None:
        return None
    return table.rig.fake._world.users[int(s.user_id)]


async def _play_watched(seed: int) -> tuple[Rig, Table, dict[str, int]]:
    rig = Rig()
    rig.rng = random.Random(seed)
    await rig.start()
    fake = rig.fake
    people = [fake.add_user(name) for name in ("Alice", "Bob", "Carol")]
    chat = rig.group("Cards", people)
    table = await seat_everyone(rig, chat, people, preset="polish")
    table.rng = random.Random(seed + 1)
    seen = Seen()
    counts = {"arrivals": 0, "runs": 0, "checked_hands": 0}
    labels = translator("en").card_labels
    for user in people:
        seen.changes(table, user)
    _doc, state = await table.state()
    assert state is not None
    last = (state.deal_number, state.to_act)

    async def check(_: int) -> None:
        nonlocal last
        doc, state = await table.state()
        if state is None or state.finished or doc.status != "game":
            return
        actor = state.to_act
        new_deal = state.deal_number != last[0]
        arrived = new_deal or actor != last[1]
        played = {labels[c] for c in _played(state)}
        for seat in range(len(doc.seats)):
            user = _user(table, doc, seat)
            if user is None:
                continue
            new, edited = seen.changes(table, user)
            for m in new + edited:
                shown = _hand_cards(m)
                counts["checked_hands"] += bool(shown)
                assert not shown & played, f"{user.first_name}'s hand shows played {shown & played}: {m.text}"
            loud = [m for m in new if not m.silent]
            if seat == actor:
                if arrived:
                    assert len(new) == 1 and not new[0].silent, f"turn of {user.first_name}: {len(new)} new"
                    assert table.hand_message(user) is new[0]
                    counts["arrivals"] += 1
                else:
                    assert not new, f"{user.first_name} acts again: redrawn in place, not {len(new)} new"
                    counts["runs"] += 1
            elif not new_deal:
                assert not loud, f"{user.first_name} notified while {actor} must act"
            else:
                assert len(loud) == 1, f"{user.first_name}: the new deal's hand"
            if new_deal:
                # The hands the previous deal replaced went with this deal's first hand (one call).
                shown = {_deal_shown(m) for m in table.rig.fake.bot_messages(user) if not m.deleted}
                assert shown - {None} == {state.deal_number + 1}, f"{user.first_name} sees deals {shown}"
        last = (state.deal_number, actor)

    await table.play_out(limit=5000, between=check)
    return rig, table, counts


async def test_each_turn_notifies_the_player_once_and_no_played_card_is_shown_as_held() -> None:
    rig, table, counts = await _play_watched(seed=3)
    try:
        doc, state = await table.state()
        assert doc.status == "finished" and state is not None and len(state.results) >= 2
        assert counts["arrivals"] > 20 and counts["runs"] > 0 and counts["checked_hands"] > 20
        assert rig.fake.stats.too_many_requests == 0
        # At the end each person's chat shows no hand: the last one says the game is over, the others went.
        for user in table.people.values():
            visible = [m for m in rig.fake.bot_messages(user) if not m.deleted]
            assert not [m for m in visible if _deal_shown(m) is not None]
            assert visible[-1].text is not None and visible[-1].text.endswith("The game is over.")
    finally:
        await rig.close()


async def test_a_game_costs_at_most_one_and_a_half_calls_per_move() -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from telegram_messages import play_game

    result = await play_game("polish", 1000, seed=5)
    assert result["too_many_requests"] == 0 and result["leaks"] == 0
    assert result["counted_moves"] > 200
    per_move = result["calls"] / result["counted_moves"]
    assert per_move <= 1.5, f"{per_move:.2f} calls per move"
