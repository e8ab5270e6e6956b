"""The score-progress chart sent at the end of a game: totals after each deal, one line per player.

Drawn with matplotlib's Agg backend (no display needed) into PNG bytes. Drawing takes a few hundred
milliseconds, so the service calls it in a worker thread.

Every text on it is plain text: players' names come from strangers, and matplotlib would read a name
between dollar signs as mathtext (`$\\nosuchcommand$` raised a ValueError while drawing) or hand it
to LaTeX when `text.usetex` is set.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from matplotlib.text import Text

__all__ = ["draw_chart", "score_chart"]


def _plain(text: Text) -> None:
    """Show the text as it is: no mathtext, no LaTeX."""
    text.set_parse_math(False)
    text.set_usetex(False)


def score_chart(
    names: Sequence[str],
    totals: Sequence[Sequence[int]],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    target: int = 1000,
) -> bytes:
    """A PNG of `totals[d][seat]` (the totals after deal d) with the target line."""
    fig = draw_chart(names, totals, title=title, xlabel=xlabel, ylabel=ylabel, target=target)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def draw_chart(
    names: Sequence[str],
    totals: Sequence[Sequence[int]],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    target: int = 1000,
) -> Figure:
    """The chart's figure (`score_chart` saves it; tests read its texts)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    deals = list(range(len(totals) + 1))
    for seat, name in enumerate(names):
        series = [0] + [row[seat] for row in totals]
        ax.plot(deals, series, marker="o", markersize=3, linewidth=1.8, label=name)
    ax.axhline(target, color="grey", linestyle="--", linewidth=1)
    ax.grid(True, alpha=0.3)
    texts = [
        ax.set_title(title),
        ax.set_xlabel(xlabel),
        ax.set_ylabel(ylabel),
        *ax.legend(loc="upper left").get_texts(),
    ]
    for text in texts:
        _plain(text)
    fig.tight_layout()
    return fig
