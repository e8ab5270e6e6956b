"""The hypothesis state machine behind the fuzz tests: everything a user can send, against a live world.

Each step is one case: a typed message (commands with random arguments, random and oversize text), a
button payload (random, structured with random fields, a real button seen earlier pressed by anyone
anywhere, or one with its version or table changed), a legal move by the player to act (so that games
move on through deals, refusals and finished tables), or time passing (turn deadlines fire). After every
step the oracle of `relkit` judges what changed, every error the bot's loggers recorded fails the run,
and at the end of each run every table's version and state must agree.
"""

from __future__ import annotations

import asyncio
import os
import random
import types
import uuid
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import hypothesis
from fuzz_constants import fixed_local_constants
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test
from relkit import (
    FOREIGN_TABLE_IDS,
    GROUPS,
    PRIVATES,
    TABLE_IDS,
    USERS,
    ErrorLog,
    Oracle,
    Snapshot,
    World,
    consistency,
    snapshot,
)

import bot.handlers.lobby
import bot.service
from bot import vocabulary
from bot.ai import decide_now
from bot.commands import _ALIASES, COMMANDS, SECRET_MOVES, from_payload, parse_text
from bot.handlers import Handlers
from bot.model import ChatRef, Command, Message, UserRef
from bot.service import Service
from bot.settings import Settings
from bot.storage import MemoryStore, RedisStore, Store
from core.actions import Action
from core.cards import CARD_NAMES
from core.view import seat_view

START = 1_700_000_000.0

WORDS = sorted({*COMMANDS, *_ALIASES, "start@thousand_test_bot", "bid@other_bot", "xyzzy", "ПАС", "Bid", "?"})


def _words(text: str) -> list[str]:
    return text.split()


ARG_WORDS = [
    *_words(
        "yes no on off default reset easy medium hard polish estonian russian turn lang language preset "
        "target barrel barrel_at max_bid must_beat marriage_values opening_bid level ai null none -1 0 1 2 3 "
        "4 5 15 14 3600 3601 100000 100001 1e9 0x10 ! ★ + declare marriage @Ala Ala Fiona Gosia pl ru uk et "
        "tr xx en-US 120 100 110 300 1000 10h q♠ Д♠ D♠ K♠ 10♥ A♦ 9c JS 1O♠ ZZ QSS"
    ),
    *('{"H": 100}', '{"H": "x"}', "[1,2]", "{}", "1,2", "\u200b", "\x00", "%s", "{name}"),
]
CODES = (*tuple("NjlarsbxpgtdSBconwhTZRkKeEH"), "", "q", "ZZ", "j ", "pp")
MANAGING = ("new", "join", "leave", "add_ai", "remove_ai", "start", "set", "kick", "end", "back", "lang")
"""Commands that change who sits where or what the rules are: drawn more often than the rest."""
word_strategy = st.one_of(st.sampled_from(MANAGING), st.sampled_from(WORDS))

CARD_TOKENS = [*CARD_NAMES, *(c.lower() for c in CARD_NAMES)]


def _settings() -> Settings:
    values: dict[str, object] = {
        "redis_url": None,
        "ai_workers": 0,
        "charts": False,
        "turn_seconds": 0,
        "default_ai_level": "easy",
    }
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


# --------------------------------------------------------------------------- strategies

arg_strategy = st.one_of(
    st.sampled_from(ARG_WORDS),
    st.sampled_from(CARD_TOKENS),
    st.integers(-(10**15), 10**15).map(str),
    st.text(max_size=24),
)

typed_strategy = st.one_of(
    st.builds(
        lambda prefix, word, args: prefix + word + ("" if not args else " " + " ".join(args)),
        st.sampled_from(["/", "!", "", " /", "/ "]),
        word_strategy,
        st.lists(arg_strategy, max_size=5),
    ),
    st.text(max_size=300),
    st.builds(lambda c, n: c * n, st.characters(), st.integers(1000, 20_000)),
    st.builds(lambda w, n: f"/{w} " + "x" * n, st.sampled_from(WORDS), st.integers(60, 10_000)),
    st.builds(
        lambda w, args: f"/{w} " + " ".join(args),
        st.sampled_from(WORDS),
        st.lists(arg_strategy, min_size=20, max_size=60),
    ),
)

payload_text_strategy = st.one_of(
    st.text(max_size=90),
    st.text(alphabet="NjlarsbxpgtdSBconwhTZRkKeEH:.0123456789-tgdc!=_+QSJKAHDC", max_size=90),
    st.binary(max_size=70).map(lambda b: b.decode("latin-1")),
)


def seed_secrets(seed: int) -> tuple[object, object]:
    """Table serials and timer tokens come from `secrets`, and computer players are seeded by the serial:
    a seeded source keeps runs alike (hypothesis replays a failing run to report it). Returns what to
    give `restore_secrets` afterwards."""
    seeded = random.Random(seed)
    saved = (bot.handlers.lobby.secrets, bot.service.secrets)
    fixed = types.SimpleNamespace(
        token_hex=lambda n=16: seeded.getrandbits(8 * n).to_bytes(n, "big").hex(),
        randbits=seeded.getrandbits,
    )
    bot.handlers.lobby.secrets = bot.service.secrets = fixed  # type: ignore[assignment]
    return saved


def restore_secrets(saved: tuple[object, object]) -> None:
    bot.handlers.lobby.secrets, bot.service.secrets = saved  # type: ignore[assignment]


class FuzzMachine(RuleBasedStateMachine):
    """One world per run; subclasses choose the store."""

    cases: ClassVar[int] = 0
    accepted_moves: ClassVar[int] = 0
    refusals: ClassVar[int] = 0
    ignored: ClassVar[int] = 0
    timer_firings: ClassVar[int] = 0

    def __init__(self) -> None:
        super().__init__()
        self._secrets = seed_secrets(11)
        self.loop = asyncio.new_event_loop()
        self.clock = [START]
        self.store = self.make_store()
        self.service = Service(
            self.store, _settings(), handlers=Handlers, clock=lambda: self.clock[0], rng=random.Random(5)
        )
        self.world = World(self.service, self.store, self.clock)
        self.oracle = Oracle(self.world.games)
        self.errors = ErrorLog()
        self.errors.__enter__()
        self.run(self.world.build())
        self.rng = random.Random(0)

    def make_store(self) -> Store:
        return MemoryStore(clock=lambda: self.clock[0])

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def teardown(self) -> None:
        try:
            problems = self.run(consistency(self.store, self.world.games))
            assert problems == [], problems
        finally:
            restore_secrets(self._secrets)
            self.errors.__exit__()
            self.run(self.service.close())
            self.run(self.close_store())
            self.loop.close()

    async def close_store(self) -> None:
        return None

    # --- one case -------------------------------------------------------------------------------------

    def judge(self, command: Command | None, *, expect_ok: bool = False) -> list[Message]:
        cls = type(self)
        cls.cases += 1
        if command is None:
            cls.ignored += 1
            return []
        before: Snapshot = self.run(snapshot(self.store))
        messages = self.run(self.world.send(command))
        after: Snapshot = self.run(snapshot(self.store))
        verdict = self.oracle.judge(command, messages, before, after)
        escaped = self.errors.take()
        assert not escaped, f"{command}: an error escaped: {escaped}"
        assert messages, f"{command} got no answer at all"
        assert verdict.problems == [], f"{command}:\n" + "\n".join(verdict.problems)
        if verdict.refused:
            cls.refusals += 1
            assert not expect_ok, f"a legal move was refused: {command}: {[m.text for m in messages]}"
        return messages

    # --- people ---------------------------------------------------------------------------------------

    def person(self, data: st.DataObject) -> tuple[UserRef, ChatRef]:
        i = data.draw(st.integers(0, len(USERS) - 1), label="user")
        admin = data.draw(st.sampled_from([None, False, True]), label="admin")
        base = USERS[i]
        who = UserRef(
            base.platform, base.user_id, base.name, data.draw(st.sampled_from(["en", "pl", None])), admin
        )
        chat = data.draw(st.sampled_from([*GROUPS, PRIVATES[i], PRIVATES[i]]), label="chat")
        return who, chat

    @rule(data=st.data())
    def typed(self, data: st.DataObject) -> None:
        who, chat = self.person(data)
        text = data.draw(typed_strategy, label="text")
        self.judge(parse_text(text, chat, who))

    @rule(data=st.data())
    def pressed(self, data: st.DataObject) -> None:
        who, chat = self.person(data)
        kind = data.draw(st.sampled_from(["random", "structured", "seen", "seen", "mutated", "mutated"]))
        seen = self.world.seen_payloads
        if kind == "random" or not seen:
            payload = data.draw(payload_text_strategy, label="payload")
        elif kind == "structured":
            code = data.draw(st.sampled_from(CODES))
            args = data.draw(st.lists(st.one_of(st.sampled_from(CARD_TOKENS), arg_strategy), max_size=3))
            table = data.draw(st.sampled_from(TABLE_IDS))
            current = self.run(self.world.doc(table))[0] if ":" in table else 0
            version = data.draw(
                st.one_of(
                    st.sampled_from([current, current - 1, 1]), st.integers(0, 60), st.integers(0, 10**13)
                )
            )
            payload = f"{code}:{'.'.join(args)}:{version}:{table}"
        elif kind == "seen":
            payload = data.draw(st.sampled_from(seen[-60:]), label="seen payload")
        else:
            base = data.draw(st.sampled_from(seen[-60:]), label="seen payload")
            code, args, version, table = base.split(":", 3)
            field = data.draw(st.sampled_from(["version", "table", "args", "code"]))
            if field == "version":
                current = self.run(self.world.doc(table))[0]
                version = str(
                    data.draw(st.sampled_from([current, current + 1, current - 1, 0, int(version)]))
                )
            elif field == "table":
                table = data.draw(st.sampled_from(TABLE_IDS + FOREIGN_TABLE_IDS))
            elif field == "args":
                args = ".".join(data.draw(st.lists(st.sampled_from([*CARD_TOKENS, "!", "1", "2", "120"]))))
            else:
                code = data.draw(st.sampled_from(CODES))
            payload = f"{code}:{args}:{version}:{table}"
        self.judge(from_payload(payload, chat, who))

    @rule(data=st.data())
    def moves(self, data: st.DataObject) -> None:
        """The players to act make a few legal moves (typed or pressed), so the games go on."""
        for _ in range(data.draw(st.integers(1, 6), label="moves")):
            if not self.legal_move(data):
                return

    def legal_move(self, data: st.DataObject) -> bool:
        live = []
        for table_id in (GROUPS[0].key, GROUPS[1].key, PRIVATES[6].key):
            _, doc = self.run(self.world.doc(table_id))
            state = self.world.games.state(doc)
            if doc is None or state is None or doc.status != "game" or state.to_act is None:
                continue
            seat = state.to_act
            if 0 <= seat < len(doc.seats) and doc.seats[seat].present:
                live.append((table_id, doc, state, seat))
        if not live:
            return False
        table_id, doc, state, seat = data.draw(st.sampled_from(live), label="table")
        seat_doc = doc.seats[seat]
        who = next(u for u in USERS if u.key == seat_doc.user)
        legal = list(state.legal_actions(seat))
        if data.draw(st.booleans(), label="sensible"):
            action = decide_now("easy", seat_view(state, seat), legal, data.draw(st.integers(0, 2**31)), None)
        else:
            action = data.draw(st.sampled_from(legal), label="action")
        mine = PRIVATES[USERS.index(who)]
        by_button = data.draw(st.booleans(), label="button")
        old_hand = list(self.world.hands.get(who.key, []))
        if by_button and self.press_move(who, mine, table_id, action, state, seat):
            type(self).accepted_moves += 1
            if old_hand and data.draw(st.booleans(), label="double tap"):
                # The same hand pressed again: a button of a version the table has left behind.
                stale = [b.payload for m in old_hand for row in m.buttons for b in row]
                if stale:
                    self.judge(from_payload(data.draw(st.sampled_from(stale)), mine, who))
            return True
        chat = (
            mine if table_id == mine.key else data.draw(st.sampled_from([ChatRef(*_split(table_id)), mine]))
        )
        if chat.private and chat.key != table_id and len(self.live_tables_of(who)) != 1:
            chat = ChatRef(*_split(table_id))
        text = typed_move(action, state, seat)
        if text.split()[0].lstrip("/") in SECRET_MOVES and not chat.private:
            # Cards given or laid down are never typed in a group: refused there, and stored nowhere.
            self.judge(parse_text(text, chat, who))
            if len(self.live_tables_of(who)) != 1:
                # The private chat cannot tell which table: the hand's buttons can.
                if self.press_move(who, mine, table_id, action, state, seat):
                    type(self).accepted_moves += 1
                    return True
                return False
            chat = mine
        self.judge(parse_text(text, chat, who), expect_ok=True)
        type(self).accepted_moves += 1
        return True

    def live_tables_of(self, who: UserRef) -> list[str]:
        out = []
        for table_id in TABLE_IDS:
            _, doc = self.run(self.world.doc(table_id))
            if doc is not None and doc.status != "finished" and doc.seat_of(who.key) is not None:
                out.append(table_id)
        return out

    def press_move(
        self, who: UserRef, chat: ChatRef, table_id: str, action: Action, state: Any, seat: int
    ) -> bool:
        steps = button_steps(action, state, seat)
        if steps is None:
            return False
        for i, (name, args) in enumerate(steps):
            hand = self.world.hands.get(who.key, [])
            payload = None
            for m in hand:
                if m.key == f"hand:{table_id}":
                    for row in m.buttons:
                        for b in row:
                            parsed = from_payload(b.payload, chat, who)
                            if parsed.name == name and parsed.args == args:
                                payload = b.payload
            if payload is None:
                assert i == 0, f"the hand lost the {name} buttons half-way"
                return False
            self.judge(from_payload(payload, chat, who), expect_ok=True)
        return True

    @rule(seconds=st.sampled_from([0, 1, 5, 29, 31, 61, 90, 400, 1000]))
    def time_passes(self, seconds: int) -> None:
        type(self).cases += 1
        if self.clock[0] + seconds - START < 6 * 3600:  # within every table's lifetime
            self.clock[0] += seconds
        before: Snapshot = self.run(snapshot(self.store))
        messages = self.run(self.service.tick())
        self.world.note(messages)
        after: Snapshot = self.run(snapshot(self.store))
        timer = Command("timer", (), GROUPS[1], UserRef("timer", "timer", "timer"))
        verdict = self.oracle.judge(timer, messages, before, after, timer=True)
        escaped = self.errors.take()
        assert not escaped, f"tick: an error escaped: {escaped}"
        assert verdict.problems == [], "tick:\n" + "\n".join(verdict.problems)
        if verdict.changed:
            type(self).timer_firings += 1


def _split(table_id: str) -> tuple[str, str]:
    platform, _, chat_id = table_id.partition(":")
    return platform, chat_id


def typed_move(action: Action, state: Any, seat: int) -> str:
    """The command a person types for `action` (`bot.vocabulary.typed`)."""
    return vocabulary.typed(action, vocabulary.Mover.of_state(state, seat))


def button_steps(action: Action, state: Any, seat: int) -> list[tuple[str, tuple[str, ...]]] | None:
    """The buttons pressed for a card, a bid, a pass, a contract, a give or a lay-down (the other moves
    are typed)."""
    if action.kind not in ("play", "bid", "pass", "contract", "give", "discard"):
        return None
    return vocabulary.presses(action, vocabulary.Mover.of_state(state, seat))


class MemoryFuzz(FuzzMachine):
    pass


class RedisFuzz(FuzzMachine):
    url: ClassVar[str] = ""

    def make_store(self) -> Store:
        self.prefix = f"fuzz-{uuid.uuid4().hex[:10]}"
        return RedisStore.from_url(type(self).url, prefix=self.prefix)

    async def close_store(self) -> None:
        assert isinstance(self.store, RedisStore)
        client = self.store._r
        async for key in client.scan_iter(match=f"{self.prefix}:*", count=500):
            await client.delete(key)
        await self.store.close()


def cases_wanted(default: int) -> int:
    """THOUSAND_FUZZ_CASES: the least number of cases a fuzz test must run (CI keeps the default)."""
    return int(os.environ.get("THOUSAND_FUZZ_CASES", default))


FUZZ_SEED = "THOUSAND_FUZZ_SEED"


def fuzz_seed() -> int:
    """The seed of this fuzz run: `THOUSAND_FUZZ_SEED` when set (to replay a failure), else a fresh one."""
    text = os.environ.get(FUZZ_SEED, "").strip()
    return int(text) if text else random.SystemRandom().randrange(2**32)


MAX_ROUNDS = 10


def fuzz_rounds(seed: int, done: Callable[[], bool], reached: Callable[[], str]) -> Iterator[int]:
    """The round numbers of a fuzz loop, until `done()`: enough cases, and every kind of case the test
    counts on. Hypothesis leaves rules out of whole examples (its simplest example repeats one rule all
    the way), so a round can miss a kind of case that the next round brings in. After `MAX_ROUNDS` it
    fails, saying what was `reached()` and the seed that replays the loop."""
    rnd = 0
    while not done():
        rnd += 1
        assert rnd <= MAX_ROUNDS, f"after {MAX_ROUNDS} rounds only {reached()} ({FUZZ_SEED}={seed})"
        yield rnd


FUZZ_SHRINK = "THOUSAND_FUZZ_SHRINK"


def fuzz_phases() -> tuple[hypothesis.Phase, ...]:
    """No shrinking (and so no explaining) unless `THOUSAND_FUZZ_SHRINK=1`: after a failure hypothesis
    re-runs the machine hundreds of times under a line tracer, which on CI's slow machine outlived the
    test's 300 s timeout (and the interrupted replay then hid the failure behind FlakyStrategyDefinition).
    The failing run's steps are printed as found; the seed replays them, shrinking turned on by hand."""
    phases = [hypothesis.Phase.explicit, hypothesis.Phase.reuse, hypothesis.Phase.generate]
    if os.environ.get(FUZZ_SHRINK, "").strip() in ("1", "yes", "true"):
        phases.append(hypothesis.Phase.shrink)
    return tuple(phases)


def run_seeded(
    machine: type[RuleBasedStateMachine], settings: hypothesis.settings, seed: int, rnd: int
) -> None:
    """One round of a fuzz loop, hypothesis seeded by `seed` and the round number; a failure names the
    seed that replays the whole loop (`THOUSAND_FUZZ_SEED=<seed>`, same case counts) and hypothesis
    prints the failing example's blob (`@reproduce_failure(...)` on the machine class replays just it)."""
    try:
        with fixed_local_constants():  # the same draws for a seed alone as in the whole suite
            run_state_machine_as_test(
                hypothesis.seed(seed * 1_000 + rnd)(machine),
                settings=hypothesis.settings(
                    settings,
                    print_blob=True,
                    phases=tuple(p for p in settings.phases if p in fuzz_phases()),
                ),
            )
    except BaseException as exc:
        note = f"replay this fuzz run with {FUZZ_SEED}={seed} (round {rnd} of {machine.__name__} failed)"
        print(f"\n{note}")
        exc.add_note(note)
        raise
