"""A person's review of a finished deal (`core.ai.review`): its JSON, and `/review` in the chats.

`/review` never holds a table: `ReviewDesk.handle` checks the asker under the table's lock (a game, a
seat, a finished deal; a deal in progress is refused, since its review would speak of cards still in
hands), and only then, with the lock released, values the deal in the computer players' process pool
(`bot.ai.AiRunner.review`), bounded per deal by `core.ai.review.Limits` and a deadline. The answer goes
to the asker alone and names only their own decisions and options (cards of their own hand).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable

from bot.context import Context, Refusal
from bot.i18n import translator
from bot.model import Command, Message, Private
from bot.ports import Handler
from bot.render.review import render_review, render_review_late
from bot.review_job import ReviewJob, hash_seed
from core.ai.review import DealReview
from core.record import build_record

__all__ = ["REVIEW_DEADLINE", "ReviewDesk", "review_job"]

REVIEW_DEADLINE = 90.0
"""Seconds a chat review may take in the pool before the asker is told to try later."""


# ---------------------------------------------------------------------------------------- the chats


def review_job(ctx: Context) -> ReviewJob:
    """The asker's review of the last finished deal (`/review 3`: the third), or a refusal."""
    doc = ctx.doc
    state = ctx.state
    if doc is None or doc.game is None or state is None:
        raise Refusal("nothing_to_review")
    seat = doc.seat_of(ctx.user.key)
    if seat is None:
        raise Refusal("review_own_only")
    finished = len(state.history)
    if finished == 0:
        raise Refusal("review_after_deal")
    args = ctx.command.args
    deal = finished
    if args:
        if not args[0].isdigit() or not 1 <= int(args[0]) <= finished:
            raise Refusal("review_after_deal")
        deal = int(args[0])
    record = build_record(state, [s.name for s in doc.seats])
    # Only finished deals: the deal in progress has cards still in hands.
    record["deals"] = record["deals"][:finished]
    return ReviewJob(json.dumps(record), deal, seat, hash_seed(doc.serial, deal))


class ReviewDesk:
    """`/review`: the checks under the table's lock (`checked`: who may reach the table, then
    `review_job`'s refusals), the work after it (`review`: `bot.ai.AiRunner.review`)."""

    def __init__(
        self,
        run: Callable[[str, Command, Handler], Awaitable[list[Message]]],
        checked: Handler,
        review: Callable[[ReviewJob], Awaitable[DealReview]],
    ) -> None:
        self._run = run
        self._checked = checked
        self._review = review

    async def handle(self, command: Command, table_id: str) -> list[Message]:
        found: list[tuple[ReviewJob, str]] = []

        async def check(ctx: Context) -> None:
            await self._checked(ctx)
            found.append((review_job(ctx), ctx.user_lang()))

        messages = await self._run(table_id, command, check)
        if not found:
            return messages  # refused
        job, lang = found[0]
        t = translator(lang)
        try:
            review = await asyncio.wait_for(self._review(job), REVIEW_DEADLINE)
        except TimeoutError:
            text = render_review_late(t)
        else:
            text = render_review(t, review)
        message = Message(Private(command.user), text, None, (), None, None, True, t.lang, "review")
        return [*messages, message]
