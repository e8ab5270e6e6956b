"""A review's work, free of the chats (`core.ai.review`): its JSON (`thousand review --json`), and the job
the computer players' pool runs for `/review` (`bot.review`), which holds only finished deals.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.vocabulary import Mover, typed
from core.actions import Action
from core.ai.review import DealReview, Limits, played_deals, review_deal
from core.game import GameState
from core.record import parse_record

__all__ = ["ReviewJob", "decisions_json", "hash_seed", "review_text_json", "run_review"]


def decisions_json(review: DealReview, start: GameState) -> list[dict[str, Any]]:
    """One object per decision (docs/AI.md, `thousand review --json`); actions in the typed notation."""
    mover = Mover.of_state(start, review.seat)

    def name(action: Action) -> str:
        return typed(action, mover)

    out: list[dict[str, Any]] = []
    for d in review.decisions:
        options = []
        for o in d.options:
            item: dict[str, Any] = {"action": name(o.action), "expected": o.expected}
            if o.open_hands is not None:
                item["open_hands"] = o.open_hands
            if o.makes is not None:
                item["makes"] = o.makes
            options.append(item)
        out.append(
            {
                "deal": d.deal,
                "seat": d.seat,
                "step": d.step,
                "phase": d.phase,
                "trick": d.trick,
                "chosen": name(d.chosen),
                "best": name(d.best),
                "cost": d.cost,
                "samples": d.samples,
                "contract_lost": d.contract_lost,
                "declarer": review.declarer,
                "contract": review.contract,
                "makeable": review.makeable,
                "options": options,
            }
        )
    return out


def review_text_json(
    text: str,
    seats: list[int] | None = None,
    *,
    deals: list[int] | None = None,
    seed: int = 0,
    limits: Limits | None = None,
    progress: Callable[[int, int, int, int], None] | None = None,
) -> tuple[list[DealReview], list[dict[str, Any]]]:
    """Reviews of a record's text (raising `core.record.RecordError`) and their JSON objects.
    `progress(done, total, deal, seat)` is called before each deal and seat."""
    record, rules = parse_record(text)
    played = played_deals(record, rules)
    jobs = [
        (d, start, actions, seat)
        for d, (start, actions) in enumerate(played, start=1)
        if deals is None or d in deals
        for seat in start.deal.active
        if seats is None or seat in seats
    ]
    reviews: list[DealReview] = []
    objects: list[dict[str, Any]] = []
    for i, (d, start, actions, seat) in enumerate(jobs):
        if progress is not None:
            progress(i, len(jobs), d, seat)
        review = review_deal(start, actions, seat, deal=d, seed=seed, limits=limits)
        reviews.append(review)
        objects.extend(decisions_json(review, start))
    return reviews, objects


@dataclass(frozen=True, slots=True)
class ReviewJob:
    """What the pool needs: the finished deals' record (no deal in progress), which deal, whose seat."""

    record: str
    deal: int
    seat: int
    seed: int


def run_review(job: ReviewJob) -> DealReview:
    """One deal's review, in whatever process runs it."""
    record, rules = parse_record(job.record)
    start, actions = played_deals(record, rules)[job.deal - 1]
    return review_deal(start, actions, job.seat, deal=job.deal, seed=job.seed)


def hash_seed(serial: str, deal: int) -> int:
    """A seed fixed per table and deal, so asking twice gives the same review."""
    value = deal
    for ch in serial:
        value = (value * 131 + ord(ch)) % (1 << 31)
    return value
