"""Game records (replay-format.md): build one from a game, and replay one through the engine.

Parsing is strict and complete before anything is replayed, so a file that is not a record anywhere in
it is told apart (``RecordError``, exit status 2) from a record whose play breaks a rule (a report with
``ok: false``, exit status 1).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .actions import (
    BLIND_NO,
    BLIND_YES,
    BOMB,
    CONCEDE,
    CRAWL,
    PASS,
    SELL,
    Action,
    Bid,
    Blind,
    Contract,
    Discard,
    Give,
    Play,
    TakeTalon,
    to_record,
)
from .cards import CARD_NAMES, CardParseError, cards_of, mask_of, parse_card
from .deal import DealLayout, active_seats, check_layout
from .errors import IllegalAction
from .game import GameState, new_game, replace_deal, unroll
from .rules import PRESETS, RuleError, RuleSet, preset

FORMAT = "thousand-record/1"


class RecordError(ValueError):
    """The file is not a well-formed record; the message says where and why."""


CardText = Annotated[str, Field(min_length=1)]


def _card(token: str) -> int:
    try:
        return parse_card(token)
    except CardParseError as exc:
        raise ValueError(str(exc)) from None


class RecordAction(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    seat: int
    action: Literal[
        "bid", "pass", "take_talon", "discard", "give", "contract", "bomb", "concede", "crawl", "play", "sell"
    ]
    value: int | None = None
    pile: int | None = None
    card: CardText | None = None
    cards: list[CardText] | dict[str, CardText] | None = None
    declare: bool | None = None

    @model_validator(mode="after")
    def _fields(self) -> RecordAction:
        needs: dict[str, tuple[str, ...]] = {
            "bid": ("value",),
            "contract": ("value",),
            "take_talon": ("pile",),
            "discard": ("cards",),
            "give": ("cards",),
            "play": ("card",),
        }
        allowed = (
            {*needs.get(self.action, ()), "declare"}
            if self.action == "play"
            else set(needs.get(self.action, ()))
        )
        for name in ("value", "pile", "card", "cards", "declare"):
            present = getattr(self, name) is not None
            if name in needs.get(self.action, ()) and not present:
                raise ValueError(f"{self.action} needs {name!r}")
            if present and name not in allowed:
                raise ValueError(f"{self.action} takes no {name!r}")
        if self.action == "discard" and not isinstance(self.cards, list):
            raise ValueError("discard takes a list of cards")
        if self.action == "give":
            if not isinstance(self.cards, dict):
                raise ValueError("give takes an object: seat -> card")
            for key in self.cards:
                if not key.isdigit():
                    raise ValueError(f"give: {key!r} is not a seat number")
        if self.card is not None:
            _card(self.card)
        if isinstance(self.cards, list):
            for c in self.cards:
                _card(c)
        elif isinstance(self.cards, dict):
            for c in self.cards.values():
                _card(c)
        return self

    def to_action(self) -> Action:
        match self.action:
            case "bid":
                return Bid(self.value or 0)
            case "pass":
                return PASS
            case "contract":
                return Contract(self.value or 0)
            case "take_talon":
                return TakeTalon(self.pile or 0)
            case "discard":
                assert isinstance(self.cards, list)
                return Discard(tuple(_card(c) for c in self.cards))
            case "give":
                assert isinstance(self.cards, dict)
                return Give(tuple(sorted((int(k), _card(v)) for k, v in self.cards.items())))
            case "bomb":
                return BOMB
            case "concede":
                return CONCEDE
            case "crawl":
                return CRAWL
            case "sell":
                return SELL
            case _:
                return Play(_card(self.card or ""), bool(self.declare))


class RecordDeal(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    dealer: int
    hands: list[list[CardText]]
    talon: list[CardText] | list[list[CardText]]
    blind: int | None = None
    actions: list[RecordAction] = Field(default_factory=list)

    @field_validator("hands")
    @classmethod
    def _hands(cls, hands: list[list[str]]) -> list[list[str]]:
        for hand in hands:
            for c in hand:
                _card(c)
        return hands

    @field_validator("talon")
    @classmethod
    def _talon(cls, talon: list[str] | list[list[str]]) -> list[str] | list[list[str]]:
        for item in talon:
            for c in item if isinstance(item, list) else [item]:
                _card(c)
        return talon

    def layout(self) -> DealLayout:
        hands = tuple(mask_of(_card(c) for c in hand) for hand in self.hands)
        if self.talon and isinstance(self.talon[0], list):
            p0, p1 = (
                ([_card(c) for c in pile] for pile in self.talon[:2]) if len(self.talon) >= 2 else ([], [])
            )
            return DealLayout(self.dealer, hands, piles=(tuple(p0), tuple(p1)), blind=self.blind)
        return DealLayout(self.dealer, hands, talon=tuple(_card(c) for c in self.talon), blind=self.blind)  # type: ignore[arg-type]

    def card_count_ok(self) -> bool:
        """Whether hands and talon hold as many card tokens as cards they name (no duplicates)."""
        tokens = [c for h in self.hands for c in h]
        for item in self.talon:
            tokens.extend(item if isinstance(item, list) else [item])
        return len({_card(t) for t in tokens}) == len(tokens)


class RecordRules(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    preset: str
    options: dict[str, Any] = Field(default_factory=dict)


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    format: Literal["thousand-record/1"]
    rules: RecordRules
    players: list[str] = Field(min_length=2, max_length=4)
    deals: list[RecordDeal] = Field(default_factory=list)

    def rule_set(self) -> RuleSet:
        return preset(self.rules.preset, self.rules.options or None)


def parse_record(text: str) -> tuple[Record, RuleSet]:
    """Parse and check a whole record; raise :class:`RecordError` with a readable message."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise RecordError("a record is a JSON object")
    if data.get("format") != FORMAT:
        raise RecordError(f"format must be {FORMAT!r}, not {data.get('format')!r}")
    try:
        record = Record.model_validate(data)
    except ValidationError as exc:
        raise RecordError(_describe(exc)) from None
    try:
        rules = record.rule_set()
        rules.check_players(len(record.players))
    except RuleError as exc:
        raise RecordError(str(exc)) from None
    n = len(record.players)
    for d, deal in enumerate(record.deals):
        where = f"deals[{d}]"
        if not 0 <= deal.dealer < n:
            raise RecordError(f"{where}.dealer: {deal.dealer} is not a seat")
        if len(deal.hands) != n:
            raise RecordError(f"{where}.hands: {len(deal.hands)} hands for {n} players")
        if deal.blind is not None and not 0 <= deal.blind < n:
            raise RecordError(f"{where}.blind: {deal.blind} is not a seat")
        for a, act in enumerate(deal.actions):
            if not 0 <= act.seat < n:
                raise RecordError(f"{where}.actions[{a}].seat: {act.seat} is not a seat")
            if act.action == "give":
                assert isinstance(act.cards, dict)
                for key in act.cards:
                    if not 0 <= int(key) < n:
                        raise RecordError(f"{where}.actions[{a}].cards: {key} is not a seat")
    return record, rules


def _describe(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {first['msg']}{more}"


def _error(report: dict[str, Any], deal: int, action: int | None, code: str, message: str) -> dict[str, Any]:
    report["ok"] = False
    report["error"] = {"deal": deal, "action": action, "code": code, "message": message}
    return report


def replay(record: Record, rules: RuleSet) -> dict[str, Any]:
    """Replay a parsed record; the report of replay-format.md."""
    n = len(record.players)
    report: dict[str, Any] = {"ok": True, "deals": [], "totals": [0] * n, "winner": None}
    state: GameState | None = None
    for d, rdeal in enumerate(record.deals):
        layout = rdeal.layout()
        if state is not None and state.finished:
            return _error(report, d, None, "game_over", "the game was already over before this deal")
        if state is not None and rdeal.dealer != state.layout.dealer:
            return _error(
                report,
                d,
                None,
                "wrong_dealer",
                f"the dealer should be seat {state.layout.dealer}, not {rdeal.dealer}",
            )
        problem = None if rdeal.card_count_ok() else "a card is dealt twice"
        problem = problem or check_layout(rules, n, layout)
        if problem:
            return _error(report, d, None, "bad_layout", problem)
        if rdeal.blind is not None:
            opener = active_seats(rules, n, rdeal.dealer)[0]
            if not rules.blind:
                return _error(report, d, None, "no_blind", "a blind game is not part of these rules")
            if rdeal.blind != opener:
                return _error(
                    report, d, None, "bad_blind", f"only seat {opener} (left of the dealer) may play blind"
                )
        # A fresh state (nothing else holds it): the record's actions are applied to it in place.
        state = new_game(rules, n, layout=layout)[0] if state is None else replace_deal(state, layout)[0]
        number = state.deal_number
        if rules.blind:
            state.apply_action(state.deal.opener, BLIND_YES if rdeal.blind is not None else BLIND_NO)
        for a, ract in enumerate(rdeal.actions):
            if state.deal_number != number:
                return _error(report, d, a, "deal_over", "the deal is already over")
            try:
                state.apply_action(ract.seat, ract.to_action())
            except IllegalAction as exc:
                return _error(report, d, a, exc.code, exc.message)
        if state.deal_number == number:
            if d != len(record.deals) - 1:
                return _error(
                    report, d, len(rdeal.actions), "deal_unfinished", "the deal stops before its end"
                )
            report["deals"].append(
                {"complete": False, "phase": state.deal.phase, "to_act": state.deal.to_act}
            )
            break
        result = state.results[-1]
        report["deals"].append(result.to_json())
        report["totals"] = list(result.totals)
        if state.finished:
            report["winner"] = _winner_json(state.winner)
    return report


def _winner_json(winner: int | tuple[int, ...] | None) -> int | list[int] | None:
    return list(winner) if isinstance(winner, tuple) else winner


def replay_text(text: str) -> dict[str, Any]:
    record, rules = parse_record(text)
    return replay(record, rules)


def build_record(state: GameState, players: list[str]) -> dict[str, Any]:
    """The record of a game played through the engine (finished deals and the one in progress)."""
    deals = [(layout, unroll(log)) for layout, log in state.history]
    if not state.finished:
        deals.append((state.layout, state.actions_this_deal()))
    out_deals = []
    for layout, actions in deals:
        entry: dict[str, Any] = {
            "dealer": layout.dealer,
            "hands": [[CARD_NAMES[c] for c in cards_of(h)] for h in layout.hands],
            "talon": [[CARD_NAMES[c] for c in p] for p in layout.piles]
            if layout.piles is not None
            else [CARD_NAMES[c] for c in layout.talon],
        }
        recorded = []
        for seat, action in actions:
            if isinstance(action, Blind):
                if action == BLIND_YES:
                    entry["blind"] = seat
                continue
            recorded.append({"seat": seat, **to_record(action)})
        entry["actions"] = recorded
        out_deals.append(entry)
    return {
        "format": FORMAT,
        "rules": {"preset": state.rules.preset, "options": _option_overrides(state.rules)},
        "players": list(players),
        "deals": out_deals,
    }


def _option_overrides(rules: RuleSet) -> dict[str, Any]:
    base = PRESETS.get(rules.preset)
    if base is None:
        return {}
    mine = rules.model_dump(mode="json")
    theirs = base.model_dump(mode="json")
    return {k: v for k, v in mine.items() if theirs.get(k) != v and k != "preset"}
