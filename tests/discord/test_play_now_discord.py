"""Play now from Discord: `/thousand play` and `/thousand cancel`, the queue's status message and the public
table by direct message, through the real discord.py client against the fake Discord.

Three people (English, Polish, Russian) ask for a game, from a guild channel or from their DM with the
bot: each gets an ephemeral answer, then the status message by DM; they are matched and play a whole deal
by pressing the buttons of their DM hands; a fourth, who cancelled in the DM first, is never seated. Every
version of every DM is read as it appears for the cards of someone else at the table (`cardspy`), and a
DM message never shows an older table version after a newer one. Phrases reach the others in their own
language; free text is relayed to nobody. One person alone is offered computers and starts with them
from the DM; stale and forged buttons are refused in the presser's language; closed DMs are refused
before anyone is seated. One test runs on Redis (`RedisQueue`, the Discord relay).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import random
from collections.abc import AsyncIterator
from typing import Any

from dckit import E2E, Driver, payload_of, running_bot, settings, speed_up
from kit import until

from adapters.discord import i18n as L
from adapters.discord.client import ThousandBot
from bot.commands import MOVE_COMMANDS, encode_payload
from bot.i18n import translator
from bot.matchmaking import RedisQueue
from bot.public.process import ProcessPublic
from bot.render import ERRORS
from bot.storage import MemoryStore, RedisStore, Store
from bot.table import TableDoc
from core.cards import cards_of
from core.game import GameState
from fakes import cardspy
from fakes.discord import FakeChannel, FakeDiscord, FakeGuild, FakeMessage, FakeUser
from fakes.discord.interactions import MESSAGE_COMPONENT

OFFER_AFTER = 1.0
"""Seconds alone in the queue before computers are offered (real time: the desk's clock)."""


def member(fake: FakeDiscord, guild: FakeGuild, name: str, locale: str) -> FakeUser:
    user = fake.add_user(name.lower(), global_name=name, locale=locale)
    fake.add_member(guild, user)
    return user


@contextlib.asynccontextmanager
async def public_bot(
    fake: FakeDiscord, store: Store, **values: Any
) -> AsyncIterator[tuple[ThousandBot, ProcessPublic]]:
    """A Discord bot process that runs public tables (as `thousand discord` does)."""
    speed_up(fake)
    relay = "dc" if values.get("redis_url") else None
    service_settings = settings(public_computers_after=OFFER_AFTER, **values)
    async with running_bot(fake, store, service_settings, config=E2E, relay=relay, seed=11) as bot:
        public = ProcessPublic(bot.runtime, bot.deliver, "dc", match_every=0.01, refresh_every=0.01)
        await public.start()
        try:
            yield bot, public
        finally:
            await public.stop()


async def settle(fake: FakeDiscord, bot: ThousandBot) -> None:
    await fake.wait_until(lambda: bot.idle, timeout=30)
    await fake.settle()


async def seated(public: ProcessPublic, user: FakeUser) -> str | None:
    at = await public.queue.seated_at(f"dc:{user.id}")
    return at if at is not None and at.startswith("pub:") else None


def texts(message: FakeMessage) -> str:
    return "\n".join([message.content or "", *(e.get("description") or "" for e in message.embeds)])


def payloads(message: FakeMessage) -> list[tuple[str, tuple[str, ...], int, str]]:
    return [p for c in message.custom_ids() if (p := payload_of(c)) is not None]


def status_dm(fake: FakeDiscord, user: FakeUser) -> FakeMessage:
    """The queue's status message in the user's DM (the one with its Cancel button)."""
    found = [m for m in fake.dms(user) if any(p[0] == "cancel" for p in payloads(m))]
    assert len(found) == 1, [texts(m) for m in fake.dms(user)]
    return found[0]


def button(message: FakeMessage, name: str, args: tuple[str, ...] = ()) -> str:
    for cid in message.custom_ids():
        p = payload_of(cid)
        if p is not None and p[:2] == (name, args):
            return cid
    raise AssertionError(f"no {name} {args} button on {texts(message)!r}")


def dm_hand(fake: FakeDiscord, user: FakeUser, version: int | None = None) -> FakeMessage | None:
    """The user's DM hand with move buttons (at `version`, when given)."""
    for m in reversed(fake.dms(user)):
        moves = {p[2] for p in payloads(m) if p[0] in MOVE_COMMANDS}
        if moves and (version is None or moves == {version}):
            return m
    return None


def tables_in_dm(fake: FakeDiscord, user: FakeUser) -> list[FakeMessage]:
    return [m for m in fake.dms(user) if m.embeds and m.embeds[0].get("color") == 0x1565C0]


def hands_in_dm(fake: FakeDiscord, user: FakeUser) -> list[FakeMessage]:
    return [m for m in fake.dms(user) if m.embeds and m.embeds[0].get("color") == 0x6A1B9A]


class DmSpy:
    """Reads every version of every DM message the players get, the moment the fake accepts it, for the
    cards of someone else at their public table: what the reader ever held in the deal is theirs, every
    other card secret now must not appear. A deal's result (or the score sheet) is read against the state
    before the move that ended the deal (`before`, noted by the test), less the cards that move played out:
    by the time it is read the next deal may have dealt its last trick's cards to anyone. Also: no DM
    message goes back to an older table version."""

    def __init__(self, fake: FakeDiscord, bot: ThousandBot, users: list[FakeUser]) -> None:
        self.fake, self.bot = fake, bot
        self.users = {u.id: u for u in users}
        self.known: dict[tuple[str, int], int] = {}
        self.deal: dict[str, int] = {}
        self.leaks: list[str] = []
        self.back: list[str] = []
        self.checked = 0
        self._floor: dict[int, int] = {}
        self.before: dict[str, GameState] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        fake.watchers.append(self.changed)

    def changed(self, change: str, msg: FakeMessage) -> None:
        reader = msg.channel.recipient
        if (
            change == "delete"
            or msg.channel.guild is not None
            or reader is None
            or reader.id not in self.users
        ):
            return
        versions = {p[2] for p in payloads(msg) if p[3].startswith("pub:")}
        if versions:
            floor = self._floor.get(msg.id, -1)
            if max(versions) < floor:
                self.back.append(f"DM message {msg.id} of {reader.username}: {max(versions)} after {floor}")
            self._floor[msg.id] = max(floor, min(versions))
        parts = cardspy.discord_parts(msg.content, msg.embeds, msg.components)
        ending = bool(msg.embeds) and msg.embeds[0].get("color") in (0xEF6C00, 0xC62828)
        task = asyncio.get_running_loop().create_task(
            self._check(reader, parts, dict(self.before) if ending else None)
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _check(
        self, reader: FakeUser, parts: list[cardspy.Part], before: dict[str, GameState] | None
    ) -> None:
        store = self.bot.runtime.store
        for table_id in sorted(await store.tables_for_user(f"dc:{reader.id}")):
            if not table_id.startswith("pub:"):
                continue
            stored = await store.load(table_id)
            if stored is None:
                continue
            doc = TableDoc.model_validate_json(stored.document)
            if doc.game is None:
                continue
            state = self.bot.runtime.service.cache.state(doc.serial, doc.game.spec, doc.game.actions)
            self._note(table_id, state)
            seat = next((i for i, s in enumerate(doc.seats) if s.user_id == str(reader.id)), None)
            if seat is None:
                continue
            mine = cards_of(self.known.get((table_id, seat), 0))
            private = set(cardspy.secret_cards(state)) - set(mine)
            earlier = before.get(table_id) if before is not None else None
            if earlier is not None and earlier.deal_number != state.deal_number:
                held = 0
                for hand in earlier.deal.hands:
                    held |= hand  # all played out by the deal's end
                private = set(cardspy.secret_cards(earlier)) - set(cards_of(held))
            found = cardspy.leaks(parts, private, [doc.seats[seat].lang or "en"])
            self.checked += 1
            if found:
                self.leaks.append(f"{reader.username}: {found}")

    def _note(self, table_id: str, state: GameState) -> None:
        if state.deal_number != self.deal.get(table_id):
            self.deal[table_id] = state.deal_number
            self.known = {k: v for k, v in self.known.items() if k[0] != table_id}
        if not state.finished:
            for s, hand in enumerate(state.deal.hands):
                self.known[table_id, s] = self.known.get((table_id, s), 0) | hand

    async def close(self) -> None:
        await asyncio.gather(*list(self._tasks), return_exceptions=True)
        self.fake.watchers.remove(self.changed)


async def play_deal(
    fake: FakeDiscord,
    bot: ThousandBot,
    channel: FakeChannel,
    table_id: str,
    users: list[FakeUser],
    spy: DmSpy,
) -> int:
    """Play the table's current deal to its result by the players' DM hands; the number of moves."""
    driver = Driver(fake, channel, users, [bot], random.Random(5), slash_ratio=0.0)
    service = bot.runtime.service
    first: int | None = None
    for moves_made in range(400):
        version, doc = await service.load(table_id)
        assert doc is not None and doc.game is not None
        state = service.cache.state(doc.serial, doc.game.spec, doc.game.actions)
        first = state.deal_number if first is None else first
        if state.deal_number != first or state.finished:
            return moves_made
        assert state.to_act is not None and state.to_act >= 0
        seat = doc.seats[state.to_act]
        user = next(u for u in users if seat.user == f"dc:{u.id}")
        await fake.wait_until(lambda user=user, v=version: dm_hand(fake, user, v) is not None, timeout=10)
        hand = dm_hand(fake, user, version)
        assert hand is not None
        moves = [
            (c, p) for c in hand.custom_ids() if (p := payload_of(c)) is not None and p[0] in MOVE_COMMANDS
        ]
        spy.before[table_id] = state
        it = await driver.move(user, hand, moves, state)
        await it.response(timeout=6)
        await settle(fake, bot)
    raise AssertionError("the deal did not end")


async def test_three_matched_play_a_deal_by_dm_a_cancelled_one_never_seated(fake: FakeDiscord) -> None:
    guild = fake.add_guild("Card room")
    channel = fake.add_text_channel(guild, "thousand")
    ann, bolek, vera = (
        member(fake, guild, "Ann", "en-US"),
        member(fake, guild, "Bolek", "pl"),
        member(fake, guild, "Vera", "ru"),
    )
    dora = member(fake, guild, "Dora", "tr")
    langs = {ann.id: "en", bolek.id: "pl", vera.id: "ru", dora.id: "tr"}
    async with public_bot(fake, MemoryStore()) as (bot, public):
        spy = DmSpy(fake, bot, [ann, bolek, vera, dora])
        # Dora asks in the channel: an ephemeral answer with the status, the status itself by DM.
        it = await fake.slash(dora, channel, "thousand", "play", preset="polish", pace="slow")
        answer = await it.original_message()
        await settle(fake, bot)
        tr = translator("tr")
        assert answer.ephemeral and answer.visible_to is dora
        assert L.labels("tr")._(L.QUEUE_BY_DM) in answer.content
        assert tr._("**Looking for a game**: {options}").split(":")[0] in answer.content
        assert not answer.custom_ids(), "the ephemeral answer carries no buttons: they live in the DM"
        status = status_dm(fake, dora)
        assert not status.ephemeral and tr._("**Looking for a game**: {options}").split(":")[0] in texts(
            status
        )
        # Cancel pressed in the DM: the status message itself becomes the last word, without buttons.
        pressed = await fake.press(dora, status, button(status, "cancel"))
        assert (await pressed.response()).type == 7
        await settle(fake, bot)
        assert tr._("You left the queue.") in texts(status) and not status.custom_ids()
        assert (await public.queue.status(f"dc:{dora.id}")).queued is False

        # Ann and Vera from the channel, Bolek from his DM with the bot.
        for user in (ann, bolek, vera):
            where = fake.dm_channel(user) if user is bolek else channel
            it = await fake.slash(user, where, "thousand", "play", preset="polish", pace="slow")
            assert (await it.response()).ephemeral
        for user in (ann, bolek, vera):
            await until(lambda user=user: seated(public, user))
        table_id = await seated(public, ann)
        assert table_id is not None and await seated(public, bolek) == table_id == await seated(public, vera)
        assert await public.queue.seated_at(f"dc:{dora.id}") is None
        await settle(fake, bot)
        for user in (ann, bolek, vera):
            # The matcher's and the refresh's loops deliver on their own time.
            await fake.wait_until(
                lambda user=user: (
                    len(hands_in_dm(fake, user)) == 1
                    and len(tables_in_dm(fake, user)) == 1
                    and not any(p[0] == "cancel" for m in fake.dms(user) for p in payloads(m))
                ),
                timeout=10,
            )
            t = translator(langs[user.id])
            # One status message, edited to its last state; the table and the hand came by DM.
            found = t._("A table was found: your game starts below.")
            assert [texts(m) for m in fake.dms(user)].count("✅ " + found) == 1, [
                texts(m) for m in fake.dms(user)
            ]
            assert len(tables_in_dm(fake, user)) == 1 and len(hands_in_dm(fake, user)) == 1
            for m in fake.dms(user):  # only display names, never another's platform id
                assert not any(str(o.id) in texts(m) for o in (ann, bolek, vera))
        assert not fake.messages(channel), "nothing of a public table goes to a guild channel"

        moves = await play_deal(fake, bot, channel, table_id, [ann, bolek, vera], spy)
        assert moves > 10
        await settle(fake, bot)
        await spy.close()
        assert spy.checked > 30 and spy.leaks == [], spy.leaks
        assert spy.back == []
        for user in (ann, bolek, vera):
            # The table one message per deal (the second deal's posted anew), one live hand (each new one
            # replaced the last).
            assert len(tables_in_dm(fake, user)) == 2
            assert len(hands_in_dm(fake, user)) == 1
        assert not fake.messages(channel) and not fake.dms(dora)[1:]

        # A phrase from the channel reaches the others by DM, each in their own language; free text in a
        # DM is relayed to nobody.
        before = {u.id: len(fake.dms(u)) for u in (ann, bolek, vera)}
        it = await fake.slash(ann, channel, "thousand", "say", phrase="gl")
        assert (await it.response()).ephemeral
        await settle(fake, bot)
        for user in (bolek, vera):
            new = [texts(m) for m in fake.dms(user)[before[user.id] :]]
            assert len(new) == 1 and new[0].endswith(
                f"\n💬 Ann: {translator(langs[user.id])._('Good luck!')}"
            ), new
        await fake.say(bolek, fake.dm_channel(bolek), "call me at 555 0199")
        await settle(fake, bot)
        everything = [texts(m) for u in (ann, vera, dora) for m in fake.dms(u)]
        assert not any("555" in t for t in everything)

        # A stale move button (an earlier version of Bolek's hand), sent by a modified client: refused
        # in Polish, nothing changes.
        version, doc = await bot.runtime.service.load(table_id)
        hand = dm_hand(fake, bolek)
        assert hand is not None
        stale = "t|" + encode_payload("pass", (), version - 1, table_id, _tag(doc))
        refused = await forged_press(fake, bolek, hand, stale)
        await settle(fake, bot)
        assert refused.followups or refused.original is not None
        said = [texts(m) for m in (refused.original, *refused.followups) if m is not None and m.ephemeral]
        assert translator("pl")._(ERRORS["stale_button"]) in said, said
        assert (await bot.runtime.service.load(table_id))[0] == version


def _tag(doc: TableDoc | None) -> str:
    from bot.commands import table_tag

    assert doc is not None
    return table_tag(doc.serial)


async def forged_press(fake: FakeDiscord, user: FakeUser, message: FakeMessage, custom_id: str) -> Any:
    """A press of a button the message does not show (a tampered client, or one from an older screen)."""
    shown = message.components
    forged = {"type": 2, "style": 2, "label": "?", "custom_id": custom_id, "id": 999}
    message.components = [*copy.deepcopy(shown), {"type": 1, "id": 998, "components": [forged]}]
    try:
        data = {"custom_id": custom_id, "component_type": 2, "id": 999}
        it = await fake._interact(MESSAGE_COMPONENT, user, message.channel, data, message=message)
    finally:
        message.components = shown
    await it.response(timeout=6)
    return it


async def test_alone_keeps_waiting_then_starts_with_computers_from_the_dm(fake: FakeDiscord) -> None:
    guild = fake.add_guild("Card room")
    ela = member(fake, guild, "Ela", "pl")
    pl = translator("pl")
    async with public_bot(fake, MemoryStore()) as (bot, public):
        spy = DmSpy(fake, bot, [ela])
        it = await fake.slash(ela, fake.dm_channel(ela), "thousand", "play", pace="fast")
        assert (await it.response()).ephemeral
        await settle(fake, bot)
        status = status_dm(fake, ela)
        assert not any(p[:2] == ("queue", ("go",)) for p in payloads(status))

        async def offered() -> bool:
            return any(p[:2] == ("queue", ("go",)) for p in payloads(status))

        await until(offered)
        assert pl._("Start with computers") in [b.get("label") for b in status.buttons()]
        # Keep waiting, pressed in the DM: the same message, without the offer, until it comes again.
        kept = await fake.press(ela, status, button(status, "queue", ("wait",)))
        assert (await kept.response()).type == 7
        await settle(fake, bot)
        assert not await offered() and status_dm(fake, ela) is status
        await until(offered)
        go = button(status, "queue", ("go",))
        started = await fake.press(ela, status, go)
        await started.response()
        await settle(fake, bot)
        table_id = await seated(public, ela)
        assert table_id is not None
        assert pl._("Your table with computers is ready.") in texts(status) and not status.custom_ids()
        _, doc = await bot.runtime.service.load(table_id)
        assert (
            doc is not None
            and [s.kind for s in doc.seats].count("ai") == 2
            and doc.settings.turn_seconds == 30
        )
        assert dm_hand(fake, ela) is not None or tables_in_dm(fake, ela)
        # The same button again (a modified client): refused in Polish, no second table.
        again = await forged_press(fake, ela, status, go)
        await settle(fake, bot)
        said = [texts(m) for m in (again.original, *again.followups) if m is not None]
        assert pl._("You are not in the queue. /play finds a game.") in said, said
        # /thousand play while seated: refused, not queued.
        it = await fake.slash(ela, fake.dm_channel(ela), "thousand", "play")
        await it.response()
        await settle(fake, bot)
        said = [texts(m) for m in (it.original, *it.followups) if m is not None]
        assert any(
            pl._("You already sit at a table: «{title}». Finish it (or /leave it) first.").split(":")[0] in s
            for s in said
        ), said
        assert (await public.queue.status(f"dc:{ela.id}")).queued is False
        await spy.close()
        assert spy.leaks == [] and spy.back == []


async def test_closed_dms_are_refused_before_queueing_and_bad_options(fake: FakeDiscord) -> None:
    guild = fake.add_guild("Card room")
    channel = fake.add_text_channel(guild, "thousand")
    olga = member(fake, guild, "Olga", "uk")
    fake.close_dms(olga)
    async with public_bot(fake, MemoryStore()) as (bot, public):
        it = await fake.slash(olga, channel, "thousand", "play", preset="russian")
        answer = await it.original_message()
        await settle(fake, bot)
        assert answer.ephemeral and answer.content == L.labels("uk")._(L.QUEUE_NEEDS_DM)
        assert (await public.queue.status(f"dc:{olga.id}")).queued is False
        assert fake.dms(olga) == [] and not fake.messages(channel)
        # A card and game options at once: neither, said in her language.
        fake.open_dms(olga)
        both = await fake.slash(olga, channel, "thousand", "play", card="QS", pace="fast")
        assert (await both.original_message()).content == L.labels("uk")._(L.CARD_OR_GAME)
        # A preset that cannot seat that many: the service's answer, nothing queued.
        bad = await fake.slash(olga, channel, "thousand", "play", preset="russian", players=2)
        await bad.response()
        await settle(fake, bot)
        said = [texts(m) for m in (bad.original, *bad.followups) if m is not None]
        told = translator("uk")._("This game is played by {counts} players.").format(counts="3, 4")
        assert told in said, said
        assert (await public.queue.status(f"dc:{olga.id}")).queued is False
        # /thousand cancel when not queued.
        cancel = await fake.slash(olga, channel, "thousand", "cancel")
        await cancel.response()
        await settle(fake, bot)
        said = [texts(m) for m in (cancel.original, *cancel.followups) if m is not None]
        assert translator("uk")._("You are not in the queue. /play finds a game.") in said, said


async def test_on_redis_two_are_matched_by_dm(fake: FakeDiscord, redis_url: str) -> None:
    guild = fake.add_guild("Card room")
    channel = fake.add_text_channel(guild, "thousand")
    ann, bolek = member(fake, guild, "Ann", "en-US"), member(fake, guild, "Bolek", "pl")
    store = RedisStore.from_url(redis_url, prefix="dcplay")
    async with public_bot(fake, store, redis_url=redis_url) as (bot, public):
        assert isinstance(public.queue, RedisQueue)
        assert bot.runtime.relay is not None and public.relay is bot.runtime.relay.relay
        spy = DmSpy(fake, bot, [ann, bolek])
        for user in (ann, bolek):
            it = await fake.slash(user, channel, "thousand", "play", preset="polish", players=2)
            assert (await it.response()).ephemeral
        for user in (ann, bolek):
            await until(lambda user=user: seated(public, user))
        table_id = await seated(public, ann)
        assert table_id is not None and await seated(public, bolek) == table_id
        await settle(fake, bot)
        await fake.wait_until(lambda: all(len(hands_in_dm(fake, u)) == 1 for u in (ann, bolek)), timeout=10)
        for user in (ann, bolek):
            assert len(tables_in_dm(fake, user)) == 1
        assert not fake.messages(channel)
        await spy.close()
        assert spy.checked >= 4 and spy.leaks == [] and spy.back == []
