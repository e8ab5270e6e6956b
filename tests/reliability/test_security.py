"""Who may do what, tried by the people who may not: another seat, another chat, a finished table,
settings without the right, and button payloads forged for another table.

Every attempt is judged twice: it must be refused with one private error (or ignored), and the oracle of
`relkit` must find nothing changed that the sender had no right to change (byte for byte, every document).
"""

from __future__ import annotations

import pytest
from relkit import GROUPS, PRIVATES, USERS, Oracle, World, snapshot, user

from bot.commands import encode_payload, from_payload, parse_text, table_tag
from bot.i18n import translator
from bot.model import ChatRef, Command, Private, Sender, UserRef
from bot.render import render_error

U0, U1, U2, U3, U4, U5, U6 = USERS
G1, G2, G3, G4, G5 = GROUPS


async def attempt(world: World, command: Command, *, refused: bool = True) -> list[str]:
    """Send the command; the oracle's problems (and a missing refusal when one is expected)."""
    before = await snapshot(world.store)
    messages = await world.send(command)
    after = await snapshot(world.store)
    verdict = Oracle(world.games).judge(command, messages, before, after)
    problems = list(verdict.problems)
    if refused:
        if not verdict.refused:
            problems.append(f"{command.name} by {command.user.key} in {command.chat.key} was not refused")
        if before != after:
            problems.append("a refused command changed the store")
    return problems


def text(who: object, chat: object, line: str) -> Command:
    command = parse_text(line, chat, who)  # type: ignore[arg-type]
    assert command is not None
    return command


async def turn_of(world: World, table_id: str) -> tuple[int, int]:
    """(version, seat to act) of a game."""
    version, doc = await world.doc(table_id)
    state = world.games.state(doc)
    assert state is not None and state.to_act is not None
    return version, state.to_act


async def test_nobody_acts_for_another_seat(world: World) -> None:
    _version, seat = await turn_of(world, G1.key)
    mover = (U0, U1, U2)[seat]
    others = [u for u in (U0, U1, U2) if u != mover]
    hand = world.hands[mover.key][0]
    buttons = [b.payload for row in hand.buttons for b in row]
    assert buttons, "the player to act has move buttons"
    for other in others:
        for payload in buttons:
            # The mover's own buttons, pressed by another player, in the group and in their private chat.
            for chat in (G1, PRIVATES[USERS.index(other)]):
                assert await attempt(world, from_payload(payload, chat, other)) == []
        for line in ("/pass", "/bid 100", "/bid 110", "/play QS"):
            assert await attempt(world, text(other, G1, line)) == []
    # And a stranger, who sits nowhere in G1.
    for payload in buttons:
        assert await attempt(world, from_payload(payload, PRIVATES[4], U4)) == []
        assert await attempt(world, from_payload(payload, G1, U4)) == []


async def test_a_button_works_only_in_its_own_chat(world: World) -> None:
    _version, seat = await turn_of(world, G1.key)
    mover = (U0, U1, U2)[seat]
    payload = next(b.payload for row in world.hands[mover.key][0].buttons for b in row)
    for chat in (G2, G3, G4, G5):
        problems = await attempt(world, from_payload(payload, chat, mover))
        assert problems == []
    # The same move typed in a group where the mover has no seat is refused too.
    assert await attempt(world, text(mover, G2, "/pass")) == []
    assert await attempt(world, text(mover, G5, "/pass")) == []


async def test_nothing_happens_at_a_finished_table(world: World) -> None:
    _, doc = await world.doc(G3.key)
    assert doc is not None and doc.status == "finished"
    for who in (U0, U5, U1):
        for line in (
            "/pass",
            "/bid 100",
            "/play QS",
            "/start",
            "/join",
            "/leave",
            "/end",
            "/kick 2",
            "/back",
        ):
            assert await attempt(world, text(who, G3, line)) == []
        for chat in (G3, PRIVATES[USERS.index(who)]):
            for name, args in (("pass", ()), ("bid", ("100",)), ("join", ()), ("start", ()), ("end", ())):
                for v in range(1, 8):
                    payload = encode_payload(name, args, v, G3.key)
                    cmd = from_payload(payload, chat, who)
                    assert await attempt(world, cmd, refused=False) == []


async def test_only_admins_and_the_creator_change_settings(world: World) -> None:
    group_settings = await world.store.load(f"settings:{G1.key}")  # saved by the first /new there
    # U1 plays at G1 but neither created it nor administers the group.
    assert await attempt(world, text(U1, G1, "/set turn 60")) == []
    assert await attempt(world, text(U1, G1, "/set lang pl")) == []
    assert await attempt(world, text(U4, G1, "/set preset russian")) == []
    assert await attempt(world, text(user(4, admin=False), G4, "/set target 500")) == []
    # In their own private chat U1 changes that chat's settings, and only those.
    group_settings = await world.store.load(f"settings:{G1.key}")
    assert await attempt(world, text(U1, PRIVATES[1], "/set turn 60"), refused=False) == []
    assert (await world.store.load(f"settings:{G1.key}")) == group_settings
    # An admin of the group may, and so may the creator of its live table.
    assert await attempt(world, text(user(1, admin=True), G1, "/set turn 60"), refused=False) == []
    assert await attempt(world, text(U0, G1, "/set lang pl"), refused=False) == []
    # An admin of another group is nobody here.
    assert await attempt(world, text(user(4, admin=True), G4, "/end"), refused=False) == []
    assert await attempt(world, text(user(4, admin=False), G1, "/end")) == []


@pytest.mark.parametrize("who", [1, 2])
async def test_a_seated_player_cannot_end_the_game_from_the_private_chat(world: World, who: int) -> None:
    """`/end` sent in one's private chat goes to the one live table one sits at: it must not be ended by
    a player who neither created it nor administers the group (U2 also sits in G4's lobby)."""
    person = USERS[who]
    assert await attempt(world, text(person, PRIVATES[who], "/end")) == []
    _, doc = await world.doc(G1.key)
    assert doc is not None and doc.status == "game"


async def test_forged_payloads_cannot_reach_another_table(world: World) -> None:
    """Payloads a client could make up: every command code, for tables the sender has nothing to do with,
    at every version the table had, pressed in the sender's private chat and in their group."""
    codes = ("join", "leave", "add_ai", "remove_ai", "start", "end", "kick", "back", "new", "pass", "bid")
    targets = {G1.key: (U4, U6), G2.key: (U0, U6), G4.key: (U6, U3), G5.key: (U6,), PRIVATES[6].key: (U0,)}
    for table_id, people in targets.items():
        top, _ = await world.doc(table_id)
        for who in people:
            mine = PRIVATES[USERS.index(who)]
            for name in codes:
                args: tuple[str, ...] = ("1",) if name in ("kick", "remove_ai") else ()
                if name == "bid":
                    args = ("120",)
                for v in range(0, top + 2):
                    for chat in (mine, G3):
                        cmd = from_payload(encode_payload(name, args, v, table_id), chat, who)
                        problems = await attempt(world, cmd)
                        assert problems == [], (name, v, chat.key, who.key)


async def test_a_lobby_is_managed_by_its_people_only(world: World) -> None:
    """U2 sits in G4's lobby but did not create it: they may add a computer and start, not remove people;
    U6 sits elsewhere and may do nothing to it, whether typed or pressed from the private chat."""
    version, _ = await world.doc(G4.key)
    for line in ("/kick 1", "/kick Fiona", "/set target 300", "/end"):
        assert await attempt(world, text(U2, G4, line)) == []
        assert await attempt(world, text(U6, G4, line)) == []
    for name, args in (("kick", ("1",)), ("end", ()), ("add_ai", ()), ("start", ()), ("remove_ai", ())):
        for chat in (PRIVATES[6], PRIVATES[2]):
            who = U6 if chat == PRIVATES[6] else U2
            if who == U2 and name in ("add_ai", "start", "remove_ai"):
                continue  # a seated player may
            cmd = from_payload(encode_payload(name, args, version, G4.key), chat, who)
            assert await attempt(world, cmd) == [], (name, chat.key)


async def test_refusals_are_private(world: World) -> None:
    for who, chat, line in ((U4, G1, "/play QS"), (U1, G1, "/set turn 60"), (U5, G3, "/pass")):
        messages = await world.send(text(who, chat, line))
        assert len(messages) == 1
        assert isinstance(messages[0].audience, Sender) and messages[0].audience.user == who
    version, seat = await turn_of(world, G1.key)
    mover = (U0, U1, U2)[seat]
    payload = next(b.payload for row in world.hands[mover.key][0].buttons for b in row)
    stale = payload.rsplit(":", 3)
    # A stale button: the mover gets the refusal and a fresh hand, both to them alone.
    old = from_payload(f"{stale[0]}:{stale[1]}:{version - 1}:{stale[3]}", G1, mover)
    messages = await world.send(old)
    assert [m.kind for m in messages] in (["error"], ["error", "hand"])
    assert all(isinstance(m.audience, Sender | Private) and m.audience.user == mover for m in messages)


MALLORY = UserRef("tg", "6666", "Mallory", "en")
MALLORY_DM = ChatRef("tg", "6666", "Mallory", True)


async def test_an_outsider_cannot_open_join_start_end_or_kick_from_the_private_chat(world: World) -> None:
    """Mallory is in none of the groups but knows their ids. Whatever she sends from her private chat (typed,
    or payloads she makes up for every table, at every version it had, with its real tag) is refused with
    a message that names no group, and no document changes (`attempt`, and the oracle's title check)."""
    for line in ("/join", "/start", "/go", "/add_ai", "/end", "/kick Ala", "/kick 1", "/leave", "/back"):
        assert await attempt(world, text(MALLORY, MALLORY_DM, line)) == [], line
    codes = (
        ("new", ("polish",)),
        ("join", ()),
        ("add_ai", ()),
        ("start", ()),
        ("end", ()),
        ("kick", ("1",)),
        ("remove_ai", ("2",)),
        ("leave", ()),
        ("hand", ()),
        ("score", ()),
        ("export", ()),
    )
    for table in (G1, G2, G4, G5):
        top, doc = await world.doc(table.key)
        tag = table_tag(doc.serial) if doc is not None else None
        for name, args in codes:
            for version in range(max(0, top - 2), top + 1):
                cmd = from_payload(encode_payload(name, args, version, table.key, tag), MALLORY_DM, MALLORY)
                messages = await world.send(cmd)
                assert [m.kind for m in messages] == ["error"], (name, table.key, messages)
                assert "Group" not in messages[0].text and not messages[0].heading, messages[0].text
                assert await attempt(world, cmd) == [], (name, table.key, version)
    # The groups saw nothing: no table appeared in G5, G4's lobby and G1's game are as they were.
    assert (await world.doc(G5.key))[1] is None


async def test_a_player_cannot_take_a_seat_from_the_private_chat(world: World) -> None:
    """U6 sits at their own table only; a join or new payload for G4's lobby pressed in their private chat
    (even one the lobby really shows) does not seat them: seats are taken in the group."""
    version, doc = await world.doc(G4.key)
    assert doc is not None and doc.status == "lobby"
    for name in ("join", "new"):
        cmd = from_payload(encode_payload(name, (), version, G4.key, table_tag(doc.serial)), PRIVATES[6], U6)
        assert await attempt(world, cmd) == [], name
    _, after = await world.doc(G4.key)
    assert after is not None and after.seat_of(U6.key) is None


async def test_a_creator_handed_to_a_computer_can_no_longer_end_the_game(world: World) -> None:
    """U0 created G1; once an admin hands U0's seat to a computer, U0's `end` (typed in the group, or a
    payload pressed in the private chat) is refused: the creator's right lasts while they sit there."""
    admin = user(1, admin=True)
    assert await attempt(world, text(admin, G1, "/kick Ala"), refused=False) == []
    version, doc = await world.doc(G1.key)
    assert doc is not None and doc.status == "game" and doc.seat_of(U0.key) is None
    assert await attempt(world, text(U0, G1, "/end")) == []
    cmd = from_payload(encode_payload("end", (), version, G1.key, table_tag(doc.serial)), PRIVATES[0], U0)
    assert await attempt(world, cmd) == []
    assert (await world.doc(G1.key))[1].status == "game"  # type: ignore[union-attr]


@pytest.mark.parametrize("line", ["/give 9C JD", "/discard 9C JD", "!give 9C, JD", "/discard"])
async def test_secret_moves_are_never_typed_in_the_group(world: World, line: str) -> None:
    """Cards given or laid down stay hidden: typed in the group, whoever sends them, the move is refused
    with a pointer to the private chat (to the sender alone) and nothing is stored."""
    expected = render_error(translator("en"), "secret_in_group")
    for who in (U0, U1, U2, U4):
        assert await attempt(world, text(who, G1, line)) == []
        messages = await world.send(text(who, G1, line))
        assert [m.body for m in messages] == [expected]
        assert isinstance(messages[0].audience, Sender) and messages[0].audience.user == who
    # In the private chat the same words reach the game (refused or not for game reasons, never this one).
    messages = await world.send(text(U0, PRIVATES[0], line))
    assert expected not in [m.body for m in messages]


async def test_an_outsiders_refusal_does_not_even_show_the_groups_language(world: World) -> None:
    """G4's chat speaks Polish; Mallory's client says no language. Her refusal for a payload naming G4 is
    in the bot's default language: nothing of the group, not even its language, reaches her."""
    assert await attempt(world, text(user(5, admin=True), G4, "/set lang pl"), refused=False) == []
    silent = UserRef("tg", "6666", "Mallory")
    version, doc = await world.doc(G4.key)
    assert doc is not None and doc.settings.language == "pl"
    cmd = from_payload(encode_payload("end", (), version, G4.key, table_tag(doc.serial)), MALLORY_DM, silent)
    messages = await world.send(cmd)
    assert [(m.kind, m.language, m.text) for m in messages] == [
        ("error", "en", render_error(translator("en"), "not_seated"))
    ]
