"""Hypothesis fuzz through the Discord adapter: slash commands, autocomplete and button presses from
random people, against the real bot (discord.py, adapter, runtime, service) and the fake Discord server
(`fakes/discord`, driven with the rig of `tests/discord/dckit.py`). The twin of
`test_fuzz_telegram.py`.

The world (`dcfuzz`): two guilds, a table of three people in one, of two people and a computer in the
other, a finished table, a channel without one, people seated nowhere, an admin per guild, and every
person's DM with the bot. Each step is one of:

- `/thousand <subcommand>` as the Discord client sends it (registered options, their types and ranges)
  with random values: bids, cards, settings names and values (random and oversize text), players to
  kick (the bot itself included), in any channel the person sees or their DM;
- the same from a modified client or an old registration (`forge_slash`): unknown subcommands and
  options, values out of range, oversize text, the wrong option types;
- autocomplete with random text (card and bid choices: only the typist's own legal moves);
- a press of a real button of any message the person sees: their own, other people's, old versions,
  the other table's, the finished table's;
- a press of a made-up custom id (`forge_press`, the id carried on the pressed message: discord.py routes
  only ids that are on it): random text, payloads with a wrong version, table or command, other
  people's hand buttons, other messages' and older versions' buttons, over-long ids (see `MADE_UP`);
- the players to act making correct moves (a hand's buttons, `/thousand play|bid|pass` after
  autocomplete), reopening a finished table now and then, so that deals end and games finish.

After every step, once the bot has settled:

- every command the adapter handed to the service passed the oracle of `relkit` (judged around
  `Service.handle` with the admin right the adapter read from Discord), and so did every timer firing:
  state changes only by legal actions of the right user's seat, settings only by admins and creators,
  nothing for another table or chat, nothing at a finished table; and the user, the channel and the
  admin right of each command are what Discord says (`who_and_where`);
- every interaction was answered within 3 seconds, without an error from Discord and without a
  "thinking" message left (a made-up id that matches none of the bot's buttons is dropped by discord.py
  unseen: no button carries one, so only a modified client can send it);
- nothing was logged at ERROR (the bot's, discord.py's and asyncio's loggers), and no Discord request of
  the bot was refused (no 4xx but 404, no 429);
- no public message (or earlier version of one) shows a card that is secret now at its channel's table,
  and none repeats a text the service meant for one person;
- a correct move by the player to act was played, and autocomplete offered cards and bids only to the
  player to act (and only their legal ones).

`THOUSAND_FUZZ_DC_CASES` sets the least number of steps (CI: 300; the full run: 3,000).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import random
import types
from typing import Any, ClassVar

import pytest
from dcfuzz import (
    LogWatch,
    Mover,
    Privacy,
    TableSpec,
    adapter_notes,
    add_guild,
    bot_idle,
    forge_press,
    forge_slash,
    payload_of,
    routed,
    who_and_where,
)
from dckit import E2E, SHORT_GAME, Driver, running_bot, settings, speed_up
from fuzz_machine import (
    ARG_WORDS,
    CARD_TOKENS,
    CODES,
    FUZZ_SEED,
    arg_strategy,
    fuzz_rounds,
    fuzz_seed,
    payload_text_strategy,
    restore_secrets,
    run_seeded,
    seed_secrets,
    word_strategy,
)
from hypothesis import HealthCheck, Phase, note
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule
from relkit import FOREIGN_TABLE_IDS, Oracle, Snapshot, snapshot

from adapters.discord.suggest import setting_names
from bot.i18n import LANGUAGES
from bot.markup import to_discord
from bot.model import ChatRef, Command, Message, Private, Sender, UserRef
from bot.snapshot import GameCache
from bot.storage import MemoryStore
from bot.table import TableDoc
from core.actions import Bid, Contract, Play
from core.cards import CARD_NAMES
from core.game import GameState
from core.rules import PRESETS
from fakes.discord import (
    FakeChannel,
    FakeDiscord,
    FakeDiscordConfig,
    FakeInteraction,
    FakeMessage,
    FakeUsageError,
    FakeUser,
)

STEPS = 60
WANTED = int(os.environ.get("THOUSAND_FUZZ_DC_CASES", 300))

KINDS = (
    "plays_on", "presses_a_button", "presses_made_up_id", "slash", "plays_on", "presses_a_button",
    "presses_made_up_id", "slash", "autocomplete", "forged_slash", "plays_on", "autocomplete",
)  # fmt: skip
"""The kinds of step, each as often as it is named here."""
MADE_UP = (
    "changed", "another button", "structured", "changed", "another button", "structured", "changed",
    "random payload", "random", "cut", "suffix", "hand", "mode", "long",
)  # fmt: skip
"""How a made-up custom id is made, each as often as named: a real payload with its version, table,
cards or command changed; another message's button (the other table's, a finished table's, an older
version's, another person's hand); every part chosen; random text; a real id cut, suffixed or too long;
the My hand and DM switch ids with any table or value. The DM switch goes only on hands (ephemeral or
in the DM), the only messages the bot draws it on: on a channel message the adapter would answer it
by replacing that message for everyone with the note "Your hand now comes by direct message."
(`Interactions.on_mode` updates whatever message was pressed; discord.py routes only ids that are on
the pressed message, so no press can reach that today)."""
ARGS = [*CARD_TOKENS, "!", "1", "2", "120", "yes", "no"]
AUTOCOMPLETED = (
    ("play", "card"), ("bid", "amount"), ("play", "card"), ("bid", "amount"), ("settings", "option"),
    ("settings", "value"),
)  # fmt: skip
SUBCOMMANDS = (
    "new", "join", "leave", "start", "bid", "pass", "play", "hand", "score", "rules", "settings", "lang",
    "kick", "end", "export", "stats", "top", "back", "help",
)  # fmt: skip
OPTION_NAMES = ("preset", "amount", "card", "dm", "option", "value", "language", "player")
SETTING_WORDS = [c.value for c in setting_names("")] + ["lang", "turn_seconds", "ai", "barrel", "xyzzy"]


def _sized(strategy: st.SearchStrategy[str], low: int, high: int) -> st.SearchStrategy[str]:
    return strategy.filter(lambda s: low <= len(s) <= high)


card_text = st.one_of(
    st.sampled_from(CARD_TOKENS),
    st.sampled_from(CARD_TOKENS).map(lambda c: c + " !"),
    _sized(st.sampled_from(ARG_WORDS), 1, 12),
    st.text(min_size=1, max_size=12),
)
setting_option = st.one_of(
    st.sampled_from(SETTING_WORDS), _sized(arg_strategy, 1, 40), st.text(min_size=1, max_size=40)
)
setting_value = st.one_of(
    _sized(arg_strategy, 1, 100),
    st.sampled_from([*PRESETS, *LANGUAGES, "on", "off", "default", "30", "0", "easy", "hard", "120"]),
    st.text(min_size=1, max_size=100),
    st.builds(lambda c, n: c * n, st.characters(), st.integers(90, 100)),
)
typed_text = st.one_of(
    st.just(""),
    st.just(""),
    st.sampled_from("1KQAJ9"),
    st.sampled_from(CARD_TOKENS),
    st.sampled_from(ARG_WORDS),
    st.integers(-5, 2000).map(str),
    st.text(max_size=100),
)
option_value = st.one_of(
    st.tuples(st.just(4), st.integers(-(2**53), 2**53)),
    st.tuples(st.just(4), st.sampled_from([-1, 0, 59, 60, 120, 1000, 1001, 10**6])),
    st.tuples(st.just(3), st.text(max_size=200)),
    st.tuples(st.just(3), st.builds(lambda c, n: c * n, st.characters(), st.integers(13, 6000))),
    st.tuples(st.just(3), st.sampled_from([*CARD_TOKENS, *ARG_WORDS, *SETTING_WORDS])),
    st.tuples(st.just(5), st.booleans()),
    st.tuples(st.just(6), st.integers(0, 2**63 - 1).map(str)),
    st.tuples(st.just(10), st.floats(allow_nan=False, allow_infinity=False)),
    st.tuples(st.sampled_from([3, 4, 5]), st.sampled_from([None, "", "x", 1, True])),
)


class DiscordFuzz(RuleBasedStateMachine):
    steps: ClassVar[int] = 0
    presses: ClassVar[int] = 0
    finished_presses: ClassVar[int] = 0
    forged: ClassVar[int] = 0
    dropped: ClassVar[int] = 0
    moves: ClassVar[int] = 0
    slashes: ClassVar[int] = 0
    forged_slashes: ClassVar[int] = 0
    autocompletes: ClassVar[int] = 0
    live_autocompletes: ClassVar[int] = 0
    refusals: ClassVar[int] = 0
    interactions: ClassVar[int] = 0
    reopened: ClassVar[int] = 0
    deals: ClassVar[int] = 0
    games_won: ClassVar[int] = 0
    failure: ClassVar[str | None] = None
    """The first failed check of the test, with the steps that led to it."""

    def __init__(self) -> None:
        super().__init__()
        self._secrets = seed_secrets(3)
        # Replayed games, one cache per example: every example seeds `secrets` alike, so its n-th table has
        # the serial the n-th table of every other example had, maybe with other rules (a shared cache then
        # replayed one game's actions on another's state).
        self._cache = GameCache(64)
        self.logs = LogWatch().__enter__()
        self.loop = asyncio.new_event_loop()
        self.stack = contextlib.AsyncExitStack()
        self.problems: list[str] = []
        self.sender_texts: set[str] = adapter_notes()
        self.privacy = Privacy()
        self.checked: set[int] = set()
        self.unrouted: set[int] = set()
        self.requests_seen = 0
        self.kind = "setup"
        self.trail: list[str] = []
        try:
            self.run(self.setup())
            self.check()
        except BaseException:
            self.teardown()
            raise

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    async def setup(self) -> None:
        fake = await self.stack.enter_async_context(FakeDiscord(FakeDiscordConfig()))
        speed_up(fake)
        self.fake = fake
        names = ("alice", "bob", "carol", "dave", "erin", "frank", "gina", "hugo")
        self.people = [fake.add_user(n, global_name=n.title()) for n in names]
        alice, bob, carol, dave, erin, frank, gina, hugo = self.people
        g1 = add_guild(fake, "Card room", [alice, bob, carol, dave, frank, gina], admins=[gina])
        g2 = add_guild(fake, "Other room", [carol, dave, erin, frank, gina, hugo], admins=[hugo])
        thousand, old = fake.add_text_channel(g1, "thousand"), fake.add_text_channel(g1, "old")
        cards, lounge = fake.add_text_channel(g2, "cards"), fake.add_text_channel(g2, "lounge")
        self.channels: list[FakeChannel] = [thousand, old, cards, lounge]
        self.dms = {u.id: fake.dm_channel(u) for u in self.people}
        self.store = MemoryStore()
        self.bot = await self.stack.enter_async_context(
            running_bot(fake, self.store, settings(), config=E2E, seed=7)
        )
        self.judge_service()
        rng = random.Random(5)
        finished = Driver(fake, old, [bob, alice], [self.bot], rng)
        await finished.open("russian", computers=1)
        await Mover(fake, TableSpec(old, [bob], 0, "russian"), finished, self.people).slash(bob, "end")
        self.tables = [
            TableSpec(thousand, [alice, bob, carol], 0, "polish"),
            TableSpec(cards, [dave, erin], 1, "estonian"),
        ]
        self.movers: list[Mover] = []
        for spec in self.tables:
            driver = Driver(fake, spec.channel, spec.crew, [self.bot], rng, slash_ratio=0.3)
            await driver.open(spec.preset, computers=spec.computers, options=SHORT_GAME)
            driver.players = self.people
            self.movers.append(Mover(fake, spec, driver, self.people))

    def judge_service(self) -> None:
        """Judge every command the adapter hands to the service, and every timer firing, one at a time."""
        service = self.bot.runtime.service
        handle, tick = service.handle, service.tick
        oracle = Oracle(types.SimpleNamespace(state=self._state))  # type: ignore[arg-type]
        lock = asyncio.Lock()

        async def judged(command: Command) -> list[Message]:
            async with lock:
                before: Snapshot = await snapshot(self.store)
                messages = await handle(command)
                after: Snapshot = await snapshot(self.store)
            for m in messages:
                if m.kind == "error" and isinstance(m.audience, Sender | Private):
                    for text in (m.body, m.text):
                        if len(text.strip()) > 3:
                            self.sender_texts.add(to_discord(text).strip())
            verdict = oracle.judge(command, messages, before, after)
            self.problems += who_and_where(self.fake, command)
            self.progress(before, after)
            if verdict.refused:
                type(self).refusals += 1
            self.problems.extend(f"{command}: {p}" for p in verdict.problems)
            return messages

        async def timed(now: float | None = None) -> list[Message]:
            async with lock:
                before: Snapshot = await snapshot(self.store)
                messages = await tick(now)
                after: Snapshot = await snapshot(self.store)
            timer = Command("timer", (), ChatRef("dc", "0"), UserRef("timer", "timer", "timer"))
            verdict = oracle.judge(timer, messages, before, after, timer=True)
            self.progress(before, after)
            self.problems.extend(f"timer: {p}" for p in verdict.problems)
            return messages

        service.handle = judged  # type: ignore[method-assign]
        service.tick = timed  # type: ignore[method-assign]

    def progress(self, before: Snapshot, after: Snapshot) -> None:
        """Count the deals played to their end and the games won (so the summary shows the games went on)."""
        tables = before.tables()
        for key, doc in after.tables().items():
            old = tables.get(key)
            if old is None or old.serial != doc.serial:
                continue
            if doc.status == "finished" and old.status != "finished" and doc.ended == "won":
                type(self).games_won += 1
            new_state, old_state = self._state(doc), self._state(old)
            if new_state is not None and old_state is not None:
                type(self).deals += max(0, len(new_state.results) - len(old_state.results))

    def _state(self, doc: TableDoc | None) -> GameState | None:
        if doc is None or doc.game is None:
            return None
        return self._cache.state(doc.serial, doc.game.spec, doc.game.actions)

    def teardown(self) -> None:
        try:
            self.run(self.stack.aclose())
        finally:
            restore_secrets(self._secrets)
            self.run(_cancel_the_rest())
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.logs.__exit__()
            self.loop.close()

    # --- after every step ------------------------------------------------------------------------

    def check(self) -> None:
        problems = self.run(self.settle_and_check())
        if problems:
            # Kept apart from hypothesis's report: a replay of a run against a live bot may go otherwise.
            failure = f"after a {self.kind} step:\n" + "\n".join(problems)
            trail = "\n".join(f"  {i + 1}. {t}" for i, t in enumerate(self.trail[-60:]))
            if type(self).failure is None:
                type(self).failure = f"{failure}\nthe steps of this run (the last 60):\n{trail}"
            raise AssertionError(failure)

    async def settle_and_check(self) -> list[str]:
        fake = self.fake
        new = [it for iid, it in list(fake.interactions.items()) if iid not in self.checked]
        for it in new:
            if it.id not in self.unrouted:
                with contextlib.suppress(TimeoutError):
                    await it.response(timeout=5)
        await bot_idle(fake, self.bot)
        problems = list(self.problems)
        self.problems.clear()
        errors, warnings = self.logs.take()
        problems += [f"logged: {e}" for e in errors]
        if self.kind != "forged slash":
            problems += [f"logged: {w}" for w in warnings if "application command failed" in w]
        type(self).interactions += len(new)
        for it in new:
            self.checked.add(it.id)
            problems += self.answered(it)
        requests = fake.requests[self.requests_seen :]
        self.requests_seen += len(requests)
        problems += [
            f"Discord answered {r.method} {r.route} with {r.status}"
            for r in requests
            if r.status >= 400 and r.status != 404
        ]
        for channel in self.channels:
            doc = await self.doc(channel)
            problems += self.privacy.check(channel, doc, self._state(doc), self.sender_texts)
        return problems

    def answered(self, it: FakeInteraction) -> list[str]:
        what = it.data.get("custom_id") or " ".join(
            [it.data.get("name", "?"), *(o.get("name", "?") for o in it.data.get("options") or [])]
        )
        if it.id in self.unrouted:
            return [] if it.callback is None else [f"a press of {what!r} matched no button yet was answered"]
        out = []
        if it.callback is None:
            out.append(f"interaction {it.id} ({what!r} by {it.user.username}) was never answered")
        elif it.callback.at - it.created_at >= 3.0:
            out.append(f"interaction {it.id} ({what!r}) answered after {it.callback.at - it.created_at:.2f}s")
        if it.errors:
            out.append(f"interaction {it.id} ({what!r}) got errors {it.error_codes}: {it.errors}")
        if it.original is not None and it.owns_original and it.original.loading:
            out.append(f"interaction {it.id} ({what!r}) left a 'thinking' message")
        return out

    async def doc(self, channel: FakeChannel) -> TableDoc | None:
        _, doc = await self.bot.runtime.service.load(f"dc:{channel.id}")
        return doc

    # --- people ---------------------------------------------------------------------------------

    def places(self, person: FakeUser) -> list[FakeChannel]:
        """The guild channels the person sees, and their DM with the bot."""
        seen = [c for c in self.channels if c.guild is not None and person.id in c.guild.members]
        return [*seen, self.dms[person.id]]

    def visible(self, person: FakeUser) -> list[FakeMessage]:
        """Every message with buttons the person sees: public ones, their own ephemerals, their DMs."""
        found = [
            m
            for channel in self.places(person)
            for m in self.fake.visible_to(person, channel)
            if m.author is self.fake.bot_user
        ]
        return sorted(found, key=lambda m: m.id)

    # Draws by name and id (a failing case then reads as who did what where).

    def pick_person(self, data: st.DataObject) -> FakeUser:
        name = data.draw(st.sampled_from([u.username for u in self.people]), label="person")
        return next(u for u in self.people if u.username == name)

    def pick_channel(self, data: st.DataObject, person: FakeUser) -> FakeChannel:
        places = {c.name or "DM": c for c in self.places(person)}
        return places[data.draw(st.sampled_from(sorted(places)), label="channel")]

    def pick_message(self, data: st.DataObject, messages: list[FakeMessage]) -> FakeMessage:
        i = data.draw(st.sampled_from(range(len(messages))), label="message")
        m = messages[i]
        where = m.channel.name or "DM"
        kind = "ephemeral" if m.ephemeral else "public"
        note(f"message {m.id} in {where} ({kind}, {len(m.history)} edits): {m.custom_ids()}")
        return m

    def table_ids(self) -> list[str]:
        return [
            *(f"dc:{c.id}" for c in self.channels),
            *(f"dc:{c.id}" for c in self.dms.values()),
            *FOREIGN_TABLE_IDS,
            "dc:0",
            "dc:x",
        ]

    def step(self, kind: str, what: str) -> None:
        self.kind = kind
        self.trail.append(f"{kind}: {what}")
        type(self).steps += 1

    @rule(data=st.data())
    def acts(self, data: st.DataObject) -> None:
        """One step of a kind drawn from `KINDS` (one rule, so that every run mixes every kind)."""
        kind = data.draw(st.sampled_from(KINDS), label="kind")
        getattr(self, kind)(data)

    def slash(self, data: st.DataObject) -> None:
        person = self.pick_person(data)
        channel = self.pick_channel(data, person)
        sub = data.draw(st.sampled_from(SUBCOMMANDS), label="subcommand")
        options = self.options(data, sub)
        try:
            self.run(self.fake.slash(person, channel, "thousand", sub, **options))
        except FakeUsageError:
            return  # the Discord client would not send it (an option out of range, a DM-only rule)
        self.step("slash", f"{person.username} in {_where(channel)}: /thousand {sub} {_shown(options)}")
        type(self).slashes += 1
        self.check()

    def options(self, data: st.DataObject, sub: str) -> dict[str, Any]:
        def maybe(name: str, strategy: st.SearchStrategy[Any]) -> dict[str, Any]:
            value = data.draw(st.one_of(st.none(), strategy), label=name)
            return {} if value is None else {name: value}

        if sub == "new":
            return maybe("preset", st.sampled_from(list(PRESETS)))
        if sub == "bid":
            return {"amount": data.draw(st.one_of(st.integers(0, 1000), st.sampled_from([0, 100, 120])))}
        if sub == "play":
            return {"card": data.draw(card_text, label="card")}
        if sub == "hand":
            return maybe("dm", st.booleans())
        if sub == "settings":
            return maybe("option", setting_option) | maybe("value", setting_value)
        if sub == "lang":
            return maybe("language", st.sampled_from(LANGUAGES))
        if sub == "kick":
            targets = [*self.people, self.fake.bot_user, self.fake.owner]
            name = data.draw(st.sampled_from([u.username for u in targets]), label="player")
            return {"player": next(u for u in targets if u.username == name)}
        return {}

    def forged_slash(self, data: st.DataObject) -> None:
        person = self.pick_person(data)
        channel = self.pick_channel(data, person)
        sub = data.draw(st.one_of(st.sampled_from(SUBCOMMANDS), word_strategy), label="subcommand")
        options = [
            {"name": name, "type": kind, "value": value}
            for name, (kind, value) in data.draw(
                st.lists(
                    st.tuples(st.one_of(st.sampled_from(OPTION_NAMES), st.text(max_size=40)), option_value),
                    max_size=3,
                ),
                label="options",
            )
        ]
        self.step("forged slash", f"{person.username} in {_where(channel)}: /thousand {sub!r} {options!r}")
        type(self).forged_slashes += 1
        self.run(forge_slash(self.fake, person, channel, sub, options))
        self.check()

    def autocomplete(self, data: st.DataObject) -> None:
        person = self.pick_person(data)
        channel = self.pick_channel(data, person)
        sub, focused = data.draw(st.sampled_from(AUTOCOMPLETED), label="option")
        options: dict[str, Any] = {focused: data.draw(typed_text, label="typed")}
        if focused == "value" and data.draw(st.booleans(), label="with option"):
            options["option"] = data.draw(st.sampled_from(SETTING_WORDS), label="setting")
        self.complete(person, channel, sub, focused, options)

    def complete(
        self, person: FakeUser, channel: FakeChannel, sub: str, focused: str, options: dict[str, Any]
    ) -> None:
        try:
            typing = self.fake.autocomplete(person, channel, "thousand", sub, focused=focused, **options)
            it = self.run(typing)
        except FakeUsageError:
            return
        self.step(
            "autocomplete", f"{person.username} in {_where(channel)}: /thousand {sub} {_shown(options)}"
        )
        type(self).autocompletes += 1
        self.problems += self.run(self.offered(it, person, channel, sub))
        self.check()

    async def offered(
        self, it: FakeInteraction, person: FakeUser, channel: FakeChannel, sub: str
    ) -> list[str]:
        """Card and bid choices are the typist's own legal moves at the channel's table, or none."""
        with contextlib.suppress(TimeoutError):
            await it.response(timeout=5)
        if sub not in ("play", "bid"):
            return []
        doc = await self.doc(channel)
        state = self._state(doc)
        seat = doc.seat_of(f"dc:{person.id}") if doc is not None else None
        legal: set[str] = set()
        playing = doc is not None and doc.status == "game" and state is not None and not state.finished
        if playing and state is not None and seat is not None and state.to_act == seat:
            for action in state.legal_actions(seat):
                if isinstance(action, Play) and sub == "play":
                    legal.add(CARD_NAMES[action.card] + (" !" if action.declare else ""))
                elif isinstance(action, Bid | Contract) and sub == "bid":
                    legal.add(str(action.value))
        if playing and (it.choices or seat != (state.to_act if state is not None else None)):
            type(self).live_autocompletes += 1
        shown = {str(c.get("value")) for c in it.choices}
        if not shown <= legal:
            return [f"autocomplete of {sub} by {person.username} in #{channel.name} offered {shown - legal}"]
        return []

    def presses_a_button(self, data: st.DataObject) -> None:
        person = self.pick_person(data)
        messages = [m for m in self.visible(person) if m.custom_ids()]
        if not messages:
            return
        message = self.pick_message(data, messages[-40:])
        custom_id = data.draw(st.sampled_from(message.custom_ids()), label="button")
        if self.run(self.at_finished_table(custom_id)):
            type(self).finished_presses += 1
        try:
            self.run(self.fake.press(person, message, custom_id))
        except FakeUsageError:
            return  # a disabled button
        self.step("press", f"{person.username} on {_message(message)}: {custom_id!r}")
        type(self).presses += 1
        self.check()

    async def at_finished_table(self, custom_id: str) -> bool:
        p = payload_of(custom_id)
        if p is None or not p[3].startswith("dc:"):
            return False
        _, doc = await self.bot.runtime.service.load(p[3])
        return doc is not None and (doc.status == "finished" or p[2] < doc.opened)

    def presses_made_up_id(self, data: st.DataObject) -> None:
        person = self.pick_person(data)
        how = data.draw(st.sampled_from(MADE_UP), label="made up as")
        messages = self.visible(person)
        if how == "mode":
            # The DM switch is only ever drawn on hands (ephemeral or in the DM): see MADE_UP.
            messages = [m for m in messages if m.ephemeral or m.channel.guild is None]
        if not messages:
            return
        message = self.pick_message(data, messages[-40:])
        made_up = self.made_up(data, how, message)
        self.step("made-up press", f"{person.username} on {_message(message)}: {made_up!r} ({how})")
        type(self).forged += 1
        if self.run(self.at_finished_table(made_up)):
            type(self).finished_presses += 1
        it = self.run(forge_press(self.fake, person, message, made_up))
        if not routed(made_up):
            self.unrouted.add(it.id)
            type(self).dropped += 1
            self.run(self.delivered(it))
        self.check()

    def made_up(self, data: st.DataObject, how: str, message: FakeMessage) -> str:
        """A custom id `how` (see `MADE_UP`), from the buttons of `message` and of every message sent."""
        real = data.draw(st.sampled_from(message.custom_ids() or ["t|x"]), label="real")
        everywhere = sorted(
            {
                cid
                for channel in [*self.channels, *self.dms.values()]
                for m in channel.messages
                for version in [*m.history, m]
                for cid in _custom_ids(version.components)
            }
        )
        draw: Any = data.draw
        if how == "random":
            return draw(payload_text_strategy, label="custom id") or "?"
        if how == "random payload":
            return "t|" + draw(payload_text_strategy, label="payload")
        if how == "another button":
            return draw(st.sampled_from(everywhere or [real]), label="custom id")
        if how == "cut":
            cut = draw(st.integers(0, len(real)), label="cut")
            return real[:cut] + draw(st.text(max_size=20), label="tail")
        if how == "suffix":
            return f"{real}|{draw(st.integers(0, 1000), label='n')}"
        if how == "hand":
            return "h|" + draw(st.sampled_from(self.table_ids()) | st.text(max_size=50), label="table")
        if how == "mode":
            return "m|" + draw(st.sampled_from(["0", "1", "2", "", "01", "1|1"]) | st.text(), label="mode")
        if how == "long":
            return real + "x" * draw(st.integers(40, 200), label="length")
        if how == "changed":
            payloads = [c for c in everywhere if payload_of(c) is not None]
            base = draw(st.sampled_from(payloads or ["t|x:::dc:0"]), label="real payload")
            return self.changed(data, base)
        # "structured": every part chosen
        table = draw(st.sampled_from(self.table_ids()), label="table")
        version = self.version(table)
        code = draw(st.sampled_from(CODES), label="code")
        args = draw(st.lists(st.one_of(st.sampled_from(ARGS), arg_strategy), max_size=3), label="args")
        v = draw(st.one_of(st.sampled_from([version, version - 1, version + 1, 0]), st.integers(0, 10**13)))
        return f"t|{code}:{'.'.join(args)}:{v}:{table}"

    def changed(self, data: st.DataObject, base: str) -> str:
        """A real payload with one part changed: the version (the one before or after the table's, an old
        one), the table (another channel's, a DM's, another platform's), the cards, the command."""
        code, args, version, table = base[2:].split("|")[0].split(":", 3)
        part = data.draw(st.sampled_from(["version", "table", "args", "code"]), label="changed part")
        if part == "version":
            now = self.version(table)
            version = str(data.draw(st.sampled_from([now, now + 1, now - 1, 0, int(version) - 1]), label="v"))
        elif part == "table":
            table = data.draw(st.sampled_from(self.table_ids()), label="table")
        elif part == "args":
            args = ".".join(data.draw(st.lists(st.sampled_from(ARGS), max_size=3), label="args"))
        else:
            code = code.replace(code[:1], data.draw(st.sampled_from(CODES), label="code"), 1)
        return f"t|{code}:{args}:{version}:{table}"

    def version(self, table_id: str) -> int:
        if not table_id.startswith("dc:"):
            return 0
        return int(self.run(self.bot.runtime.service.load(table_id))[0])

    async def delivered(self, it: FakeInteraction) -> None:
        """Give the bot the time to see (and drop) an interaction that will not be answered."""
        await asyncio.sleep(0.05)
        await bot_idle(self.fake, self.bot)

    def bystander(self, data: st.DataObject, mover: Mover, to_act: FakeUser) -> None:
        """Now and then someone else at the channel types the move command first: no choices for them."""
        channel = mover.spec.channel
        assert channel.guild is not None
        others = [u.username for u in self.people if u is not to_act and u.id in channel.guild.members]
        if data.draw(st.integers(0, 4), label="bystander types") == 0:
            name = data.draw(st.sampled_from(others), label="bystander")
            person = next(u for u in self.people if u.username == name)
            sub, focused = data.draw(st.sampled_from(AUTOCOMPLETED[:2]), label="option")
            self.complete(person, channel, sub, focused, {focused: ""})

    def plays_on(self, data: st.DataObject) -> None:
        mover = self.movers[data.draw(st.sampled_from(range(len(self.movers))), label="table (0: #thousand)")]
        for _ in range(data.draw(st.integers(1, 8), label="moves")):
            seat = self.run(mover.to_act())
            if seat is None:
                if data.draw(st.booleans(), label="reopen") and self.run(mover.reopen()):
                    self.step("reopen", f"at {_where(mover.spec.channel)}")
                    type(self).reopened += 1
                    self.check()
                return
            assert seat.doc.game is not None
            self.bystander(data, mover, seat.user)
            before = len(seat.doc.game.actions)
            it = self.run(mover.move(seat))
            self.step("move", f"{seat.user.username} at {_where(mover.spec.channel)} v{seat.version}")
            if it is None:
                who = f"{seat.user.username} at {mover.table_id} v{seat.version}"
                self.problems.append(f"{who}: no hand with moves was found on their turn")
            else:
                self.run(mover.driver.settle(it))
                _, doc, _ = self.run(mover.driver.peek())
                played = doc is not None and doc.game is not None and len(doc.game.actions) > before
                same = doc is not None and doc.serial == seat.doc.serial
                if not played and same and seat.doc.turn is None:  # no timer could have moved first
                    who = f"{seat.user.username} at {mover.table_id} v{seat.version}"
                    self.problems.append(f"a legal move by {who} was not played")
                type(self).moves += 1
            self.check()


def _where(channel: FakeChannel) -> str:
    return (
        f"#{channel.name}"
        if channel.name
        else f"the DM of {channel.recipient.username if channel.recipient else '?'}"
    )


def _message(m: FakeMessage) -> str:
    kind = "ephemeral" if m.ephemeral else "public"
    return f"{kind} message {m.id} in {_where(m.channel)} ({len(m.history)} edits)"


def _shown(options: dict[str, Any]) -> str:
    return " ".join(f"{k}:{getattr(v, 'username', v)!r}" for k, v in options.items())


async def _cancel_the_rest() -> None:
    """Tasks discord.py leaves behind (the timeouts of views it built from received messages)."""
    rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in rest:
        task.cancel()
    await asyncio.gather(*rest, return_exceptions=True)


def _custom_ids(components: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for c in components:
        if c.get("custom_id"):
            out.append(str(c["custom_id"]))
        out += _custom_ids(c.get("components") or [])
    return out


@pytest.mark.timeout(max(300, int(WANTED * 0.6)))
def test_fuzz_through_discord() -> None:
    machine = DiscordFuzz
    for name in (
        "steps", "presses", "finished_presses", "forged", "dropped", "moves", "slashes", "forged_slashes",
        "autocompletes", "live_autocompletes", "refusals", "interactions", "reopened", "deals", "games_won",
    ):  # fmt: skip
        setattr(machine, name, 0)
    machine.failure = None
    seed = fuzz_seed()

    def done() -> bool:
        m = machine
        return (
            m.steps >= WANTED
            and m.presses > WANTED // 30
            and m.forged > WANTED // 30
            and m.moves > WANTED // 10
            and m.slashes > WANTED // 30
            and m.forged_slashes > 0
            and m.live_autocompletes > 0
            and m.refusals > WANTED // 30
            and m.finished_presses > 0
        )

    def reached() -> str:
        m = machine
        return (
            f"{m.steps} steps ({m.interactions} interactions), {m.presses} real buttons pressed by anyone "
            f"({m.finished_presses} of a finished table), {m.forged} made-up custom ids ({m.dropped} "
            f"matching no button), {m.moves} legal moves, {m.slashes} slash commands, "
            f"{m.forged_slashes} forged, {m.autocompletes} autocompletes ({m.live_autocompletes} for moves "
            f"at a game), {m.refusals} refusals; {m.deals} deals played out, {m.games_won} games won, "
            f"{m.reopened} steps reopening a table"
        )

    for rnd in fuzz_rounds(seed, done, reached):
        try:
            run_seeded(
                machine,
                hypothesis_settings(
                    max_examples=max(3, math.ceil((WANTED - machine.steps) / (STEPS * 1.5))),
                    stateful_step_count=STEPS,
                    deadline=None,
                    suppress_health_check=list(HealthCheck),
                    database=None,
                    phases=(Phase.generate,),  # no shrinking: each run builds a world of its own (seconds)
                ),
                seed,
                rnd,
            )
        except Exception as exc:
            if machine.failure is not None:
                raise AssertionError(machine.failure) from exc
            raise
    print(f"\nDiscordFuzz ({FUZZ_SEED}={seed}): {reached()}")
