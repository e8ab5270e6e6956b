"""A deal's result and the game's score sheet (public texts for the group).

Apart from `bot.render` because they speak of a deal that is over: its talon when it was shown, the
tricks nobody saw on a table message, the rounding of each defender's points; and the score sheet offers
the next game (`again`, see "Play again" in docs/SERVICE.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.i18n import N_, Translator
from bot.model import Button
from bot.reader import TO_READER, about
from bot.render import PLAYED_ONLY, Payload, Rendered, Trick, escape_code, seat_names, trick_lines, trick_text
from bot.views import SeatLabel
from core.rules import Rounding, RuleSet
from core.scoring import DealResult, round_defender

__all__ = [
    "TALON_OF_DEAL",
    "TALON_OF_DEAL_TO_READER",
    "ending_text",
    "render_result",
    "render_score_sheet",
    "result_notes",
    "rounding_text",
    "talon_of_deal",
    "zero_reason",
]

TALON_OF_DEAL = PLAYED_ONLY[2]
"""A finished deal's public talon in its result (only cards of a deal that is over)."""
TALON_OF_DEAL_TO_READER = TO_READER[TALON_OF_DEAL]
"""The same line told to the declarer (`bot.reader`)."""


def talon_of_deal(t: Translator, r: DealResult, names: Sequence[str], reader: int | None = None) -> str:
    """The result's line of the talon everyone saw (`DealResult.talon`), told to `reader`."""
    return about(t, TALON_OF_DEAL, names, r.declarer, reader, cards=t.cards(r.talon))


def ending_text(t: Translator, r: DealResult, names: Sequence[str], reader: int | None = None) -> str:
    """How the deal ended, as a sentence chosen for `reader` (the declarer reads "You failed 105")."""
    if r.ending == "redeal":
        return t._("Four nines: the cards are dealt again.")
    if r.declarer < 0:  # no declarer to name (not a deal the engine ends so): a dash, never a reader
        names, reader = [*names, "—"], None
        declarer = len(names) - 1
    else:
        declarer = r.declarer
    if r.ending == "bomb":
        return about(t, N_("{name} bombs: the deal is not played."), names, declarer, reader)
    if r.ending == "concede":
        return about(t, N_("{name} concedes {value}."), names, declarer, reader, value=r.contract)
    declarer_points = r.points[r.declarer]
    if r.made:
        template = N_("{name} made {value} ({points} points).")
    else:
        template = N_("{name} failed {value} ({points} points).")
    return about(t, template, names, declarer, reader, value=r.contract, points=declarer_points)


def zero_reason(
    t: Translator, r: DealResult, s: int, barrel_before: Sequence[bool], sitting_out: int | None
) -> str | None:
    """Why seat `s` scored nothing in this deal (a zero with no reason looks like a mistake)."""
    if r.ending == "redeal" or r.scores[s] != 0:
        return None
    if s == sitting_out:
        return t._("sits out")
    on_barrel = s < len(barrel_before) and barrel_before[s]
    if on_barrel and s == r.declarer:
        return t._("on the barrel: only reaching the goal counts")
    if on_barrel:
        return t._("on the barrel: points do not count")
    if s in r.bolts:
        return t._("no points: a bolt")
    if r.ending == "played" and s != r.declarer:
        if r.points[s] > 0:
            return t._("{points} points round down to 0").format(points=r.points[s])
        return t._("no points taken")
    return None


def rounding_text(
    t: Translator, rules: RuleSet | None, r: DealResult, s: int, barrel_before: Sequence[bool]
) -> str | None:
    """ "raw 63 → 65" for a defender whose card points were rounded (Polish and Estonian rounding to 5),
    so that a score that is not the points taken does not look like a mistake; None when nothing was
    rounded or the points did not count (the declarer, the barrel, a deal not played)."""
    if rules is None or rules.rounding == Rounding.EXACT or r.ending != "played" or s == r.declarer:
        return None
    if s < len(barrel_before) and barrel_before[s]:
        return None
    raw = r.points[s]
    rounded = round_defender(rules, raw)
    if rounded == raw:
        return None
    return t._("raw {raw} → {rounded}").format(raw=raw, rounded=rounded)


def render_result(
    t: Translator,
    r: DealResult,
    seats: Sequence[SeatLabel],
    *,
    last_trick: Trick | None = None,
    unseen_tricks: Sequence[tuple[int, Trick]] = (),
    barrel_before: Sequence[bool] = (),
    sitting_out: int | None = None,
    rules: RuleSet | None = None,
    reader: int | None = None,
) -> Rendered:
    """A deal's result: how it ended, each seat's score and new total (public).

    `last_trick` (cards, seats, winner): the deal's final trick, which the table message of the deal
    never shows (the deal ends with it); `unseen_tricks` (number, trick): tricks before it that no table
    message showed either (the last cards playing themselves). The talon, when it was shown to everyone
    (`DealResult.talon`), whoever took it. `barrel_before`: who was on the barrel when the deal began, and
    `sitting_out` the seat that sat it out, so that a zero says why; `rules`: each rounded score says
    from what (without them nothing is said of rounding)."""
    names = seat_names(t, seats)
    lines = [t._("**Deal {number}: result**").format(number=r.number + 1)]
    if r.talon and r.declarer >= 0:
        lines.append(talon_of_deal(t, r, names, reader))
    lines.extend(trick_lines(t, names, unseen_tricks))
    if last_trick is not None:
        cards, trick_seats, winner = last_trick
        lines.append(
            t._("Last trick: {cards} → {name}").format(
                cards=trick_text(t, names, cards, trick_seats), name=names[winner]
            )
        )
    lines.append(ending_text(t, r, names, reader))
    if r.blind:
        lines.append(t._("A blind game: the score counts double."))
    for s, ms in enumerate(r.marriages):
        for m in ms:
            lines.append(
                about(t, N_("{name} declared {marriage}."), names, s, reader, marriage=t.marriage(m))
            )
    for s in range(len(r.totals)):
        score = r.scores[s]
        line = f"{names[s]}: {score:+d} → **{r.totals[s]}**"
        reason = zero_reason(t, r, s, barrel_before, sitting_out)
        rounded = rounding_text(t, rules, r, s, barrel_before)
        if reason is not None:
            line += f" ({reason})"
        elif rounded is not None:
            line += f" ({rounded})"
        if reason is None and s in r.bolts:
            line += " · " + t._("bolt")
        if r.barrel and r.barrel[s]:
            line += " 🛢"
        lines.append(line)
    lines.extend(result_notes(t, r, names, reader))
    return Rendered("\n".join(lines))


def result_notes(t: Translator, r: DealResult, names: Sequence[str], reader: int | None = None) -> list[str]:
    """The barrel's penalties, the 555s and the four nines of a deal, told to `reader`."""
    lines = []
    for note in r.notes:
        kind, _, who = note.partition(":")
        if kind == "barrel_penalty":
            lines.append(about(t, N_("{name} stayed too long on the barrel."), names, int(who), reader))
        elif kind == "samosval":
            lines.append(about(t, N_("{name} hit 555: back to zero."), names, int(who), reader))
    for s in r.four_nines:
        lines.append(about(t, N_("{name} held four nines."), names, s, reader))
    return lines


def render_score_sheet(
    t: Translator,
    results: Sequence[DealResult],
    seats: Sequence[SeatLabel],
    winner: int | tuple[int, ...] | None,
    *,
    ended: str | None = None,
    payload: Payload | None = None,
) -> Rendered:
    """Every deal's totals in a column per player, and the winner when there is one.

    With `payload` (the game's final sheet) a "Play again" button sends `again`: the same seats and
    settings at a new table (`bot.handlers.lobby.LobbyHandlers.again`). Every adapter shows it as it
    shows any button of the group; the web page finds it in its view's buttons."""
    names_plain = [s.name for s in seats]
    width = [max(6, min(12, len(n))) for n in names_plain]
    header = "  #  " + " ".join(n[:w].rjust(w) + " " for n, w in zip(names_plain, width, strict=True))
    rows = [header]
    for r in results:
        marks = []
        for s in range(len(seats)):
            mark = " "
            if s == r.declarer and r.ending != "redeal":
                mark = "✓" if r.made else "✗" if r.made is False else "•"
            marks.append((str(r.totals[s]) + mark).rjust(width[s] + 1))
        rows.append(f"{r.number + 1:>3}  " + " ".join(marks))
    lines = [t._("**Score sheet**")]
    if results:
        lines.append("`" + escape_code("\n".join(rows)) + "`")
        lines.append(t._("✓ contract made · ✗ failed · • bomb or concession"))
    else:
        lines.append(t._("No deal has been played yet."))
    if winner is not None:
        winners = winner if isinstance(winner, tuple) else (winner,)
        names = seat_names(t, seats)
        won = ", ".join(names[w] for w in winners)
        lines.append("🏆 " + t._("Winner: {names}").format(names=won))
    elif ended == "ended":
        lines.append(t._("The game was ended before anyone won."))
    elif ended == "abandoned":
        lines.append(t._("The game was abandoned."))
    buttons: tuple[tuple[Button, ...], ...] = ()
    if payload is not None:
        buttons = ((Button(t._("Play again"), payload("again", ())),),)
    return Rendered("\n".join(lines), buttons)
