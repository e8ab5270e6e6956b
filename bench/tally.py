"""What a bench counted, and whether its rates may be printed.

Issue 26: a bench that typed moves the service refused reported the refusals' speed as its throughput
(33 of 4,000 commands were moves). Every bench that sends commands counts each answer here, accepted or
refused with the reason, and says which refusals it provokes on purpose (a cancel that loses the race
to a match). When more than `LIMIT` of the commands were refused for any other reason, the rates are
withheld: printed as null with the reason, next to the counts, and the bench exits non-zero.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["LIMIT", "Tally", "emit", "refusal_code"]

LIMIT: Final = 0.01
"""The share of commands that may be refused unintentionally before a rate means nothing."""


def refusal_code(text: str, lang: str = "en") -> str:
    """The code of the service's refusal whose text (in `lang`) `text` holds: the `bot.render.ERRORS`
    entry with the longest matching text before its first placeholder, else `unrecognised`."""
    from bot.i18n import translator
    from bot.render import ERRORS

    t = translator(lang)
    best, length = "unrecognised", 0
    for code, template in ERRORS.items():
        head = t._(template).split("{", 1)[0].strip()
        if head and len(head) > length and head in text:
            best, length = code, len(head)
    return best


@dataclass
class Tally:
    """Answers counted by kind (`accepted`: moves, lobby commands, joins...) and refusals by reason.

    `intended`: refusal reasons the bench provokes on purpose; they are counted and shown, but do not
    withhold the rates.
    """

    intended: frozenset[str] = frozenset()
    accepted: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)

    def accept(self, kind: str = "move", n: int = 1) -> None:
        self.accepted[kind] += n

    def refuse(self, reason: str, n: int = 1) -> None:
        self.refused[reason] += n

    def merge(self, other: Mapping[str, Any]) -> None:
        """Add the counts of another tally's `counts()` (a worker process's)."""
        self.accepted.update(other["accepted"])
        self.refused.update(other["refused"])

    @property
    def commands(self) -> int:
        return sum(self.accepted.values()) + sum(self.refused.values())

    @property
    def unintended(self) -> int:
        return sum(n for reason, n in self.refused.items() if reason not in self.intended)

    @property
    def unintended_share(self) -> float:
        return self.unintended / self.commands if self.commands else 0.0

    def trustworthy(self) -> bool:
        return self.commands > 0 and self.unintended_share <= LIMIT

    def counts(self) -> dict[str, Any]:
        return {
            "commands": self.commands,
            "accepted": dict(sorted(self.accepted.items())),
            "refused": dict(sorted(self.refused.items())),
            "refused_intended": sorted(r for r in self.refused if r in self.intended),
            "refused_unintended": self.unintended,
            "refused_unintended_share": round(self.unintended_share, 4),
        }

    def report(self, figures: Mapping[str, Any], rates: Iterable[str]) -> tuple[dict[str, Any], int]:
        """`figures` with the counts added under `counted`; the keys `rates` set to None, a
        `rate_withheld` reason and exit status 1 when the run cannot be trusted, else status 0."""
        out = dict(figures)
        out["counted"] = self.counts()
        if self.trustworthy():
            out["rate_withheld"] = None
            return out, 0
        for key in rates:
            out[key] = None
        if self.commands == 0:
            out["rate_withheld"] = "no commands were counted"
        else:
            out["rate_withheld"] = (
                f"{self.unintended} of {self.commands} commands ({self.unintended_share:.1%}) were refused "
                f"unintentionally (more than {LIMIT:.0%}): the rates would measure refusals"
            )
        return out, 1


def emit(result: Mapping[str, Any], status: int, *, indent: int | None = None) -> int:
    """Print the result as one JSON object; a withheld rate is also said on stderr. Returns `status`."""
    json.dump(result, sys.stdout, indent=indent, ensure_ascii=False)
    sys.stdout.write("\n")
    sys.stdout.flush()
    if status:
        sys.stderr.write(f"rates withheld: {result.get('rate_withheld')}\n")
    return status
