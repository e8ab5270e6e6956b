"""A game as stored in a table document, and back: rules, seed, seats and the list of actions.

The engine deals every deal from the game's seed, so the rules, the seed, the first dealer and the
actions in order are the whole game: a state is rebuilt by replaying them, which can never drift from
the engine (a stored snapshot of internal fields could). Replaying a long game costs a few
milliseconds, so each service keeps the states it built in a small cache keyed by the game's serial and
only replays the actions it has not seen; with one process per table that is the last action or two.

Actions are stored compactly as `<seat><code><argument>` strings, e.g. `2b110` (seat 2 bids 110),
`0P17` (seat 0 plays card 17), `1g0=3,2=9` (seat 1 gives card 3 to seat 0 and card 9 to seat 2).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.actions import (
    BLIND_NO,
    BLIND_YES,
    BOMB,
    CONCEDE,
    CRAWL,
    PASS,
    PLAYS,
    PLAYS_DECLARING,
    SELL,
    Action,
    Bid,
    Blind,
    Bomb,
    Concede,
    Contract,
    Crawl,
    Discard,
    Give,
    Pass,
    Play,
    SellTalon,
    TakeTalon,
    bid_action,
    contract_action,
)
from core.game import GameState, new_game
from core.rules import RuleSet

__all__ = ["GameCache", "GameSpec", "decode_action", "encode_action"]


class SnapshotError(ValueError):
    """A stored action string that is not one this module writes."""


def encode_action(seat: int, action: Action) -> str:
    """The compact form of one action by one seat."""
    match action:
        case Play(card, declare):
            return f"{seat}{'D' if declare else 'P'}{card}"
        case Bid(value):
            return f"{seat}b{value}"
        case Pass():
            return f"{seat}p"
        case Give(cards):
            return f"{seat}g" + ",".join(f"{s}={c}" for s, c in cards)
        case Contract(value):
            return f"{seat}c{value}"
        case TakeTalon(pile):
            return f"{seat}t{pile}"
        case Discard(cards):
            return f"{seat}d" + ",".join(str(c) for c in cards)
        case Blind(announce):
            return f"{seat}B{int(announce)}"
        case SellTalon():
            return f"{seat}s"
        case Bomb():
            return f"{seat}o"
        case Concede():
            return f"{seat}n"
        case Crawl():
            return f"{seat}w"
    raise SnapshotError(f"cannot encode {action!r}")


def decode_action(text: str) -> tuple[int, Action]:
    """The seat and action of a compact string; raises `SnapshotError` for anything else."""
    try:
        seat = int(text[0])
        if seat > 3:
            raise SnapshotError(f"no seat {seat} in {text!r}")
        code = text[1]
        arg = text[2:]
        action: Action
        if code == "P":
            action = PLAYS[int(arg)]
        elif code == "D":
            action = PLAYS_DECLARING[int(arg)]
        elif code == "b":
            action = bid_action(int(arg))
        elif code == "p":
            action = PASS
        elif code == "g":
            pairs = (part.split("=") for part in arg.split(","))
            action = Give(tuple((int(s), int(c)) for s, c in pairs))
        elif code == "c":
            action = contract_action(int(arg))
        elif code == "t":
            action = TakeTalon(int(arg))
        elif code == "d":
            action = Discard(tuple(int(c) for c in arg.split(",")))
        elif code == "B":
            action = BLIND_YES if arg == "1" else BLIND_NO
        elif code == "s":
            action = SELL
        elif code == "o":
            action = BOMB
        elif code == "n":
            action = CONCEDE
        elif code == "w":
            action = CRAWL
        else:
            raise SnapshotError(f"unknown action code in {text!r}")
    except (IndexError, ValueError) as exc:
        raise SnapshotError(f"bad action {text!r}") from exc
    return seat, action


@dataclass(frozen=True, slots=True)
class GameSpec:
    """What starts a game: with the actions, all of it."""

    rules: RuleSet
    players: int
    seed: int
    first_dealer: int

    def to_json(self) -> dict[str, Any]:
        return {
            "rules": self.rules.model_dump(mode="json"),
            "players": self.players,
            "seed": self.seed,
            "first_dealer": self.first_dealer,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameSpec:
        return cls(
            RuleSet.model_validate(data["rules"]),
            int(data["players"]),
            int(data["seed"]),
            int(data["first_dealer"]),
        )

    def start(self) -> GameState:
        return new_game(self.rules, self.players, self.seed, first_dealer=self.first_dealer)[0]


class GameCache:
    """States already built, by game serial: a bounded LRU of immutable `GameState`s.

    Entries are never changed: a longer replay clones the cached state before applying more actions. An
    entry is used only for the very actions it was built from: a store that lost its last writes (Redis
    after a crash, a lagging replica) gives the table again with other actions after the same beginning.
    """

    def __init__(self, size: int = 256) -> None:
        self._size = size
        self._entries: OrderedDict[str, tuple[tuple[str, ...], GameState, RuleSet]] = OrderedDict()

    def put(self, serial: str, actions: Sequence[str], state: GameState) -> None:
        """Remember `state` as the game after `actions`."""
        self._entries[serial] = (tuple(actions), state, state.rules)
        self._entries.move_to_end(serial)
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)

    def state(self, serial: str, spec: dict[str, Any], actions: Sequence[str]) -> GameState:
        """The state after `actions`, replaying only what the cache does not hold yet."""
        entry = self._entries.get(serial)
        n = len(actions)
        if entry is not None and len(entry[0]) <= n and tuple(actions[: len(entry[0])]) == entry[0]:
            done, cached = len(entry[0]), entry[1]
            if done == n:
                self._entries.move_to_end(serial)
                return cached
            state = cached.clone()
        else:
            done = 0
            state = GameSpec.from_json(spec).start()
        for text in actions[done:]:
            seat, action = decode_action(text)
            state.apply_action(seat, action)
        self.put(serial, actions, state)
        return state
