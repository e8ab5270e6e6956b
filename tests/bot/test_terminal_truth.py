"""Whole terminal games in every language, each deal's result line read against what the engine scored.

"No English" is not enough: a Russian line that said a failed contract was made ("Вы сыграли 105 не") had
no English in it. Here the person at the terminal both makes and fails contracts (and bombs, in the Polish
preset, and concedes, in the Russian one), and every result printed must tell the deal's `DealResult`: who
declared (the person in the second person, "You failed 105" / "Вы не сыграли 105"; a computer by name),
made or failed, the value and the declarer's points, and never the opposite sentence. The sentences are
those of the catalogs for the engine's facts, so a made/failed mix-up anywhere between the engine and the
screen (the renderer, a parse-back on the terminal) fails here.
"""

from __future__ import annotations

import io
import random
import re
from dataclasses import dataclass, field

import pytest
from rich.console import Console

from adapters.console.app import ConsoleGame, GameOptions
from adapters.console.screen import template_regex
from bot.handlers import Handlers
from bot.i18n import LANGUAGES, Translator, translator
from bot.model import ChatRef
from bot.reader import TO_READER
from bot.render import seat_name
from bot.service import Service
from bot.settings import Settings
from bot.snapshot import GameCache
from bot.storage import MemoryStore
from bot.table import TableDoc
from bot.views import seat_labels
from core.actions import Bid, Bomb, Concede, Pass, Play
from core.ai import choose_action
from core.deal import Phase
from core.scoring import DealResult
from core.view import seat_view

MADE = "{name} made {value} ({points} points)."
FAILED = "{name} failed {value} ({points} points)."
BOMB = "{name} bombs: the deal is not played."
CONCEDE = "{name} concedes {value}."


def sentence(t: Translator, template: str, name: str | None, r: DealResult) -> str:
    """The sentence the reader must see for the engine's result (`name` None: the reader declared)."""
    values = {"value": r.contract, "points": r.points[r.declarer] if r.declarer >= 0 else 0}
    if name is None:
        return t._(TO_READER[template]).format(**values)
    return t._(template).format(name=name, **values)


def plain(text: str) -> str:
    """A panel's text as one line of words (no frame, no bold markers, single spaces)."""
    return re.sub(r"\s+", " ", re.sub(r"[│╭╮╰╯─]", " ", text)).strip()


@dataclass
class Player:
    """The person at the terminal: bids high on odd deals and low on even ones (so contracts are both made
    and failed), plays its cards as a computer would, bombs and concedes once when it may."""

    store: MemoryStore
    table_id: str
    out: io.StringIO
    t: Translator
    cache: GameCache = field(default_factory=GameCache)
    bombed: bool = False
    conceded: bool = False
    games: int = 0
    checked: dict[tuple[str, int], str] = field(default_factory=dict)
    """(game serial, deal number) -> the printed result panel (plain)."""
    results: dict[tuple[str, int], DealResult] = field(default_factory=dict)
    mark: int = 0
    """How much of the output was read."""
    seat: int = 0
    names: list[str] = field(default_factory=list)
    """The seats' names as the messages write them ("Ada 🤖")."""
    done: bool = False

    async def doc(self) -> TableDoc | None:
        stored = await self.store.load(self.table_id)
        return None if stored is None else TableDoc.model_validate_json(stored.document)

    def goals(self, preset: str) -> bool:
        own = [r for r in self.results.values() if r.declarer == self.seat]
        want = {"made", "failed"} | ({"bomb"} if preset == "polish" else {"concede"})
        seen = {"made" if r.made else "failed" for r in own if r.ending == "played"}
        seen |= {r.ending for r in own if r.ending in ("bomb", "concede")}
        return want <= seen

    async def read_line(self, preset: str, result_title: str) -> str | None:
        text = self.out.getvalue()
        chunk, self.mark = text[self.mark :], len(text)
        doc = await self.doc()
        if doc is None or doc.game is None:
            return "1"
        state = self.cache.state(doc.serial, doc.game.spec, doc.game.actions)
        # The result panels printed since the last line typed, by deal number.
        panels = {}
        for panel in chunk.split("╭"):
            m = re.search(result_title, plain(panel))
            if m:
                panels[int(m.group(1)) - 1] = plain(panel)
        for r in state.results:
            key = (doc.serial, r.number)
            if key not in self.results:
                self.results[key] = r
                assert r.number in panels, (r.number, chunk[-2000:])
                self.checked[key] = panels[r.number]
        seat = doc.seat_of("console:you")
        assert seat is not None
        self.seat = seat
        self.names = [seat_name(translator("en"), label) for label in seat_labels(doc)]
        if state.finished or doc.status != "game":
            self.games += 1
            return "again" if not self.goals(preset) and self.games < 6 else ""
        if self.goals(preset):
            self.done = True
            return "quit"
        if state.to_act != seat:
            return "1"
        legal = state.legal_actions(seat)
        kinds = {type(a) for a in legal}
        if Bomb in kinds and not self.bombed:
            self.bombed = True
            return "bomb"
        if Concede in kinds and not self.conceded and state.deal_number >= 1:
            self.conceded = True
            return "concede"
        bids = sorted(a.value for a in legal if isinstance(a, Bid))
        if state.phase == Phase.BIDDING and bids:
            if state.deal_number % 2 == 1:
                return f"bid {bids[-1]}"
            return "pass" if Pass in kinds else f"bid {bids[0]}"
        if state.phase == Phase.PLAY:
            action = choose_action("medium", seat_view(state, seat), legal, seed=len(doc.game.actions))
            assert isinstance(action, Play)
            # The card as the reader's deck writes it (a Turkish "K" is the queen), as a person types it.
            return self.t.card(action.card) + (" !" if action.declare else "")
        return "1"


async def _play(lang: str, preset: str, seed: int) -> tuple[Player, Translator]:
    out = io.StringIO()
    console = Console(file=out, width=240, highlight=False, color_system=None)
    options = GameOptions(lang=lang, level="easy", seed=seed, preset=preset)
    settings = Settings(
        _env_file=None,
        redis_url=None,
        default_language=lang,
        default_preset=preset,
        turn_seconds=0,
        default_ai_level="easy",
        table_updates="every_action",
        charts=False,
        ai_workers=0,
        command_limit=0,
    )
    store = MemoryStore()
    service = Service(store, settings, handlers=Handlers, rng=random.Random(seed))
    t = translator(lang)
    title = re.escape(t._("**Deal {number}: result**").replace("**", "")).replace(r"\{number\}", r"(\d+)")
    game = ConsoleGame(service, console, _no_input, options)
    player = Player(store, ChatRef("console", "local", "Terminal", private=True).key, out, t)

    async def read_line(prompt: str) -> str | None:
        out.write(prompt)
        return await player.read_line(preset, title)

    game.read_line = read_line
    try:
        status = await game.loop()
    finally:
        await service.close()
    assert status == 0
    return player, t


async def _no_input(prompt: str) -> str | None:
    return None


@pytest.mark.parametrize("preset", ["polish", "russian"])
@pytest.mark.parametrize("lang", LANGUAGES)
async def test_every_result_line_tells_the_deal_as_the_engine_scored_it(lang: str, preset: str) -> None:
    player, t = await _play(lang, preset, seed=11)
    assert player.done, "the person did not make, fail, bomb or concede within the games played"
    for key, r in player.results.items():
        panel = player.checked[key]
        if r.ending == "redeal":
            continue
        doc_name = None if r.declarer == player.seat else player.names[r.declarer]
        made_or_failed = (MADE, FAILED) if r.made else (FAILED, MADE)
        template, opposite = {
            "bomb": (BOMB, None),
            "concede": (CONCEDE, None),
            "played": made_or_failed,
        }[r.ending]
        expected = sentence(t, template, doc_name, r)
        assert expected in panel, (lang, preset, r.ending, r.made, expected, panel)
        if opposite is not None:
            assert sentence(t, opposite, doc_name, r) not in panel, (expected, panel)
        if r.declarer != player.seat:  # told of a computer by name, never as "you"
            assert sentence(t, template, None, r) not in panel, panel
    # No sentence anywhere speaks of the person in the third person under their name "Вы"/"You" ("Раздача
    # 3 · сдаёт: Вы", "Вы: 105 не сыграно"): each is said to them (Polish "Gra: Ty, ..." is both forms).
    you = t._("You")
    lines = [re.sub(r"^[│ >]+|[│ ]+$", "", line) for line in player.out.getvalue().splitlines()]
    for third, second in TO_READER.items():
        about = template_regex(t._(third).replace("**", ""), {"name": re.escape(you)})
        to_you = template_regex(t._(second).replace("**", ""))
        assert not [ln for ln in lines if about.fullmatch(ln) and not to_you.fullmatch(ln)], third
