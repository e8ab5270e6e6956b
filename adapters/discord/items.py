"""Buttons as discord.py dynamic items: each custom id is matched by a `template` regex, so a press is
routed from the custom id alone, by whichever process receives it, before or after a restart.

`ThousandBot.setup_hook` registers the three classes; the callbacks hand the press to the client's
`ButtonHandler` (`handlers.Interactions`).
"""

from __future__ import annotations

import re
from typing import Any, Protocol, runtime_checkable

import discord

from .layout import HAND_TEMPLATE, MODE_TEMPLATE, PAYLOAD_TEMPLATE, Key, hand_id, mode_id

__all__ = ["DYNAMIC_ITEMS", "ButtonHandler", "HandButton", "ModeButton", "PayloadButton", "button_for"]

Button = discord.ui.Button[discord.ui.View]

_STYLES = {
    "primary": discord.ButtonStyle.primary,
    "secondary": discord.ButtonStyle.secondary,
    "success": discord.ButtonStyle.success,
}


@runtime_checkable
class ButtonHandler(Protocol):
    async def on_payload(self, interaction: discord.Interaction, payload: str) -> None: ...

    async def on_hand(self, interaction: discord.Interaction, table_id: str) -> None: ...

    async def on_mode(self, interaction: discord.Interaction, dm: bool) -> None: ...


def _handler(interaction: discord.Interaction) -> ButtonHandler:
    handler = getattr(interaction.client, "buttons", None)
    if not isinstance(handler, ButtonHandler):
        raise RuntimeError("the client has no button handler (use adapters.discord.client.ThousandBot)")
    return handler


def _label(item: discord.ui.Item[Any]) -> str:
    label = getattr(item, "label", None)
    return label if isinstance(label, str) and label else "·"


def _style(item: discord.ui.Item[Any]) -> discord.ButtonStyle:
    style = getattr(item, "style", None)
    return style if isinstance(style, discord.ButtonStyle) else discord.ButtonStyle.secondary


class PayloadButton(discord.ui.DynamicItem[Button], template=PAYLOAD_TEMPLATE):
    """A service button: its payload (command, arguments, table version, table id) goes to the service,
    which refuses it when the table has moved on."""

    def __init__(
        self,
        payload: str,
        custom_id: str,
        *,
        label: str = "·",
        style: discord.ButtonStyle = discord.ButtonStyle.secondary,
        row: int | None = None,
    ) -> None:
        super().__init__(Button(label=label, custom_id=custom_id, style=style, row=row))
        self.payload = payload

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> PayloadButton:
        return cls(match["payload"], match.string, label=_label(item), style=_style(item))

    async def callback(self, interaction: discord.Interaction) -> None:
        await _handler(interaction).on_payload(interaction, self.payload)


class HandButton(discord.ui.DynamicItem[Button], template=HAND_TEMPLATE):
    """The "My hand" button on the table message and the turn ping: the presser's hand, ephemerally."""

    def __init__(self, table_id: str, *, label: str = "·", row: int | None = None) -> None:
        super().__init__(
            Button(label=label, custom_id=hand_id(table_id), style=discord.ButtonStyle.primary, row=row)
        )
        self.table_id = table_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> HandButton:
        return cls(match["table"], label=_label(item))

    async def callback(self, interaction: discord.Interaction) -> None:
        await _handler(interaction).on_hand(interaction, self.table_id)


class ModeButton(discord.ui.DynamicItem[Button], template=MODE_TEMPLATE):
    """Switches where the presser's hand is delivered: by DM (`m|1`) or as an ephemeral message (`m|0`)."""

    def __init__(self, dm: bool, *, label: str = "·", row: int | None = None) -> None:
        super().__init__(Button(label=label, custom_id=mode_id(dm), row=row))
        self.dm = dm

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> ModeButton:
        return cls(match["on"] == "1", label=_label(item))

    async def callback(self, interaction: discord.Interaction) -> None:
        await _handler(interaction).on_mode(interaction, self.dm)


DYNAMIC_ITEMS: tuple[type[discord.ui.DynamicItem[Any]], ...] = (PayloadButton, HandButton, ModeButton)


def button_for(key: Key, *, row: int) -> discord.ui.DynamicItem[Button]:
    """The dynamic item for a packed button."""
    cid = key.custom_id
    style = _STYLES[key.style]
    for cls in DYNAMIC_ITEMS:
        match = cls.__discord_ui_compiled_template__.fullmatch(cid)
        if match is None:
            continue
        if cls is PayloadButton:
            return PayloadButton(match["payload"], cid, label=key.label, style=style, row=row)
        if cls is HandButton:
            return HandButton(match["table"], label=key.label, row=row)
        return ModeButton(match["on"] == "1", label=key.label, row=row)
    raise ValueError(f"custom id {cid!r} matches no dynamic item")
