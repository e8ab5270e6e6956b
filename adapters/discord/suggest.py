"""Autocomplete: the bids and cards a user may play right now, and the settings a chat may change.

Autocomplete must answer within 3 seconds and changes nothing, so it reads the table (one load; the
game state comes from the service's snapshot cache) instead of running a command. Only the asking user's
own legal moves are offered, and only to them (autocomplete choices are private to the typist).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Final, get_args

from bot.i18n import LANGUAGE_NAMES, LANGUAGES, translator
from bot.service import Service
from bot.settings import AI_LEVELS
from bot.vocabulary import Mover, menu, values, words
from bot.vocabulary import card_word as card_value  # what a chosen card sends (kept for callers)
from core.actions import Play
from core.game import GameState
from core.rules import PRESETS, RuleSet

__all__ = ["Choice", "Suggest", "card_value", "setting_names", "setting_values"]

MAX_CHOICES: Final = 25

SETTING_KEYS: Final = ("preset", "language", "turn", "level", "autoplay")
"""The chat settings `set` knows besides the rule options (see `bot.handlers.management`)."""


@dataclass(frozen=True, slots=True)
class Choice:
    name: str
    value: str


def _matches(current: str, *texts: str) -> bool:
    wanted = current.strip().lower()
    return not wanted or any(t.lower().startswith(wanted) for t in texts)


class Suggest:
    def __init__(self, service: Service) -> None:
        self.service = service

    async def _seat(self, table_id: str, user_key: str) -> tuple[GameState, int, str] | None:
        _, doc = await self.service.load(table_id)
        if doc is None or doc.status != "game" or doc.game is None:
            return None
        seat = doc.seat_of(user_key)
        if seat is None:
            return None
        state = self.service.cache.state(doc.serial, doc.game.spec, doc.game.actions)
        if state.finished or state.to_act != seat:
            return None
        lang = doc.seats[seat].lang or doc.settings.language
        return state, seat, lang if lang in LANGUAGES else "en"

    async def cards(self, table_id: str, user_key: str, current: str) -> list[Choice]:
        """The cards the user may play now: `Q♠` (value `QS`), `Q♠ ★` (value `QS !`) to declare."""
        found = await self._seat(table_id, user_key)
        if found is None:
            return []
        state, seat, lang = found
        # The menu's card choices (`bot.vocabulary`), each sending the words a reader of `lang` types.
        mover = Mover.of_state(state, seat)
        plays = [a for a in state.legal_actions(seat) if type(a) is Play]
        out = []
        for action, choice in zip(plays, menu(translator(lang), mover, plays), strict=True):
            value = " ".join(words(action, mover, lang)[1])
            if _matches(current, choice.label, value):
                out.append(Choice(choice.label, value))
        return out[:MAX_CHOICES]

    async def bids(self, table_id: str, user_key: str, current: str) -> list[int]:
        """The bids the user may make now (in the auction or the talon sale)."""
        return await self._values(table_id, user_key, current, "bid")

    async def contracts(self, table_id: str, user_key: str, current: str) -> list[int]:
        """The contracts the user may fix now (after the exchange)."""
        return await self._values(table_id, user_key, current, "contract")

    async def _values(self, table_id: str, user_key: str, current: str, command: str) -> list[int]:
        """Every legal value that starts with what was typed: with nothing typed the lowest 24 and the
        highest (Discord shows 25 at most); typing the first digits narrows them to the rest (at most 20
        values start with the same digit when values go in steps of 5)."""
        found = await self._seat(table_id, user_key)
        if found is None:
            return []
        state, seat, _ = found
        legal = values(state.legal_actions(seat), command)
        chosen = [v for v in legal if _matches(str(current), str(v))]
        if len(chosen) > MAX_CHOICES:
            chosen = [*chosen[: MAX_CHOICES - 1], chosen[-1]]
        return chosen


def setting_names(current: str) -> list[Choice]:
    names = [*SETTING_KEYS, *sorted(k for k in RuleSet.model_fields if k != "preset")]
    return [Choice(n, n) for n in names if _matches(current, n)][:MAX_CHOICES]


def setting_values(option: str, current: str) -> list[Choice]:
    """Values offered for `option`; free text stays possible (autocomplete only suggests)."""
    option = option.strip().lower()
    values: list[Choice]
    if option == "preset":
        values = [Choice(p, p) for p in PRESETS]
    elif option in ("language", "lang"):
        values = [Choice(f"{LANGUAGE_NAMES[c]} ({c})", c) for c in LANGUAGES]
    elif option in ("level", "ai", "ai_level"):
        values = [Choice(level, level) for level in AI_LEVELS]
    elif option == "autoplay":
        values = [Choice("on", "on"), Choice("off", "off")]
    elif option in ("turn", "turn_seconds", "turn_time"):
        values = [Choice(f"{s} s", str(s)) for s in (0, 30, 60, 90, 120, 300)]
    elif option in RuleSet.model_fields:
        values = _field_values(option)
    else:
        values = []
    values.append(Choice("default", "default"))
    typed = current.strip()
    out = [c for c in values if _matches(typed, c.name, c.value)]
    if typed and all(c.value != typed for c in out):
        out.insert(0, Choice(typed[:100], typed[:100]))
    return out[:MAX_CHOICES]


def _field_values(name: str) -> list[Choice]:
    annotation = RuleSet.model_fields[name].annotation
    kinds = [annotation, *get_args(annotation)]
    if bool in kinds:
        return [Choice("on", "on"), Choice("off", "off")]
    for kind in kinds:
        if isinstance(kind, type) and issubclass(kind, Enum):
            return [Choice(str(m.value), str(m.value)) for m in kind]
    return []
