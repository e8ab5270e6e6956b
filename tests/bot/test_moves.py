"""Moves typed and pressed, and bad input of every kind: a private reply, and nothing changes."""

from __future__ import annotations

import random

from botkit import Harness, action_text, errors, make_user

from bot.commands import decode_payload, encode_payload
from bot.i18n import translator
from bot.model import ChatRef, Private, Sender
from core.actions import Bid, Pass, Play
from core.cards import CARD_NAMES, cards_of
from core.deal import Phase

ALA, BARTEK, CELINA = (make_user(i) for i in range(3))
USERS = {0: ALA, 1: BARTEK, 2: CELINA}


async def three_humans(h: Harness, preset: str = "polish") -> None:
    await h.open_table([ALA, BARTEK, CELINA], preset=preset)


async def to_play_phase(h: Harness) -> None:
    rng = random.Random(5)
    for _ in range(200):
        state = await h.state()
        if state.deal.phase == Phase.PLAY:
            return
        assert await h.play_turn(rng, USERS)
    raise AssertionError("no play phase")


async def unchanged(h: Harness, user_text: list[tuple[object, str]]) -> None:
    """Each command is refused with one private message and the stored table stays as it was."""
    before = await h.store.load(h.table_id)
    for user, text in user_text:
        out = await h.text(user, text)  # type: ignore[arg-type]
        assert len(out) == 1, (text, [m.text for m in out])
        assert out[0].kind == "error" and isinstance(out[0].audience, Sender), text
        assert out[0].audience.user == user
        assert await h.store.load(h.table_id) == before, text


async def test_typed_moves_in_every_form(harness: Harness) -> None:
    h = harness
    await three_humans(h, "russian")
    state = await h.state()
    opener = state.to_act
    assert opener is not None
    user = USERS[opener]
    # "bid 100" without a slash, with the bot name, in capitals.
    assert not errors(await h.text(user, "BID@thousand_bot 100"))
    state = await h.state()
    assert state.actions_this_deal()[-1] == (opener, Bid(100))
    nxt = state.to_act
    assert nxt is not None
    assert not errors(await h.text(USERS[nxt], "pass"))
    state = await h.state()
    assert state.actions_this_deal()[-1] == (nxt, Pass())


async def test_cards_typed_in_many_ways(harness: Harness) -> None:
    h = harness
    await three_humans(h)
    await to_play_phase(h)
    t_pl = translator("pl")
    for i in range(6):
        state = await h.state()
        seat = state.to_act
        assert seat is not None
        legal = [a for a in state.legal_actions(seat) if isinstance(a, Play)]
        card = legal[0].card
        name = CARD_NAMES[card]
        forms = [name, name.lower(), name[:-1] + "♣♠♥♦"["CSHD".index(name[-1])], t_pl.card(card)]
        user = USERS[seat]
        if i % 2:
            await h.text(user, "/lang pl")
        assert not errors(await h.text(user, f"/play {forms[i % len(forms)]}"))
        state = await h.state()
        assert not state.deal.hands[seat] >> card & 1


async def test_bad_input_changes_nothing(harness: Harness) -> None:
    h = harness
    await three_humans(h)
    state = await h.state()
    seat = state.to_act
    assert seat is not None
    me, other = USERS[seat], USERS[(seat + 1) % 3]
    stranger = make_user(4)
    await unchanged(
        h,
        [
            (me, "/dance"),
            (me, "/bid lots"),
            (me, "/bid"),
            (me, "/bid 105"),
            (me, "/bid 1000"),
            (me, "/play QS"),
            (me, "/play XX"),
            (me, "/contract 120"),
            (other, "/pass"),
            (other, "/bid 120"),
            (stranger, "/pass"),
            (stranger, "/hand"),
            (me, "/join"),
            (me, "/add_ai"),
            (me, "/set bogus 1"),
            (me, "/back"),
            (me, "/kick 9"),
        ],
    )


async def test_refusals_are_translated_for_the_sender(harness: Harness) -> None:
    h = harness
    await three_humans(h)
    state = await h.state()
    seat = state.to_act
    assert seat is not None
    out = await h.text(USERS[(seat + 1) % 3], "/pass")
    english = out[0].text
    await h.text(USERS[(seat + 1) % 3], "/lang ru")
    out = await h.text(USERS[(seat + 1) % 3], "/pass")
    assert out[0].language == "ru"
    # Sent privately, it names the group's game first, in the reader's language.
    assert out[0].text == "🃏 Игра в «Test group»\n" + translator("ru")._("It is not your turn.")
    assert english == "🃏 Game in «Test group»\nIt is not your turn."


async def test_buttons_stale_forged_and_foreign(harness: Harness) -> None:
    h = harness
    await three_humans(h)
    state = await h.state()
    seat = state.to_act
    assert seat is not None
    me = USERS[seat]
    hand = h.hands[me.key]
    version, _ = await h.doc()
    payloads = [b.payload for row in hand.buttons for b in row]
    assert all(decode_payload(p)[2] == version for p in payloads)
    before = await h.store.load(h.table_id)
    bad = [
        encode_payload("pass", (), version + 5, h.table_id),  # a version the table never had
        encode_payload("pass", (), version, "t:-999"),  # another table, pressed in this group
        "p:QS:1:t:-100:extra",  # malformed
        "garbage",
    ]
    for payload in bad:
        out = await h.press(me, payload)
        assert [m.kind for m in out] == ["error"], payload
        assert await h.store.load(h.table_id) == before
    # Someone else's action makes my old buttons stale: refused, with a fresh hand.
    other = USERS[(seat + 1) % 3]
    await h.text(other, "/lang pl")  # changes the table (a seat's language): a new version
    out = await h.press(me, payloads[0])
    assert out[0].kind == "error" and "out of date" in out[0].text
    assert any(m.kind == "hand" and isinstance(m.audience, Private) for m in out[1:])
    fresh = h.hands[me.key]
    newer = [b.payload for row in fresh.buttons for b in row]
    assert not errors(await h.press(me, newer[0]))
    # Pressing it again (a double click) is stale now.
    out = await h.press(me, newer[0])
    assert errors(out)


async def test_button_from_private_chat_reaches_the_table(harness: Harness) -> None:
    h = harness
    await three_humans(h)
    state = await h.state()
    seat = state.to_act
    assert seat is not None
    me = USERS[seat]
    dm = ChatRef("t", me.user_id, "", private=True)
    payload = h.hands[me.key].buttons[0][0].payload
    assert not errors(await h.press(me, payload, chat=dm))
    # A typed move in the DM goes to the one table the user sits at.
    state = await h.state()
    nxt = state.to_act
    assert nxt is not None
    legal = list(state.legal_actions(nxt))
    dm2 = ChatRef("t", USERS[nxt].user_id, "", private=True)
    assert not errors(await h.text(USERS[nxt], action_text(legal[0], state, nxt), chat=dm2))


async def test_give_with_buttons_step_by_step(harness: Harness) -> None:
    h = harness
    await three_humans(h)
    rng = random.Random(1)
    for _ in range(50):
        state = await h.state()
        if state.deal.phase == Phase.EXCHANGE:
            break
        assert await h.play_turn(rng, USERS, buttons=0.0)
    state = await h.state()
    assert state.deal.phase == Phase.EXCHANGE
    seat = state.to_act
    assert seat is not None
    me = USERS[seat]
    await h.text(me, "/hand")
    cards = cards_of(state.deal.hands[seat])
    first = h.button_for(me, "give", (CARD_NAMES[cards[0]],))
    assert first is not None
    out = await h.press(me, first)
    assert not errors(out) and await h.state() is not None
    assert (await h.state()).deal.phase == Phase.EXCHANGE  # nothing applied yet
    second = h.button_for(me, "give", (CARD_NAMES[cards[0]], CARD_NAMES[cards[1]]))
    assert second is not None
    assert not errors(await h.press(me, second))
    state = await h.state()
    assert state.deal.phase != Phase.EXCHANGE
    # Typed gives must name a card for each other player.
    assert errors(await h.text(me, "/give 9C"))


async def test_play_a_whole_game_with_three_people(harness: Harness) -> None:
    h = harness
    await three_humans(h, "estonian")
    rng = random.Random(11)
    for _ in range(3000):
        _, doc = await h.doc()
        assert doc is not None
        if doc.status == "finished":
            break
        assert await h.play_turn(rng, USERS, sensible=True)
    _, doc = await h.doc()
    assert doc is not None and doc.status == "finished" and doc.ended == "won"
    finals = [m for m in h.sent if m.kind == "final"]
    assert len(finals) == 1 and "🏆" in finals[0].text
    # Statistics were recorded once.
    stats = await h.store.get_stats(f"user:{ALA.key}")
    assert stats["games"] == 1
    top = await h.text(ALA, "/top")
    assert top[0].kind == "top" and "Ala" in top[0].text


async def test_language_chosen_in_the_private_chat_reaches_the_group_table(harness: Harness) -> None:
    h = harness
    await three_humans(h)
    dm = ChatRef("t", BARTEK.user_id, "", private=True)
    out = await h.text(BARTEK, "/lang uk", chat=dm)
    reply = [m for m in out if isinstance(m.audience, Sender)]
    assert len(reply) == 1 and reply[0].language == "uk" and not errors(out)
    version, doc = await h.doc()
    assert doc is not None and doc.seats[1].lang == "uk"
    # The group's table changed: its player to act got their hand again, with buttons of the new version.
    mover = USERS[(await h.state()).to_act or 0]
    hand = [m for m in out if m.kind == "hand" and m.audience.user.key == mover.key]  # type: ignore[union-attr]
    assert len(hand) == 1 and hand[0].version == version and hand[0].heading
    out = await h.text(BARTEK, "/hand")
    assert out[0].language == "uk" and "Ваші карти" in out[0].text


async def test_a_hand_asked_for_is_a_fresh_message(harness: Harness) -> None:
    """`/hand` and the table's My hand button post the hand anew (notify), so it shows at the bottom of the
    private chat, also when it is not the player's turn and nothing in it changed."""
    h = harness
    await three_humans(h)
    state = await h.state()
    assert state.to_act is not None
    idle = USERS[(state.to_act + 1) % 3]
    table = next(m for m in h.sent if m.kind == "table")
    my_hand = next(b.payload for row in table.buttons for b in row if decode_payload(b.payload)[0] == "hand")
    private = ChatRef(idle.platform, idle.user_id, idle.name, True)
    for out in (
        await h.text(idle, "/hand"),
        await h.text(idle, "hand", chat=private),
        await h.press(idle, my_hand),
        await h.press(idle, my_hand, chat=private),
    ):
        assert len(out) == 1 and out[0].kind == "hand" and out[0].notify, out
        assert isinstance(out[0].audience, Private) and out[0].audience.user.key == idle.key
        assert out[0].key == f"hand:{h.table_id}"
    # A hand that only changed (the mover's, after the move) is edited in place, not pushed anew.
    mover = USERS[state.to_act]
    out = await h.text(mover, action_text(state.legal_actions(state.to_act)[-1], state, state.to_act))
    assert not errors(out)
    own = [m for m in out if m.kind == "hand" and m.audience.user.key == mover.key]  # type: ignore[union-attr]
    assert len(own) == 1 and not own[0].notify


async def test_buttons_of_an_expired_table_are_stale_for_the_next_one(harness: Harness) -> None:
    """A table that expired is gone from the store, and the chat's next table counts its versions from 1
    again: the old table's buttons carry the same versions, but they are refused as out of date."""
    h = harness
    assert not errors(await h.text(ALA, "/new"))
    assert not errors(await h.text(BARTEK, "/join"))  # version 2
    lobby = [m for m in h.sent if m.kind == "lobby"][-1]
    old_start = next(
        b.payload for row in lobby.buttons for b in row if decode_payload(b.payload)[0] == "start"
    )
    assert not errors(await h.text(ALA, "/start"))  # version 3
    table = [m for m in h.sent if m.kind == "table"][-1]
    old_hand = next(b.payload for row in table.buttons for b in row)
    state = await h.state()
    mover = USERS[state.to_act or 0]
    old_move = h.hands[mover.key].buttons[0][0].payload
    assert [decode_payload(p)[2] for p in (old_start, old_hand, old_move)] == [2, 3, 3]
    # A week without a move: the table expires.
    h.clock.advance(h.service.settings.game_ttl + 60)
    assert await h.store.load(h.table_id) is None
    assert not errors(await h.text(ALA, "/new"))
    assert not errors(await h.text(BARTEK, "/join"))
    assert (await h.doc())[0] == 2
    stale = "This button is out of date: the table has moved on."
    before = await h.store.load(h.table_id)
    out = await h.press(ALA, old_start)  # same code, same version as the new lobby's Start
    assert [m.body for m in out] == [stale]
    assert await h.store.load(h.table_id) == before
    assert not errors(await h.text(ALA, "/start"))
    assert (await h.doc())[0] == 3
    before = await h.store.load(h.table_id)
    for user, payload in ((ALA, old_hand), (mover, old_move)):
        out = await h.press(user, payload)
        assert out[0].kind == "error" and out[0].body == stale, payload
        assert all(m.kind != "hand" or not m.buttons or m.audience.user.key == user.key for m in out)  # type: ignore[union-attr]
        assert await h.store.load(h.table_id) == before
    # The new table's own buttons work.
    state = await h.state()
    mover = USERS[state.to_act or 0]
    assert not errors(await h.press(mover, h.hands[mover.key].buttons[0][0].payload))


async def test_the_player_to_act_keeps_good_buttons_whatever_changes_the_table(harness: Harness) -> None:
    """A move button needs the exact table version. Commands that change the table but not the game (a
    seat's language, a vote to kick, someone else leaving) redraw the hand of the player to act, without
    notifying them, so the buttons they see keep working."""
    h = harness
    await three_humans(h)
    state = await h.state()
    assert state.to_act is not None
    mover = USERS[state.to_act]
    others = [u for u in USERS.values() if u.key != mover.key]
    steps = [
        (others[0], "/lang pl"),
        (others[0], f"/kick {others[1].name}"),  # one vote of two: nothing decided yet
        (others[1], "/leave"),
    ]
    for user, text in steps:
        before, _ = await h.doc()
        out = await h.text(user, text)
        assert not errors(out), (text, [m.text for m in out])
        after, _ = await h.doc()
        assert after == before + 1, text
        hands = [m for m in out if m.kind == "hand" and m.audience.user.key == mover.key]  # type: ignore[union-attr]
        assert len(hands) == 1 and not hands[0].notify, text
        assert hands[0].buttons and all(
            decode_payload(b.payload)[2] == after for row in hands[0].buttons for b in row
        )
    # The last hand's buttons work (bidding: Pass or a bid).
    assert USERS[(await h.state()).to_act or 0].key == mover.key
    assert not errors(await h.press(mover, hands[0].buttons[0][0].payload))
    assert (await h.doc())[0] == after + 1


async def test_lang_in_a_group_changes_no_other_chats_table(harness: Harness) -> None:
    h = harness
    await three_humans(h)
    other = ChatRef("t", "-200", "Other group")
    assert not errors(await h.text(BARTEK, "/new", chat=other))
    before = await h.store.load(h.table_id)
    out = await h.text(BARTEK, "/lang uk", chat=other)
    assert not errors(out)
    assert await h.store.load(h.table_id) == before  # the first group's table is as it was
    stored = await h.store.load(other.key)
    assert stored is not None and '"lang":"uk"' in stored.document
