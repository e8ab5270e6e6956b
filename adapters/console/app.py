"""`thousand play`: one person against computer players in a terminal.

The terminal is just another front end: it sends neutral commands to the same `Service` the chat
adapters use, over the memory store, and shows the neutral messages with rich. The table is the
"group", the hand is the player's private message; a button is chosen by its number, a card by its
notation (`QS`, `10h`, `q♠` or the reader's letters), anything else is sent as a command (`bid 120`).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from rich.console import Console
from rich.text import Text

from adapters.console.prompt import LineReader
from adapters.console.render import message_renderable
from adapters.console.screen import YOU, Screen
from adapters.console.verbs import again_word, in_words, neutral, word
from bot.commands import UNKNOWN, PayloadError, encode_payload, from_payload, parse_text, read_payload
from bot.handlers import Handlers
from bot.handlers.base import YES
from bot.help import help_lines
from bot.i18n import LANGUAGES, Translator, parse_card_in, translator
from bot.model import ChatRef, Command, Message, Private, UserRef
from bot.service import Service
from bot.settings import Settings
from bot.storage import MemoryStore
from core.cards import CARD_NAMES, CardParseError

__all__ = ["ConsoleGame", "GameOptions", "ReadLine", "game_settings", "run", "stdin_lines"]

ReadLine = Callable[[str], Awaitable[str | None]]


@dataclass(frozen=True, slots=True)
class GameOptions:
    preset: str = "polish"
    players: int = 3
    level: str = "medium"
    lang: str = "en"
    seed: int | None = None
    name: str | None = None
    """The player's name at the table; None: "You" in the player's language."""
    chart: Path | None = None


_QUIT: Final = frozenset({"quit", "exit", "q"})
_HELP: Final = frozenset({"help", "?", "h"})
_CARD_MOVES: Final = ("play", "give", "discard")
_VALUE_MOVES: Final = ("bid", "contract")


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
    again: str | None = None
    """The final score sheet's "Play again" payload (a new game with the same players)."""
    screen: Screen = field(init=False)

    def __post_init__(self) -> None:
        self.screen = Screen(self.t, self.name)

    @property
    def t(self) -> Translator:
        return translator(self.options.lang)

    @property
    def name(self) -> str:
        return self.options.name or self.t._(YOU)

    @property
    def user(self) -> UserRef:
        return UserRef("console", "you", self.name, self.options.lang, True)

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
            payloads = [b.payload for row in message.buttons for b in row]
            self.again = payloads[0] if payloads else None
            if message.image is not None and self.options.chart is not None:
                self.options.chart.write_bytes(message.image)
        if message.kind == "lobby":
            self.screen.hold_lobby(message)
            return
        self.print_lobby()
        printed = self.screen.filter(message)
        if printed is not None:
            self.console.print(message_renderable(printed))

    def print_lobby(self) -> None:
        lobby = self.screen.take_lobby()
        if lobby is not None:
            self.console.print(message_renderable(lobby))

    def say(self, text: str, *, error: bool = False) -> None:
        """One line of the terminal's own (not the service's)."""
        if error:
            self.console.print(Text("✗ ", style="bold red") + Text(text))
        else:
            self.console.print(Text(text))

    async def start(self) -> None:
        o = self.options
        await self.send(parse_text(f"/new {o.preset}", self.chat, self.user))
        for _ in range(o.players - 1):
            await self.send(parse_text(f"/add_ai {o.level}", self.chat, self.user))
        await self.send(parse_text("/start", self.chat, self.user))
        self.print_lobby()

    # --- what was typed -----------------------------------------------------------------------------

    def _cards(self, text: str) -> tuple[list[str], bool] | None:
        """The cards of a line made only of cards (`AS`, `10h 9c`, `qh!`, the reader's letters), in
        notation, and whether a `!` asks to declare a marriage; None for anything else."""
        tokens = text.replace(",", " ").split()
        declare = bool(tokens) and tokens[-1] == "!"
        if declare:
            tokens.pop()
        if not tokens:
            return None
        names = []
        for token in tokens:
            declare = declare or token.endswith("!")
            try:
                card = parse_card_in(token.rstrip("!"), (self.options.lang, "en"))
            except CardParseError:
                return None
            names.append(CARD_NAMES[card])
        return names, declare

    def _card_command(self, cards: list[str], declare: bool) -> Command | None:
        """The move the typed cards make now, as the card buttons on screen would send it (so the service
        says why when it is not possible: not in your hand, follow suit...); None after saying why not."""
        for payload in self.buttons:
            try:
                p = read_payload(payload)
            except PayloadError:
                continue
            if p.name not in _CARD_MOVES:
                continue
            if p.name == "play" and len(cards) > 1:
                self.say(self.t._("Play one card at a time."), error=True)
                return None
            if p.name == "play":
                args: tuple[str, ...] = (cards[0], "!") if declare else (cards[0],)
            else:
                # One card adds to the cards picked so far; several make the whole give or lay-down.
                args = (*p.args[:-1], cards[0]) if len(cards) == 1 else tuple(cards)
            try:
                return from_payload(
                    encode_payload(p.name, args, p.version, p.table_id, p.tag), self.chat, self.user
                )
            except PayloadError:
                break
        # No card to choose now (bidding, someone else's turn): the service says what is possible.
        return parse_text(f"/play {cards[0]}{' !' if declare else ''}", self.chat, self.user)

    async def _choose(self, number: int) -> None:
        """A typed number: the choice of that number, else a bid or contract of that value."""
        t = self.t
        if 1 <= number <= len(self.buttons):
            await self.send(from_payload(self.buttons[number - 1], self.chat, self.user))
            return
        for payload in self.buttons:
            try:
                name = read_payload(payload).name
            except PayloadError:
                continue
            if name in _VALUE_MOVES:
                await self.send(parse_text(f"/{name} {number}", self.chat, self.user))
                return
        if self.buttons:
            self.say(
                t._("There is no choice {number}: type a number from 1 to {count}.").format(
                    number=number, count=len(self.buttons)
                ),
                error=True,
            )
        else:
            self.say(t._("There is nothing to choose now."), error=True)

    async def step(self, line: str) -> bool:
        """Handle one line of input; False when the player quits."""
        t = self.t
        text = self._in_english(line.strip())
        word = text.lower().lstrip("/")
        if not text:
            return True
        if word in _QUIT:
            await self.send(parse_text("/end", self.chat, self.user))
            return False
        if word in _HELP:
            self.show_help()
            return True
        if text.isascii() and text.isdigit():  # '²' is a digit to isdigit() but not to int()
            await self._choose(int(text))
            return True
        cards = self._cards(text)
        head, _, rest = text.partition(" ")
        if cards is None and head.lower().lstrip("/") in ("give", "discard") and self._offers(head):
            # `give 9C` with one card of the give left picks it as typing `9C` would (the help names the
            # verb; the service's `give` wants every card of the give at once).
            cards = self._cards(rest)
        if cards is not None:
            await self.send(self._card_command(*cards))
            return True
        command = parse_text(text if text[0] in "/!" else "/" + text, self.chat, self.user)
        if command is None or command.name == UNKNOWN:
            self.say(t._("Not a choice, a card or a command. Type help for the list."), error=True)
            return True
        await self.send(command)
        return True

    def _offers(self, move: str) -> bool:
        """Whether the hand on screen has buttons of `move` (give, discard) now."""
        move = move.lower().lstrip("/")
        for payload in self.buttons:
            try:
                if read_payload(payload).name == move:
                    return True
            except PayloadError:
                continue
        return False

    def show_help(self) -> None:
        """The terminal's help, all in the player's language: its own words for the commands (`ставка 120`,
        `отдай 9♣ В♦`; the English ones work too) and cards as their deck writes them."""
        t, lang = self.t, self.options.lang
        card = in_words(t, "QS · 10h · q♠").replace(" · ", ", ")
        first = in_words(t, "bid 120 · pass").replace(" · ", ", ")
        self.say(
            t._("Type the number of a choice, a card ({cards}), or a command: {commands}.").format(
                cards=card, commands=first
            )
        )
        also = ", ".join(word(lang, w) for w in ("help", "rules", "score", "hand", "table", "quit"))
        self.say(t._("Also: {commands}.").format(commands=also))
        lines = [t._("**1000: commands**")]
        for commands, what in help_lines("console"):
            lines.append(f"{in_words(t, commands)}: {t._(what)}" if what else in_words(t, commands))
        self.console.print(message_renderable(Message(Private(self.user), "\n".join(lines), kind="info")))

    def _in_english(self, text: str) -> str:
        """A line whose first word is a command in the player's language (`licytuj 120`), with that word
        in the neutral English form the rest of the terminal reads (`bid 120`); other lines unchanged."""
        head, _, rest = text.partition(" ")
        name = neutral(self.options.lang, head.lstrip("/"))
        if name is None:
            return text
        return f"{name} {rest}".strip()

    async def loop(self) -> int:
        t = self.t
        await self.start()
        self.say(
            t._("Type {help} for help, {quit} to stop.").format(
                help=word(self.options.lang, "help"), quit=word(self.options.lang, "quit")
            )
        )
        while True:
            while not self.over:
                line = await self.read_line("> ")
                if line is None:
                    # End of input (Ctrl-D) is a way to stop, not a failure: exit status 0 as for quit.
                    self.say(t._("Input ended: the game stops."))
                    await self.send(parse_text("/end", self.chat, self.user))
                    return 0
                if not await self.step(line):
                    return 0
            self.say(t._("Game over. Thank you for playing!"))
            if self.options.chart is not None:
                self.say(t._("Score chart saved to {path}").format(path=self.options.chart))
            if not await self.play_again():
                return 0

    async def play_again(self) -> bool:
        """Offer the final sheet's "Play again": only its word (`again`, `jeszcze`...) or yes starts the
        next game with the same players; anything else, even a number (someone still pressing 1 for the
        last cards), ends. True when a new game has started."""
        t = self.t
        if self.again is None:
            return False
        word = again_word(self.options.lang)
        self.say(
            t._("Type {word} to play again with the same players, or press Enter to quit.").format(word=word)
        )
        line = await self.read_line("> ")
        answer = self._in_english((line or "").strip()).lower().lstrip("/")
        if answer.isdigit() or answer not in {"again", "rematch", word, *YES}:
            return False
        payload, self.again = self.again, None
        self.over = False
        await self.send(from_payload(payload, self.chat, self.user))
        return not self.over


def stdin_lines() -> ReadLine:
    """Lines from the terminal, edited with readline (arrows, history) when it is one; piped lines as
    they come (adapters/console/prompt.py)."""
    reader = LineReader()

    async def read(prompt: str) -> str | None:
        return await asyncio.to_thread(reader.read, prompt)

    return read


def game_settings(options: GameOptions, **more: Any) -> Settings:
    """The settings of one person's game against the computer, at the terminal or on its web page
    (`adapters.web.terminal`): in memory, no turn timer, every action drawn. `more`: other settings."""
    if options.lang not in LANGUAGES:
        raise ValueError(f"unsupported language {options.lang!r}")
    return Settings(
        redis_url=None,
        default_language=options.lang,
        default_preset=options.preset,
        turn_seconds=0,
        default_ai_level=options.level,
        table_updates="every_action",
        charts=options.chart is not None,
        ai_workers=1 if options.level != "easy" else 0,
        command_limit=0,  # one person at their own terminal: no one to protect from a flood
        **more,
    )


async def play(
    options: GameOptions, *, console: Console | None = None, read_line: ReadLine | None = None
) -> int:
    """Run one game to its end (or until the player quits); the exit status."""
    settings = game_settings(options)
    rng = random.Random(options.seed) if options.seed is not None else None
    service = Service(MemoryStore(), settings, handlers=Handlers, rng=rng)
    game = ConsoleGame(service, console or Console(highlight=False), read_line or stdin_lines(), options)
    try:
        return await game.loop()
    finally:
        await service.close()


def run(options: GameOptions) -> int:
    return asyncio.run(play(options))
