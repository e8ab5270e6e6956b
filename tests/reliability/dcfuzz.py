"""Pieces of the Discord fuzz (`test_fuzz_discord.py`): its world, the presses and commands a modified
client can send, the players who keep the games going, and the checks made after every step.

The world: two guilds. "Card room" has `#thousand` (a table of three people, short games, so that it
finishes now and then) and `#old` (a table started and ended at once: its buttons belong to a finished
table from the first step on); "Other room" has `#cards` (two people and a computer) and `#lounge` (no
table). Some people sit at no table, some are in one guild only, each guild has an admin (Manage
Server), and everybody has a DM with the bot.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "discord"))  # dckit, the Discord rig

from dckit import SHORT_GAME, Driver
from dckit import payload_of as _payload_of

from adapters.discord import i18n as L
from adapters.discord.client import ThousandBot
from adapters.discord.items import DYNAMIC_ITEMS
from bot.commands import PayloadError
from bot.model import Command
from bot.table import TableDoc
from core.game import GameState
from fakes import cardspy
from fakes.discord import FakeChannel, FakeDiscord, FakeGuild, FakeInteraction, FakeMessage, FakeUser
from fakes.discord import permissions as perms
from fakes.discord.interactions import APPLICATION_COMMAND, MESSAGE_COMPONENT

__all__ = [
    "LogWatch",
    "Mover",
    "Privacy",
    "Seat",
    "TableSpec",
    "adapter_notes",
    "add_guild",
    "bot_idle",
    "forge_press",
    "forge_slash",
    "payload_of",
    "routed",
    "who_and_where",
]


def payload_of(custom_id: str) -> tuple[str, tuple[str, ...], int, str] | None:
    """(command, args, version, table id) of a service button's custom id; None for any other id (the
    adapter's own buttons, and made-up ones that do not read as a payload)."""
    try:
        return _payload_of(custom_id)
    except PayloadError:
        return None


def routed(custom_id: str) -> bool:
    """The custom id matches one of the bot's dynamic items (discord.py drops every other press unseen,
    unanswered: no button of the bot carries such an id, so only a modified client sends one)."""
    return any(cls.__discord_ui_compiled_template__.fullmatch(custom_id) for cls in DYNAMIC_ITEMS)


# --------------------------------------------------------------------------- what a modified client sends


async def forge_press(
    fake: FakeDiscord, user: FakeUser, message: FakeMessage, custom_id: str
) -> FakeInteraction:
    """A press of a button with any custom id on a message the user sees.

    discord.py only routes a press whose custom id is on the pressed message (as Discord delivers it), so
    the message carries the made-up button while the press is sent: the interaction reads as a press of
    a button the bot once drew there (an old layout, another table's, a tampered client's). The fake's
    own `press` presses only buttons that are really on the message."""
    made_up = {"type": 2, "style": 2, "label": "?", "custom_id": custom_id, "id": 999}
    drawn = copy.deepcopy(message.components)
    rows = [c for c in drawn if c.get("type") == 1]
    if len(rows) < 5:
        drawn.append({"type": 1, "id": 998, "components": [made_up]})
    else:
        rows[-1]["components"][-1] = made_up
    shown = message.components
    message.components = drawn
    try:
        data = {"custom_id": custom_id, "component_type": 2, "id": 999}
        return await fake._interact(MESSAGE_COMPONENT, user, message.channel, data, message=message)
    finally:
        if message.components is drawn:  # not edited by the bot meanwhile
            message.components = shown


async def forge_slash(
    fake: FakeDiscord, user: FakeUser, channel: FakeChannel, sub: str, options: list[dict[str, Any]]
) -> FakeInteraction:
    """`/thousand <sub>` with option payloads as given (unknown names, out-of-range values, oversize
    text: what a client with an old or tampered registration sends; the fake's `slash` refuses them)."""
    guild = channel.guild
    cmd = fake.commands.find(guild.id if guild else None, "thousand")
    assert cmd is not None, "the commands were not synced"
    data = {
        "id": cmd["id"],
        "name": cmd["name"],
        "type": 1,
        "options": [{"name": sub, "type": 1, "options": options}],
    }
    return await fake._interact(APPLICATION_COMMAND, user, channel, data)


def who_and_where(fake: FakeDiscord, command: Command) -> list[str]:
    """The oracle judges a command as the adapter built it; this checks what the adapter read from
    Discord: a real user, a channel they see (private exactly for their DM with the bot), and the admin
    right as Discord gives it (Manage Server or Administrator in that channel; None in a DM)."""
    if command.name in ("title", "unreachable"):  # the adapter's own system commands
        return []
    user, chat = command.user, command.chat
    person = fake.users.get(int(user.user_id)) if user.user_id.isdigit() else None
    channel = fake.channels.get(int(chat.chat_id)) if chat.chat_id.isdigit() else None
    if user.platform != "dc" or person is None or chat.platform != "dc" or channel is None:
        return [f"{command.name} by {user.key} in {chat.key}: no such user or channel on Discord"]
    guild = channel.guild
    if guild is None:
        if channel.recipient is not person or not chat.private or user.is_admin is not None:
            return [
                f"{command.name} by {user.key} in the DM {chat.key} (private={chat.private}, "
                f"admin={user.is_admin}): not their DM with the bot as such"
            ]
        return []
    rights = guild.permissions_in(person, channel)
    admin = bool(rights & (perms.MANAGE_GUILD | perms.ADMINISTRATOR))
    if chat.private or not rights & perms.VIEW_CHANNEL or user.is_admin is not admin:
        return [
            f"{command.name} by {person.username} in #{channel.name} read as private={chat.private}, "
            f"admin={user.is_admin} (Discord: admin={admin})"
        ]
    return []


# --------------------------------------------------------------------------- logs


class LogWatch(logging.Handler):
    """Records WARNING and above of the bot's, discord.py's and asyncio's loggers: an ERROR is an
    exception that escaped (the service and the adapter log what they catch at ERROR), and a few
    warnings say the adapter could not do what a user asked."""

    LOGGERS = ("thousand", "discord", "asyncio")

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def __enter__(self) -> LogWatch:
        for name in self.LOGGERS:
            logging.getLogger(name).addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        for name in self.LOGGERS:
            logging.getLogger(name).removeHandler(self)

    def take(self) -> tuple[list[str], list[str]]:
        """(errors, warnings) since the last call, each with its traceback."""
        errors = [f"{r.name}: {self.format(r)}" for r in self.records if r.levelno >= logging.ERROR]
        warnings = [f"{r.name}: {self.format(r)}" for r in self.records if r.levelno < logging.ERROR]
        self.records.clear()
        return errors, warnings


# --------------------------------------------------------------------------- the world


@dataclass
class TableSpec:
    """A table the players keep going: its channel, its people (the first opens it), computers, rules."""

    channel: FakeChannel
    crew: list[FakeUser]
    computers: int
    preset: str

    @property
    def table_id(self) -> str:
        return f"dc:{self.channel.id}"


@dataclass
class Seat:
    """Who acts now at a table (for the legal-move rule)."""

    user: FakeUser
    version: int
    doc: TableDoc
    state: GameState


def add_guild(fake: FakeDiscord, name: str, members: list[FakeUser], admins: list[FakeUser]) -> FakeGuild:
    guild = fake.add_guild(name)
    managers = fake.add_role(guild, "Managers", perms.MANAGE_GUILD)
    for user in members:
        fake.add_member(guild, user, roles=[managers] if user in admins else None)
    return guild


# --------------------------------------------------------------------------- the players to act


@dataclass
class Mover:
    """Keeps one table going with correct moves, as its players would (the Driver of the Discord e2e
    tests makes each move; this finds the hand to make it on, whatever the fuzz did to it meanwhile:
    hands switched to DMs, a half-made give on the hand, a table ended or reopened)."""

    fake: FakeDiscord
    spec: TableSpec
    driver: Driver
    people: list[FakeUser]
    hands: dict[int, FakeMessage] = field(default_factory=dict)

    @property
    def table_id(self) -> str:
        return self.spec.table_id

    def person(self, user_key: str | None) -> FakeUser | None:
        if user_key is None or not user_key.startswith("dc:"):
            return None
        uid = int(user_key.split(":", 1)[1])
        return next((u for u in self.people if u.id == uid), None)

    async def to_act(self) -> Seat | None:
        version, doc, state = await self.driver.peek()
        if doc is None or doc.status != "game" or state is None or state.finished:
            return None
        seat = state.to_act
        if seat is None or not 0 <= seat < len(doc.seats) or not doc.seats[seat].present:
            return None
        user = self.person(doc.seats[seat].user)
        return None if user is None else Seat(user, version, doc, state)

    def current(self, message: FakeMessage, version: int) -> bool:
        """A hand message whose move buttons are those of the table's current version."""
        found = [p for c in message.custom_ids() if (p := payload_of(c)) is not None]
        return (
            not message.deleted
            and bool(found)
            and all(p[2] == version and p[3] == self.table_id for p in found)
        )

    async def hand_for(self, seat: Seat, *, fresh: bool = False) -> FakeMessage | None:
        """The player's current hand: the one they have open, their DM hand, or a new one from My hand."""
        user, version = seat.user, seat.version
        cached = self.hands.get(user.id)
        if (
            not fresh
            and cached is not None
            and self.current(cached, version)
            and self.driver.rng.random() < 0.8
        ):
            return cached
        if not fresh:
            dms = [m for m in self.fake.dms(user) if self.current(m, version)]
            if dms:
                return dms[-1]
        source = self.driver.ping_for(user) or self.driver.table_message()
        if source is None:
            return None
        hand_id = next(c for c in source.custom_ids() if c.startswith("h|"))
        it = await self.fake.press(user, source, hand_id)
        await self.driver.settle(it)
        found = [it.original] if it.original is not None and it.original.visible_to is user else []
        found += self.fake.dms(user)[-2:]
        for m in reversed(found):
            if self.current(m, version):
                if m.ephemeral:
                    self.hands[user.id] = m
                return m
        return None

    async def move(self, seat: Seat) -> FakeInteraction | None:
        """One legal move by the player to act (None: no hand with moves was found)."""
        hand = await self.hand_for(seat)
        for attempt in range(2):
            if hand is None:
                return None
            moves = [(c, p) for c in hand.custom_ids() if (p := payload_of(c)) is not None]
            if moves and self._starts_cleanly(moves, seat):
                return await self.driver.move(seat.user, hand, moves, seat.state)
            if attempt == 0:  # a half-made choice on it (the fuzz pressed a give): a fresh hand
                hand = await self.hand_for(seat, fresh=True)
        return None

    @staticmethod
    def _starts_cleanly(moves: list[tuple[str, tuple[str, tuple[str, ...], int, str]]], seat: Seat) -> bool:
        """Give and discard are chosen a card at a time: a hand with a choice half made (pressed by the
        fuzz) offers no single cards, and a fresh hand is asked for."""
        del seat
        named = [p for _, p in moves if p[0] in ("give", "discard")]
        return not named or any(len(p[1]) == 1 for p in named)

    # --- tables that are not playing ----------------------------------------------------------------

    def lobby_message(self) -> FakeMessage | None:
        found = [
            m
            for m in self.fake.messages(self.spec.channel)
            if any((p := payload_of(c)) is not None and p[0] == "join" for c in m.custom_ids())
        ]
        return found[-1] if found else None

    async def slash(self, user: FakeUser, name: str, **options: Any) -> None:
        it = await self.fake.slash(user, self.spec.channel, "thousand", name, **options)
        await self.driver.settle(it)

    async def lobby_button(self, user: FakeUser, name: str) -> bool:
        lobby = self.lobby_message()
        if lobby is None:
            return False
        cid = next((c for c in lobby.custom_ids() if (p := payload_of(c)) is not None and p[0] == name), None)
        if cid is None:
            return False
        it = await self.fake.press(user, lobby, cid)
        await self.driver.settle(it)
        return True

    async def reopen(self) -> str:
        """A step towards a game again: open a new table, fill it, start it. Returns what was done."""
        _, doc, _ = await self.driver.peek()
        crew = self.spec.crew
        if doc is None or doc.status == "finished":
            await self.slash(crew[0], "new", preset=self.spec.preset)
            for option, value in SHORT_GAME:
                await self.slash(crew[0], "settings", option=option, value=value)
            return "opened"
        if doc.status != "lobby":
            return ""
        seated = [s.user for s in doc.seats if s.user is not None]
        missing = [u for u in crew if f"dc:{u.id}" not in seated]
        humans = [self.person(k) for k in seated]
        if missing and len(doc.seats) < 3:
            if not await self.lobby_button(missing[0], "join"):
                await self.slash(missing[0], "join")
            return "joined"
        starter = next((u for u in humans if u is not None), None)
        if starter is None:
            return ""
        if len(doc.seats) < 3:
            if not await self.lobby_button(starter, "add_ai"):
                return ""
            return "added a computer"
        if not await self.lobby_button(starter, "start"):
            await self.slash(starter, "start")
        return "started"


# --------------------------------------------------------------------------- privacy


@dataclass
class Privacy:
    """No public message (channel messages and their earlier versions, interaction answers that are not
    ephemeral) shows a card that is secret at its channel's table, in any form or field (`cardspy`; when
    the table's language changed this step, a token is reported if it is secret in both); and none
    repeats a text the service meant for one person."""

    checked: dict[int, int] = field(default_factory=dict)
    languages: dict[int, str] = field(default_factory=dict)
    versions: int = 0

    def check(
        self,
        channel: FakeChannel,
        doc: TableDoc | None,
        state: GameState | None,
        sender_texts: set[str],
    ) -> list[str]:
        problems: list[str] = []
        lang = doc.settings.language if doc is not None else "en"
        langs = {lang, self.languages.get(channel.id, lang)}  # the language may have changed this step
        self.languages[channel.id] = lang
        live = doc is not None and doc.status == "game" and state is not None and not state.finished
        secret = cardspy.secret_cards(state) if live else frozenset()
        for m in channel.messages:
            if m.ephemeral:
                continue
            versions = [*m.history, m]
            for version in versions[self.checked.get(m.id, 0) :]:
                self.versions += 1
                fields = cardspy.discord_parts(version.content, version.embeds, version.components)
                for leak in cardspy.leaks(fields, secret, sorted(langs)):
                    problems.append(f"secret card in #{channel.name} message {m.id}: {leak}")
                parts = [version.content or ""] + [e.get("description") or "" for e in version.embeds]
                for part in parts:
                    if part.strip() and part.strip() in sender_texts:
                        problems.append(f"a text meant for one person went to #{channel.name}: {part!r}")
            self.checked[m.id] = len(versions)
        return problems


def adapter_notes() -> set[str]:
    """The adapter's own notes for the one who pressed or typed, in every language."""
    from bot.i18n import LANGUAGES

    notes = (L.DM_ON, L.DM_OFF, L.DM_SENT, L.DONE, L.FAILED, L.RESTARTING)
    return {L.labels(lang)._(note) for lang in LANGUAGES for note in notes}


async def bot_idle(fake: FakeDiscord, bot: ThousandBot, timeout: float = 60.0) -> None:
    """Until the bot has nothing in flight (and the fake dispatched everything it queued)."""
    await asyncio.sleep(0)
    await fake.wait_until(lambda: bot.idle, timeout=timeout)
    await fake.settle()
