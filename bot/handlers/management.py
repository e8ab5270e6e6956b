"""Managing a table: settings, languages, the group's title, kicking, coming back, ending, and a
turn whose time ran out.
"""

from __future__ import annotations

import enum
import json
import typing
from typing import Any

from bot.context import Context, Refusal
from bot.gameflow import seat_user
from bot.handlers.base import NO, YES, parse_number, parse_seat_number
from bot.handlers.information import InformationHandlers
from bot.i18n import LANGUAGE_NAMES, LANGUAGES, N_, negotiate, translator
from bot.markup import escape
from bot.ports import Handler
from bot.reader import about
from bot.render import (
    language_list,
    seat_name,
)
from bot.render_rules import render_rules
from bot.settings import AI_LEVELS
from bot.table import ChatSettings, TableDoc
from bot.views import seat_labels
from core.rules import RuleError, RuleSet, preset


class ManagementHandlers(InformationHandlers):
    """`set` without arguments answers as `rules` does (hence the information handlers underneath)."""

    async def set(self, ctx: Context) -> None:
        args = ctx.command.args
        if not args:
            await self.rules(ctx)
            return
        if not self._is_manager(ctx):
            raise Refusal("not_allowed")
        if len(args) < 2:
            raise Refusal("missing_argument")
        key = args[0].lower()
        raw = " ".join(args[1:])
        version, settings = await self._chat_settings(ctx)
        settings = _changed_settings(settings, key, raw)
        await self.svc.save_chat_settings(ctx.chat.key, version, settings)
        t = translator(settings.language)
        doc = ctx.doc
        note = ""
        if doc is not None and doc.status != "finished":
            live = {
                "language": settings.language,
                "turn_seconds": settings.turn_seconds,
                "ai_level": settings.ai_level,
                "autoplay": settings.autoplay,
            }
            if doc.status == "lobby":
                doc.settings = settings
                for seat in doc.seats:
                    if seat.kind == "ai":
                        seat.level = settings.ai_level
            else:
                doc.settings = doc.settings.model_copy(update=live)
                if key in ("preset",) or key not in _CHAT_KEYS:
                    note = "\n" + t._(
                        "The game in progress keeps its rules; the change applies to the next one."
                    )
            ctx.deadline_reset = doc.status == "lobby"
            ctx.mark("set")
            if doc.status == "lobby":
                self._lobby_message(ctx)
        rules = preset(settings.preset, settings.options or None)
        text = t._("Settings changed.") + note + "\n" + render_rules(t, rules, settings, None).text
        ctx.answer(text, kind="settings", language=t.lang)

    async def title(self, ctx: Context) -> None:
        """The group's title changed (an adapter's `title` command): private messages name it from now on,
        and the hands on screen are redrawn with it (edits: nobody is notified)."""
        doc = ctx.doc
        if doc is None or not ctx.retitled or doc.status == "finished":
            return
        ctx.mark("title")
        if doc.status == "game" and ctx.state is not None:
            for i, seat in enumerate(doc.seats):
                if seat.present:
                    self.flow.hand_message(ctx, i, force=True, notify=False)

    async def lang(self, ctx: Context) -> None:
        args = ctx.command.args
        t = ctx.t_user()
        if not args:
            ctx.reply(t._("Languages: {list}").format(list=language_list()))
            return
        code = negotiate(args[0]) or args[0].lower()
        if code not in LANGUAGES:
            raise Refusal("unknown_language")
        await self._save_prefs(ctx.user.key, lambda p: setattr(p, "language", code))
        doc = ctx.doc
        seat = doc.seat_of(ctx.user.key) if doc is not None else None
        if doc is not None and seat is not None and doc.status != "finished":
            doc.seats[seat].lang = code
            ctx.mark("lang")
        # Chosen in their private chat, the user's seats at other tables (groups') follow too; a command
        # given in a group changes no other chat's table.
        others = await self.svc.store.tables_for_user(ctx.user.key) if ctx.chat.private else set()
        for table_id in sorted(others - {ctx.table_id}):
            ctx.other_tables += await self.svc.run(table_id, ctx.command, _seat_language(ctx.user.key, code))
        done = translator(code)._("Your language is now {name}.").format(name=LANGUAGE_NAMES[code])
        ctx.reply(done, language=code)

    # --- seats ------------------------------------------------------------------------------------

    async def kick(self, ctx: Context) -> None:
        doc = ctx.require_doc()
        if doc.status == "finished":
            raise Refusal("no_table")
        if not ctx.command.args:
            raise Refusal("missing_argument")
        target = _find_seat(doc, ctx.command.args[0])
        seat_doc = doc.seats[target]
        if not seat_doc.human:
            raise Refusal("not_a_human")
        t = ctx.t_group()
        label = seat_name(t, seat_labels(doc)[target])
        if doc.status == "lobby":
            if not self._is_manager(ctx):
                raise Refusal("not_allowed")
            if seat_doc.user is not None:
                ctx.users_removed.add(seat_doc.user)
            del doc.seats[target]
            ctx.deadline_reset = True
            ctx.mark("kick")
            self._lobby_message(ctx)
            return
        voter = doc.seat_of(ctx.user.key)
        if not self._is_admin(ctx):
            if voter is None or not doc.seats[voter].human:
                raise Refusal("not_seated")
            if voter == target:
                raise Refusal("bad_value")
            votes = doc.kick_votes.setdefault(str(target), [])
            if ctx.user.key in votes:
                raise Refusal("already_voted")
            votes.append(ctx.user.key)
            others = [s for i, s in enumerate(doc.seats) if i != target and s.human]
            if len(votes) * 2 <= len(others):
                ctx.mark("kick_vote")
                ctx.to_group(
                    t._("Vote to kick {name}: {votes} of {needed}.").format(
                        name=label, votes=len(votes), needed=len(others) // 2 + 1
                    ),
                    kind="notice",
                )
                return
        doc.kick_votes.pop(str(target), None)
        seat_doc.kicked = True
        if seat_doc.user is not None:
            ctx.users_removed.add(seat_doc.user)
        ctx.mark("kick")
        ctx.to_group(t._("{name} was kicked: a computer plays the seat.").format(name=label), kind="notice")
        await self._after_seat_change(ctx)

    async def back(self, ctx: Context) -> None:
        doc = self._game(ctx)
        seat = self._seated(ctx)
        seat_doc = doc.seats[seat]
        if not seat_doc.away:
            raise Refusal("not_away")
        seat_doc.away = False
        seat_doc.missed = 0
        ctx.deadline_reset = True
        ctx.mark("back")
        label = seat_labels(doc)[seat]
        ctx.to_group_drawn(lambda t: t._("{name} is back.").format(name=seat_name(t, label)))
        await self.flow.run_computers(ctx)
        self.flow.conclude(ctx, force_table=True)
        if not any(m.kind == "hand" and m.key for m in ctx.messages):
            self.flow.hand_message(ctx, seat, force=True)

    async def end(self, ctx: Context) -> None:
        self._check_button(ctx, exact=False)
        doc = ctx.doc
        if doc is None or doc.status == "finished":
            raise Refusal("no_table")
        if not self._is_manager(ctx):
            raise Refusal("not_allowed")
        if doc.status == "lobby":
            self._close_lobby(ctx, "ended")
            return
        seat = doc.seat_of(ctx.user.key)
        if seat is None:  # a chat admin who does not play
            t = ctx.t_group()
            ctx.to_group(t._("{name} ended the game.").format(name=ctx.user.name), kind="notice")
        else:
            names = [escape(label.name) for label in seat_labels(doc)]
            ctx.to_group_read(lambda t, reader: about(t, N_("{name} ended the game."), names, seat, reader))
        self.flow.finish(ctx, "ended")

    async def turn_warning(self, ctx: Context) -> None:
        """The turn's time is running out: the player gets their hand again with the warning on top."""
        seat = _timed_seat(ctx)
        if seat is None:
            return
        doc = ctx.require_doc()
        seat_doc = doc.seats[seat]
        if seat_doc.user is None or doc.turn is None:
            return
        tu = translator(ctx.user_lang(seat_doc.user))
        left = max(0, round(doc.turn.deadline - ctx.now))
        text = tu.ngettext(
            "Your turn: {n} second left, then a computer plays for you.",
            "Your turn: {n} seconds left, then a computer plays for you.",
            left,
        ).format(n=left)
        self.flow.warn_turn(ctx, seat, text)

    async def turn_missed(self, ctx: Context) -> None:
        """The turn's time ran out: the computer plays it; after enough misses it keeps the seat."""
        seat = _timed_seat(ctx)
        if seat is None:
            return
        doc = ctx.require_doc()
        seat_doc = doc.seats[seat]
        await self.flow.play_for(ctx, seat)
        seat_doc.missed += 1
        label = seat_labels(doc)[seat]
        user = seat_user(seat_doc)
        tu = translator(ctx.user_lang(seat_doc.user))
        if seat_doc.missed >= self.svc.settings.missed_turns_to_away:
            seat_doc.away = True
            ctx.to_group_drawn(
                lambda t: t._("{name} is away: a computer plays for them.").format(name=seat_name(t, label))
            )
            ctx.to_user(
                user, tu._("You missed your turns: a computer plays for you. Send /back to play again.")
            )
            if not any(s.present for s in doc.seats):
                ctx.to_group_drawn(lambda t: t._("Everyone is away: the game waits. Send /back to play on."))
        else:
            # Said on top of their hand, which this command redraws anyway (the card is gone from it).
            ctx.hand_alerts[seat] = [tu._("Time is up: a computer played your turn.")]
        ctx.mark("timeout")
        await self.flow.run_computers(ctx)
        self.flow.conclude(ctx)
        for line in ctx.hand_alerts.pop(seat, ()):
            ctx.to_user(user, line)  # no hand was redrawn (the game ended): on its own


def _timed_seat(ctx: Context) -> int | None:
    """The seat whose turn the timer is for, while it is still that seat's turn and they are present."""
    doc = ctx.doc
    state = ctx.state
    if doc is None or state is None or doc.status != "game" or doc.turn is None:
        return None
    seat = doc.turn.seat
    if state.to_act != seat or not 0 <= seat < len(doc.seats) or not doc.seats[seat].present:
        return None
    return seat


def _seat_language(user_key: str, code: str) -> Handler:
    """A table step that sets one user's seat language (nothing when they do not sit there)."""

    async def step(ctx: Context) -> None:
        doc = ctx.doc
        seat = doc.seat_of(user_key) if doc is not None else None
        if doc is not None and seat is not None and doc.status != "finished" and doc.seats[seat].lang != code:
            doc.seats[seat].lang = code
            ctx.mark("lang")

    return step


_CHAT_KEYS = frozenset(
    {"language", "lang", "turn", "turn_seconds", "turn_time", "level", "ai", "ai_level", "autoplay"}
)


def _changed_settings(settings: ChatSettings, key: str, raw: str) -> ChatSettings:
    """The settings with one change; refused when the key or value is not allowed."""
    value = raw.strip()
    if key == "preset":
        name = value.lower()
        try:
            preset(name)
        except RuleError:
            raise Refusal("unknown_preset") from None
        return settings.model_copy(update={"preset": name, "options": {}})
    if key in ("language", "lang"):
        code = negotiate(value) or value.lower()
        if code not in LANGUAGES:
            raise Refusal("unknown_language")
        return settings.model_copy(update={"language": code})
    if key in ("turn", "turn_seconds", "turn_time"):
        seconds = parse_number(value.removesuffix("s"))
        if seconds != 0 and not 15 <= seconds <= 3600:
            raise Refusal("bad_value")
        return settings.model_copy(update={"turn_seconds": seconds})
    if key in ("level", "ai", "ai_level"):
        if value.lower() not in AI_LEVELS:
            raise Refusal("unknown_level")
        return settings.model_copy(update={"ai_level": value.lower()})
    if key == "autoplay":
        word = value.lower()
        if word not in YES and word not in NO:
            raise Refusal("bad_value")
        return settings.model_copy(update={"autoplay": word in YES})
    if key not in RuleSet.model_fields or key == "preset":
        raise Refusal("unknown_option")
    options = dict(settings.options)
    if value.lower() in ("default", "reset"):
        options.pop(key, None)
    else:
        options[key] = _option_value(key, value)
    try:
        preset(settings.preset, options or None)
    except RuleError:
        raise Refusal("bad_value") from None
    return settings.model_copy(update={"options": options})


def _option_value(key: str, text: str) -> Any:
    """A typed value for a rule option, read the way its field is declared.

    bool: on/off, yes/no, true/false (and the same words in the supported languages); a choice: one of its
    values (`off` also as no/false for the barrel); int: a number (`-` allowed; the rules check ranges);
    int | None: a number or none/off/no; a tuple of ints: `2,3` or `2 3`; the marriage values: JSON
    (`{"H": 100, ...}`) or `H=100 D=80 C=60 S=40`. Anything else is refused (`bad_value`, `bad_number`).
    """
    annotation = RuleSet.model_fields[key].annotation
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    low = text.lower().strip()
    if annotation is bool:
        if low in YES:
            return True
        if low in NO:
            return False
        raise Refusal("bad_value")
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        values = {str(member.value) for member in annotation}
        if low in values:
            return low
        if low in NO and "off" in values:
            return "off"
        raise Refusal("bad_value")
    if origin is tuple:
        parts = text.replace(",", " ").split()
        # ASCII digits only: `isdigit` is true for superscripts too, which `int` refuses.
        if not parts or not all(part.isascii() and part.isdigit() for part in parts):
            raise Refusal("bad_value")
        return tuple(int(part) for part in parts)
    if origin is dict:
        return _mapping(text)
    optional = type(None) in args
    if optional and low in ("none", "null", "off", "no", "-"):
        return None
    if annotation is int or (optional and int in args):
        return -parse_number(low[1:]) if low.startswith("-") else parse_number(low)
    raise Refusal("bad_value")


_QUOTES = str.maketrans("“”„«»", '"""""')


def _mapping(text: str) -> dict[str, int]:
    """`{"H": 100, "D": 80}` (also with typographic quotes, as phones type them) or `H=100 D=80`."""
    plain = text.translate(_QUOTES)
    try:
        value = json.loads(plain)
    except json.JSONDecodeError:
        value = {}
        for part in plain.replace(",", " ").replace(";", " ").split():
            name, sep, number = part.replace(":", "=").partition("=")
            if not sep or not name:
                raise Refusal("bad_value") from None
            value[name] = number
    if not isinstance(value, dict) or not value:
        raise Refusal("bad_value")
    out: dict[str, int] = {}
    for name, number in value.items():
        if isinstance(number, bool) or not isinstance(number, int | str):
            raise Refusal("bad_value")
        out[str(name).strip().upper()] = parse_number(str(number)) if isinstance(number, str) else number
    return out


def _find_seat(doc: TableDoc, text: str) -> int:
    if text.strip().isdigit():
        return parse_seat_number(text, len(doc.seats))
    wanted = text.lstrip("@").lower()
    for i, seat in enumerate(doc.seats):
        if seat.name.lower() == wanted or (seat.user_id or "").lower() == wanted:
            return i
    raise Refusal("no_such_seat")
