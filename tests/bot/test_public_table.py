"""A public table (issue 20): strangers from three platforms, no group chat, each seeing the table
privately in their own language; no private card reaches anyone else; group-only commands refused;
the fixed phrases are the only words passed between them."""

from __future__ import annotations

import random

import pytest
from botkit import Clock, Harness, action_text, errors, quiet_settings

from bot.commands import SECRET_MOVES, parse_text
from bot.handlers import Handlers
from bot.model import ChatRef, Group, Message, Private, Sender, UserRef
from bot.public.fanout import is_public
from bot.public.tables import PublicMatch, open_public_table
from bot.service import Service
from bot.storage import MemoryStore
from bot.table import TableDoc
from core.ai import choose_action
from core.cards import cards_of
from core.game import GameState
from core.view import seat_view
from fakes import cardspy

ALA = UserRef("tg", "90000101", "Ala", "pl")
BORIS = UserRef("dc", "90000202", "Boris", "ru")
EVE = UserRef("web", "90000303", "Eve", "en")
PLAYERS = (ALA, BORIS, EVE)


def dm(user: UserRef) -> ChatRef:
    return ChatRef(user.platform, user.user_id, user.name, True)


@pytest.fixture
async def pub(clock: Clock) -> Harness:
    store = MemoryStore(clock=clock)
    service = Service(
        store,
        quiet_settings(turn_seconds=90, warn_seconds=30, missed_turns_to_away=1),
        handlers=Handlers,
        clock=clock,
    )
    return Harness(service, store, clock)


async def open_three(h: Harness, players: tuple[UserRef, ...] = PLAYERS, seats: int = 3) -> list[Message]:
    table_id, messages = await open_public_table(h.service, PublicMatch(players, "polish", seats, "normal"))
    assert is_public(table_id)
    h.chat = ChatRef("pub", table_id.split(":", 1)[1])
    return h._note(messages)


def by_user(messages: list[Message], kind: str) -> dict[str, Message]:
    out: dict[str, Message] = {}
    for m in messages:
        if m.kind == kind:
            assert isinstance(m.audience, Private), m
            out[m.audience.user.key] = m
    return out


class Spy:
    """What each seat may know in the current deal (every card that was ever in its hand) and a check of
    every message against it: no group audience at all, only private copies."""

    def __init__(self) -> None:
        self.deal = -1
        self.known: dict[int, int] = {}

    def check(self, state: GameState, seats: dict[str, int], messages: list[Message]) -> None:
        if state.deal_number != self.deal:
            self.deal, self.known = state.deal_number, {}
        if not state.finished:
            for s, hand in enumerate(state.deal.hands):
                self.known[s] = self.known.get(s, 0) | hand
        secret = cardspy.secret_cards(state)
        for m in messages:
            assert not isinstance(m.audience, Group), m
            user = m.audience.user
            if isinstance(m.audience, Sender):
                assert m.audience.chat.private
            seat = seats[user.key]
            private = set(secret) - set(cards_of(self.known.get(seat, 0)))
            found = cardspy.leaks(cardspy.message_parts(m.text, m.buttons), private, [m.language])
            assert not found, (user.key, m.kind, found)


async def move(h: Harness, rng: random.Random, spy: Spy, seats: dict[str, int]) -> list[Message] | None:
    state = await h.state()
    seat = state.to_act
    if seat is None:
        return None
    user = next(u for u in PLAYERS if seats[u.key] == seat)
    legal = list(state.legal_actions(seat))
    action = choose_action("easy", seat_view(state, seat), legal, seed=rng.getrandbits(32))
    line = action_text(action, state, seat)
    command = parse_text(line, dm(user), user)
    assert command is not None and command.name in SECRET_MOVES | {command.name}
    replies = await h.command(command)
    assert not errors(replies), [m.text for m in replies]
    spy.check(await h.state(), seats, replies)
    return replies


async def test_a_whole_deal_across_three_platforms_each_in_their_language(pub: Harness) -> None:
    h = pub
    opened = await open_three(h)
    _, doc = await h.doc()
    assert doc is not None and doc.status == "game"
    seats = {u.key: doc.seat_of(u.key) for u in PLAYERS}
    assert sorted(s for s in seats.values() if s is not None) == [0, 1, 2]
    typed: dict[str, int] = {k: v for k, v in seats.items() if v is not None}
    tables = by_user(opened, "table")
    assert set(tables) == {u.key for u in PLAYERS}
    # One key for everyone (edited in place per deal), each in their own language, drawn apart.
    assert len({m.key for m in tables.values()}) == 1
    assert {k: m.language for k, m in tables.items()} == {
        "tg:90000101": "pl",
        "dc:90000202": "ru",
        "web:90000303": "en",
    }
    assert len({m.body for m in tables.values()}) == 3
    assert all(m.audience.user.platform == k.split(":")[0] for k, m in tables.items())  # type: ignore[union-attr]
    hands = by_user(opened, "hand")
    assert set(hands) == set(tables)
    spy = Spy()
    spy.check(await h.state(), typed, opened)
    rng = random.Random(7)
    results: dict[str, Message] = {}
    for _ in range(200):
        replies = await move(h, rng, spy, typed)
        assert replies is not None
        results.update(by_user(replies, "result"))
        if results:
            break
    assert set(results) == {u.key for u in PLAYERS}
    assert {m.language for m in results.values()} == {"pl", "ru", "en"}
    # Everything anyone was shown is in their own language (notices too: "The game has started" ...).
    langs = {u.key: u.language for u in PLAYERS}
    assert [(m.kind, m.body) for m in h.sent if m.language != langs[m.audience.user.key]] == []  # type: ignore[union-attr]
    # Only display names: no platform ids, no user keys in anything anyone was shown.
    for m in h.sent:
        for ident in ("90000101", "90000202", "90000303", "tg:", "dc:", "web:"):  # ids no score reaches
            assert ident not in m.text, (ident, m.text)


async def test_group_only_commands_are_refused_and_change_nothing(pub: Harness) -> None:
    h = pub
    await open_three(h)
    version, _ = await h.doc()
    # (`/set` in a private chat is about that chat, as always; the table takes none.)
    for line in ("/end", "/kick 2", "/start", "/add_ai", "/again"):
        replies = await h.text(ALA, line, chat=dm(ALA))
        assert [m.kind for m in replies] == ["error"], (line, [m.text for m in replies])
        assert isinstance(replies[0].audience, Sender) and replies[0].audience.user == ALA
        assert "publiczn" in replies[0].text.lower(), replies[0].text  # Polish, her language
    assert (await h.doc())[0] == version


async def test_phrases_reach_everyone_in_their_language_and_free_text_does_not(pub: Harness) -> None:
    h = pub
    await open_three(h)
    version, _ = await h.doc()
    said = await h.text(BORIS, "/say wp", chat=dm(BORIS))
    phrases = by_user(said, "phrase")
    assert set(phrases) == {u.key for u in PLAYERS}
    assert phrases["web:90000303"].body == "💬 Boris: Well played!"
    assert phrases["tg:90000101"].language == "pl" and "Boris" in phrases["tg:90000101"].body
    assert phrases["tg:90000101"].body != phrases["web:90000303"].body
    assert (await h.doc())[0] == version  # a phrase leaves the move buttons valid
    # Anything but a phrase id is not relayed: the sender alone is told which phrases there are.
    for line in ("/say meet me at example.com", "/say", "/say you idiot"):
        replies = await h.text(BORIS, line, chat=dm(BORIS))
        assert [m.kind for m in replies] == ["error"]
        assert all(m.audience.user == BORIS for m in replies)  # type: ignore[union-attr]
        assert "example.com" not in replies[0].text and "idiot" not in replies[0].text
    # Free text in the private chat is not a command and reaches nobody.
    assert parse_text("hello all, add me on discord", dm(BORIS), BORIS) is None


async def test_phrases_are_limited_in_rate(pub: Harness) -> None:
    h = pub
    await open_three(h)
    for _ in range(3):
        assert by_user(await h.text(EVE, "/say ty", chat=dm(EVE)), "phrase")
    over = await h.text(EVE, "/say ty", chat=dm(EVE))
    assert [m.kind for m in over] == ["error"] and over[0].audience.user == EVE  # type: ignore[union-attr]
    h.clock.advance(31)
    assert by_user(await h.text(EVE, "/say ty", chat=dm(EVE)), "phrase")


async def test_computers_fill_empty_seats_and_the_timer_plays_for_an_absent_player(pub: Harness) -> None:
    h = pub
    await open_three(h, (ALA, EVE), seats=3)
    _, doc = await h.doc()
    assert doc is not None and [s.kind for s in doc.seats] == ["human", "human", "ai"]
    assert doc.settings.turn_seconds == 90
    state = await h.state()
    assert state.to_act is not None and doc.seats[state.to_act].kind == "human"
    h.clock.advance(91)
    await h.tick()
    h.clock.advance(91)
    fired = await h.tick()
    assert fired and not [m for m in fired if isinstance(m.audience, Group)]
    notices = [m for m in fired if m.kind == "notice"]  # "X is away": to each, in their own language
    assert {(m.audience.user.key, m.language) for m in notices} == {(ALA.key, "pl"), (EVE.key, "en")}  # type: ignore[union-attr]
    _, after = await h.doc()
    assert after is not None and after.game is not None and doc.game is not None
    assert len(after.game.actions) > len(doc.game.actions)


async def test_a_seat_only_once_per_match() -> None:
    store = MemoryStore()
    service = Service(store, quiet_settings(), handlers=Handlers)
    with pytest.raises(ValueError):
        await open_public_table(service, PublicMatch((ALA, ALA), "polish", 3))
    with pytest.raises(ValueError):
        await open_public_table(service, PublicMatch(PLAYERS, "polish", 2))
    await service.close()


async def test_table_score_hand_export_back_and_leave_work_as_at_a_group_table(pub: Harness) -> None:
    h = pub
    await open_three(h)
    for line, kind in (("/table", "table"), ("/score", None), ("/hand", "hand")):
        replies = await h.text(EVE, line, chat=dm(EVE))
        assert replies and not errors(replies), (line, [m.text for m in replies])
        assert all(not isinstance(m.audience, Group) for m in replies)
        if kind == "table":  # asked anew: everyone's copy comes down again, each in their language
            assert set(by_user(replies, "table")) == {u.key for u in PLAYERS}
        if kind == "hand":
            assert [m.audience.user.key for m in replies if m.kind == "hand"] == ["web:90000303"]  # type: ignore[union-attr]
    # Away by the timer, back with /back; leaving gives the seat to a computer and nobody is told privately
    # anything of the table afterwards.
    left = await h.text(BORIS, "/leave", chat=dm(BORIS))
    assert not errors(left)
    _, doc = await h.doc()
    assert doc is not None and doc.seats[doc.seat_of(ALA.key) or 0].human
    assert [s.kicked for s in doc.seats if s.user == BORIS.key] == [True]
    later = await h.text(ALA, "/table", chat=dm(ALA))
    assert "dc:90000202" not in {m.audience.user.key for m in later if isinstance(m.audience, Private)}
    back = await h.text(ALA, "/back", chat=dm(ALA))
    assert all(not isinstance(m.audience, Group) for m in back)


async def test_a_whole_game_ends_with_the_score_sheet_and_chart_for_each_in_their_language(
    clock: Clock,
) -> None:
    store = MemoryStore(clock=clock)
    service = Service(store, quiet_settings(charts=True), handlers=Handlers, clock=clock)
    h = Harness(service, store, clock)
    freed: list[tuple[str, list[str]]] = []

    async def free(doc: TableDoc, keys: list[str]) -> None:
        freed.append((doc.status, keys))

    service.public_seats = free
    await open_three(h, (ALA, EVE), seats=3)
    _, doc = await h.doc()
    assert doc is not None
    seats = {u.key: doc.seat_of(u.key) for u in (ALA, EVE)}
    rng = random.Random(3)
    finals: dict[str, Message] = {}
    for _ in range(3000):
        state = await h.state()
        if state.finished:
            break
        seat = state.to_act
        user = next(u for u in (ALA, EVE) if seats[u.key] == seat)
        legal = list(state.legal_actions(seat))  # type: ignore[arg-type]
        action = choose_action("easy", seat_view(state, seat), legal, seed=rng.getrandbits(32))  # type: ignore[arg-type]
        replies = await h.text(user, action_text(action, state, seat), chat=dm(user))  # type: ignore[arg-type]
        assert not errors(replies)
        assert all(not isinstance(m.audience, Group) for m in replies)
        finals.update(by_user(replies, "final"))
    assert set(finals) == {ALA.key, EVE.key}
    assert freed == [("finished", sorted([ALA.key, EVE.key]))]  # the matchmaker frees both, once
    assert finals[ALA.key].language == "pl" and finals[EVE.key].language == "en"
    assert finals[ALA.key].body != finals[EVE.key].body
    assert all(m.image is not None and m.image.startswith(b"\x89PNG") for m in finals.values())
    # No "Play again" among strangers: the sheet offers the game record instead, which works from the
    # private chat although nobody sits at the finished table any more.
    labels = {b.label for row in finals[ALA.key].buttons for b in row}
    assert labels == {"Zapis gry"}, labels
    record = await h.press(ALA, finals[ALA.key].buttons[0][0].payload, chat=dm(ALA))
    assert [m.kind for m in record] == ["export"] and record[0].document is not None
    assert record[0].audience.user == ALA  # type: ignore[union-attr]
    await service.close()
