"""One interaction's acknowledgement: the first answer (a message, an update of the pressed message, or a
deferral) and everything after it (followups, edits of the original).

Discord wants the first answer within 3 seconds and accepts exactly one; afterwards the interaction's
token allows followups and edits for 15 minutes. `Reply` tracks which of these calls is due, so callers
just say what they want shown. Its calls are serialized, so a deferral by a watchdog (`defer_by`) and an
answer never both try to be the first.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Literal

import discord
from discord.utils import MISSING

from .content import Body, build_view

__all__ = ["AlreadyAnswered", "Reply"]

Kind = Literal["command", "component"]


class AlreadyAnswered(Exception):
    """A public answer was asked for after the interaction had been answered (or deferred)."""


class Reply:
    def __init__(self, interaction: discord.Interaction, kind: Kind) -> None:
        self.interaction = interaction
        self.kind = kind
        self.started = time.monotonic()
        self.thinking = False
        """A "thinking" deferral is showing: the next answer edits it (the original response) into itself."""
        self.answered = False
        """Something was shown to the user (beyond an empty deferral)."""
        self._lock = asyncio.Lock()

    # --- what the interaction is ------------------------------------------------------------------

    @property
    def user_id(self) -> int:
        return self.interaction.user.id

    @property
    def token(self) -> str:
        return self.interaction.token

    @property
    def in_dm(self) -> bool:
        return self.interaction.guild_id is None

    @property
    def component_message(self) -> discord.Message | None:
        return self.interaction.message if self.kind == "component" else None

    @property
    def responded(self) -> bool:
        return self.interaction.response.is_done()

    # --- answering ----------------------------------------------------------------------------------

    async def defer(self) -> None:
        """Acknowledge now, answer later: a silent deferral for buttons, "thinking" for commands."""
        async with self._lock:
            await self._defer()

    async def _defer(self) -> None:
        if self.responded:
            return
        if self.kind == "component":
            await self.interaction.response.defer()
        else:
            await self.interaction.response.defer(ephemeral=True, thinking=True)
            self.thinking = True

    async def defer_by(self, seconds: float) -> None:
        """Defer when `seconds` after the interaction arrived it is still unanswered (a watchdog task)."""
        await asyncio.sleep(max(0.0, seconds - (time.monotonic() - self.started)))
        with contextlib.suppress(discord.HTTPException):
            await self.defer()

    async def send_ephemeral(self, body: Body) -> int | None:
        """Show `body` to the user only; returns the message id when Discord gives one."""
        async with self._lock:
            view = build_view(body.rows)
            files = body.discord_files()
            self.answered = True
            if not self.responded:
                response = await self.interaction.response.send_message(
                    body.content,
                    embeds=body.embeds or MISSING,
                    files=files or MISSING,
                    view=view or MISSING,
                    ephemeral=True,
                )
                return response.message_id
            if self.thinking:
                # The "thinking" message is the original response: it becomes the answer (a followup would
                # replace it only through Discord's deprecated backwards-compatible behaviour).
                self.thinking = False
                edited = await self.interaction.edit_original_response(
                    content=body.content,
                    embeds=body.embeds,
                    attachments=files or MISSING,
                    view=view,
                )
                return edited.id
            message = await self.interaction.followup.send(
                body.content or MISSING,
                embeds=body.embeds or MISSING,
                files=files or MISSING,
                view=view or MISSING,
                ephemeral=True,
                wait=True,
            )
            return message.id

    async def send_public(self, body: Body) -> int | None:
        """Answer with a message everyone in the channel sees; only as the first answer."""
        async with self._lock:
            if self.responded:
                raise AlreadyAnswered
            self.answered = True
            response = await self.interaction.response.send_message(
                body.content,
                embeds=body.embeds or MISSING,
                files=body.discord_files() or MISSING,
                view=build_view(body.rows) or MISSING,
            )
            return response.message_id

    async def update(self, body: Body) -> None:
        """Replace the pressed button's message with `body` (buttons only)."""
        async with self._lock:
            view = build_view(body.rows)
            files = body.discord_files()
            self.answered = True
            if not self.responded:
                await self.interaction.response.edit_message(
                    content=body.content,
                    embeds=body.embeds,
                    attachments=files or MISSING,
                    view=view,
                )
                return
            # After a deferred update, the original response is the pressed message.
            await self.interaction.edit_original_response(
                content=body.content,
                embeds=body.embeds,
                attachments=files or MISSING,
                view=view,
            )

    async def finish(self, fallback: str) -> None:
        """Make sure the interaction was acknowledged and no "thinking" state is left showing."""
        async with self._lock:
            if not self.responded:
                if self.kind == "component":
                    await self.interaction.response.defer()
                    return
                await self.interaction.response.send_message(fallback, ephemeral=True)
                self.answered = True
                return
            if self.thinking:
                self.thinking = False
                await self.interaction.edit_original_response(content=fallback)
                self.answered = True
