"""The `/thousand` slash command group: one subcommand per thing a player or an admin does.

Descriptions are `locale_str`s translated by `i18n.CommandTranslator` when the tree is synced. Discord
applies `default_member_permissions` to top-level commands only, so `/thousand settings` is visible to
everyone and the right to use it (Manage Server, or the table's creator) is checked when it runs: the
adapter reports Manage Server as `UserRef.is_admin`, the service lets admins and the creator pass.
"""

from __future__ import annotations

from typing import Final

import discord
from discord import app_commands
from discord.app_commands import locale_str

from bot.i18n import LANGUAGE_NAMES, LANGUAGES
from bot.matchmaking.model import ANY_PRESET, PACES
from bot.public.phrases import PHRASES
from bot.render_queue import PACE_NAMES
from bot.reports import REASONS
from core.rules import PRESETS

from . import i18n as L
from .i18n import DESCRIPTIONS
from .interactions import Interactions

__all__ = ["GROUP_NAME", "build_group"]

GROUP_NAME: Final = "thousand"
MAX_BID: Final = 1000


def _d(key: str) -> locale_str:
    return locale_str(DESCRIPTIONS[key])


def _choices(options: list[tuple[str, str]]) -> list[app_commands.Choice[str]]:
    return [app_commands.Choice(name=name, value=value) for name, value in options]


def _named(options: list[tuple[locale_str, str]]) -> list[app_commands.Choice[str]]:
    """Choices whose names are the service's words, shown in the reader's language (`CommandTranslator`)."""
    return [app_commands.Choice(name=name, value=value) for name, value in options]


PRESET_CHOICES: Final = [
    *((locale_str(p, preset=p), p) for p in PRESETS),
    (locale_str("any rules"), ANY_PRESET),
]
PACE_CHOICES: Final = [(locale_str(PACE_NAMES[p]), p) for p in PACES]
PLAYER_CHOICES: Final = [app_commands.Choice(name=str(n), value=n) for n in (2, 3, 4)]
PHRASE_CHOICES: Final = [(locale_str(text), key) for key, text in PHRASES.items()]
REASON_CHOICES: Final = [(locale_str(text), word) for word, text in REASONS.items()]


def _to_app(choices: list[object]) -> list[app_commands.Choice[str]]:
    out = []
    for c in choices:
        name, value = getattr(c, "name", None), getattr(c, "value", None)
        if isinstance(name, str) and isinstance(value, str):
            out.append(app_commands.Choice(name=name[:100], value=value[:100]))
    return out


def build_group(handlers: Interactions) -> app_commands.Group:
    """The `/thousand` group, its callbacks bound to `handlers`."""
    group = app_commands.Group(
        name=GROUP_NAME,
        description=_d("thousand"),
        allowed_contexts=app_commands.AppCommandContext(guild=True, dm_channel=True, private_channel=False),
        allowed_installs=app_commands.AppInstallationType(guild=True, user=False),
    )

    def simple(name: str, neutral: str | None = None) -> None:
        async def callback(interaction: discord.Interaction) -> None:
            await handlers.slash(interaction, neutral or name)

        group.add_command(app_commands.Command(name=name, description=_d(name), callback=callback))

    @group.command(name="new", description=_d("new"))
    @app_commands.describe(preset=_d("new.preset"))
    @app_commands.choices(preset=_choices([(p, p) for p in PRESETS]))
    async def new(interaction: discord.Interaction, preset: app_commands.Choice[str] | None = None) -> None:
        await handlers.slash(interaction, "new", (preset.value,) if preset is not None else ())

    for name in ("join", "leave", "start"):
        simple(name)

    @group.command(name="bid", description=_d("bid"))
    @app_commands.describe(amount=_d("bid.amount"))
    async def bid(interaction: discord.Interaction, amount: app_commands.Range[int, 0, MAX_BID]) -> None:
        await handlers.slash(interaction, "bid", (str(amount),))

    @bid.autocomplete("amount")
    async def bid_amounts(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[int]]:
        values = await handlers.bid_choices(interaction, current)
        return [app_commands.Choice(name=str(v), value=v) for v in values]

    simple("pass")

    @group.command(name="contract", description=_d("contract"))
    @app_commands.describe(amount=_d("contract.amount"))
    async def contract(interaction: discord.Interaction, amount: app_commands.Range[int, 0, MAX_BID]) -> None:
        await handlers.slash(interaction, "contract", (str(amount),))

    @contract.autocomplete("amount")
    async def contract_amounts(
        interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[int]]:
        values = await handlers.contract_choices(interaction, current)
        return [app_commands.Choice(name=str(v), value=v) for v in values]

    @group.command(name="play", description=_d("play"))
    @app_commands.describe(
        card=_d("play.card"), preset=_d("play.preset"), players=_d("play.players"), pace=_d("play.pace")
    )
    @app_commands.choices(preset=_named(PRESET_CHOICES), pace=_named(PACE_CHOICES))
    @app_commands.choices(players=PLAYER_CHOICES)
    async def play(
        interaction: discord.Interaction,
        card: app_commands.Range[str, 1, 12] | None = None,
        preset: app_commands.Choice[str] | None = None,
        players: app_commands.Choice[int] | None = None,
        pace: app_commands.Choice[str] | None = None,
    ) -> None:
        # With a card, a move (as always); without one, Play now: the queue, as Telegram's /play alone.
        options = tuple(str(c.value) for c in (preset, players, pace) if c is not None)
        if card is None:
            await handlers.direct(interaction, "queue", options)
        elif options:
            await handlers.note(interaction, L.CARD_OR_GAME)
        else:
            await handlers.slash(interaction, "play", tuple(card.split()))

    @play.autocomplete("card")
    async def play_cards(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        return _to_app(list(await handlers.card_choices(interaction, current)))

    @group.command(name="hand", description=_d("hand"))
    @app_commands.describe(dm=_d("hand.dm"))
    async def hand(interaction: discord.Interaction, dm: bool | None = None) -> None:
        await handlers.hand(interaction, dm)

    for name in ("score", "rules"):
        simple(name)

    @group.command(name="settings", description=_d("settings"))
    @app_commands.describe(option=_d("settings.option"), value=_d("settings.value"))
    async def settings(
        interaction: discord.Interaction,
        option: app_commands.Range[str, 1, 40] | None = None,
        value: app_commands.Range[str, 1, 100] | None = None,
    ) -> None:
        args = tuple(a for a in (option, *(value.split() if value else ())) if a)
        await handlers.slash(interaction, "set", args)

    @settings.autocomplete("option")
    async def setting_option(
        interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return _to_app(list(await handlers.option_choices(interaction, current)))

    @settings.autocomplete("value")
    async def setting_value(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        return _to_app(list(await handlers.value_choices(interaction, current)))

    @group.command(name="lang", description=_d("lang"))
    @app_commands.describe(language=_d("lang.language"))
    @app_commands.choices(language=_choices([(LANGUAGE_NAMES[c], c) for c in LANGUAGES]))
    async def lang(
        interaction: discord.Interaction, language: app_commands.Choice[str] | None = None
    ) -> None:
        await handlers.slash(interaction, "lang", (language.value,) if language is not None else ())

    @group.command(name="kick", description=_d("kick"))
    @app_commands.describe(player=_d("kick.player"))
    async def kick(interaction: discord.Interaction, player: discord.Member | discord.User) -> None:
        # "@<id>": a bare number would be read as a seat number.
        await handlers.slash(interaction, "kick", (f"@{player.id}",))

    @group.command(name="cancel", description=_d("cancel"))
    async def cancel(interaction: discord.Interaction) -> None:
        await handlers.direct(interaction, "cancel")

    @group.command(name="say", description=_d("say"))
    @app_commands.describe(phrase=_d("say.phrase"))
    @app_commands.choices(phrase=_named(PHRASE_CHOICES))
    async def say(interaction: discord.Interaction, phrase: app_commands.Choice[str]) -> None:
        # Fixed phrases only: there is no free text to relay between strangers.
        await handlers.direct(interaction, "say", (phrase.value,))

    @group.command(name="block", description=_d("block"))
    @app_commands.describe(player=_d("block.player"), undo=_d("block.undo"))
    async def block(
        interaction: discord.Interaction, player: app_commands.Range[str, 1, 64], undo: bool = False
    ) -> None:
        # One subcommand for block and its undo: a group holds at most 25 subcommands (review took one).
        await handlers.direct(interaction, "unblock" if undo else "block", (player,))

    @group.command(name="review", description=_d("review"))
    @app_commands.describe(deal=_d("review.deal"))
    async def review(
        interaction: discord.Interaction, deal: app_commands.Range[int, 1, 999] | None = None
    ) -> None:
        await handlers.slash(interaction, "review", (str(deal),) if deal is not None else ())

    @group.command(name="report", description=_d("report"))
    @app_commands.describe(player=_d("report.player"), reason=_d("report.reason"))
    @app_commands.choices(reason=_named(REASON_CHOICES))
    async def report(
        interaction: discord.Interaction,
        player: app_commands.Range[str, 1, 64],
        reason: app_commands.Choice[str],
    ) -> None:
        await handlers.direct(interaction, "report", (player, reason.value))

    @group.command(name="top", description=_d("top"))
    @app_commands.describe(public=_d("top.public"), preset=_d("top.preset"))
    @app_commands.choices(preset=_choices([(p, p) for p in PRESETS]))
    async def top(
        interaction: discord.Interaction,
        public: bool | None = None,
        preset: app_commands.Choice[str] | None = None,
    ) -> None:
        args = ("public", *((preset.value,) if preset is not None else ())) if public else ()
        await handlers.slash(interaction, "top", args)

    for name in ("end", "export", "stats", "back", "help"):
        simple(name)
    return group
