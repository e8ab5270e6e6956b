"""One command's work on one table: what was loaded, what changed, what to send.

Handlers get a `Context`, change `ctx.doc` and `ctx.state`, add messages, and either return (the
service then saves with a compare-and-set if anything changed) or raise `Refusal` (nothing is saved
and the user gets the translated reason, privately).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from bot.commands import encode_payload, table_tag
from bot.i18n import LANGUAGES, Translator, negotiate, translator
from bot.model import Button, ChatRef, Command, Group, Message, Private, Sender, UserRef
from bot.public.fanout import ReaderRedraw, Redraw, fan_out, is_public
from bot.render import render_chat_heading, render_heading
from bot.table import ChatSettings, TableDoc
from core.events import Event
from core.game import GameState

__all__ = ["AfterSave", "Context", "Refusal", "with_heading"]


class Refusal(Exception):
    """A command that cannot be done: `code` names a message of `bot.render.ERRORS`."""

    def __init__(self, code: str, *, extra: str | None = None, **values: object) -> None:
        super().__init__(code)
        self.code = code
        self.values = values
        self.extra = extra
        """Further markup to add after the message (e.g. the legal bids)."""
        self.follow_up: list[Message] = []
        """Messages to send with the refusal (a fresh hand after a stale button)."""


AfterSave = Callable[[], object]


def with_heading(doc: TableDoc | None, message: Message, chat: ChatRef | None = None) -> Message:
    """The message, with the group's name as its first line when it reaches the reader privately.

    A player may sit at tables in several groups, and a private chat with the bot mixes their messages:
    every `Private` message about a group's table, and every `Sender` answer to a command given in a
    group (the adapter may have to send it to the private chat), says which group's game it is about.
    A table in the reader's own private chat needs no heading, nor does an answer given where it was asked.
    With no table (`doc` None), an answer to a command given in the group `chat` names that group: "There
    is no table here" read in the private chat must say where "here" is.
    """
    audience = message.audience
    if doc is None:
        if chat is None or chat.private or not isinstance(audience, Sender) or audience.chat.private:
            return message
        if message.heading:
            return message
        heading = render_chat_heading(translator(message.language), chat.title or chat.chat_id)
        return replace(message, text=f"{heading}\n{message.text}", heading=heading)
    if doc.private:
        return message
    if isinstance(audience, Sender):
        if audience.chat.private:
            return message
    elif not isinstance(audience, Private):
        return message
    if message.heading:
        return message
    heading = render_heading(translator(message.language), doc.title or doc.chat_id)
    return replace(message, text=f"{heading}\n{message.text}", heading=heading)


@dataclass
class Context:
    command: Command
    table_id: str
    version: int
    """The stored version this command started from (0: no table)."""
    doc: TableDoc | None
    state: GameState | None
    now: float
    defaults: ChatSettings
    messages: list[Message] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    """Engine events of every action applied by this command, in order."""
    before: GameState | None = None
    changed: bool = False
    users_added: set[str] = field(default_factory=set)
    users_removed: set[str] = field(default_factory=set)
    after_save: list[Callable[[], object]] = field(default_factory=list)
    """Coroutine factories run after a successful save (statistics): never run twice."""
    log: str | None = None
    """A short entry for the table's event stream."""
    game_changed: bool = False
    """An action was applied to the game (the turn moved on)."""
    deadline_reset: bool = False
    """Recompute the turn or lobby deadline when saving."""
    actions_at_load: int = 0
    """How many game actions the loaded table held (the stream entry lists the ones added)."""
    retitled: bool = False
    """The command brought a new title of the table's group (see `Service.run`)."""
    other_tables: list[Message] = field(default_factory=list)
    """Messages of other tables the command changed too (`lang`), ready to send as they are."""
    hand_alerts: dict[int, list[str]] = field(default_factory=dict)
    """Lines for the top of a seat's next hand in this command ("Time is up: a computer played your
    turn."): said in the hand the command redraws anyway instead of in a message of their own, which on
    Telegram is one call less. `GameFlow.hand_message` takes them; what is left was not said."""
    redraws: dict[str, Redraw] = field(default_factory=dict)
    """Group messages by key that can be drawn again in another language: a public table has no group,
    each person gets its messages privately in their own language (`bot.public.fanout`)."""
    reader_redraws: dict[str, ReaderRedraw] = field(default_factory=dict)
    """Group messages by key drawn for one reader: a public table's private copies are drawn for each
    person's seat ("You failed 105", `bot.reader`)."""

    @property
    def next_version(self) -> int:
        """The version the table will have if this command saves (buttons are drawn for it)."""
        return self.version + 1 if self.changed else self.version

    @property
    def user(self) -> UserRef:
        return self.command.user

    @property
    def chat(self) -> ChatRef:
        return self.command.chat

    def outgoing(self, messages: list[Message], version: int) -> list[Message]:
        """The messages as they leave the service: each carries the table version it was drawn from
        (`version`: the one stored after this command), and private ones about a group's table name the
        group."""
        stamp = version if self.doc is not None else None
        serial = self.doc.serial if self.doc is not None else None
        if self.doc is not None and is_public(self.doc.id):
            messages = fan_out(self.doc, messages, self.redraws, self.reader_redraws)
        table = self.doc.id if self.doc is not None else None
        return [
            replace(with_heading(self.doc, m, self.chat), version=stamp, serial=serial, table=table)
            for m in messages
        ]

    def require_doc(self) -> TableDoc:
        if self.doc is None:
            raise Refusal("no_table")
        return self.doc

    def mark(self, log: str | None = None) -> None:
        self.changed = True
        if log is not None:
            self.log = log

    # --- languages --------------------------------------------------------------------------------

    def group_lang(self) -> str:
        if self.doc is not None:
            return self.doc.settings.language
        return self.defaults.language

    def user_lang(self, user_key: str | None = None, fallback: str | None = None) -> str:
        """A user's language: their seat's, else what their platform says, else the chat's."""
        key = user_key or self.user.key
        if self.doc is not None:
            seat = self.doc.seat_of(key)
            if seat is not None and self.doc.seats[seat].lang in LANGUAGES:
                return self.doc.seats[seat].lang or self.group_lang()
        if key == self.user.key:
            lang = negotiate(self.user.language)
            if lang is not None:
                return lang
        return fallback or self.group_lang()

    def group_reader(self) -> int | None:
        """The seat that reads the group's messages when one person reads them all: a table in their
        private chat (the terminal's game, a private chat with computers) is read by its creator, so its
        sentences about them say "You" (`bot.reader`). None: a group of many readers (a public table's
        copies are drawn for each reader in `bot.public.fanout`)."""
        doc = self.doc
        if doc is None or not doc.private:
            return None
        return doc.seat_of(doc.creator)

    def t_group(self) -> Translator:
        return translator(self.group_lang())

    def t_user(self, user_key: str | None = None) -> Translator:
        return translator(self.user_lang(user_key))

    # --- buttons ----------------------------------------------------------------------------------

    def payload_maker(self) -> Callable[[str, tuple[str, ...]], str]:
        """Payloads for buttons drawn now: they carry the version this command will leave."""

        def make(name: str, args: tuple[str, ...]) -> str:
            tag = table_tag(self.doc.serial) if self.doc is not None else None
            return encode_payload(name, args, self.next_version, self.table_id, tag)

        return make

    # --- messages ---------------------------------------------------------------------------------

    def to_group(
        self,
        text: str,
        *,
        key: str | None = None,
        buttons: tuple[tuple[Button, ...], ...] = (),
        notify: bool = False,
        kind: str = "info",
        image: bytes | None = None,
        optional: bool = False,
        redraw: Redraw | None = None,
        for_reader: ReaderRedraw | None = None,
    ) -> None:
        """`redraw`: the same message in another language (for the private copies of a public table);
        `for_reader`: the same message in a language for one reader (each copy drawn for its seat)."""
        chat = self._group_chat()
        lang = self.group_lang()
        message = Message(Group(chat), text, key, buttons, image, None, notify, lang, kind, optional=optional)
        self.messages.append(message)
        if redraw is not None:
            self.redraws[key if key is not None else f"#{id(message)}"] = redraw
        if for_reader is not None:
            self.reader_redraws[key if key is not None else f"#{id(message)}"] = for_reader

    def to_group_drawn(self, draw: Callable[[Translator], str], *, kind: str = "notice") -> None:
        """A short notice to the group, drawn by `draw` in the group's language, and in each reader's
        at a public table (`bot.public.fanout`)."""
        self.to_group(draw(self.t_group()), kind=kind, redraw=lambda t: (draw(t), ()))

    def to_group_read(self, draw: Callable[[Translator, int | None], str], *, kind: str = "notice") -> None:
        """A short notice to the group that may speak of its reader: drawn for the group's reader (see
        `group_reader`), and for each reader's seat at a public table (`bot.reader`)."""
        text = draw(self.t_group(), self.group_reader())
        self.to_group(text, kind=kind, for_reader=lambda t, reader: (draw(t, reader), ()))

    def _group_chat(self) -> ChatRef:
        if self.doc is not None:
            return ChatRef(self.doc.platform, self.doc.chat_id, self.doc.title)
        return self.chat

    def to_user(
        self,
        user: UserRef,
        text: str,
        *,
        key: str | None = None,
        buttons: tuple[tuple[Button, ...], ...] = (),
        notify: bool = True,
        kind: str = "info",
        document: tuple[str, bytes] | None = None,
        replaceable: bool = False,
        series: str | None = None,
    ) -> None:
        lang = self.user_lang(user.key)
        message = Message(Private(user), text, key, buttons, None, document, notify, lang, kind)
        if replaceable or series is not None:
            message = replace(message, replaceable=replaceable, series=series)
        self.messages.append(message)

    def reply(
        self,
        text: str,
        *,
        kind: str = "info",
        document: tuple[str, bytes] | None = None,
        buttons: tuple[tuple[Button, ...], ...] = (),
        language: str | None = None,
    ) -> None:
        """An answer for the sender only."""
        lang = language or self.user_lang()
        self.messages.append(
            Message(Sender(self.user, self.chat), text, None, buttons, None, document, True, lang, kind)
        )

    def answer(
        self, text: str, *, key: str | None = None, kind: str = "info", language: str | None = None
    ) -> None:
        """Public information: to the group when asked in one, else to the sender privately."""
        if self.chat.private:
            lang = language or self.user_lang()
            self.messages.append(Message(Private(self.user), text, key, (), None, None, True, lang, kind))
        else:
            lang = language or self.group_lang()
            chat = self._group_chat()
            self.messages.append(Message(Group(chat), text, key, (), None, None, True, lang, kind))
