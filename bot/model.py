"""The neutral vocabulary between the service and the adapters: who, where, what was asked, what to send.

Adapters build `ChatRef`, `UserRef` and `Command` from platform updates and turn each `Message` into
platform calls. Nothing here knows a platform: a chat is a platform name and an id, a message is text in
the small markup of `bot.markup` plus buttons whose payloads come back as commands.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from bot.names import clean_name, clean_title

__all__ = [
    "Audience",
    "Button",
    "ChatRef",
    "Command",
    "Group",
    "Message",
    "Private",
    "Sender",
    "UserRef",
]


@dataclass(frozen=True, slots=True)
class ChatRef:
    """A chat on a platform. `private` marks the one-to-one chat between a user and the bot."""

    platform: str
    chat_id: str
    title: str = ""
    private: bool = False

    def __post_init__(self) -> None:
        # The one place titles enter the bot: no direction tricks or walls of text (see bot.names).
        object.__setattr__(self, "title", clean_title(self.title))

    @property
    def key(self) -> str:
        """The chat's storage key and table id: `tg:-100123`."""
        return f"{self.platform}:{self.chat_id}"


@dataclass(frozen=True, slots=True)
class UserRef:
    """A person as the adapter sees them.

    `language` is the platform's language code for the user (any tag; the service maps it to a
    supported language or ignores it). `is_admin`: whether the user administers the chat the command
    came from; None when the adapter cannot tell (the creator of a table may then still act).
    """

    platform: str
    user_id: str
    name: str
    language: str | None = None
    is_admin: bool | None = None

    def __post_init__(self) -> None:
        # The one place names enter the bot: what every adapter hands over is cleaned (see bot.names).
        object.__setattr__(self, "name", clean_name(self.name, self.user_id))

    @property
    def key(self) -> str:
        return f"{self.platform}:{self.user_id}"


@dataclass(frozen=True, slots=True)
class Command:
    """One request of a user: a command name, its arguments, and where it came from.

    `source` is `text` for typed commands and `button` for button presses; a button command carries the
    table `version` it was drawn from, the `table_id` it belongs to and the `table_tag` of that table (all
    from its payload), and the service refuses it when any does not match. Build commands with
    `bot.commands.parse_text` and `bot.commands.from_payload` rather than by hand.
    """

    name: str
    args: tuple[str, ...]
    chat: ChatRef
    user: UserRef
    source: Literal["text", "button"] = "text"
    version: int | None = None
    table_id: str | None = None
    table_tag: str | None = None
    """A button's mark of the table it was drawn for (`bot.commands.table_tag`): a chat's next table
    reuses the table id and, once the old one expired, its versions too."""


@dataclass(frozen=True, slots=True)
class Group:
    """The whole group chat (everyone in it sees the message)."""

    chat: ChatRef


@dataclass(frozen=True, slots=True)
class Private:
    """One player, privately: their direct chat with the bot (or an ephemeral reply where that fits)."""

    user: UserRef


@dataclass(frozen=True, slots=True)
class Sender:
    """The user whose command this answers, and only them: an ephemeral reply, a callback answer, a DM.

    `chat` is where the command came from, so an adapter can reply in place when that is private.
    """

    user: UserRef
    chat: ChatRef


Audience = Group | Private | Sender


@dataclass(frozen=True, slots=True)
class Button:
    """A button: its label (plain text, no markup) and the payload the adapter sends back when pressed."""

    label: str
    payload: str


@dataclass(frozen=True, slots=True)
class Message:
    """One outgoing message.

    `key`: messages with the same audience and key are one logical message: an adapter edits the one it
    sent before instead of posting again, unless `notify` is set, in which case it posts a fresh message
    (so the user is notified) and may delete the old one. `key` None: always a new message.
    `text` is markup (see `bot.markup`); `buttons` are rows of buttons; `image` a PNG; `document` a file
    to attach as (filename, content).
    """

    audience: Audience
    text: str
    key: str | None = None
    buttons: tuple[tuple[Button, ...], ...] = ()
    image: bytes | None = None
    document: tuple[str, bytes] | None = None
    notify: bool = False
    language: str = "en"
    """The language the text is written in (adapters may use it for their own fixed labels)."""
    kind: str = field(default="info")
    """What the message is, for adapters and tests: lobby, table, hand, result, final, error, info..."""
    heading: str = ""
    """The first line of `text` when it names the group whose game the message is about (private
    messages do: "🃏 Game in «Friday cards»"); empty otherwise. An adapter that shows a `Sender` answer
    in place, in that group, may leave it out."""

    version: int | None = None
    """The version of the table the message was drawn from (None: no table). Versions of one table only
    rise; an adapter that gets two messages for one key may drop the older (another process may deliver
    them in the other order). A new table in a chat whose previous table expired starts again at 1; its
    first message under any key is a `notify` one."""

    series: str | None = None
    """Hands of one deal are one series. A notifying hand replaces the previous one of its key; an adapter
    that pays a call per deletion may leave the replaced ones of the series on screen and delete them all
    at once when a hand of another series (the next deal, the next game) replaces them."""
    optional: bool = False
    """A redraw that only adds detail (the group's table showing the trick as it forms) and leaves nothing
    wrong on screen when skipped: an adapter short of send budget may drop it (the next redraw that is
    not optional comes anyway)."""
    alert: str = ""
    """On a hand sent again to hurry its player (the turn's time is running out): the warning, which is
    also the hand's first line. An adapter that notifies by other means than a new message (Discord's
    followups and pings) says it on its own, as it would a bare warning."""
    replaceable: bool = False
    """A hand that changed only by its owner's own move, shown to them after the move while someone else
    must act now: their next notifying hand replaces it anyway, and the move is in that one. An adapter
    whose every call counts against a budget (Telegram) may leave the pressed message as it is."""
    serial: str | None = None
    """The serial of the table (one game) the message was drawn from, stamped with `version`: the web
    table's start payloads name one game, so a chat's next game needs a new link."""
    table: str | None = None
    """The id of the table the message was drawn from, stamped with `version` (`pub:…` for a public
    table): an adapter may route by it (Discord sends every private message of a public table by DM,
    where a channel table's may go elsewhere)."""

    @property
    def body(self) -> str:
        """`text` without the heading."""
        if self.heading and self.text.startswith(self.heading + "\n"):
            return self.text[len(self.heading) + 1 :]
        return self.text
