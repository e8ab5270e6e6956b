"""The score-progress chart sent at the end of a game: totals after each deal, one line per player.

Drawn with matplotlib's Agg backend (no display needed) into PNG bytes. Drawing takes a few hundred
milliseconds, so the service calls it in a worker thread.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

__all__ = ["score_chart"]


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
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()
