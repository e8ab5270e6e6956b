"""Interaction webhooks: editing a hand someone opened, or following up their interaction, by its token
(valid 15 minutes, usable by any process)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import discord
from discord.utils import MISSING

from .content import Body, build_view
from .routing import NO_MENTIONS

__all__ = ["Webhooks"]


class Webhooks:
    """Sends with interaction tokens; a refusal other than a gone message or token is reported to `failed`."""

    def __init__(self, client: discord.Client, failed: Callable[[discord.HTTPException], None]) -> None:
        self.client = client
        self.failed = failed

    def hook(self, token: str) -> discord.Webhook:
        """The interaction webhook of `token` (Discord's application webhook: id the application's, token the
        interaction's), usable by any process for 15 minutes: `Webhook.partial` with the client (its HTTP
        session and state, so views with buttons work), typed as an application webhook (which allows
        ephemeral messages)."""
        app_id = self.client.application_id
        if app_id is None:
            raise RuntimeError("the client has no application id yet")
        hook = discord.Webhook.partial(app_id, token, client=self.client)
        hook.type = discord.WebhookType.application
        return hook

    async def edit(self, token: str, message_id: int, body: Body) -> bool:
        return await self._done(
            self.hook(token).edit_message(
                message_id,
                content=body.content,
                embeds=body.embeds,
                view=build_view(body.rows),
                allowed_mentions=NO_MENTIONS,
            )
        )

    async def followup(self, token: str, body: Body) -> bool:
        return await self._done(
            self.hook(token).send(
                body.content or MISSING,
                embeds=body.embeds or MISSING,
                view=build_view(body.rows) or MISSING,
                ephemeral=True,
                allowed_mentions=NO_MENTIONS,
            )
        )

    async def _done(self, call: Awaitable[object]) -> bool:
        """Whether the webhook call went through: an expired token or a deleted message says no, and so
        does another failure, counted."""
        try:
            await call
        except (discord.NotFound, discord.Forbidden):
            return False
        except discord.HTTPException as exc:
            self.failed(exc)
            return False
        return True
