"""Helpers for the service's tests: a fake clock, users, a harness that sends commands, and players.

A scripted player picks a legal action from the engine (through a replay of the stored table, the way a
person reads the table) and sends it the way a person would: typed (`/play QS`) or with the buttons of
their last hand message.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

from kit import Clock
from kit import typed as action_text

from bot.commands import SECRET_MOVES, decode_payload, from_payload, parse_text
from bot.i18n import translator
from bot.model import ChatRef, Command, Group, Message, Private, Sender, UserRef
from bot.service import Service
from bot.settings import Settings
from bot.snapshot import GameCache
from bot.storage import Store
from bot.table import TableDoc
from bot.vocabulary import Mover, presses
from core.actions import Action
from core.ai import choose_action
from core.game import GameState
from core.view import seat_view

__all__ = [
    "Clock",
    "Harness",
    "action_text",
    "errors",
    "group_messages",
    "make_user",
    "quiet_settings",
]


def quiet_settings(**values: object) -> Settings:
    """Settings for tests: no .env, no worker processes, no charts unless asked."""
    base: dict[str, object] = {
        "redis_url": None,
        "ai_workers": 0,
        "charts": False,
        "turn_seconds": 0,
        "default_ai_level": "easy",
    }
    base.update(values)
    return Settings(_env_file=None, **base)  # type: ignore[call-arg]


def make_user(i: int, lang: str = "en", *, admin: bool | None = False, platform: str = "t") -> UserRef:
    names = ["Ala", "Bartek", "Celina", "Dorota", "Emil", "Fiona"]
    return UserRef(platform, str(100 + i), names[i % len(names)], lang, admin)


def errors(messages: list[Message]) -> list[Message]:
    return [m for m in messages if m.kind == "error"]


def group_messages(messages: list[Message]) -> list[Message]:
    return [m for m in messages if isinstance(m.audience, Group)]


@dataclass
class Harness:
    """One service on one store, one group chat, and a record of what each user was last shown."""

    service: Service
    store: Store
    clock: Clock
    chat: ChatRef = field(default_factory=lambda: ChatRef("t", "-100", "Test group"))
    hands: dict[str, Message] = field(default_factory=dict)
    sent: list[Message] = field(default_factory=list)
    cache: GameCache = field(default_factory=GameCache)

    @property
    def table_id(self) -> str:
        return self.chat.key

    def _note(self, messages: list[Message]) -> list[Message]:
        for m in messages:
            self.sent.append(m)
            if m.kind == "hand" and isinstance(m.audience, Private):
                self.hands[m.audience.user.key] = m
        return messages

    async def text(self, user: UserRef, text: str, *, chat: ChatRef | None = None) -> list[Message]:
        command = parse_text(text, chat or self.chat, user)
        assert command is not None, text
        return self._note(await self.service.handle(command))

    async def command(self, command: Command) -> list[Message]:
        return self._note(await self.service.handle(command))

    async def press(self, user: UserRef, payload: str, *, chat: ChatRef | None = None) -> list[Message]:
        return self._note(await self.service.handle(from_payload(payload, chat or self.chat, user)))

    async def tick(self) -> list[Message]:
        return self._note(await self.service.tick())

    async def doc(self) -> tuple[int, TableDoc | None]:
        stored = await self.store.load(self.table_id)
        if stored is None:
            return 0, None
        return stored.version, TableDoc.model_validate_json(stored.document)

    async def state(self) -> GameState:
        _, doc = await self.doc()
        assert doc is not None and doc.game is not None
        return self.cache.state(doc.serial, doc.game.spec, doc.game.actions)

    async def events(self) -> list[dict[str, object]]:
        return [json.loads(e) for e in await self.store.read_events(self.table_id)]

    async def open_table(self, humans: list[UserRef], computers: int = 0, *, preset: str = "polish") -> None:
        assert not errors(await self.text(humans[0], f"/new {preset}"))
        for user in humans[1:]:
            assert not errors(await self.text(user, "/join"))
        for _ in range(computers):
            assert not errors(await self.text(humans[0], "/add_ai easy"))
        assert not errors(await self.text(humans[0], "/start"))

    def button_for(self, user: UserRef, name: str, args: tuple[str, ...] = ()) -> str | None:
        hand = self.hands.get(user.key)
        if hand is None:
            return None
        for row in hand.buttons:
            for button in row:
                cmd, bargs, _, _ = decode_payload(button.payload)
                if cmd == name and bargs == args:
                    return button.payload
        return None

    async def play_turn(
        self, rng: random.Random, users: dict[int, UserRef], *, buttons: float = 0.5, sensible: bool = False
    ) -> bool:
        """The human to act makes a legal move (typed or by button); False when no human must act.

        The move is random, or with `sensible` what the easy computer player would do (so that games end).
        """
        state = await self.state()
        seat = state.to_act
        if seat is None or seat not in users:
            return False
        user = users[seat]
        legal = list(state.legal_actions(seat))
        if sensible:
            action = choose_action("easy", seat_view(state, seat), legal, seed=rng.getrandbits(32))
        else:
            action = legal[rng.randrange(len(legal))]
        if rng.random() < buttons and await self._by_buttons(user, action, state, seat):
            return True
        line = action_text(action, state, seat)
        # Cards given or laid down are never typed in the group (the service refuses it): privately.
        secret = line.split()[0].lstrip("/!") in SECRET_MOVES
        private = ChatRef(user.platform, user.user_id, user.name, True) if secret else None
        replies = await self.text(user, line, chat=private)
        assert not errors(replies), [m.text for m in replies]
        return True

    async def _by_buttons(self, user: UserRef, action: Action, state: GameState, seat: int) -> bool:
        """Press the buttons of `action` in the user's hand message, if they are there."""
        if action.kind not in ("play", "bid", "pass", "contract", "give", "discard"):
            return False
        steps = presses(action, Mover.of_state(state, seat))
        for name, args in steps:
            payload = self.button_for(user, name, args)
            if payload is None:
                return False
            replies = await self.press(user, payload)
            assert not errors(replies), [m.text for m in replies]
        return True


def audience_key(m: Message) -> str:
    if isinstance(m.audience, Group):
        return "group:" + m.audience.chat.key
    if isinstance(m.audience, Private):
        return "private:" + m.audience.user.key
    assert isinstance(m.audience, Sender)
    return "sender:" + m.audience.user.key


def label_set(lang: str) -> tuple[str, ...]:
    return translator(lang).card_labels
