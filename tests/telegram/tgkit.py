"""The rig for the Telegram tests: the real bot (PTB `Application` + adapter + process runtime) against the
fake Bot API, people who press buttons and type commands, and a watch over every group message.

Time: a `VirtualClock` is shared by the fake's flood control, the memory store, the service and the
adapter's rate limiter. When the limiter has to wait for the budget, the clock moves instead of the test
sleeping, so a game that Telegram's limits stretch over minutes runs in seconds while the fake still
checks each send against its own buckets on the same clock (a send early by a millisecond is a 429).
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from actionlog import played_for_them
from kit import typed as typed

from adapters.telegram.app import TelegramBot
from adapters.telegram.limits import BUDGETED_METHODS, SendLimits
from bot import vocabulary
from bot.ai import decide_now
from bot.commands import SECRET_MOVES, decode_payload
from bot.handlers import Handlers
from bot.ops.runtime import Runtime
from bot.service import Service
from bot.settings import Settings
from bot.snapshot import GameCache
from bot.storage import MemoryStore, Store
from bot.table import TableDoc
from core.actions import Action
from core.game import GameState
from core.view import seat_view
from fakes import cardspy
from fakes.telegram import FakeChat, FakeMessage, FakeTelegram, FakeUser, InProcessRequest
from fakes.telegram.calls import COUNTED_METHODS as COUNTED_METHODS
from fakes.telegram.calls import SEND_METHODS as SEND_METHODS
from fakes.telegram.fake import ApiResponse
from fakes.telegram.models import UploadedFile

BASE_TIME = 1_800_000_000.0


class VirtualClock:
    """POSIX time that moves only when someone sleeps on it (or a test advances it)."""

    explicit = True

    def __init__(self, start: float = BASE_TIME) -> None:
        self.t = start
        self.slept = 0.0

    def now(self) -> float:
        return self.t

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds

    async def sleep(self, seconds: float) -> None:
        target = self.t + max(0.0, seconds)
        await asyncio.sleep(0)  # sleepers of the same moment wake together, not one after another
        if target > self.t:
            self.slept += target - self.t
            self.t = target
        await asyncio.sleep(0)


def settings(**overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "ai_workers": 0,
        "turn_seconds": 0,
        "metrics_port": 0,
        "charts": True,
        "default_ai_level": "easy",
        "log_format": "console",
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)


# --------------------------------------------------------------------------- the watch


@dataclass
class GroupCall:
    method: str
    deal: int | None
    text: str


@dataclass
class Watch:
    """Sees every Bot API call the fake answers: counts group sends and edits per deal, and checks that
    no card that is secret at that moment appears in a group message."""

    fake: FakeTelegram
    store: Store
    groups: set[int] = field(default_factory=set)
    calls: list[GroupCall] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)
    private_calls: int = 0
    cache: GameCache = field(default_factory=GameCache)
    timeline: list[tuple[float, str, str, int]] = field(default_factory=list)
    """(clock, method, chat id, HTTP status) of every call the fake answered."""
    clock: Callable[[], float] | None = None
    busy: int = 0
    """Calls being answered now (long polls excluded)."""
    quiet_since: float = 0.0
    private_by_deal: Counter[int] = field(default_factory=Counter)
    """Private sends and edits by the deal the table was in (when one group is watched)."""
    counted_by_deal: Counter[int] = field(default_factory=Counter)
    """Every message call (sends, edits, deletions; `COUNTED_METHODS`) in any chat, by the deal the watched
    group's table was in (when one group is watched): the calls a move costs."""

    def install(self) -> None:
        original = self.fake.handle

        async def handle(
            token: str, method: str, params: Any, files: dict[str, UploadedFile] | None = None
        ) -> ApiResponse:
            polling = method.lower() == "getupdates"
            if not polling:
                self.busy += 1
            try:
                response = await original(token, method, params, files)
            finally:
                if not polling:
                    self.busy -= 1
                    self.quiet_since = time.monotonic()
            if self.clock is not None:
                self.timeline.append(
                    (self.clock(), method.lower(), str(params.get("chat_id")), response.status)
                )
            if method.lower() in COUNTED_METHODS and len(self.groups) == 1:
                doc, state = await self._state(next(iter(self.groups)))
                if doc is not None and state is not None and doc.status != "lobby":
                    self.counted_by_deal[state.deal.number] += 1
            if response.status == 200 and method.lower() in BUDGETED_METHODS:
                await self._seen(method.lower(), params, response)
            return response

        self.fake.handle = handle  # type: ignore[method-assign]

    async def _state(self, chat_id: int) -> tuple[TableDoc | None, GameState | None]:
        stored = await self.store.load(f"tg:{chat_id}")
        if stored is None:
            return None, None
        doc = TableDoc.model_validate_json(stored.document)
        if doc.game is None:
            return doc, None
        return doc, self.cache.state(doc.serial, doc.game.spec, doc.game.actions)

    async def _seen(self, method: str, params: Any, response: ApiResponse) -> None:
        try:
            chat_id = int(str(params.get("chat_id")))
        except ValueError:
            return
        if chat_id not in self.groups:
            if chat_id > 0:
                self.private_calls += 1
                if len(self.groups) == 1:
                    doc, state = await self._state(next(iter(self.groups)))
                    if doc is not None and state is not None and doc.status != "lobby":
                        self.private_by_deal[state.deal.number] += 1
            return
        result = response.json().get("result")
        text = ""
        if isinstance(result, dict):
            text = result.get("text") or result.get("caption") or ""
        doc, state = await self._state(chat_id)
        deal = None if state is None or doc is None or doc.status == "lobby" else state.deal.number
        self.calls.append(GroupCall(method, deal, text))
        if doc is not None and state is not None:
            # Every field people see or buttons carry, as the fake stored it and as the bot sent it.
            parts = cardspy.telegram_parts(result if isinstance(result, Mapping) else None)
            parts += cardspy.telegram_parts(params if isinstance(params, Mapping) else None)
            found = cardspy.leaks(parts, cardspy.secret_cards(state), [doc.settings.language])
            if found:
                self.leaks.append(
                    f"{method} in the group during deal {deal}: {'; '.join(dict.fromkeys(found))}"
                )

    def per_deal(self) -> list[int]:
        counts = Counter(c.deal for c in self.calls if c.deal is not None)
        return [counts[d] for d in sorted(counts)]

    def figures(self) -> dict[str, Any]:
        per = self.per_deal()
        return {
            "deals": len(per),
            "median": statistics.median(per) if per else 0,
            "max": max(per) if per else 0,
            "per_deal": per,
        }


# --------------------------------------------------------------------------- the bot process


class Rig:
    """A fake Telegram, one store, and bot processes that can be stopped and started again."""

    def __init__(
        self,
        *,
        store: Store | None = None,
        settings_: Settings | None = None,
        clock: VirtualClock | None = None,
        fake: FakeTelegram | None = None,
        limits: SendLimits | None = None,
    ) -> None:
        self.clock = clock or VirtualClock()
        self.fake = fake or FakeTelegram(clock=self.clock)
        self.store = store or MemoryStore(clock=self.clock)
        self.settings = settings_ or settings()
        self.limits = limits
        self.external_quiet = 0.08
        self.acted_at = 0.0
        """When a person last did something (a bot elsewhere must answer after that)."""
        """Seconds without a call after which a bot in another process counts as settled."""
        self.bots: list[TelegramBot] = []
        self.handled_before = 0
        """Updates handled by bot processes of this rig that were stopped since."""
        self.watch = Watch(self.fake, self.store, clock=self.clock)
        self.watch.install()
        self.rng = random.Random(7)

    def make_bot(self, store: Store | None = None) -> TelegramBot:
        clock = self.clock
        rng = random.Random(self.rng.getrandbits(32))

        def service(store: Store, s: Settings) -> Service:
            return Service(store, s, handlers=Handlers, clock=clock.now, rng=rng)

        runtime = Runtime(
            self.settings,
            platform="telegram",
            store=store or self.store,
            service_factory=service,
            tick_interval=0.05,
        )
        return TelegramBot(
            runtime,
            self.fake.token,
            clock=clock,
            limits=self.limits,
            request=InProcessRequest(self.fake),
            updates_request=InProcessRequest(self.fake),
        )

    async def start(self, store: Store | None = None) -> TelegramBot:
        bot = self.make_bot(store)
        await bot.start(signals=False, poll_timeout=1)
        self.bots.append(bot)
        return bot

    @property
    def bot(self) -> TelegramBot:
        return self.bots[-1]

    async def stop(self, bot: TelegramBot | None = None) -> None:
        bot = bot or self.bot
        await bot.stop()
        if bot in self.bots:
            self.bots.remove(bot)
            self.handled_before += bot.adapter.updates

    async def close(self) -> None:
        for bot in list(self.bots):
            await self.stop(bot)
        await self.fake.close()

    def last_update_id(self) -> int:
        return self.fake._world.next_update_id - 1

    async def settle(self, timeout: float = 20.0) -> None:
        """Wait until every update was handled and every queued message went out.

        With the bots in this process their counters say so; a bot in another process is settled when
        it fetched every update and the fake saw no call for a while."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        quiet = 0
        while quiet < 3:
            if loop.time() > deadline:
                raise TimeoutError("the bot did not settle")
            await asyncio.sleep(0.002)
            if self.bots:
                handled = self.handled_before + sum(b.adapter.updates for b in self.bots)
                busy = any(b.adapter.in_flight or b.adapter.outbox.pending for b in self.bots)
                done = handled >= self.last_update_id() and not busy
            else:
                idle = time.monotonic() - self.watch.quiet_since
                answered = self.watch.quiet_since > self.acted_at
                done = answered and self.watch.busy == 0 and idle > self.external_quiet
            if done and not self.fake.pending_updates:
                quiet += 1
            else:
                quiet = 0

    # --- people -------------------------------------------------------------------------------

    def group(self, title: str, people: Iterable[FakeUser], *, admins: Iterable[FakeUser] = ()) -> FakeChat:
        people = list(people)
        admins = list(admins) or people[:1]
        chat = self.fake.add_group(title, members=[p for p in people if p not in admins], admins=admins)
        self.watch.groups.add(chat.id)
        return chat

    def acted(self) -> None:
        self.acted_at = time.monotonic()

    async def say(self, where: FakeChat | FakeUser, user: FakeUser, text: str) -> None:
        self.acted()
        self.fake.user_sends(where, user, text)
        await self.settle()

    async def press(self, where: FakeChat | FakeUser, user: FakeUser, message: FakeMessage, data: str) -> str:
        self.acted()
        query = self.fake.user_presses(where, user, message.message_id, data)
        await self.settle()
        return query


# --------------------------------------------------------------------------- playing


def presses(action: Action, state: GameState, seat: int) -> list[tuple[str, tuple[str, ...]]]:
    """The buttons (command name, arguments) a person presses, in order, to make `action`."""
    return vocabulary.presses(action, vocabulary.Mover.of_state(state, seat))


def decide(state: GameState, seat: int, seed: int, level: str = "easy") -> Action:
    """What a sensible person would do (an easy computer player's choice)."""
    return decide_now(level, seat_view(state, seat), list(state.legal_actions(seat)), seed, None)


@dataclass
class Table:
    """A game in one group, played by people through the fake."""

    rig: Rig
    chat: FakeChat
    people: dict[str, FakeUser]
    rng: random.Random = field(default_factory=lambda: random.Random(11))
    button_share: float = 0.7
    moves: int = 0
    pressed: int = 0
    typed_moves: int = 0
    cache: GameCache = field(default_factory=GameCache)

    @property
    def table_id(self) -> str:
        return f"tg:{self.chat.id}"

    async def doc(self) -> TableDoc:
        stored = await self.rig.store.load(self.table_id)
        assert stored is not None
        return TableDoc.model_validate_json(stored.document)

    async def state(self) -> tuple[TableDoc, GameState | None]:
        doc = await self.doc()
        if doc.game is None:
            return doc, None
        return doc, self.cache.state(doc.serial, doc.game.spec, doc.game.actions)

    async def played_for_them(self) -> int:
        """Stored actions nobody pressed or typed: last cards, which play themselves."""
        return played_for_them(await self.doc())

    def hand_message(self, user: FakeUser) -> FakeMessage | None:
        """The hand message the user sees in the private chat: the newest with this table's buttons other
        than "hand" (at a public table the private chat also holds the table's message, whose one button
        shows the hand, and it may be the newer: it failed so once in four cross-platform runs)."""
        for message in reversed(self.rig.fake.bot_messages(user)):
            for data in message.callback_data:
                try:
                    code, _, _, table = decode_payload(data)
                except ValueError:
                    continue
                if table == self.table_id and code != "hand":
                    return message
        return None

    async def lose_acting_hand(self) -> tuple[FakeUser, FakeMessage, GameState]:
        """Take the acting player's hand off their screen, as if its send had gone down with a killed
        process: (the player, that message, the state)."""
        doc, state = await self.state()
        assert state is not None and state.to_act is not None
        user = self.rig.fake._world.users[int(doc.seats[state.to_act].user_id or 0)]
        lost = self.hand_message(user)
        assert lost is not None
        lost.deleted = True
        return user, lost, state

    async def move(self) -> bool:
        """The human whose turn it is makes one move; False when the game is over."""
        doc, state = await self.state()
        if doc.status != "game" or state is None or state.finished:
            return False
        seat = state.to_act
        assert seat is not None and seat >= 0, "nobody to act"
        seat_doc = doc.seats[seat]
        assert seat_doc.present and seat_doc.user_id is not None, f"seat {seat} is not a human's turn"
        user = self.rig.fake._world.users[int(seat_doc.user_id)]
        action = decide(state, seat, self.rng.getrandbits(32))
        if self.rng.random() < self.button_share and await self._press(user, state, seat, action):
            self.pressed += 1
        else:
            await self._type(user, state, seat, action)
            self.typed_moves += 1
        self.moves += 1
        return True

    async def _type(self, user: FakeUser, state: GameState, seat: int, action: Action) -> None:
        """Type the move, in the group or in the private chat (there without the slash)."""
        text = typed(action, state, seat)
        secret = text.split()[0].lstrip("/") in SECRET_MOVES  # never typed in the group
        if self.rng.random() < 0.5 and not secret:
            await self.rig.say(self.chat, user, text)
        else:
            await self.rig.say(user, user, text.lstrip("/"))

    async def _press(self, user: FakeUser, state: GameState, seat: int, action: Action) -> bool:
        """Press the move's buttons on the hand message; False (nothing pressed) when it has none."""
        steps = presses(action, state, seat)
        for i, (name, args) in enumerate(steps):
            message = self.hand_message(user)
            found = None
            if message is not None:
                for data in message.callback_data:
                    code, got, _, _ = decode_payload(data)
                    if code == name and got == args:
                        found = data
            if found is None:
                assert i == 0, f"the hand message lost the {name} buttons half-way"
                return False
            assert message is not None
            await self.rig.press(user, user, message, found)
        return True

    async def play_out(
        self, limit: int = 3000, between: Callable[[int], Awaitable[None]] | None = None
    ) -> None:
        for i in range(limit):
            if not await self.move():
                return
            if between is not None:
                await between(i)
        raise AssertionError("the game did not end")


async def seat_everyone(
    rig: Rig,
    chat: FakeChat,
    humans: list[FakeUser],
    computers: int = 0,
    *,
    preset: str = "polish",
    short: bool = True,
) -> Table:
    """Open a table as people would: the first person types /new, the others press Join (opening the
    private chat through the deep link the bot answers with), computers are added with the button, and
    the game is started with the lobby's Start button."""
    fake = rig.fake
    first = humans[0]
    rig.acted()
    fake.user_starts_bot(first)
    await rig.settle()
    await rig.say(chat, first, f"/new {preset}")
    if short:
        await rig.say(chat, first, "/settings barrel_at 100")
        await rig.say(chat, first, "/settings target 200")
    table = Table(rig, chat, {u.first_name: u for u in humans})
    for user in humans[1:]:
        lobby = lobby_message(fake, chat)
        join = button(lobby, "j")
        query = await rig.press(chat, user, lobby, join)
        answer = fake.callback_query(query)
        assert answer.answered
        if answer.url:
            payload = answer.url.split("start=", 1)[1]
            rig.acted()
            fake.user_starts_bot(user, payload)
            await rig.settle()
    for _ in range(computers):
        lobby = lobby_message(fake, chat)
        await rig.press(chat, first, lobby, button(lobby, "a"))
    lobby = lobby_message(fake, chat)
    await rig.press(chat, first, lobby, button(lobby, "s"))
    return table


def lobby_message(fake: FakeTelegram, chat: FakeChat) -> FakeMessage:
    for message in reversed(fake.bot_messages(chat)):
        if any(decode_payload(d)[0] == "join" for d in message.callback_data):
            return message
    raise AssertionError("no lobby message in the group")


def button(message: FakeMessage, code: str) -> str:
    """The callback data of the message's button with this payload code (`j` join, `s` start...)."""
    for data in message.callback_data:
        if data[:1] == code:
            return data
    raise AssertionError(f"no {code!r} button on the message")
