"""Tables per chat: the lobby, seats, starting, and who may do what."""

from __future__ import annotations

from botkit import Harness, errors, group_messages, make_user

from bot.model import ChatRef, Group, Private, Sender

ALA, BARTEK, CELINA, DOROTA, EMIL = (make_user(i) for i in range(5))


async def test_lobby_to_game(harness: Harness) -> None:
    h = harness
    out = await h.text(ALA, "/new")
    assert not errors(out)
    lobby = [m for m in out if m.kind == "lobby"]
    assert lobby and isinstance(lobby[0].audience, Group) and lobby[0].buttons
    _, doc = await h.doc()
    assert doc is not None and doc.status == "lobby" and doc.creator == ALA.key and len(doc.seats) == 1

    assert not errors(await h.text(BARTEK, "/join"))
    assert not errors(await h.text(ALA, "/add_ai hard"))
    _, doc = await h.doc()
    assert doc is not None
    assert [s.kind for s in doc.seats] == ["human", "human", "ai"]
    assert doc.seats[2].level == "hard"
    assert not errors(await h.text(ALA, "/remove_ai"))
    assert not errors(await h.text(ALA, "/add_ai"))

    out = await h.text(BARTEK, "/start")
    assert not errors(out)
    _, doc = await h.doc()
    assert doc is not None and doc.status == "game" and doc.game is not None
    kinds = [m.kind for m in out]
    assert "table" in kinds
    hands = [m for m in out if m.kind == "hand"]
    assert {m.audience.user.key for m in hands if isinstance(m.audience, Private)} == {ALA.key, BARTEK.key}


async def test_one_live_table_per_chat_and_a_new_one_after_the_end(harness: Harness) -> None:
    h = harness
    await h.text(ALA, "/new")
    assert [m.kind for m in await h.text(BARTEK, "/new")] == ["error"]
    assert not errors(await h.text(ALA, "/end"))
    _, doc = await h.doc()
    assert doc is not None and doc.status == "finished"
    assert not errors(await h.text(BARTEK, "/new russian"))
    _, doc2 = await h.doc()
    assert doc2 is not None and doc2.serial != doc.serial and doc2.settings.preset == "russian"


async def test_seat_limits_follow_the_preset(harness: Harness) -> None:
    h = harness
    await h.text(ALA, "/new russian")
    # Russian is played by 3 or 4: two seats cannot start.
    await h.text(BARTEK, "/join")
    out = await h.text(ALA, "/start")
    assert [m.kind for m in out] == ["error"] and "enough" in out[0].text
    await h.text(CELINA, "/join")
    await h.text(DOROTA, "/join")
    out = await h.text(EMIL, "/join")
    assert [m.kind for m in out] == ["error"] and "full" in out[0].text
    out = await h.text(ALA, "/add_ai")
    assert errors(out)
    assert not errors(await h.text(CELINA, "/start"))
    _, doc = await h.doc()
    assert doc is not None and doc.game is not None and doc.game.spec["players"] == 4


async def test_leaving_the_lobby_and_the_creator_passing_on(harness: Harness) -> None:
    h = harness
    await h.text(ALA, "/new")
    await h.text(BARTEK, "/join")
    assert not errors(await h.text(ALA, "/leave"))
    _, doc = await h.doc()
    assert doc is not None and [s.user for s in doc.seats] == [BARTEK.key] and doc.creator == BARTEK.key
    assert not errors(await h.text(BARTEK, "/leave"))
    _, doc = await h.doc()
    assert doc is not None and doc.status == "finished"


async def test_who_may_do_what_in_the_lobby(harness: Harness) -> None:
    h = harness
    await h.text(ALA, "/new")
    # A stranger may not fill the table with computers nor start it; an admin may.
    for text in ("/add_ai", "/start", "/leave", "/set turn 60", "/end"):
        out = await h.text(EMIL, text)
        assert len(out) == 1 and out[0].kind == "error" and isinstance(out[0].audience, Sender), text
    admin = make_user(5, admin=True)
    assert not errors(await h.text(admin, "/add_ai"))
    assert not errors(await h.text(admin, "/set turn 60"))
    _, doc = await h.doc()
    assert doc is not None and doc.settings.turn_seconds == 60
    # The creator may too.
    assert not errors(await h.text(ALA, "/set level hard"))
    _, doc = await h.doc()
    assert doc is not None and doc.settings.ai_level == "hard" and doc.seats[1].level == "hard"


async def test_settings_are_validated_and_kept_per_chat(harness: Harness) -> None:
    h = harness
    admin = make_user(5, admin=True)
    before = await h.store.load("settings:" + h.chat.key)
    for text in (
        "/set preset chinese",
        "/set lang xx",
        "/set turn 5",
        "/set turn soon",
        "/set level godlike",
        "/set no_such_option 1",
        "/set must_beat maybe",
        "/set opening_bid 33",
        "/set preset",
    ):
        out = await h.text(admin, text)
        assert [m.kind for m in out] == ["error"], text
    assert await h.store.load("settings:" + h.chat.key) == before
    assert not errors(await h.text(admin, "/set preset russian"))
    assert not errors(await h.text(admin, "/set must_beat on"))
    assert not errors(await h.text(admin, "/set lang pl"))
    await h.text(ALA, "/new")
    _, doc = await h.doc()
    assert doc is not None
    assert (doc.settings.preset, doc.settings.options, doc.settings.language) == (
        "russian",
        {"must_beat": True},
        "pl",
    )
    out = await h.text(ALA, "/rules")
    assert any("must" in m.text or "russian" in m.text for m in out)


async def test_a_private_chat_table_against_computers(harness: Harness) -> None:
    h = harness
    dm = ChatRef("t", "100", "", private=True)
    for text in ("/new", "/add_ai", "/start"):
        assert not errors(await h.text(ALA, text, chat=dm)), text
    stored = await h.store.load(dm.key)
    assert stored is not None
    # Game commands from the DM find the table.
    out = await h.text(ALA, "/hand", chat=dm)
    assert not errors(out) and out[0].kind == "hand"


async def test_group_lobby_messages_are_public_and_edited_in_place(harness: Harness) -> None:
    h = harness
    first = group_messages(await h.text(ALA, "/new"))
    second = group_messages(await h.text(BARTEK, "/join"))
    assert first[0].key == second[0].key and second[0].notify is False
    assert "Bartek" in second[0].text
