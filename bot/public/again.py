"""Play again at a public table: the same people, when all of them agree within a minute.

A group's table has `again` (its final sheet's Play again opens the next table in the chat). A public
table has no chat and nobody in charge, so seating the same strangers again needs each one's yes. When a
public game is won, the finished table carries an offer (`TableDoc.rematch`, `REMATCH_SECONDS` from the
game's end, a deadline of kind `rematch` that the service's timers fire once: `Service._fire`); every
seated person's copy of the final sheet has **Play again** and **No thanks** (`bot.public.fanout`), the
web page the same through `/api/rematch`. A press is the `again` command on the finished table (`again
no` for No thanks), handled here inside the table's compare-and-set, so two presses, two processes or a
press and the deadline never decide twice:

- each answer is noted, and everyone seated gets the offer's status (key `rematch:<serial>`, edited in
  place): who agreed, who declined, who has not answered, with the two buttons;
- when everyone has answered and at least one agreed, or at the deadline when at least one agreed, the
  new public table opens (`open_public_table`, its id derived from the finished table's serial, so a
  second build by another process opens nothing) with those who agreed in their seats and **computers
  in the seats of the others** (one who declined, did not answer in time, or left the game); the people
  are seated in the queue as a match seats them. With nobody agreeing, there is no new game;
- refused, in the presser's language and changing nothing: someone not seated at that finished table
  (a forwarded button, another person's client), a forged version or another table's button (the
  table's checks), an offer already decided or past its time ("too late"), and someone who meanwhile
  sits at another live table.

Why computers and not the queue: the people who agreed asked for this game now, with these seats; a wait
in the queue again would undo what they agreed to (they may queue for strangers with /play at any time).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from bot.commands import table_tag
from bot.context import Context, Refusal
from bot.i18n import Translator, translator
from bot.markup import escape
from bot.matchmaking.base import MatchQueue
from bot.model import ChatRef, Command, Message, Private, Sender, UserRef
from bot.public.rematch import DECLINE, STATUS_KEY, rematch_buttons, rematch_line, status_text
from bot.public.tables import PACE_SECONDS, PublicMatch, open_public_table, public_table_id
from bot.service import Service
from bot.table import TableDoc

__all__ = ["PublicRematch"]

log = logging.getLogger("thousand.public.rematch")


def _status(ctx: Context, doc: TableDoc, head: Callable[[Translator], str], *, open_: bool) -> None:
    """The offer's status to everyone seated, each in their language, with the buttons while it is open."""
    for seat in doc.seats:
        if not seat.human or seat.user is None:
            continue
        lang = seat.lang or doc.settings.language
        t = translator(lang)
        buttons = rematch_buttons(t, ctx.next_version, doc.id, doc.serial) if open_ else ()
        user = UserRef(seat.platform or "", seat.user_id or "", seat.name, lang)
        ctx.messages.append(
            Message(
                Private(user),
                status_text(doc, t, head(t)),
                f"{STATUS_KEY}:{doc.serial}",
                buttons,
                language=t.lang,
                kind="rematch",
            )
        )


def _say(ctx: Context, text: str, t: Translator) -> None:
    ctx.messages.append(Message(Sender(ctx.user, ctx.chat), text, language=t.lang, kind="error"))


class PublicRematch:
    """`Service.rematch` where a process runs public tables (`bot.public.runtime.PublicRuntime`)."""

    def __init__(
        self,
        service: Service,
        queue: MatchQueue,
        *,
        seated_elsewhere: Callable[[str], Awaitable[str | None]] | None = None,
    ) -> None:
        self.service = service
        self.queue = queue
        self.seated_elsewhere = seated_elsewhere

    async def handle(self, command: Command, table_id: str) -> list[Message]:
        async def answer(ctx: Context) -> None:
            await self._answer(ctx)

        return await self.service.run(table_id, command, answer)

    async def due(self, table_id: str, token: str, now: float) -> list[Message]:
        platform, _, chat_id = table_id.partition(":")
        command = Command("timer", (), ChatRef(platform, chat_id, ""), UserRef("timer", "timer", "timer"))

        async def lapse(ctx: Context) -> None:
            ctx.now = now
            doc = ctx.doc
            if doc is None or doc.rematch is None or doc.rematch.closed or doc.turn is None:
                return
            if doc.turn.token != token:
                return
            self._decide(ctx, doc)

        return await self.service.run(table_id, command, lapse)

    # --- inside the finished table's compare-and-set ---------------------------------------------------

    async def _answer(self, ctx: Context) -> None:
        doc = ctx.doc
        if doc is None or doc.game is None:
            raise Refusal("no_table")
        _check_button(ctx, doc)
        seat = doc.seat_of(ctx.user.key)
        if seat is None:
            raise Refusal("not_seated")
        t = translator(doc.seats[seat].lang or doc.settings.language)
        offer = doc.rematch
        agreed = offer is not None and offer.next is not None and ctx.user.key in offer.accepted
        if agreed and offer is not None and offer.next is not None and not await self._exists(offer.next):
            # Decided, but the new table was not opened (the store failed after the decision's save): one
            # who agreed pressing again opens it now (its id is fixed: never two).
            await self._open(ctx, doc)
            return
        if offer is None or offer.closed or ctx.now >= offer.deadline:
            _say(ctx, t._("It is too late to play again at this table."), t)
            return
        key = ctx.user.key
        yes = DECLINE not in ctx.command.args
        if yes and self.seated_elsewhere is not None:
            title = await self.seated_elsewhere(key)
            if title is not None:
                text = t._("You already sit at a table: «{title}». Finish it (or /leave it) first.")
                _say(ctx, text.format(title=escape(title)), t)
                return
        if (key in offer.accepted) == yes and (key in offer.declined) != yes:
            _say(ctx, t._("Your answer is noted; the others have until the minute is up."), t)
            return
        offer.accepted = [k for k in offer.accepted if k != key] + ([key] if yes else [])
        offer.declined = [k for k in offer.declined if k != key] + ([] if yes else [key])
        ctx.mark("again" if yes else "again no")
        humans = {s.user for s in doc.seats if s.human and s.user is not None}
        if humans <= set(offer.accepted) | set(offer.declined):
            self._decide(ctx, doc)
            return
        _status(ctx, doc, rematch_line, open_=True)

    async def _exists(self, table_id: str) -> bool:
        return await self.service.store.load(table_id) is not None

    def _decide(self, ctx: Context, doc: TableDoc) -> None:
        """Everyone answered, or the time is up: the new game with those who agreed, or none."""
        offer = doc.rematch
        assert offer is not None
        offer.closed = True
        ctx.deadline_reset = True  # no deadline left: `offer_turn` gives none for a decided offer
        ctx.mark("rematch")
        if not offer.accepted:
            if offer.declined:  # the status was shown (to everyone): it says so; else nothing is sent
                _status(ctx, doc, lambda t: t._("No new game: nobody agreed in time."), open_=False)
            return
        offer.next = public_table_id(f"rematch:{doc.serial}")
        _status(ctx, doc, lambda t: t._("The new game has started below."), open_=False)
        finished = doc.model_copy(deep=True)
        ctx.after_save.append(lambda: self._open(ctx, finished))

    async def _open(self, ctx: Context, doc: TableDoc) -> None:
        """After the finished table's save: seat those who agreed at the new table (computers in the other
        seats) and start it; its messages go out after the status."""
        offer = doc.rematch
        assert offer is not None and offer.next is not None
        players = []
        for seat in doc.seats:  # in their seats' order
            key = seat.user
            if not seat.human or key is None or key not in offer.accepted:
                continue
            status = await self.queue.status(key)
            if status.queued:
                await self.queue.cancel(key)  # they chose this game over the wait
            elsewhere = await self.queue.seated_at(key)
            if elsewhere is not None and elsewhere != offer.next:
                continue  # matched meanwhile: that table keeps them
            players.append(UserRef(seat.platform or "", seat.user_id or "", seat.name, seat.lang))
        if not players:
            return
        pace = next((p for p, s in PACE_SECONDS.items() if s == doc.settings.turn_seconds), "normal")
        match = PublicMatch(
            tuple(players),
            doc.settings.preset,
            len(doc.seats),
            pace,
            ai_level=doc.settings.ai_level,
            match_id=f"rematch:{doc.serial}",
        )
        for user in players:
            await self.queue.seat(user.key, offer.next)
        table_id, messages = await open_public_table(self.service, match)
        assert table_id == offer.next
        ctx.other_tables.extend(messages)


def _check_button(ctx: Context, doc: TableDoc) -> None:
    """A forged version (one the table never had) or another table's button is refused; a button drawn
    at any version of this finished table is good (others' answers move the version on)."""
    cmd = ctx.command
    if cmd.source != "button" or cmd.version is None:
        return
    other = cmd.table_tag is not None and cmd.table_tag != table_tag(doc.serial)
    if cmd.version > ctx.version and not other:
        raise Refusal("invalid_button")
    if other or cmd.version < doc.opened:
        raise Refusal("stale_button")
