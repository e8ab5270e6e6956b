"""`thousand play`: one person against computer players in a terminal.

The terminal is just another front end: it sends neutral commands to the same `Service` the chat
adapters use, over the memory store, and shows the neutral messages with rich. The table is the
"group", the hand is the player's private message; a button is chosen by its number, a card by its
notation (`QS`, `10h`, `q♠` or the reader's letters), anything else is sent as a command (`bid 120`).
"""

from __future__ import annotations

import asyncio
import random
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.text import Text

from adapters.console.render import message_renderable
from bot.commands import decode_payload, from_payload, parse_text
from bot.handlers import Handlers
from bot.i18n import LANGUAGES, parse_card_in, translator
from bot.model import ChatRef, Command, Message, UserRef
from bot.service import Service
from bot.settings import Settings
from bot.storage import MemoryStore
from core.cards import CARD_NAMES, CardParseError

__all__ = ["ConsoleGame", "GameOptions", "run"]

ReadLine = Callable[[str], Awaitable[str | None]]


@dataclass(frozen=True, slots=True)
class GameOptions:
    preset: str = "polish"
    players: int = 3
    level: str = "medium"
    lang: str = "en"
    seed: int | None = None
    name: str = "You"
    chart: Path | None = None


@dataclass
class ConsoleGame:
    """The input loop and what is on screen (the last hand's buttons, the last text per message key)."""

    service: Service
    console: Console
    read_line: ReadLine
    options: GameOptions
    chat: ChatRef = field(default_factory=lambda: ChatRef("console", "local", "Terminal", private=True))
    buttons: list[str] = field(default_factory=list)
    shown: dict[str, str] = field(default_factory=dict)
    over: bool = False

    @property
    def user(self) -> UserRef:
        return UserRef("console", "you", self.options.name, self.options.lang, True)

    async def send(self, command: Command | None) -> None:
        if command is None:
            return
        for message in await self.service.handle(command):
            self.show(message)

    def show(self, message: Message) -> None:
        if message.kind == "hand":
            self.buttons = [b.payload for row in message.buttons for b in row]
        # The labels count too: a page of bids or contracts changes the buttons and not the text.
        seen = message.text + "\0" + "\0".join(b.label for row in message.buttons for b in row)
        if message.key is not None and not message.notify and self.shown.get(message.key) == seen:
            return
        if message.key is not None:
            self.shown[message.key] = seen
        if message.kind == "final":
            self.over = True
            if message.image is not None and self.options.chart is not None:
                self.options.chart.write_bytes(message.image)
        self.console.print(message_renderable(message))

    async def start(self) -> None:
        o = self.options
        await self.send(parse_text(f"/new {o.preset}", self.chat, self.user))
        for _ in range(o.players - 1):
            await self.send(parse_text(f"/add_ai {o.level}", self.chat, self.user))
        await self.send(parse_text("/start", self.chat, self.user))

    def _button_for_card(self, text: str) -> str | None:
        """The button of a typed card (play, give, lay down), if one is shown."""
        try:
            card = parse_card_in(text.rstrip("!"), (self.options.lang, "en"))
        except CardParseError:
            return None
        name = CARD_NAMES[card]
        declare = text.endswith("!")
        for payload in self.buttons:
            cmd, args, _, _ = decode_payload(payload)
            if cmd in ("play", "give", "discard") and args and args[-1 if cmd != "play" else 0] == name:
                if cmd == "play" and (("!" in args) != declare):
                    continue
                return payload
        return None

    async def step(self, line: str) -> bool:
        """Handle one line of input; False when the player quits."""
        t = translator(self.options.lang)
        text = line.strip()
        word = text.lower().lstrip("/")
        if not text:
            return True
        if word in ("quit", "exit", "q"):
            await self.send(parse_text("/end", self.chat, self.user))
            return False
        if word in ("help", "?", "h"):
            self.console.print(
                Text(t._("Type the number of a choice, a card (QS, 10h, q♠), or a command: bid 120, pass."))
            )
            self.console.print(Text(t._("Also: help, rules, score, hand, table, quit.")))
            await self.send(parse_text("/help", self.chat, self.user))
            return True
        if text.isdigit() and 1 <= int(text) <= len(self.buttons):
            await self.send(from_payload(self.buttons[int(text) - 1], self.chat, self.user))
            return True
        payload = self._button_for_card(text)
        if payload is not None:
            await self.send(from_payload(payload, self.chat, self.user))
            return True
        command = parse_text(text if text.startswith("/") else "/" + text, self.chat, self.user)
        await self.send(command)
        return True

    async def loop(self) -> int:
        t = translator(self.options.lang)
        await self.start()
        self.console.print(Text(t._("Type help for help, quit to stop."), style="dim"))
        while not self.over:
            line = await self.read_line("> ")
            if line is None:
                self.console.print(Text(t._("Input ended: the game stops."), style="dim"))
                await self.send(parse_text("/end", self.chat, self.user))
                return 1
            if not await self.step(line):
                return 0
        self.console.print(Text(t._("Game over. Thank you for playing!"), style="bold"))
        if self.options.chart is not None:
            self.console.print(Text(t._("Score chart saved to {path}").format(path=self.options.chart)))
        return 0


async def _stdin_line(prompt: str) -> str | None:
    def read() -> str | None:
        sys.stdout.write(prompt)
        sys.stdout.flush()
        line = sys.stdin.readline()
        return None if line == "" else line

    return await asyncio.to_thread(read)


async def play(
    options: GameOptions, *, console: Console | None = None, read_line: ReadLine | None = None
) -> int:
    """Run one game to its end (or until the player quits); the exit status."""
    if options.lang not in LANGUAGES:
        raise ValueError(f"unsupported language {options.lang!r}")
    settings = Settings(
        redis_url=None,
        default_language=options.lang,
        default_preset=options.preset,
        turn_seconds=0,
        default_ai_level=options.level,
        table_updates="every_action",
        charts=options.chart is not None,
        ai_workers=1 if options.level != "easy" else 0,
        command_limit=0,  # one person at their own terminal: no one to protect from a flood
    )
    rng = random.Random(options.seed) if options.seed is not None else None
    service = Service(MemoryStore(), settings, handlers=Handlers, rng=rng)
    game = ConsoleGame(service, console or Console(highlight=False), read_line or _stdin_line, options)
    try:
        return await game.loop()
    finally:
        await service.close()


def run(options: GameOptions) -> int:
    return asyncio.run(play(options))
