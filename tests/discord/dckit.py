"""The world the Discord tests play in, and running the real bot against the fake."""

from __future__ import annotations

import contextlib
import random
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from adapters.discord.client import BotConfig, ThousandBot
from bot import vocabulary
from bot.ai import decide_now
from bot.commands import decode_payload
from bot.handlers import Handlers
from bot.i18n import LANGUAGES, translator
from bot.ops.runtime import Runtime
from bot.service import Service
from bot.settings import Settings
from bot.storage import Store
from bot.table import TableDoc
from core.actions import Bid, Blind, Contract, Discard, Give, Pass, Play, TakeTalon
from core.cards import CARD_NAMES
from core.deal import Phase
from core.game import GameState
from core.view import seat_view
from fakes import cardspy
from fakes.discord import (
    FakeChannel,
    FakeDiscord,
    FakeGuild,
    FakeInteraction,
    FakeMessage,
    FakeUser,
    connect_client,
)
from fakes.discord import permissions as perms

__all__ = ["BotConfig"]

FAST = BotConfig(ack_after=1.0)

SHORT_GAME = (("barrel_at", "60"), ("target", "100"))
"""Options that end a game after a deal or three (so a whole game fits in a test)."""

SPEEDUP = 10.0
"""E2E games run Discord's per-channel message limit (5 per 5 s) and the bot's budget 10 times faster;
`test_budget.py` holds the bot to the real values."""

E2E = BotConfig(ack_after=1.0, channel_limit=5, channel_window=5.0 / SPEEDUP)


def speed_up(fake: FakeDiscord, factor: float = SPEEDUP) -> None:
    """Scale the fake's per-channel message limits like `E2E` scales the bot's budget (deletions too: 5 per
    second at Discord, which a game at ten times the pace of pings would exceed where Discord's never
    does)."""
    for route in (
        "POST /channels/{channel_id}/messages",
        "PATCH /channels/{channel_id}/messages/{message_id}",
    ):
        fake.ratelimits.set_route_limit(route, 5, 5.0 / factor)
    fake.ratelimits.set_route_limit("DELETE /channels/{channel_id}/messages/{message_id}", 5, 1.0 / factor)


def settings(**values: Any) -> Settings:
    """Service settings for tests: no timers unless asked, threads for the computers, no charts."""
    values.setdefault("turn_seconds", 0)
    values.setdefault("ai_workers", 0)
    values.setdefault("charts", False)
    values.setdefault("default_ai_level", "easy")
    values.setdefault("metrics_port", 0)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@dataclass
class World:
    fake: FakeDiscord
    guild: FakeGuild
    channel: FakeChannel
    users: list[FakeUser]
    admin: FakeUser
    extra: dict[str, Any] = field(default_factory=dict)


def make_world(
    fake: FakeDiscord, *, players: int = 4, guild_id: int | None = None, name: str = "Card room"
) -> World:
    guild = fake.add_guild(name, guild_id=guild_id)
    managers = fake.add_role(guild, "Managers", perms.MANAGE_GUILD)
    names = ["alice", "bob", "carol", "dave", "erin", "frank"][:players]
    users = [fake.add_user(f"{n}{guild.id % 1000}", global_name=n.title()) for n in names]
    for user in users:
        fake.add_member(guild, user)
    admin = fake.add_user(f"admin{guild.id % 1000}", global_name="Admin")
    fake.add_member(guild, admin, roles=[managers])
    channel = fake.add_text_channel(guild, "thousand")
    return World(fake, guild, channel, users, admin)


@contextlib.asynccontextmanager
async def running_bot(
    fake: FakeDiscord,
    store: Store,
    service_settings: Settings | None = None,
    *,
    config: BotConfig = FAST,
    sync: bool = True,
    seed: int | None = None,
    tick_interval: float = 0.05,
    relay: str | None = None,
    **options: Any,
) -> AsyncIterator[ThousandBot]:
    """A bot process on `store` (which it closes when it stops): the ops runtime around its own service,
    the bot connected to the fake, commands synced if asked, timers running."""
    rng = random.Random(seed) if seed is not None else None

    def service(st: Store, se: Settings) -> Service:
        return Service(st, se, handlers=Handlers, rng=rng)

    runtime = Runtime(
        service_settings or settings(),
        platform="discord",
        store=store,
        service_factory=service,
        tick_interval=tick_interval,
        relay=relay,
    )
    options.setdefault("guild_ready_timeout", 0.05)
    bot = ThousandBot(runtime, config=config, **options)
    try:
        async with connect_client(bot, fake):
            await runtime.start(deliver=bot.deliver, signals=False)
            if sync:
                await bot.sync_commands()
            yield bot
    finally:
        await runtime.stop("test over")


# --- driving games ------------------------------------------------------------------------------------

CODES = {"j": "join", "a": "add_ai", "s": "start", "x": "pass", "b": "bid", "p": "play", "g": "give",
         "t": "take", "d": "discard", "S": "sell", "B": "blind", "c": "contract", "o": "bomb",
         "n": "concede", "w": "crawl"}  # fmt: skip


def payload_of(custom_id: str) -> tuple[str, tuple[str, ...], int, str] | None:
    """(command, args, version, table id) of a service button's custom id (`t|<payload>[|n]`)."""
    if not custom_id.startswith("t|"):
        return None
    return decode_payload(custom_id.split("|")[1])


def message_texts(version: Any) -> tuple[str, list[str]]:
    """(visible text, custom ids) of a message or one of its earlier versions."""
    parts = [version.content or ""]
    for embed in version.embeds:
        parts += [embed.get("title") or "", embed.get("description") or ""]
        parts += [f"{f.get('name')} {f.get('value')}" for f in embed.get("fields") or []]
        parts.append((embed.get("footer") or {}).get("text") or "")
    ids: list[str] = []

    def walk(items: list[dict[str, Any]]) -> None:
        for item in items:
            if item.get("label"):
                parts.append(str(item["label"]))
            if item.get("custom_id"):
                ids.append(str(item["custom_id"]))
            walk(item.get("components") or [])

    walk(version.components)
    return "\n".join(parts), ids


class PrivacyLeak(AssertionError):
    pass


@dataclass
class Driver:
    """Plays one table through Discord as its people would: slash commands and buttons only.

    The driver peeks at the store for two things a person knows by looking at the screen (whose turn it
    is, and what is secret right now), and checks at every step what the issue asks: no secret card in
    any channel message or version of one, a ping for the player whose turn it is, every interaction
    answered in time.
    """

    fake: FakeDiscord
    channel: FakeChannel
    players: list[FakeUser]
    bots: list[ThousandBot]
    rng: random.Random
    slash_ratio: float = 0.3
    level: str = "easy"
    hands: dict[int, FakeMessage] = field(default_factory=dict)
    checked: dict[int, int] = field(default_factory=dict)
    stats: Counter[str] = field(default_factory=Counter)
    lobby: FakeMessage | None = None
    dm_users: set[int] = field(default_factory=set)
    """Players who chose to get their hand by DM (they play from their DMs)."""

    @property
    def table_id(self) -> str:
        return f"dc:{self.channel.id}"

    @property
    def service(self) -> Service:
        return self.bots[0].runtime.service

    def user(self, user_key: str) -> FakeUser:
        uid = int(user_key.split(":", 1)[1])
        return next(u for u in self.players if u.id == uid)

    async def peek(self) -> tuple[int, TableDoc | None, GameState | None]:
        version, doc = await self.service.load(self.table_id)
        state = None
        if doc is not None and doc.game is not None:
            state = self.service.cache.state(doc.serial, doc.game.spec, doc.game.actions)
        return version, doc, state

    async def settle(self, it: FakeInteraction | None = None) -> None:
        """Until the interaction is answered and no bot has work in flight."""
        if it is not None:
            await it.response(timeout=6)
        await self.fake.wait_until(lambda: all(b.idle for b in self.bots), timeout=60)
        await self.fake.settle()

    # --- the lobby ------------------------------------------------------------------------------------

    async def open(self, preset: str, *, computers: int = 0, options: Sequence[tuple[str, str]] = ()) -> None:
        creator = self.players[0]
        it = await self.fake.slash(creator, self.channel, "thousand", "new", preset=preset)
        self.lobby = await it.original_message()
        assert not self.lobby.ephemeral and self.lobby.embeds
        await self.settle(it)
        for option, value in options:
            it = await self.fake.slash(
                creator, self.channel, "thousand", "settings", option=option, value=value
            )
            await self.settle(it)
            assert it.callback is not None
        for player in self.players[1:]:
            await self.press_lobby(player, "join")
        for _ in range(computers):
            await self.press_lobby(creator, "add_ai")
        await self.press_lobby(creator, "start")
        self.check_privacy((await self.peek())[2])

    async def press_lobby(self, user: FakeUser, name: str) -> FakeInteraction:
        assert self.lobby is not None
        cid = next(c for c in self.lobby.custom_ids() if (p := payload_of(c)) is not None and p[0] == name)
        it = await self.fake.press(user, self.lobby, cid)
        await self.settle(it)
        return it

    # --- moves ----------------------------------------------------------------------------------------

    async def play(self, max_steps: int = 3000) -> TableDoc:
        for _ in range(max_steps):
            if not await self.step():
                _, doc, _ = await self.peek()
                assert doc is not None
                return doc
        raise AssertionError("the game did not end")

    async def step(self) -> bool:
        version, doc, state = await self.peek()
        assert doc is not None
        if doc.status == "finished":
            return False
        assert state is not None and state.to_act is not None and state.to_act >= 0
        seat = doc.seats[state.to_act]
        assert seat.user is not None and seat.present, "the service waits for a present human"
        user = self.user(seat.user)
        pings_before = self.pings_sent()
        hand = await self.hand_for(user, version)
        moves = [(cid, p) for cid in hand.custom_ids() if (p := payload_of(cid)) is not None]
        assert moves, f"{user.username}'s hand shows no move on their turn"
        it = await self.move(user, hand, moves, state)
        await self.settle(it)
        _, doc, state = await self.peek()
        self.check_privacy(state, doc.settings.language if doc is not None else "en")
        self.check_ping(user, doc, state)
        assert self.pings_sent() - pings_before <= 1, "one move pinged twice"
        self.stats["steps"] += 1
        return True

    async def hand_for(self, user: FakeUser, version: int) -> FakeMessage:
        """The user's hand message at `version`: the one they have open (refreshed by the bot while its
        token is valid), or a fresh one from the My hand button on the ping or the table message."""
        if user.id in self.dm_users:
            dm = self.dm_hand(user)
            assert dm is not None, f"{user.username} chose DMs but has no hand there"
            versions = {p[2] for c in dm.custom_ids() if (p := payload_of(c)) is not None}
            assert versions == {version}, (
                f"{user.username}'s DM hand is not current ({versions} != {version})"
            )
            self.stats["hand_dm"] += 1
            return dm
        current = self.hands.get(user.id)
        if current is not None and not current.deleted and self.rng.random() < 0.8:
            versions = {p[2] for c in current.custom_ids() if (p := payload_of(c)) is not None}
            if versions == {version}:
                self.stats["hand_reused"] += 1
                if current.history:
                    self.stats["hand_refreshed"] += 1
                return current
        source = self.ping_for(user) or self.table_message()
        assert source is not None, "neither a ping nor a table message to press My hand on"
        hand_id = next(c for c in source.custom_ids() if c.startswith("h|"))
        it = await self.fake.press(user, source, hand_id)
        msg = await it.original_message()
        await self.settle(it)
        assert msg.ephemeral and msg.visible_to is user
        self.hands[user.id] = msg
        self.stats["hand_button"] += 1
        return msg

    def dm_hand(self, user: FakeUser) -> FakeMessage | None:
        hands = [m for m in self.fake.dms(user) if any(c.startswith("t|") for c in m.custom_ids())]
        return hands[-1] if hands else None

    async def choose_dm(self, user: FakeUser) -> None:
        """The player asks for their hand by DM from now on (`/thousand hand dm:true`)."""
        it = await self.fake.slash(user, self.channel, "thousand", "hand", dm=True)
        await self.settle(it)
        self.dm_users.add(user.id)

    def pings_sent(self) -> int:
        """Pings ever posted in the channel (deleted ones included)."""
        return sum(1 for m in self.channel.messages if not m.ephemeral and m.content.startswith("<@"))

    def table_message(self) -> FakeMessage | None:
        found = [
            m for m in self.fake.messages(self.channel) if any(c.startswith("h|") for c in m.custom_ids())
        ]
        tables = [m for m in found if m.embeds]
        return tables[-1] if tables else (found[-1] if found else None)

    def ping_for(self, user: FakeUser) -> FakeMessage | None:
        for m in reversed(self.fake.messages(self.channel)):
            if m.content.startswith(f"<@{user.id}>") and user in m.notified:
                return m
        return None

    async def move(
        self,
        user: FakeUser,
        hand: FakeMessage,
        moves: list[tuple[str, tuple[str, tuple[str, ...], int, str]]],
        state: GameState,
    ) -> FakeInteraction:
        """Make the move a computer player of `level` would choose, as a person would: a button of the
        hand, or (for bids, passes and cards, now and then) the slash command with autocomplete."""
        seat = state.to_act
        assert seat is not None
        legal = state.legal_actions(seat)
        action = decide_now(self.level, seat_view(state, seat), legal, self.rng.getrandbits(32), None)
        use_slash = self.rng.random() < self.slash_ratio
        mover = vocabulary.Mover.of_state(state, seat)
        by_args = {(p[0], p[1]): cid for cid, p in moves}
        if isinstance(action, Pass):
            if use_slash:
                return await self.slash(user, "pass")
            return await self.fake.press(user, hand, by_args[("pass", ())])
        if isinstance(action, Bid) and state.deal.phase in (Phase.BIDDING, Phase.SALE):
            cid = by_args.get(("bid", (str(action.value),)))
            if cid is None and not use_slash:
                cid = await self.turn_pages(user, hand, moves, "bid", action.value)
            if use_slash or cid is None:
                # Discord offers 25 values at most: the first digit typed narrows them.
                offered = await self.autocomplete(user, "bid", "amount", str(action.value)[:1])
                assert action.value in offered and len(offered) <= 25, (action.value, offered)
                return await self.slash(user, "bid", amount=action.value)
            return await self.fake.press(user, hand, cid)
        if isinstance(action, Contract):
            cid = by_args.get(("contract", (str(action.value),)))
            if cid is None and not use_slash:
                cid = await self.turn_pages(user, hand, moves, "contract", action.value)
            if use_slash or cid is None:
                offered = await self.autocomplete(user, "contract", "amount", "")
                legal_values = [a.value for a in legal if isinstance(a, Contract)]
                assert offered[:24] == legal_values[:24] and action.value in legal_values
                return await self.slash(user, "contract", amount=action.value)
            return await self.fake.press(user, hand, cid)
        if isinstance(action, Play):
            args = vocabulary.words(action, mover)[1]
            if use_slash:
                offered = await self.autocomplete(user, "play", "card", "")
                shown = {" ".join(p[1]) for _, p in moves if p[0] == "play"}
                # A choice is the card's code, or the reader's own label where their letters would read the
                # code as another card (a Turkish K is the queen): adapters.discord.suggest.card_value.
                as_codes = _as_codes(offered, shown)
                assert set(as_codes) == shown, (offered, shown)
                typed = as_codes.get(CARD_NAMES[action.card], CARD_NAMES[action.card])
                return await self.slash(user, "play", card=" ".join((typed, *args[1:])))
            return await self.fake.press(user, hand, by_args[("play", args)])
        if isinstance(action, Give | Discard):
            name, picked = vocabulary.words(action, mover)  # a give's cards in give order
            cards = list(picked)
            # One card at a time: each press shows the hand with the choice so far. A half-way choice is
            # not saved (the table's version stays), so a late refresh of the same version can redraw the
            # hand without it, on a busy machine in a quick game: as a person would, pick again from the
            # first card (counted; a few times at most).
            i = restarts = 0
            while True:
                cid = next((c for c, p in moves if p[0] == name and p[1] == tuple(cards[: i + 1])), None)
                if cid is None and i > 0 and restarts < 3:
                    i, restarts = 0, restarts + 1
                    self.stats["give_picked_again"] += 1
                    continue
                assert cid is not None, f"{user.username}'s hand offers no {name} of {cards[: i + 1]}"
                it = await self.fake.press(user, hand, cid)
                if i == len(cards) - 1:
                    return it
                await self.settle(it)
                moves = [(c, p) for c in hand.custom_ids() if (p := payload_of(c)) is not None]
                i += 1
        if isinstance(action, TakeTalon):
            cid = by_args.get(vocabulary.words(action, mover))
        elif isinstance(action, Contract | Bid):
            cid = by_args.get(("contract", (str(action.value),)))
        else:
            cid = next((c for c, p in moves if p[0] == type(action).__name__.lower()), None)
            if isinstance(action, Blind):
                cid = by_args.get(vocabulary.words(action, mover))
        if cid is None:  # the choice is not among the buttons shown (more than 8 values): any legal one
            cid = moves[0][0]
            self.stats["fallback"] += 1
        return await self.fake.press(user, hand, cid)

    async def turn_pages(
        self,
        user: FakeUser,
        hand: FakeMessage,
        moves: list[tuple[str, tuple[str, tuple[str, ...], int, str]]],
        name: str,
        value: int,
    ) -> str | None:
        """Press the hand's page buttons (`bid p180`) towards the page that holds `value`; the custom id
        of the value's button, or None when no page shows it."""
        for _ in range(6):
            pages = []
            for cid, p in moves:
                arg = p[1][0] if p[0] == name and p[1] else ""
                if arg.startswith("p") and arg[1:].isdigit():
                    pages.append((int(arg[1:]), cid))
            below = [page for page in pages if page[0] <= value]
            if not below:
                return None
            it = await self.fake.press(user, hand, max(below)[1])
            await self.settle(it)
            self.stats["pages"] += 1
            moves = [(c, p) for c in hand.custom_ids() if (p := payload_of(c)) is not None]
            found = [cid for cid, p in moves if p[0] == name and p[1] == (str(value),)]
            if found:
                return found[0]
        return None

    async def slash(self, user: FakeUser, name: str, **options: Any) -> FakeInteraction:
        self.stats["slash"] += 1
        return await self.fake.slash(user, self.channel, "thousand", name, **options)

    async def autocomplete(self, user: FakeUser, name: str, option: str, typed: str) -> list[Any]:
        it = await self.fake.autocomplete(
            user, self.channel, "thousand", name, focused=option, **{option: typed}
        )
        await it.response()
        self.stats["autocomplete"] += 1
        return [c["value"] for c in it.choices]

    # --- checks ---------------------------------------------------------------------------------------

    def check_privacy(self, state: GameState | None, lang: str = "en") -> None:
        """No card that is secret now appears in any channel message version not checked yet, in any form
        or field (`cardspy`: labels read in the table's language `lang`, codes, custom ids...)."""
        secret = cardspy.secret_cards(state)
        for channel in self.channel.guild.channels.values() if self.channel.guild else [self.channel]:
            for m in channel.messages:
                if m.ephemeral:
                    continue
                versions = [*m.history, m]
                for version in versions[self.checked.get(m.id, 0) :]:
                    parts = cardspy.discord_parts(version.content, version.embeds, version.components)
                    found = cardspy.leaks(parts, secret, [lang])
                    if found:
                        raise PrivacyLeak(f"secret card in channel message {m.id}: {'; '.join(found)}")
                    self.stats["versions_checked"] += 1
                self.checked[m.id] = len(versions)

    def check_ping(self, actor: FakeUser, doc: TableDoc | None, state: GameState | None) -> None:
        """The next player to act (a person other than the one who just acted) was pinged, once; the channel
        holds one ping at most, and none for a player whose turn it is not."""
        live = live_pings_of(self.fake, self.channel)
        assert len(live) <= 1, f"stale pings left in the channel: {len(live) - 1}"
        if doc is None or doc.status != "game" or state is None or state.to_act is None or state.to_act < 0:
            return
        seat = doc.seats[state.to_act]
        if seat.user is None or not seat.present:
            return
        nxt = self.user(seat.user)
        if nxt is actor:
            assert all(m.content.startswith(f"<@{nxt.id}>") for m in live), "a ping names someone else"
            return
        if nxt.id in self.dm_users:
            assert self.dm_hand(nxt) is not None
            assert not live, "a ping names someone else while a player with DMs is to act"
            return
        ping = self.ping_for(nxt)
        assert ping is not None, f"{nxt.username} was not pinged for their turn"
        live_pings = live_pings_of(self.fake, self.channel)
        assert live_pings == [ping], f"stale pings left in the channel: {len(live_pings) - 1}"
        self.stats["pings_seen"] += 1


def assert_interactions_answered(fake: FakeDiscord, deadline: float = 3.0) -> int:
    """Every interaction got exactly one acknowledgement, within the deadline, and no error code."""
    for it in fake.interactions.values():
        assert it.callback is not None, (
            f"interaction {it.id} ({it.data.get('name') or it.data.get('custom_id')}) was never answered"
        )
        late = it.callback.at - it.created_at
        assert late < deadline, f"interaction {it.id} answered after {late:.2f}s"
        assert not it.errors, f"interaction {it.id} got errors {it.error_codes}"
        if it.original is not None and it.owns_original:
            assert not it.original.loading, f"interaction {it.id} left a 'thinking' message"
        # After a "thinking" deferral, Discord documents a followup that replaces the loading message as
        # deprecated backwards compatibility: the answer must edit the original response.
        assert not it.followup_replaced_loading, f"interaction {it.id} answered its deferral with a followup"
    assert_no_unknown_message(fake)
    return len(fake.interactions)


def assert_no_unknown_message(fake: FakeDiscord) -> None:
    """No request of the bot met 404 Unknown Message (10008): it never deletes or edits a message twice
    or after it was gone (the tests delete nothing themselves)."""
    unknown = [f"{r.method} {r.path}" for r in fake.requests if r.code == 10008]
    assert not unknown, f"Discord answered Unknown Message to: {unknown}"


def live_pings_of(fake: FakeDiscord, channel: FakeChannel) -> list[FakeMessage]:
    """The turn pings (and the adapter's other bare mentions) now in the channel."""
    return [m for m in fake.messages(channel) if m.content.startswith("<@")]


def assert_channel_budget(
    fake: FakeDiscord, channel: FakeChannel, limit: int, window: float, jitter: float = 0.4
) -> int:
    """Channel posts and edits by the bot (REST, not interaction callbacks) keep to `limit` per `window`,
    as the fake saw them arrive: `jitter` (a fraction of the window) allows for the time between the
    budget's clock letting a send go and the fake answering it, which varies on a busy machine (the E2E
    window is 0.5 s: 0.2 of it was exceeded once with a second test process running). A bot ignoring
    its budget sends a burst within milliseconds and still fails."""
    sends = sorted(
        r.at
        for r in fake.requests
        if r.major == str(channel.id)
        and r.status == 200
        and r.route
        in ("POST /channels/{channel_id}/messages", "PATCH /channels/{channel_id}/messages/{message_id}")
    )
    for i in range(len(sends)):
        j = i
        while j < len(sends) and sends[j] - sends[i] < window * (1 - jitter):
            j += 1
        assert j - i <= limit, f"{j - i} channel sends within {window}s (limit {limit})"
    return len(sends)


def assert_one_table_message_per_deal(fake: FakeDiscord, channel: FakeChannel) -> int:
    """Each deal's table is one message, edited in place (whichever process sent or edited it)."""
    deals: Counter[str] = Counter()
    for m in fake.messages(channel):
        if not any(c.startswith("h|") for c in m.custom_ids()) or not m.embeds:
            continue
        first = (m.embeds[0].get("description") or "").split("\n", 1)[0]
        deals[first.split("·")[0].strip()] += 1
    doubled = [deal for deal, n in deals.items() if n > 1]
    assert not doubled, f"deals with more than one table message: {doubled}"
    return len(deals)


def _as_codes(offered: Sequence[str], shown: set[str]) -> dict[str, str]:
    """Card code -> autocomplete choice. A choice is the card's code, or its label in the reader's language
    (which language that is the test does not know, and a label differs per language: `P♠` is the Turkish
    king and the Estonian jack), so the first language that reads every choice as a shown card wins."""
    best: dict[str, str] = {}
    for lang in LANGUAGES:
        labels = {translator(lang).card(card): name for card, name in enumerate(CARD_NAMES)}
        codes = {(v if v in CARD_NAMES else labels.get(v, v)): v for v in offered}
        if set(codes) == shown:
            return codes
        best = best or codes
    return best


# --- watching every moment ------------------------------------------------------------------------------


def _text_of(content: str | None, descriptions: Sequence[str | None]) -> str:
    return "\n".join([content or "", *(d or "" for d in descriptions)])


@dataclass
class Shown:
    """What the bots drew, tapped where the adapter turns a neutral message into a Discord body: the text
    of each body and the table versions it was drawn from (one text can stand for several versions)."""

    versions: dict[str, set[int]] = field(default_factory=dict)
    results: dict[str, int] = field(default_factory=dict)
    """The text of each deal's result -> the table version it was drawn at (the next deal's first)."""

    def tap(self, bot: ThousandBot) -> None:
        outbox = bot.outbox
        channel_body, hand_body = outbox._channel_body, outbox._hand_body

        def record(m: Any, body: Any) -> Any:
            if m.version is not None:
                text = _text_of(body.content, [e.description for e in body.embeds])
                self.versions.setdefault(text, set()).add(m.version)
                if m.kind == "result":
                    self.results[text] = m.version
            return body

        deliver = outbox.deliver

        async def delivering(messages: Sequence[Any], reply: Any = None) -> None:
            # A deal's result is known from the moment its call delivers, before any body is drawn: a hand
            # shown ahead of it is then caught even when the result's body comes last.
            for m in messages:
                if m.kind == "result" and m.version is not None:
                    record(m, channel_body(m))
            await deliver(messages, reply)

        outbox.deliver = delivering  # type: ignore[method-assign]
        outbox._channel_body = lambda m: record(m, channel_body(m))  # type: ignore[method-assign]
        outbox._hand_body = lambda m, *, dm: record(m, hand_body(m, dm=dm))  # type: ignore[method-assign]

    def of(self, msg: FakeMessage) -> set[int]:
        return self.versions.get(_text_of(msg.content, [e.get("description") for e in msg.embeds]), set())


@dataclass
class Watch:
    """Checks, at every change of a message in the fake, what the issue asks of a channel and its DMs:
    one ping at most; the newest table message never shows an older state than it (or an earlier newest
    table) showed; a deal's result before any hand of the next deal; a player's newest DM hand never
    older than one they saw. Violations are collected (a watcher must not raise inside the fake)."""

    fake: FakeDiscord
    channel: FakeChannel
    shown: Shown
    users: list[FakeUser]
    problems: list[str] = field(default_factory=list)
    max_pings: int = 0
    pings: list[FakeMessage] = field(default_factory=list)
    _floors: dict[object, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.fake.watchers.append(self.changed)

    def changed(self, change: str, msg: FakeMessage) -> None:
        if msg.channel is self.channel and not msg.ephemeral:
            if change == "create" and msg.content.startswith("<@"):
                self.pings.append(msg)
            live = len(live_pings_of(self.fake, self.channel))
            self.max_pings = max(self.max_pings, live)
            if live > 1:
                self.problems.append(f"{live} pings in the channel at once")
            tables = [m for m in self.fake.messages(self.channel) if _is_table(m)]
            if tables:
                self._no_older(("table",), tables[-1], "the newest table message")
        hand = _is_hand(msg)
        if hand and change != "delete":
            self._result_first(msg)
        if hand and msg.channel.type == 1 and change != "delete":  # a DM channel
            owner = next((u for u in self.users if u is msg.channel.recipient), None)
            if owner is not None:
                dm_hands = [m for m in self.fake.dms(owner) if _is_hand(m)]
                if dm_hands:
                    self._no_older(("dm", owner.id), dm_hands[-1], f"{owner.username}'s newest DM hand")

    def _no_older(self, scope: object, msg: FakeMessage, what: str) -> None:
        versions = self.shown.of(msg)
        if not versions:
            return
        floor = self._floors.get(scope, -1)
        if max(versions) < floor:
            self.problems.append(f"{what} went back to version {max(versions)} after {floor}")
        self._floors[scope] = max(floor, min(versions))

    def _result_first(self, msg: FakeMessage) -> None:
        versions = self.shown.of(msg)
        if not versions:
            return
        posted = {
            _text_of(m.content, [e.get("description") for e in m.embeds])
            for m in self.channel.messages
            if not m.ephemeral
        }
        for text, version in self.shown.results.items():
            if min(versions) >= version and text not in posted:
                self.problems.append(f"a hand of version {min(versions)} came before the result of {version}")

    def close(self) -> None:
        self.fake.watchers.remove(self.changed)


def _is_table(m: FakeMessage) -> bool:
    return bool(m.embeds) and any(c.startswith("h|") for c in m.custom_ids())


def _is_hand(m: FakeMessage) -> bool:
    return any(c.startswith("m|") for c in m.custom_ids())


def assert_pings_deleted_once(fake: FakeDiscord, watch: Watch) -> int:
    """Every ping was deleted exactly once (the last one when the game ended): one successful DELETE of
    its path, none refused."""
    deletes = Counter(
        r.path.rsplit("/", 1)[-1]
        for r in fake.requests
        if r.route == "DELETE /channels/{channel_id}/messages/{message_id}" and r.status == 204
    )
    for ping in watch.pings:
        assert deletes[str(ping.id)] == 1, (
            f"ping {ping.id} ({ping.content[:24]}, {watch.pings.index(ping) + 1} of {len(watch.pings)}) "
            f"deleted {deletes[str(ping.id)]} times"
        )
    assert_no_unknown_message(fake)
    return len(watch.pings)


@dataclass
class QuickDriver(Driver):
    """People who act the moment it is their turn: each move as soon as the store says whose turn it is,
    without waiting for the bot to finish sending what the last move caused (its channel sends may still
    wait for the budget). A player's open hand is used when it shows the current version, else My hand is
    pressed (on the table message); a player with DMs waits for their DM hand to be current. At the end
    of each deal, and only there, everyone waits for the bots to be idle, and the channel is checked as a
    player would see it then: one ping, naming the player who must act."""

    quick: bool = False
    deal: int = 0

    async def settle(self, it: FakeInteraction | None = None) -> None:
        if not self.quick:
            await super().settle(it)
        elif it is not None:
            await it.response(timeout=6)

    async def hand_for(self, user: FakeUser, version: int) -> FakeMessage:
        if user.id in self.dm_users:

            def current() -> bool:
                dm = self.dm_hand(user)
                return dm is not None and {p[2] for c in dm.custom_ids() if (p := payload_of(c))} == {version}

            await self.fake.wait_until(current, timeout=20)
        return await super().hand_for(user, version)

    async def step(self) -> bool:
        version, doc, state = await self.peek()
        assert doc is not None
        if doc.status == "finished":
            return False
        assert state is not None and state.to_act is not None and state.to_act >= 0
        if state.deal_number != self.deal:
            await self.deal_over(doc, state)
            version, doc, state = await self.peek()
            assert doc is not None and state is not None and state.to_act is not None
        seat = doc.seats[state.to_act]
        assert seat.user is not None and seat.present, "the service waits for a present human"
        user = self.user(seat.user)
        hand = await self.hand_for(user, version)
        moves = [(cid, p) for cid in hand.custom_ids() if (p := payload_of(cid)) is not None]
        assert moves, f"{user.username}'s hand shows no move on their turn"
        it = await self.move(user, hand, moves, state)
        await it.response(timeout=6)
        self.stats["steps"] += 1
        return True

    async def deal_over(self, doc: TableDoc, state: GameState) -> None:
        """A new deal began: wait until the bots are idle, then the channel shows one ping, for the player
        who must act (or none, when that player has their hand by DM)."""
        self.deal = state.deal_number
        await Driver.settle(self)
        # (No privacy check here: a quick game's channel versions pile up between looks, and a card public
        # then, such as a talon shown, may be secret by now. The step-by-step games check every version.)
        _, doc2, state2 = await self.peek()
        assert doc2 is not None
        live = live_pings_of(self.fake, self.channel)
        assert len(live) <= 1, f"{len(live)} pings at the start of deal {self.deal}"
        if state2 is None or state2.to_act is None or state2.to_act < 0 or doc2.status != "game":
            return
        seat = doc2.seats[state2.to_act]
        if seat.user is None or not seat.present:
            return
        nxt = self.user(seat.user)
        if nxt.id in self.dm_users:
            assert not live, "a ping left in the channel while a player with DMs is to act"
        else:
            assert len(live) == 1 and live[0].content.startswith(f"<@{nxt.id}>"), (
                f"deal {self.deal}: the ping does not name {nxt.username}, who must act"
            )
            self.stats["pings_seen"] += 1
