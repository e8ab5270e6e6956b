"""The `/rules` summary of a table's rules and settings, in the reader's language.

Apart from `bot.render`: it explains rules rather than showing a game (rounding, the talon, the barrel).
"""

from __future__ import annotations

from bot.i18n import LANGUAGE_NAMES, N_, Translator
from bot.markup import escape
from bot.render import Rendered, escape_code, level_name
from bot.table import ChatSettings
from core.rules import Barrel, Declaration, Opening, Rounding, RuleSet, TalonVisibility

__all__ = ["render_rules"]


def render_rules(t: Translator, rules: RuleSet, settings: ChatSettings, players: int | None) -> Rendered:
    """A summary of a table's rules and settings."""
    yes, no = t._("yes"), t._("no")
    lines = [t._("**Rules: {preset}**").format(preset=escape(t.preset(rules.preset)))]
    lines.append(t._("Players: {counts}").format(counts=", ".join(map(str, rules.player_counts))))
    if rules.opening == Opening.AUTOMATIC:
        lines.append(t._("The opener starts at {bid} automatically.").format(bid=rules.opening_bid))
    else:
        lines.append(t._("The opener must bid at least {bid}.").format(bid=rules.opening_bid))
    lines.append(t._("Bids go in steps of {step}.").format(step=rules.bid_step))
    if rules.marriage_needed_above is not None:
        lines.append(t._("A bid above {limit} needs a marriage in your hand.").format(
            limit=rules.marriage_needed_above))  # fmt: skip
    if rules.cap_by_marriages:
        lines.append(t._("The most you may bid is 120 plus your marriages."))
    if rules.max_bid is not None:
        lines.append(t._("Highest bid: {value}").format(value=rules.max_bid))
    talon = {
        TalonVisibility.PUBLIC: N_("everyone sees the talon"),
        TalonVisibility.SECRET: N_("only the declarer sees the talon"),
        TalonVisibility.PUBLIC_UNLESS_FORCED: N_("everyone sees the talon, unless the opening was forced"),
    }[rules.talon_visibility]
    lines.append(t._("Talon: {how}").format(how=t._(talon)))
    lines.append(t._("Contract fixed after the exchange: {answer}").format(
        answer=yes if rules.contract_step else no))  # fmt: skip
    values = " · ".join(f"{t.suit('CSHD'.index(k))} {v}" for k, v in rules.marriage_values.items())
    lines.append(t._("Marriages: {list}").format(list=values))
    if rules.declaration == Declaration.CHOICE:
        lines.append(t._("Declaring a marriage is your choice (★)."))
    else:
        lines.append(t._("Leading a marriage card declares it."))
    if rules.barrel == Barrel.DECLARER_ONLY:
        lines.append(t._("Barrel at {value}: from there you score only as declarer.").format(
            value=rules.barrel_at))  # fmt: skip
    elif rules.barrel == Barrel.CAPPED:
        lines.append(
            t._("Barrel at {value}: {deals} deals to get out, else −{penalty}.").format(
                value=rules.barrel_at, deals=rules.barrel_deals, penalty=rules.barrel_penalty
            )
        )
    extras = []
    if rules.bomb:
        extras.append(t._("bomb"))
    if rules.concede:
        extras.append(t._("concession"))
    if rules.blind:
        extras.append(t._("blind game"))
    if rules.crawl:
        extras.append(t._("crawl"))
    if rules.sell_talon:
        extras.append(t._("talon sale"))
    if rules.bolts:
        extras.append(t._("bolts"))
    if rules.must_beat:
        extras.append(t._("must beat"))
    if rules.ace_marriage:
        extras.append(t._("four aces"))
    if rules.four_nines_bonus:
        extras.append(t._("four nines bonus"))
    if rules.samosval:
        extras.append("555")
    if extras:
        lines.append(t._("Also: {list}").format(list=", ".join(extras)))
    lines.append(_rounding_line(t, rules))
    lines.append(t._("The game goes to {target}.").format(target=rules.target))
    turn = (
        t._("{seconds} s").format(seconds=settings.turn_seconds) if settings.turn_seconds else t._("no limit")
    )
    lines.append(
        t._("Turn time: {turn} · computer: {level} · language: {language}").format(
            turn=turn, level=level_name(t, settings.ai_level), language=LANGUAGE_NAMES[settings.language]
        )
    )
    forced = t._("Forced cards play themselves: {answer}")
    lines.append(forced.format(answer=yes if settings.autoplay else no))
    if settings.options:
        changed = ", ".join(f"`{escape_code(k)}={escape_code(str(v))}`" for k, v in settings.options.items())
        lines.append(t._("Changed options: {list}").format(list=changed))
    if players is not None:
        lines.append(t._("This game: {n} players.").format(n=players))
    return Rendered("\n".join(lines))


def _rounding_line(t: Translator, rules: RuleSet) -> str:
    """How defenders' points become their score: a result shows "raw 63 → 65" and this says why."""
    if rules.rounding == Rounding.EXACT:
        return t._("Defenders score their card points exactly.")
    return t._(
        "Defenders' points are rounded to the nearest 5: ending in 1 or 2 down, in 3 or 4 up "
        "(62 → 60, 63 → 65)."
    )
