"""The reliability tests' world and oracle: a service with a few tables in every state, and the checks that
say whether what one command did was allowed.

The world (`World.build`): five groups and the private chats of seven people.

- `G1` a game of three people (U0 created it, U1 and U2), polish, no turn timer;
- `G2` a game of two people (U3 created it, U4) and a computer, estonian, 30 s turns (so `tick` fires);
- `G3` a finished table (U0 and U5 played, U0 ended it);
- `G4` a lobby (U5 created it, U2 joined): U2 sits at two live tables;
- `G5` no table at all; U6 plays alone against two computers in the private chat; nobody is admin.

The oracle compares every stored document before and after one command (`Snapshot`), with the command
and the messages it returned, and lists every rule broken (`Oracle.judge`): an empty list is a pass.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from bot.commands import MOVE_COMMANDS, decode_payload, from_payload, parse_text
from bot.model import ChatRef, Command, Group, Message, Private, Sender, UserRef
from bot.service import Service
from bot.settings import Settings
from bot.snapshot import GameCache, decode_action
from bot.storage import MemoryStore, RedisStore, Store
from bot.table import TableDoc
from core.actions import Play
from core.cards import CARD_NAMES, cards_of
from core.errors import IllegalAction
from core.game import GameState
from fakes import cardspy

PLATFORM = "tg"
NAMES = ("Ala", "Bartek", "Celina", "Dorota", "Emil", "Fiona", "Gosia")
"""Display names (no card-like text in them: the privacy check looks for card labels in group text)."""


def user(i: int, admin: bool | None = None) -> UserRef:
    return UserRef(PLATFORM, str(1001 + i), NAMES[i], "en", admin)


def group(i: int) -> ChatRef:
    return ChatRef(PLATFORM, f"-{1000 + i}", f"Group {i}")


def private(i: int) -> ChatRef:
    return ChatRef(PLATFORM, str(1001 + i), NAMES[i], True)


USERS = tuple(user(i) for i in range(len(NAMES)))
GROUPS = tuple(group(i) for i in range(1, 6))
PRIVATES = tuple(private(i) for i in range(len(NAMES)))
FOREIGN_TABLE_IDS = ("tg:-1999", "tg:-100123456", "dc:1001", "tg:1001x", "zz:-1001")
"""Table ids of chats the world does not have (and of another platform)."""
TABLE_IDS = tuple(c.key for c in GROUPS + PRIVATES) + FOREIGN_TABLE_IDS


def quiet_settings() -> Settings:
    """Settings for the tests: no .env, computer players in threads, no charts, no turn timers."""
    values: dict[str, object] = {
        "redis_url": None,
        "ai_workers": 0,
        "charts": False,
        "turn_seconds": 0,
        "default_ai_level": "easy",
    }
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


# --------------------------------------------------------------------------- the store, as documents


@dataclass(frozen=True)
class Snapshot:
    """Every document of the store: key -> (version, JSON text), and each table's stream."""

    docs: dict[str, tuple[int, str]]
    streams: dict[str, list[str]]

    def table(self, key: str) -> TableDoc | None:
        found = self.docs.get(key)
        if found is None or key.startswith(("settings:", "prefs:")):
            return None
        return TableDoc.model_validate_json(found[1])

    def tables(self) -> dict[str, TableDoc]:
        return {
            k: TableDoc.model_validate_json(v) for k, (_, v) in self.docs.items() if ":" in k and _is_table(k)
        }


def _is_table(key: str) -> bool:
    return not key.startswith(("settings:", "prefs:"))


async def document_keys(store: Store) -> list[str]:
    """Every document key the store holds (the memory store's dictionary, Redis's table hashes)."""
    inner: Any = getattr(store, "inner", store)
    if isinstance(inner, MemoryStore):
        return sorted(inner._tables)  # a test may look inside
    assert isinstance(inner, RedisStore)
    prefix = inner.keys.prefix
    keys: list[str] = []
    async for key in inner._r.scan_iter(match=f"{prefix}:{{*}}:table", count=500):
        keys.append(key[len(prefix) + 2 : -len("}:table")])
    return sorted(keys)


async def snapshot(store: Store) -> Snapshot:
    docs: dict[str, tuple[int, str]] = {}
    streams: dict[str, list[str]] = {}
    for key in await document_keys(store):
        stored = await store.load(key)
        if stored is not None:
            docs[key] = (stored.version, stored.document)
            if _is_table(key):
                streams[key] = await store.read_events(key)
    return Snapshot(docs, streams)


# --------------------------------------------------------------------------- games as the engine sees them


class Games:
    """Replayed states of stored games (raises on an action the engine refuses)."""

    def __init__(self) -> None:
        self.cache = GameCache(256)

    def state(self, doc: TableDoc | None) -> GameState | None:
        if doc is None or doc.game is None:
            return None
        return self.cache.state(doc.serial, doc.game.spec, doc.game.actions)


def payloads(messages: Iterable[Message]) -> list[str]:
    return [b.payload for m in messages for row in m.buttons for b in row]


# --------------------------------------------------------------------------- errors that escaped


class ErrorLog(logging.Handler):
    """Collects ERROR records of the bot's loggers: the service turns a crash into an answer and logs it,
    so a logged error is an exception that escaped a handler."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def __enter__(self) -> ErrorLog:
        logging.getLogger("thousand").addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logging.getLogger("thousand").removeHandler(self)

    def take(self) -> list[str]:
        out = [f"{r.getMessage()}\n{self.format(r)}" for r in self.records]
        self.records.clear()
        return out


# --------------------------------------------------------------------------- the world


@dataclass
class World:
    service: Service
    store: Store
    clock: list[float]
    games: Games = field(default_factory=Games)
    seen_payloads: list[str] = field(default_factory=list)
    hands: dict[str, list[Message]] = field(default_factory=dict)
    """The last hand message each user got, per table id of its key."""

    async def send(self, command: Command) -> list[Message]:
        messages = await self.service.handle(command)
        self.note(messages)
        return messages

    def note(self, messages: list[Message]) -> None:
        for p in payloads(messages):
            if p not in self.seen_payloads:
                self.seen_payloads.append(p)
        del self.seen_payloads[:-400]
        for m in messages:
            if m.kind == "hand" and isinstance(m.audience, Private):
                self.hands[m.audience.user.key] = [m]

    async def text(self, who: UserRef, chat: ChatRef, text: str) -> list[Message]:
        command = parse_text(text, chat, who)
        assert command is not None, text
        return await self.send(command)

    async def press(self, who: UserRef, chat: ChatRef, payload: str) -> list[Message]:
        return await self.send(from_payload(payload, chat, who))

    async def doc(self, table_id: str) -> tuple[int, TableDoc | None]:
        stored = await self.store.load(table_id)
        if stored is None:
            return 0, None
        return stored.version, TableDoc.model_validate_json(stored.document)

    async def build(self) -> None:
        u = USERS
        g1, g2, g3, g4, _ = GROUPS

        async def ok(who: UserRef, chat: ChatRef, text: str) -> None:
            out = await self.text(who, chat, text)
            assert not [m for m in out if m.kind == "error"], (text, [m.text for m in out])

        await ok(u[0], g1, "/new polish")
        await ok(u[1], g1, "/join")
        await ok(u[2], g1, "/join")
        await ok(u[0], g1, "/start")
        await ok(u[3], g2, "/new estonian")
        await ok(u[3], g2, "/set turn 30")
        await ok(u[4], g2, "/join")
        await ok(u[3], g2, "/add_ai easy")
        await ok(u[3], g2, "/start")
        await ok(u[0], g3, "/new")
        await ok(u[5], g3, "/join")
        await ok(u[0], g3, "/start")
        await ok(u[0], g3, "/end")
        await ok(u[5], g4, "/new russian")
        await ok(u[2], g4, "/join")
        await ok(u[6], PRIVATES[6], "/new")
        await ok(u[6], PRIVATES[6], "/add_ai easy")
        await ok(u[6], PRIVATES[6], "/add_ai easy")
        await ok(u[6], PRIVATES[6], "/start")


# --------------------------------------------------------------------------- the oracle


@dataclass
class Verdict:
    problems: list[str] = field(default_factory=list)
    refused: bool = False
    changed: set[str] = field(default_factory=set)

    def fail(self, text: str) -> None:
        self.problems.append(text)


def _is_manager(cmd: Command, table_id: str, doc: TableDoc | None) -> bool:
    """Who may change settings, end a table and remove people in a lobby (SERVICE.md): an admin of the
    table's own chat, anyone in their own private chat for its own table, the live table's creator while
    seated at it."""
    own_chat = table_id == cmd.chat.key
    if own_chat and (cmd.user.is_admin or cmd.chat.private):
        return True
    return (
        doc is not None
        and doc.status != "finished"
        and doc.creator == cmd.user.key
        and doc.seat_of(cmd.user.key) is not None
    )


def _computer_seats(doc: TableDoc) -> set[int]:
    return {i for i, s in enumerate(doc.seats) if s.kind == "ai" or s.kicked or s.away}


class Oracle:
    """What a command may have done, judged from the documents before and after it."""

    def __init__(self, games: Games) -> None:
        self.games = games

    def judge(
        self,
        cmd: Command,
        messages: list[Message],
        before: Snapshot,
        after: Snapshot,
        *,
        timer: bool = False,
    ) -> Verdict:
        v = Verdict()
        errors = [m for m in messages if m.kind == "error"]
        v.changed = {k for k in set(before.docs) | set(after.docs) if before.docs.get(k) != after.docs.get(k)}
        if not timer:
            self._audiences(cmd, messages, v)
        if errors:
            v.refused = True
            if len(errors) != 1:
                v.fail(f"{len(errors)} error messages for one command")
            for m in messages:
                if m.kind == "error":
                    continue
                if not (
                    m.kind == "hand"
                    and isinstance(m.audience, Private)
                    and m.audience.user.key == cmd.user.key
                ):
                    v.fail(f"a refusal came with a {m.kind} message to {m.audience}")
            if v.changed:
                v.fail(f"refused ({errors[0].text!r}) yet changed {sorted(v.changed)}")
            if before.streams != after.streams:
                v.fail("refused yet a stream entry was added")
        for key in sorted(v.changed):
            if key.startswith("settings:"):
                self._settings(cmd, key, before, after, v, timer)
            elif key.startswith("prefs:"):
                self._prefs(cmd, key, before, after, v, timer)
            else:
                self._table(cmd, key, before, after, v, timer)
        self._privacy(messages, after, v)
        self._private_to_players(cmd, messages, before, after, v, timer)
        self._titles(cmd, messages, before, after, v)
        return v

    def _titles(
        self, cmd: Command, messages: list[Message], before: Snapshot, after: Snapshot, v: Verdict
    ) -> None:
        """Nobody hears a group's title privately unless they sit (or sat, this command) at its table: a
        refusal to an outsider says nothing about the group."""
        for m in messages:
            a = m.audience
            if isinstance(a, Group) or (isinstance(a, Sender) and not a.chat.private):
                continue
            reader = a.user.key
            for snap in (before, after):
                for key, doc in snap.tables().items():
                    if doc.private or not doc.title or doc.title not in m.text:
                        continue
                    sits = any(
                        (d := s.table(key)) is not None and reader in {x.user for x in d.seats}
                        for s in (before, after)
                    )
                    if not sits:
                        v.fail(f"{reader}, who never sat at {key}, was told its title: {m.text!r}")

    def _private_to_players(
        self,
        cmd: Command,
        messages: list[Message],
        before: Snapshot,
        after: Snapshot,
        v: Verdict,
        timer: bool,
    ) -> None:
        """A private message goes to the sender or to someone who plays (or played, this command) a table."""
        players = {
            s.user
            for snap in (before, after)
            for doc in snap.tables().values()
            for s in doc.seats
            if s.user is not None
        }
        for m in messages:
            if isinstance(m.audience, Private):
                who = m.audience.user.key
                if who not in players and (timer or who != cmd.user.key):
                    v.fail(f"a private {m.kind} message went to {who}, who plays nowhere")

    # --- who hears what ----------------------------------------------------------------------------

    def _audiences(self, cmd: Command, messages: list[Message], v: Verdict) -> None:
        for m in messages:
            a = m.audience
            if isinstance(a, Sender) and (a.user.key != cmd.user.key or a.chat != cmd.chat):
                v.fail(f"a Sender message went to {a.user.key} in {a.chat.key}, not the sender")
            if m.kind == "error" and not isinstance(a, Sender):
                v.fail(f"an error message went to {a}")

    # --- settings and preferences --------------------------------------------------------------------

    def _settings(
        self, cmd: Command, key: str, before: Snapshot, after: Snapshot, v: Verdict, timer: bool
    ) -> None:
        chat_key = key.removeprefix("settings:")
        if not timer and cmd.name == "new" and chat_key == cmd.chat.key:
            if key not in before.docs:
                return  # a chat's first table saves its settings, in its creator's language (docs/SERVICE.md)
            old, new = before.docs[key][1], after.docs.get(key, (0, None))[1]
            if old == new:
                return  # opening a table stores the settings again unchanged, to renew their lifetime
        if timer or cmd.name != "set":
            v.fail(f"{cmd.name} changed {key}")
            return
        if chat_key != cmd.chat.key:
            v.fail(f"set in {cmd.chat.key} changed the settings of {chat_key}")
        if not _is_manager(cmd, chat_key, before.table(chat_key)):
            v.fail(f"{cmd.user.key} (admin={cmd.user.is_admin}) changed {key} without the right")

    def _prefs(
        self, cmd: Command, key: str, before: Snapshot, after: Snapshot, v: Verdict, timer: bool
    ) -> None:
        owner = key.removeprefix("prefs:")
        won = any(
            d.status == "finished" and d.ended == "won" and (before.table(k) or d).status != "finished"
            for k, d in after.tables().items()
        )
        if won:
            return  # the names of the winners' table are kept for the `top` list
        if timer or cmd.name != "lang" or owner != cmd.user.key:
            v.fail(f"{cmd.name} by {cmd.user.key} changed {key}")

    # --- tables -------------------------------------------------------------------------------------

    def _table(
        self, cmd: Command, key: str, before: Snapshot, after: Snapshot, v: Verdict, timer: bool
    ) -> None:
        d0, d1 = before.table(key), after.table(key)
        who = cmd.user.key
        if d1 is None:
            v.fail(f"{cmd.name} deleted table {key}")
            return
        ver0 = before.docs[key][0] if key in before.docs else 0
        ver1 = after.docs[key][0]
        if ver1 != ver0 + 1:
            v.fail(f"{key}: version went from {ver0} to {ver1} in one command")
        if not timer and key != cmd.chat.key:
            # From elsewhere only a seated person acts on a table, and nobody takes a seat from elsewhere
            # (Telegram's signed deep link reaches the service as a command of the group itself).
            # Play again is pressed over a finished game, by someone who sat at it: from the group's score
            # sheet or, with the same button, from their private chat (a public table has no group at all;
            # docs/SERVICE.md, "Play again"). `_again` below judges that press.
            live = d0 is not None and d0.status != "finished"
            finished = d0 is not None and d0.status == "finished" and cmd.name == "again"
            seated = (live or finished) and d0 is not None and d0.seat_of(who) is not None
            if not cmd.chat.private:
                v.fail(f"{cmd.name} typed in group {cmd.chat.key} changed table {key}")
            elif not seated or cmd.name in ("new", "join"):
                v.fail(f"{cmd.name} from {who}'s private chat changed {key}, where they do not sit")
        new_table = d0 is None or d1.serial != d0.serial
        if new_table and not timer and cmd.name == "again":
            self._again(cmd, key, d0, d1, v)
            return
        if new_table:
            if timer or cmd.name != "new":
                v.fail(f"{cmd.name} replaced table {key}")
            elif d0 is not None and d0.status != "finished":
                v.fail(f"new replaced the live table {key}")
            elif d1.creator != who or [s.user for s in d1.seats] != [who] or d1.status != "lobby":
                v.fail(f"new at {key} made a table of {d1.creator} with seats {[s.user for s in d1.seats]}")
            elif d1.id != key or f"{d1.platform}:{d1.chat_id}" != key:
                v.fail(f"new at {key} made a table for chat {d1.platform}:{d1.chat_id}")
            return
        assert d0 is not None
        if d0.status == "finished":
            v.fail(f"{cmd.name} by {who} changed the finished table {key}")
            return
        self._seats(cmd, key, d0, d1, v, timer)
        self._status(cmd, key, d0, d1, v, timer)
        self._actions(cmd, key, d0, d1, v, timer, ver0)
        if d0.settings != d1.settings and (timer or cmd.name != "set"):
            v.fail(f"{cmd.name} changed the settings of table {key}")
        if d0.settings != d1.settings and not timer and not _is_manager(cmd, key, d0):
            v.fail(f"{who} changed the settings of {key} without the right")
        self._stream(key, before, after, d1, v)

    def _again(self, cmd: Command, key: str, d0: TableDoc | None, d1: TableDoc, v: Verdict) -> None:
        """Play again (docs/SERVICE.md): only over a finished game, by someone seated at it; the same seats
        (its people, computers where a person left) and settings; a lobby, or a game at once when one
        person sits there."""
        who = cmd.user.key
        if d0 is None or d0.status != "finished" or d0.game is None:
            v.fail(f"again at {key} made a table where no game had finished")
            return
        if d0.seat_of(who) is None:
            v.fail(f"again by {who}, who did not sit at the finished table {key}")
        people = [s.user if s.human else None for s in d0.seats]
        if [s.user if s.human else None for s in d1.seats] != people or d1.settings != d0.settings:
            v.fail(f"again at {key} changed the seats or settings ({people} -> {[s.user for s in d1.seats]})")
        alone = sum(1 for p in people if p is not None) == 1
        if d1.status != ("game" if alone else "lobby") or d1.creator != who or d1.id != d0.id:
            v.fail(f"again at {key} made a {d1.status} table of {d1.creator}")

    def _seats(self, cmd: Command, key: str, d0: TableDoc, d1: TableDoc, v: Verdict, timer: bool) -> None:
        who = cmd.user.key
        users0 = [s.user for s in d0.seats]
        users1 = [s.user for s in d1.seats]
        if users0 == users1:
            for i, (s0, s1) in enumerate(zip(d0.seats, d1.seats, strict=True)):
                if s0.kicked != s1.kicked:
                    if timer:
                        v.fail(f"a timer kicked seat {i} of {key}")
                    elif cmd.name == "leave" and s0.user != who:
                        v.fail(f"{who}'s leave kicked {s0.user} at {key}")
                    elif cmd.name not in ("leave", "kick", "end"):
                        v.fail(f"{cmd.name} kicked seat {i} of {key}")
                    elif cmd.name == "kick" and not (cmd.user.is_admin and key == cmd.chat.key):
                        voters = [s for s in d0.seats if s.human and s.user != s0.user]
                        votes = len(d0.kick_votes.get(str(i), [])) + 1
                        if d0.seat_of(who) is None or votes * 2 <= len(voters):
                            v.fail(f"{who} kicked seat {i} of {key} without a majority or admin right")
                if s0.lang != s1.lang and (timer or cmd.name not in ("lang",) or s0.user != who):
                    v.fail(f"{cmd.name} by {who} changed the language of {s0.user}'s seat at {key}")
                if s0.away != s1.away and not s1.away and (timer or cmd.name != "back" or s0.user != who):
                    v.fail(f"{cmd.name} by {who} brought {s0.user} back at {key}")
            return
        if timer or d0.status != "lobby":
            v.fail(f"{'a timer' if timer else cmd.name} changed the seats of {key} ({users0} -> {users1})")
            return
        added = [u for u in users1 if u not in users0]
        removed = [u for u in users0 if u not in users1]
        name = cmd.name
        if name == "join":
            if added != [who] or removed:
                v.fail(f"join by {who} seated {added} and unseated {removed} at {key}")
        elif name == "leave":
            if removed != [who] or added:
                v.fail(f"leave by {who} unseated {removed} at {key}")
        elif name in ("add_ai", "remove_ai"):
            if any(u is not None for u in added + removed):
                v.fail(f"{name} changed human seats at {key}")
            if d0.seat_of(who) is None and not _is_manager(cmd, key, d0):
                v.fail(f"{name} by {who}, who does not sit at {key} and may not manage it")
        elif name == "kick":
            if added or len(removed) != 1:
                v.fail(f"kick at {key} seated {added}, unseated {removed}")
            if not _is_manager(cmd, key, d0):
                v.fail(f"{who} removed {removed} from the lobby {key} without the right")
        else:
            v.fail(f"{name} changed the seats of the lobby {key}")

    def _status(self, cmd: Command, key: str, d0: TableDoc, d1: TableDoc, v: Verdict, timer: bool) -> None:
        if d0.status == d1.status:
            return
        who = cmd.user.key
        change = (d0.status, d1.status)
        if change == ("lobby", "game"):
            if timer or cmd.name != "start":
                v.fail(f"{cmd.name} started the game at {key}")
            elif d0.seat_of(who) is None and not _is_manager(cmd, key, d0):
                v.fail(f"{who} started the game at {key} without sitting there or managing it")
        elif d1.status == "finished":
            why = d1.ended
            # The last person leaving a lobby (or kicked from it) closes it, whoever created it: the creator
            # may have been kicked from the lobby earlier, so the last one there need not manage it.
            emptied = cmd.name in ("leave", "kick") and d0.status == "lobby" and not d1.human_keys
            by_right = not timer and cmd.name == "end" and _is_manager(cmd, key, d0)
            if why == "ended" and not (emptied or by_right):
                v.fail(f"{cmd.name} by {who} (admin={cmd.user.is_admin}) ended {key} without the right")
            elif why == "idle" and not timer:
                v.fail(f"{cmd.name} closed {key} as idle")
            elif why == "abandoned" and not (cmd.name in ("leave", "kick") or timer):
                v.fail(f"{cmd.name} abandoned {key}")
            elif why == "won" and not (timer or cmd.name in MOVE_COMMANDS | {"leave", "kick", "back"}):
                v.fail(f"{cmd.name} finished {key} as won")
            elif why is None:
                v.fail(f"{key} finished without a reason")
        else:
            v.fail(f"{key} went from {d0.status} to {d1.status}")

    def _actions(
        self, cmd: Command, key: str, d0: TableDoc, d1: TableDoc, v: Verdict, timer: bool, before_version: int
    ) -> None:
        a0 = d0.game.actions if d0.game is not None else []
        a1 = d1.game.actions if d1.game is not None else []
        if a1[: len(a0)] != a0:
            v.fail(f"{cmd.name} rewrote the actions of {key}")
            return
        added = a1[len(a0) :]
        if not added:
            return
        state = self.games.state(d0)
        if d0.status == "lobby":
            state = None
        computers = _computer_seats(d1)
        first = 0
        if timer:
            turn = d0.turn
            seat, _ = decode_action(added[0])
            if turn is None or turn.kind != "turn" or turn.seat != seat:
                v.fail(f"a timer played {added[0]} at {key}, not the turn's seat")
            first = 1
        elif cmd.name in MOVE_COMMANDS:
            seat = d0.seat_of(cmd.user.key)
            played, _ = decode_action(added[0])
            if seat is None or played != seat:
                v.fail(f"{cmd.user.key} (seat {seat}) made {added[0]} at {key}: another seat's move")
            elif not d0.seats[seat].present:
                v.fail(f"{cmd.user.key} moved at {key} while a computer plays their seat")
            elif state is None or state.to_act != seat:
                v.fail(f"{cmd.user.key} moved at {key} out of turn")
            elif cmd.source == "button" and (cmd.version != before_version or cmd.table_id != key):
                v.fail(f"a move button of {cmd.table_id} v{cmd.version} was taken at {key} v{before_version}")
            first = 1
        elif cmd.name not in ("start", "leave", "kick", "back"):
            v.fail(f"{cmd.name} added actions {added} to {key}")
            return
        # Every added action must be legal in turn (the replay from the start of the game); after the
        # mover's own, only computers act, or a human's forced card plays itself (docs/SERVICE.md: a last
        # card always, any single legal card with autoplay on): their one legal move, and a card.
        for i, action in enumerate(added):
            seat, act = decode_action(action)
            if i >= first and seat not in computers:
                legal = list(state.legal_actions(seat)) if state is not None else []
                if not (len(legal) == 1 and legal[0] == act and isinstance(act, Play)):
                    v.fail(f"{cmd.name} made {action} at {key} for a seat its human plays")
            if state is not None:
                try:
                    state = state.clone()
                    state.apply_action(seat, act)
                except IllegalAction as exc:
                    v.fail(f"{action} at {key} is illegal: {exc}")
                    return

    def _stream(self, key: str, before: Snapshot, after: Snapshot, d1: TableDoc, v: Verdict) -> None:
        old = before.streams.get(key, [])
        new = after.streams.get(key, [])
        if len(new) != len(old) + 1 or new[: len(old)] != old:
            v.fail(f"{key}: the stream grew by {len(new) - len(old)} entries in one save")
            return
        entry = json.loads(new[-1])
        if entry.get("v") != after.docs[key][0]:
            v.fail(f"{key}: the stream says version {entry.get('v')}, the table {after.docs[key][0]}")
        if d1.game is not None and entry.get("n") != len(d1.game.actions):
            v.fail(f"{key}: the stream says {entry.get('n')} actions, the table has {len(d1.game.actions)}")

    # --- privacy ------------------------------------------------------------------------------------

    def _privacy(self, messages: list[Message], after: Snapshot, v: Verdict) -> None:
        for m in messages:
            if isinstance(m.audience, Group):
                doc = after.table(m.audience.chat.key)
                state = self.games.state(doc)
                if doc is None or state is None or state.finished or doc.status != "game":
                    continue
                parts = cardspy.message_parts(m.text, m.buttons)
                for leak in cardspy.leaks(parts, cardspy.secret_cards(state), [m.language]):
                    v.fail(f"group message in {m.audience.chat.key} shows a private card: {leak}")
                cards = [a for p in payloads([m]) for a in decode_payload(p)[1]]
                if cards:
                    v.fail(f"a group message carries card buttons {cards}")
            elif isinstance(m.audience, Private) and m.kind == "hand" and m.key:
                table_id = m.key.removeprefix("hand:")
                doc = after.table(table_id)
                state = self.games.state(doc)
                if doc is None or state is None:
                    v.fail(f"a hand message for {table_id}, which has no game")
                    continue
                seat = doc.seat_of(m.audience.user.key)
                if seat is None:
                    v.fail(f"{m.audience.user.key} got a hand of {table_id}, where they do not sit")
                    continue
                hand = {CARD_NAMES[c] for c in cards_of(state.deal.hands[seat])}
                for p in payloads([m]):
                    name, args, _, tid = decode_payload(p)
                    if tid != table_id:
                        v.fail(f"a hand of {table_id} has a button for {tid}")
                    if name in ("play", "give", "discard"):
                        foreign = [a for a in args if a != "!" and a not in hand]
                        if foreign:
                            v.fail(f"{m.audience.user.key}'s hand buttons hold cards {foreign} not in hand")


async def consistency(store: Store, games: Games) -> list[str]:
    """Version and state agree for every table: the stream's last entry names the stored version and
    the number of actions, versions in the stream rise by one, and the actions replay legally."""
    problems: list[str] = []
    for key in await document_keys(store):
        if not _is_table(key):
            continue
        stored = await store.load(key)
        if stored is None:
            continue
        doc = TableDoc.model_validate_json(stored.document)
        events = [json.loads(e) for e in await store.read_events(key)]
        if not events or events[-1].get("v") != stored.version:
            problems.append(f"{key}: version {stored.version}, stream ends at {events[-1:] or None}")
        versions = [e.get("v") for e in events]
        if versions != list(range(versions[0], versions[0] + len(versions))) if versions else False:
            problems.append(f"{key}: stream versions {versions[:5]}... do not rise by one")
        if doc.game is not None:
            if events and events[-1].get("n") != len(doc.game.actions):
                problems.append(f"{key}: {len(doc.game.actions)} actions, stream says {events[-1].get('n')}")
            try:
                games.state(doc)
            except Exception as exc:  # a stored game the engine cannot replay
                problems.append(f"{key}: the actions do not replay: {exc!r}")
    return problems
