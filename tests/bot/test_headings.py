"""Every private message about a group's game says which group it belongs to, in the reader's language.

A player may sit at tables in several groups, and their private chat with the bot mixes the messages of
all of them: hands, warnings, "a computer played your turn", refusals of what they typed in a group.
"""

from __future__ import annotations

import random

from botkit import Harness, errors, make_user

from bot.commands import SYSTEM_COMMANDS, parse_text
from bot.i18n import LANGUAGES, translator
from bot.model import ChatRef, Command, Group, Message, Private, Sender, UserRef
from bot.render import render_chat_heading, render_heading

ALA, BARTEK = make_user(0), make_user(1)
CELINA = make_user(2, "pl")
USERS = {0: ALA, 1: BARTEK, 2: CELINA}


def heading(lang: str, title: str = "Test group") -> str:
    return render_heading(translator(lang), title)


def delivered_privately(m: Message) -> bool:
    """Private, or a Sender answer to a command given in a group (the adapter may send it privately)."""
    a = m.audience
    return isinstance(a, Private) or (isinstance(a, Sender) and not a.chat.private)


def private_chat(user: UserRef) -> ChatRef:
    return ChatRef(user.platform, user.user_id, user.name, True)


def test_the_heading_is_translated_and_escapes_the_title() -> None:
    texts = {lang: heading(lang) for lang in LANGUAGES}
    assert texts["en"] == "🃏 Game in «Test group»"
    assert len(set(texts.values())) == len(LANGUAGES)
    assert all("Test group" in text and text.startswith("🃏") for text in texts.values())
    assert heading("en", "*Friday* _cards_") == "🃏 Game in «\\*Friday\\* \\_cards\\_»"


async def test_every_private_message_of_a_game_names_the_group(harness: Harness) -> None:
    h = harness
    await h.open_table([ALA, BARTEK, CELINA])
    rng = random.Random(3)
    for _ in range(120):
        if not await h.play_turn(rng, USERS, buttons=0.5):
            break
    await h.text(ALA, "/score", chat=private_chat(ALA))
    await h.text(CELINA, "/hand")
    await h.text(BARTEK, "/bid 5")  # always refused (too low, off the step, or the wrong phase): privately
    private = [m for m in h.sent if delivered_privately(m)]
    assert {m.kind for m in private} >= {"hand", "error", "score"}
    for m in private:
        user = m.audience.user  # type: ignore[union-attr]
        lang = "pl" if user.key == CELINA.key else "en"
        first, _, rest = m.text.partition("\n")
        assert first == heading(lang) and rest and m.language == lang, m.text
        assert m.heading == first and m.body == rest
    assert all(heading("en") not in m.text for m in h.sent if isinstance(m.audience, Group))


async def test_warnings_and_turns_played_by_the_computer_name_the_group(timed: Harness) -> None:
    h = timed
    await h.open_table([ALA, BARTEK, CELINA], preset="russian")
    state = await h.state()
    assert state.to_act is not None
    absent = USERS[state.to_act]
    lang = "pl" if absent.key == CELINA.key else "en"
    h.clock.advance(61)
    warning = await h.tick()
    h.clock.advance(30)
    played = await h.tick()
    notices = [
        m for m in warning + played if isinstance(m.audience, Private) and m.audience.user.key == absent.key
    ]
    # Both come on top of the absent player's hand, under the heading that names the group.
    assert [m.kind for m in notices] == ["hand", "hand"] and notices[0].alert
    for m in notices:
        assert m.text.startswith(heading(lang) + "\n"), m.text
    assert notices[0].body.startswith(notices[0].alert)
    assert notices[1].body.startswith(translator(lang)._("Time is up: a computer played your turn."))


async def test_answers_in_place_and_private_tables_have_no_heading(harness: Harness) -> None:
    h = harness
    await h.open_table([ALA, BARTEK, CELINA])
    # Typed in the private chat, the refusal is answered where it was asked.
    state = await h.state()
    idle = USERS[((state.to_act or 0) + 1) % 3]
    out = await h.text(idle, "/pass", chat=private_chat(idle))
    assert errors(out) and isinstance(out[0].audience, Sender) and "🃏" not in out[0].text
    # A game in one's own private chat (against computers) needs no heading either.
    dm = private_chat(make_user(4))
    solo = make_user(4)
    assert not errors(await h.text(solo, "/new", chat=dm))
    assert not errors(await h.text(solo, "/add_ai", chat=dm))
    out = await h.text(solo, "/start", chat=dm)
    hands = [m for m in out if m.kind == "hand"]
    assert hands and all("🃏" not in m.text for m in out)
    # A refusal of a command given in a group without a table has no game to name, but it names the
    # group: read in the private chat, "there is no table here" must say where "here" is.
    for typed in ("/hand", "/start", "/bid 120", "/nonsense"):
        out = await h.text(ALA, typed, chat=ChatRef("t", "-555", "Elsewhere"))
        assert errors(out) and out[0].heading == "🃏 In «Elsewhere»", (typed, out[0].text)
        assert out[0].text.startswith("🃏 In «Elsewhere»\n") and "Game in" not in out[0].text
    pl = make_user(6, "pl")
    out = await h.text(pl, "/start", chat=ChatRef("t", "-555", "Elsewhere"))
    assert out[0].heading == render_chat_heading(translator("pl"), "Elsewhere") != "🃏 In «Elsewhere»"
    # Typed in a private chat with no table, it is answered in place: no heading.
    out = await h.text(ALA, "/start", chat=private_chat(ALA))
    assert errors(out) and "🃏" not in out[0].text


async def test_the_title_follows_the_group(harness: Harness) -> None:
    h = harness
    await h.open_table([ALA, BARTEK, CELINA])
    renamed = ChatRef(h.chat.platform, h.chat.chat_id, "Friday cards")
    # A command from the private chat carries the user's name as the title: the table keeps the group's.
    await h.text(ALA, "/hand", chat=private_chat(ALA))
    assert (await h.doc())[1].title == "Test group"  # type: ignore[union-attr]
    # The adapter's `title` command: stored at once, the hands on screen are redrawn without notifying.
    version, _ = await h.doc()
    out = await h.command(Command("title", (), renamed, ALA))
    new_version, doc = await h.doc()
    assert doc is not None and doc.title == "Friday cards" and new_version == version + 1
    hands = [m for m in out if m.kind == "hand"]
    assert {m.audience.user.key for m in hands} == {u.key for u in USERS.values()}  # type: ignore[union-attr]
    assert all(not m.notify and m.text.startswith(heading(m.language, "Friday cards")) for m in hands)
    assert not [m for m in out if isinstance(m.audience, Group)]
    # Nothing changes when it is the same title again, or when it comes from elsewhere.
    assert await h.command(Command("title", (), renamed, ALA)) == []
    assert await h.command(Command("title", (), private_chat(ALA), ALA)) == []
    assert (await h.doc())[0] == new_version
    # Any command from the group brings a new title along with it.
    later = ChatRef(h.chat.platform, h.chat.chat_id, "Saturday cards")
    state = await h.state()
    mover = USERS[state.to_act or 0]
    out = await h.text(mover, "/pass", chat=later)
    assert not errors(out)
    assert (await h.doc())[1].title == "Saturday cards"  # type: ignore[union-attr]
    private = [m for m in out if isinstance(m.audience, Private)]
    assert private and all("Saturday cards" in m.text.split("\n")[0] for m in private)


def test_system_commands_cannot_be_typed() -> None:
    for name in SYSTEM_COMMANDS:
        command = parse_text(f"/{name}", ChatRef("t", "-1"), ALA)
        assert command is not None and command.name == "unknown"
        assert parse_text(name, ChatRef("t", "-1"), ALA) is None


async def test_a_busy_table_names_the_group_too(harness: Harness) -> None:
    """Every attempt lost its compare-and-set: "busy, try again", privately, names the group's game."""
    from bot.storage import VersionConflict

    h = harness
    await h.open_table([ALA, BARTEK, CELINA])
    state = await h.state()
    mover = USERS[state.to_act or 0]

    async def conflict(table_id: str, expected: int, *args: object, **kwargs: object) -> int:
        raise VersionConflict(table_id, expected, expected + 1)

    h.store.save = conflict  # type: ignore[method-assign]
    out = await h.text(mover, "/pass")
    lang = "pl" if mover.key == CELINA.key else "en"
    busy = translator(lang)._("The table is busy. Please try again.")
    assert [m.kind for m in out] == ["error"] and out[0].body == busy
    assert out[0].heading == heading(lang)
    assert out[0].version == (await h.doc())[0]
