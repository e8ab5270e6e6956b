"""Who sees what: the service's audiences turned into Telegram chats.

- `Group` goes to the group, and only there.
- `Private` goes to that user's private chat, and only there (a hand, a warning).
- `Sender` goes to the user whose command it answers, and only to them: as the alert of the button they
  pressed when it fits (at most 200 characters, no buttons or files), else as a private message when the
  bot may write to them, else (a command typed in a group by someone who never started the bot) as a short
  note in the group that carries **none** of the message, only a link to open the private chat. A Sender
  message can hold private facts (the cards one may play), so it never reaches a group.

Commands the adapter makes up itself (`unreachable` for a user who blocked the bot or left the group,
`title` for a renamed group, `end` for a group that removed the bot) have a `system` origin: their Sender
messages have nobody to go to and are dropped.

A `Sender` answer shown as an alert pops up over the chat where the button was pressed: it leaves out the
line naming the group (`Message.heading`), which a private message keeps. The service's "slow down"
(`bot.throttle`) is never turned into a note in the group: it goes as an alert or privately, or not at all.

Each message gets its priority in the chat's queue and in the shared budget (`limits`): the group's keyed
messages (the table, the lobby, results, the score sheet) and a hand that notifies (the player must act,
or a new deal) are `URGENT`; other hands and notices `NORMAL`; answers to commands `INFO`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from adapters.telegram.content import Content, render
from adapters.telegram.i18n import text_in
from adapters.telegram.limits import INFO, NORMAL, URGENT
from adapters.telegram.outbox import Outbox
from adapters.telegram.queue import Op
from adapters.telegram.reach import Reach, start_link
from adapters.telegram.webapp import WebAppButtons
from bot.markup import to_plain
from bot.model import ChatRef, Group, Message, Private, Sender, UserRef
from bot.throttle import THROTTLED_KIND

__all__ = ["MAX_ALERT", "Answer", "Dispatcher", "Origin", "escape_html"]

log = logging.getLogger("thousand.telegram.dispatch")

PLATFORM: Final = "tg"
MAX_ALERT: Final = 200
NOTE_INTERVAL: Final = 60.0
"""At most one "open the private chat" note per user and group in this many seconds."""

ANSWER_KINDS: Final = frozenset(
    {"info", "help", "error", "rules", "score", "stats", "top", "settings", "export", THROTTLED_KIND}
)
"""Message kinds that answer a command (`INFO`: after everything else of their chat)."""

AnswerFn = Callable[[str | None, bool, str | None], Awaitable[None]]


@dataclass(slots=True)
class Answer:
    """The pending answer of a button press (Telegram wants exactly one, within seconds)."""

    send: AnswerFn
    done: bool = False

    async def __call__(self, text: str | None = None, *, alert: bool = False, url: str | None = None) -> None:
        if self.done:
            return
        self.done = True
        await self.send(text, alert, url)


@dataclass(slots=True)
class Origin:
    """Where the messages' command came from."""

    chat: ChatRef
    user: UserRef
    answer: Answer | None = None
    message_id: int | None = None
    """The user's own message (a typed command), so a note in a group can reply to it."""
    system: bool = False


@dataclass(slots=True)
class RouteStats:
    group: int = 0
    private: int = 0
    alerts: int = 0
    sender_private: int = 0
    notes: int = 0
    dropped: int = 0
    skipped: int = 0
    """Hands of a mover left as pressed (`Message.replaceable`)."""
    by_kind: dict[str, int] = field(default_factory=dict)


def priority(message: Message) -> int:
    """How urgent the message is in its chat's queue and in the shared budget."""
    if isinstance(message.audience, Group):
        if message.key is not None:
            return URGENT
    elif message.key is not None and isinstance(message.audience, Private):
        # The hand of the player who must act (it has their moves) goes first. A notifying hand without
        # moves (a new deal's hand for someone whose turn is not yet) may wait behind the urgent sends:
        # when the bot's budget is full and their turn comes first, the two become one send.
        return URGENT if message.notify and message.buttons else NORMAL
    return INFO if message.kind in ANSWER_KINDS or isinstance(message.audience, Sender) else NORMAL


def _simple(message: Message) -> bool:
    return not message.buttons and message.image is None and message.document is None


def _alert_text(message: Message) -> str:
    """An alert pops up over the chat where the button was pressed: the group's name is not needed."""
    plain = to_plain(message.body).strip()
    return plain if len(plain) <= MAX_ALERT else plain[: MAX_ALERT - 1] + "…"


class Dispatcher:
    def __init__(
        self,
        outbox: Outbox,
        reach: Reach,
        *,
        bot_username: Callable[[], str],
        clock: Callable[[], float] = time.monotonic,
        web: WebAppButtons | None = None,
    ) -> None:
        self.outbox = outbox
        self.web = web
        """The web table's Open table buttons (`adapters.telegram.webapp`), when it is configured."""
        self.reach = reach
        self._username = bot_username
        self._clock = clock
        self._notes: dict[tuple[str, str], float] = {}
        self.stats = RouteStats()

    async def dispatch(self, messages: Sequence[Message], origin: Origin | None) -> None:
        """Route every message; answer the origin's button press if nothing else did."""
        reachable: dict[str, bool] = {}

        async def may_write(user: UserRef) -> bool:
            if user.user_id not in reachable:
                reachable[user.user_id] = await self.reach.known(user.user_id) is True
            return reachable[user.user_id]

        for message in messages:
            self.stats.by_kind[message.kind] = self.stats.by_kind.get(message.kind, 0) + 1
            audience = message.audience
            if isinstance(audience, Group):
                if not self._ours(audience.chat.platform):
                    continue
                self.stats.group += 1
                self.outbox.put(
                    Op(
                        int(audience.chat.chat_id),
                        render(message, self._web_rows(message)),
                        key=message.key,
                        fresh=message.notify and message.key is not None,
                        silent=not message.notify,
                        version=message.version,
                        priority=priority(message),
                        optional=message.optional,
                    )
                )
            elif isinstance(audience, Private):
                if not self._ours(audience.user.platform):
                    continue
                if message.replaceable:
                    # The mover's hand after their move: the press is answered, the move shows in the
                    # group's table and in their next hand, which replaces this one (a call saved per move).
                    self.stats.skipped += 1
                    continue
                self.stats.private += 1
                self.outbox.put(self._private(int(audience.user.user_id), message))
            elif isinstance(audience, Sender):
                await self._to_sender(message, audience, origin, may_write)
        if origin is not None and origin.answer is not None and not origin.answer.done:
            await origin.answer()

    def _ours(self, platform: str) -> bool:
        if platform != PLATFORM:
            log.warning("message for platform %r ignored by the Telegram adapter", platform)
            self.stats.dropped += 1
            return False
        return True

    def _web_rows(self, message: Message) -> list[list[InlineKeyboardButton]]:
        return [] if self.web is None else self.web.rows(message, self._username())

    def _private(self, chat_id: int, message: Message) -> Op:
        return Op(
            chat_id,
            render(message, self._web_rows(message)),
            key=message.key,
            fresh=message.notify and message.key is not None,
            replace_old=True,
            silent=not message.notify,
            version=message.version,
            priority=priority(message),
            series=message.series,
        )

    async def _to_sender(
        self,
        message: Message,
        audience: Sender,
        origin: Origin | None,
        may_write: Callable[[UserRef], Awaitable[bool]],
    ) -> None:
        if origin is None or origin.system or not self._ours(audience.user.platform):
            self.stats.dropped += 1
            return
        answer = origin.answer
        fits = _simple(message) and len(to_plain(message.body).strip()) <= MAX_ALERT
        if answer is not None and not answer.done and fits:
            self.stats.alerts += 1
            await answer(_alert_text(message), alert=True)
            return
        user = audience.user
        if audience.chat.private or await may_write(user):
            self.stats.sender_private += 1
            self.outbox.put(self._private(int(user.user_id), message))
            return
        if answer is not None and not answer.done and _simple(message):
            self.stats.alerts += 1
            await answer(_alert_text(message), alert=True)
            return
        if message.kind == THROTTLED_KIND:
            self.stats.dropped += 1  # a flooder is not answered in the group, not even with a note
            return
        self._note(message, audience, origin)

    def _note(self, message: Message, audience: Sender, origin: Origin) -> None:
        """A reply in the group saying only that the answer waits in the private chat."""
        key = (audience.chat.chat_id, audience.user.user_id)
        now = self._clock()
        if now - self._notes.get(key, -NOTE_INTERVAL) < NOTE_INTERVAL:
            self.stats.dropped += 1
            return
        self._notes[key] = now
        if len(self._notes) > 4096:
            self._notes = {k: t for k, t in self._notes.items() if now - t < NOTE_INTERVAL}
        self.stats.notes += 1
        lang = message.language
        text = text_in(lang, "{name}, I cannot write to you privately yet: open our chat and press Start.")
        button = InlineKeyboardButton(text_in(lang, "Open the chat"), url=start_link(self._username()))
        html = escape_html(text.format(name=audience.user.name))
        content = Content("text", html, InlineKeyboardMarkup([[button]]), fingerprint="")
        self.outbox.put(
            Op(int(audience.chat.chat_id), content, silent=True, reply_to=origin.message_id, priority=INFO)
        )


def escape_html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
