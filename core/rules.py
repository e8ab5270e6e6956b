"""The rule set: every option of RULES.md, validated, and the three presets.

A game stores the rule set it started with, so a chat changing its settings never changes a game in
progress.  Options are flat and named as in ``docs/RULES.md`` so that a record's ``rules.options`` and a
chat's ``/set OPTION VALUE`` use the same words.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .cards import Suit


class Opening(StrEnum):
    AUTOMATIC = "automatic"
    """The opener is credited with the opening bid without acting (polish)."""
    COMPULSORY = "compulsory"
    """The opener must bid at least the opening bid; passing on the first turn is refused."""


class TalonVisibility(StrEnum):
    PUBLIC = "public"
    SECRET = "secret"
    PUBLIC_UNLESS_FORCED = "public_unless_forced"


class Declaration(StrEnum):
    AUTOMATIC = "automatic"
    CHOICE = "choice"


class Rounding(StrEnum):
    NEAREST_5 = "nearest_5"
    EXACT = "exact"


class SitOutScoring(StrEnum):
    ACES_AND_MARRIAGE = "aces_and_marriage"
    TALON_POINTS = "talon_points"


class Barrel(StrEnum):
    OFF = "off"
    DECLARER_ONLY = "declarer_only"
    """At or above the threshold a player scores only as declarer (polish 800, estonian 880)."""
    CAPPED = "capped"
    """Russian: totals between the threshold and 999 are set to it; three deals there cost 120."""


MarriageValues = dict[Literal["C", "S", "H", "D"], int]


def _default_marriage_values() -> MarriageValues:
    return {"H": 100, "D": 80, "C": 60, "S": 40}


class RuleError(ValueError):
    """A rule set or a player count that cannot be played; the message says which option and why."""


class RuleSet(BaseModel):
    """Every option of the game.  Frozen: a rule set is a value."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_enum_values=False)

    preset: str = Field("custom", description="Name of the preset this rule set started from.")

    # Seats and the deal
    player_counts: tuple[int, ...] = Field((2, 3, 4), description="Player counts this rule set allows.")
    two_musiki: bool = Field(
        False, description="2 players: 10 cards each and two talon piles of 2 (else one talon of 2)."
    )
    dealer_sits_out: bool = Field(True, description="4 players: the dealer sits out and three play.")

    # Bidding
    opening: Opening = Opening.AUTOMATIC
    opening_bid: int = Field(100, ge=0, description="The opener's automatic or minimum bid.")
    bid_step: int = Field(10, gt=0, description="Every bid is a multiple of this and at least this higher.")
    marriage_needed_above: int | None = Field(
        120, description="A bid above this needs a marriage in the bidder's hand (None: never)."
    )
    cap_by_marriages: bool = Field(
        False, description="The most a player may bid is 120 plus the marriages in their hand."
    )
    max_bid: int | None = Field(None, description="Absolute cap with 3 or 4 players (None: no cap).")
    max_bid_two_players: int | None = Field(None, description="Absolute cap with 2 players.")
    golden_rounds: int = Field(0, ge=0, description="The first N deals have a minimum bid of 120.")

    # Talon and exchange
    talon_visibility: TalonVisibility = TalonVisibility.PUBLIC
    contract_step: bool = Field(True, description="After the exchange the declarer fixes the contract.")
    bomb: bool = Field(False, description="3 players: the declarer of a forced opening may bomb once a game.")
    bomb_points: int = Field(60, description="What each other player scores for a bomb.")
    concede: bool = Field(False, description="The declarer may concede after taking the talon.")
    concede_points: int = Field(60, description="What each opponent scores for a concession.")
    blind: bool = Field(False, description="The opener may announce a blind game before seeing the hand.")
    blind_max_bid: int = Field(120, description="A blind bidder's bids may not exceed this.")
    crawl: bool = Field(False, description="A declarer without an ace may crawl on the first trick.")
    sell_talon: bool = Field(False, description="The declarer may offer the talon for sale.")

    # Play
    must_beat: bool = Field(False, description="A player must head the trick when able.")
    declaration: Declaration = Declaration.AUTOMATIC
    marriage_values: MarriageValues = Field(default_factory=_default_marriage_values)
    marriage_min_cards: int = Field(
        0, ge=0, description="Cards a player must hold (the led one included) to declare."
    )
    ace_marriage: bool = Field(False, description="Four aces held by a player on lead: worth 200, no trump.")
    ace_marriage_value: int = 200
    four_nines_bonus: int = Field(0, ge=0, description="Bonus once per deal for holding all four nines.")
    redeal_four_nines: bool = Field(
        False, description="Redeal when a player holds four nines after exchange."
    )

    # Scoring
    rounding: Rounding = Rounding.NEAREST_5
    sit_out_scoring: SitOutScoring = SitOutScoring.ACES_AND_MARRIAGE
    barrel: Barrel = Barrel.OFF
    barrel_at: int = 880
    barrel_deals: int = Field(3, ge=1, description="Capped barrel: deals allowed on it before the penalty.")
    barrel_penalty: int = 120
    bolts: bool = Field(False, description="A defender scoring 0 gets a bolt; every third costs the penalty.")
    bolt_penalty: int = 120
    samosval: bool = Field(False, description="A total of exactly 555 or -555 becomes 0.")
    target: int = Field(1000, gt=0, description="The game ends after a deal in which a total reaches this.")

    @model_validator(mode="after")
    def _invariants(self) -> RuleSet:
        problems: list[str] = []
        if not self.player_counts or any(n not in (2, 3, 4) for n in self.player_counts):
            problems.append("player_counts must be a non-empty choice of 2, 3 and 4")
        if set(self.marriage_values) != {"C", "S", "H", "D"}:
            problems.append("marriage_values needs a value for each of C, S, H, D")
        if self.opening_bid % self.bid_step:
            problems.append(f"opening_bid {self.opening_bid} is not a multiple of bid_step {self.bid_step}")
        for name in ("max_bid", "max_bid_two_players"):
            cap = getattr(self, name)
            if cap is not None and cap < self.opening_bid:
                problems.append(f"{name} {cap} is below opening_bid {self.opening_bid}")
        if self.two_musiki and 2 not in self.player_counts:
            problems.append("two_musiki is a 2-player layout but 2 players are not allowed")
        if self.bomb and 3 not in self.player_counts:
            problems.append("bomb is played with 3 players only, and 3 players are not allowed")
        if self.blind and self.opening != Opening.COMPULSORY:
            problems.append("blind needs a compulsory opening (the blind player opens)")
        if self.blind and self.blind_max_bid < self.opening_bid:
            problems.append("blind_max_bid is below the opening bid")
        if self.barrel != Barrel.OFF and self.barrel_at >= self.target:
            problems.append("barrel_at must be below the target")
        if self.redeal_four_nines and self.four_nines_bonus:
            problems.append("redeal_four_nines and four_nines_bonus exclude each other")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    # Derived values used on hot paths.

    def marriage_value(self, suit: int) -> int:
        return self.marriage_values[Suit(suit).letter]  # type: ignore[index]

    def cap_for(self, players: int) -> int | None:
        return self.max_bid_two_players if players == 2 else self.max_bid

    def check_players(self, players: int) -> None:
        """Refuse a player count this rule set does not allow, naming the rule."""
        if players not in self.player_counts:
            allowed = ", ".join(map(str, self.player_counts))
            raise RuleError(f"{self.preset} is played by {allowed} players, not {players}")

    def with_options(self, options: dict[str, Any]) -> RuleSet:
        """A copy with options changed, validated; unknown names raise :class:`RuleError`."""
        unknown = sorted(set(options) - set(type(self).model_fields) - {"preset"})
        if unknown:
            raise RuleError(f"unknown option: {', '.join(unknown)}")
        data = self.model_dump()
        data.update(options)
        try:
            return RuleSet.model_validate(data)
        except ValidationError as exc:
            raise RuleError(_describe(exc)) from None


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"])
        parts.append(f"{where}: {err['msg']}" if where else err["msg"])
    return "; ".join(parts)


POLISH = RuleSet(
    preset="polish",
    player_counts=(2, 3, 4),
    two_musiki=True,
    dealer_sits_out=True,
    opening=Opening.AUTOMATIC,
    opening_bid=100,
    bid_step=10,
    marriage_needed_above=120,
    cap_by_marriages=True,
    max_bid=300,
    max_bid_two_players=360,
    talon_visibility=TalonVisibility.PUBLIC_UNLESS_FORCED,
    contract_step=True,
    bomb=True,
    bomb_points=60,
    declaration=Declaration.AUTOMATIC,
    marriage_values={"H": 100, "D": 80, "C": 60, "S": 40},
    rounding=Rounding.NEAREST_5,
    sit_out_scoring=SitOutScoring.ACES_AND_MARRIAGE,
    barrel=Barrel.DECLARER_ONLY,
    barrel_at=800,
)

ESTONIAN = RuleSet(
    preset="estonian",
    player_counts=(2, 3, 4),
    two_musiki=False,
    dealer_sits_out=False,
    opening=Opening.COMPULSORY,
    opening_bid=40,
    bid_step=5,
    marriage_needed_above=120,
    talon_visibility=TalonVisibility.SECRET,
    contract_step=False,
    blind=True,
    blind_max_bid=120,
    crawl=True,
    declaration=Declaration.CHOICE,
    marriage_values={"C": 100, "S": 80, "H": 60, "D": 40},
    marriage_min_cards=3,
    four_nines_bonus=100,
    rounding=Rounding.EXACT,
    barrel=Barrel.DECLARER_ONLY,
    barrel_at=880,
)

RUSSIAN = RuleSet(
    preset="russian",
    player_counts=(3, 4),
    dealer_sits_out=True,
    opening=Opening.COMPULSORY,
    opening_bid=100,
    bid_step=5,
    marriage_needed_above=120,
    talon_visibility=TalonVisibility.PUBLIC,
    contract_step=True,
    concede=True,
    concede_points=60,
    declaration=Declaration.CHOICE,
    marriage_values={"H": 100, "D": 80, "C": 60, "S": 40},
    rounding=Rounding.NEAREST_5,
    sit_out_scoring=SitOutScoring.TALON_POINTS,
    barrel=Barrel.CAPPED,
    barrel_at=880,
    barrel_deals=3,
    barrel_penalty=120,
    bolts=True,
    bolt_penalty=120,
)

PRESETS: dict[str, RuleSet] = {"polish": POLISH, "estonian": ESTONIAN, "russian": RUSSIAN}


def preset(name: str, options: dict[str, Any] | None = None) -> RuleSet:
    """A preset by name with optional overrides; unknown names raise :class:`RuleError`."""
    try:
        base = PRESETS[name]
    except KeyError:
        raise RuleError(f"unknown preset: {name!r} (known: {', '.join(PRESETS)})") from None
    return base.with_options(options) if options else base
