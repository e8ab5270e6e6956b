"""Play again at a public table, by Discord DM (issue 25 §3, `bot.public.rematch`).

Three people matched by `/thousand play` (English, Polish, Russian) play a short public game (target
200: the rules' `preset` patched for the test) by pressing their DM hands, through the real discord.py
client against the fake Discord. The final sheet in each DM offers Play again and No thanks in the
reader's language; a stranger's press (a button she was never shown, sent by a modified client) is
refused in her language and changes nothing; all three agree and a new public table seats the same three,
its table and hand by DM.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_play_now_discord import (
    DmSpy,
    forged_press,
    member,
    payloads,
    play_deal,
    public_bot,
    seated,
    settle,
    texts,
    until,
)

import bot.handlers.lobby as lobby
from bot.i18n import translator
from bot.render import ERRORS
from bot.storage import MemoryStore
from core.rules import preset as real_preset
from fakes.discord import FakeDiscord, FakeMessage, FakeUser

LANGS = {"Ann": "en", "Bolek": "pl", "Vera": "ru"}


def offer_dm(fake: FakeDiscord, user: FakeUser, table_id: str) -> FakeMessage:
    """The newest DM message with this table's Play again button."""
    for m in reversed(fake.dms(user)):
        if any(p[0] == "again" and p[3] == table_id for p in payloads(m)):
            return m
    raise AssertionError(f"no Play again of {table_id} in {user.username}'s DM")


def again_id(message: FakeMessage, yes: bool = True) -> str:
    for cid in message.custom_ids():
        p = payloads_of(cid)
        if p is not None and p[0] == "again" and p[1] == (() if yes else ("no",)):
            return cid
    raise AssertionError(f"no again button on {texts(message)!r}")


def payloads_of(cid: str) -> Any:
    from dckit import payload_of

    return payload_of(cid)


async def test_all_agree_by_dm_the_same_people_play_again(
    fake: FakeDiscord, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        lobby, "preset", lambda name, options=None: real_preset(name, {"target": 200, "barrel_at": 100})
    )
    guild = fake.add_guild("Card room")
    channel = fake.add_text_channel(guild, "thousand")
    people = [member(fake, guild, n, {"en": "en-US"}.get(lang, lang)) for n, lang in LANGS.items()]
    dora = member(fake, guild, "Dora", "tr")
    async with public_bot(fake, MemoryStore()) as (bot, public):
        spy = DmSpy(fake, bot, people)
        for user in people:
            it = await fake.slash(
                user, fake.dm_channel(user), "thousand", "play", preset="polish", pace="slow"
            )
            await it.response()
        for user in people:
            await until(lambda user=user: seated(public, user))
        first = await seated(public, people[0])
        assert first is not None
        await settle(fake, bot)
        service = bot.runtime.service
        for _ in range(40):
            _, doc = await service.load(first)
            assert doc is not None
            if doc.status == "finished":
                break
            await play_deal(fake, bot, channel, first, people, spy)
        await settle(fake, bot)
        _, doc = await service.load(first)
        assert doc is not None and doc.status == "finished" and doc.rematch is not None
        for user in people:
            t = translator(LANGS[user.username.capitalize()])
            sheet = offer_dm(fake, user, first)
            labels = [b.get("label") for b in sheet.buttons()]
            assert t._("Play again") in labels and t._("No thanks") in labels, labels

        # Dora never sat there: her client sends the button anyway, from her own DM.
        for command in ("play", "cancel"):  # a message of her own in her DM: her queue status
            it = await fake.slash(dora, fake.dm_channel(dora), "thousand", command)
            await it.response()
            await settle(fake, bot)
        mine = fake.dms(dora)[-1]
        version = (await service.load(first))[0]
        refused = await forged_press(fake, dora, mine, again_id(offer_dm(fake, people[0], first)))
        await settle(fake, bot)
        said = [texts(m) for m in (refused.original, *refused.followups) if m is not None]
        assert translator("tr")._(ERRORS["not_seated"]) in said, said
        assert (await service.load(first))[0] == version

        for user in people:
            sheet = offer_dm(fake, user, first)
            pressed = await fake.press(user, sheet, again_id(sheet))
            await pressed.response(timeout=6)
            await settle(fake, bot)
        _, doc = await service.load(first)
        assert doc is not None and doc.rematch is not None and doc.rematch.next is not None
        second = doc.rematch.next
        for user in people:
            await until(lambda user=user: _seated_at(public, user, second))
        _, new = await service.load(second)
        assert new is not None and new.status == "game"
        assert sorted(s.user or "" for s in new.seats if s.human) == sorted(f"dc:{u.id}" for u in people)
        for user in people:
            await fake.wait_until(
                lambda user=user: any(p[3] == second for m in fake.dms(user) for p in payloads(m)), timeout=10
            )
            t = translator(LANGS[user.username.capitalize()])
            assert any(t._("The new game has started below.") in texts(m) for m in fake.dms(user))
        assert not fake.messages(channel)
        await spy.close()
        assert spy.leaks == [], spy.leaks


async def _seated_at(public: Any, user: FakeUser, table_id: str) -> bool:
    return bool(await public.queue.seated_at(f"dc:{user.id}") == table_id)
