"""The terminal game, played to its end through its real input loop: `thousand play` as a subprocess
reading stdin, and the console app in-process with a typist that reads the screen and types what a
person would (bare cards like `qs`, the numbers of the choices, the reader's own rank letters)."""

from __future__ import annotations

import io
import random
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from rich.console import Console

from adapters.console.app import GameOptions, play
from adapters.console.screen import template_regex
from bot.i18n import translator
from bot.reader import TO_READER

THOUSAND = Path(sys.executable).with_name("thousand")
ROOT = Path(__file__).resolve().parents[2]
LOCALES = ROOT / "bot" / "locales"
SUIT_LETTER = {"♣": "C", "♠": "S", "♥": "H", "♦": "D"}
CARD_LABEL = re.compile(r"(9|10|[^\W\d_])([♣♠♥♦])")
CHOICE = re.compile(r"\[(\d+)\] (.+?)(?=\s{2,}\[|\s*$)")


def run_game(*args: str, lines: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(THOUSAND), "play", *args],
        input=lines,
        capture_output=True,
        text=True,
        timeout=timeout,
        # Wide, so that no panel line is wrapped (the checks below read whole lines).
        # The code of this tree (the installed command may point at another checkout).
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "250", "HOME": str(Path.home()), "PYTHONPATH": str(ROOT)},
        check=False,
    )


# --- reading the screen ---------------------------------------------------------------------------------


def panels(out: str) -> list[list[str]]:
    """Every boxed message on the screen, as its inner lines."""
    found: list[list[str]] = []
    current: list[str] | None = None
    for raw in out.splitlines():
        line = raw.lstrip("> ")
        if line.startswith("╭"):
            current = []
        elif line.startswith("╰") and current is not None:
            found.append(current)
            current = None
        elif current is not None and line.startswith("│"):
            current.append(line.strip("│").strip())
    return found


def hand_panels(out: str, lang: str = "en") -> list[list[str]]:
    heading = translator(lang)._("**Your hand** · deal {number} · {phase}").split("·")[0].strip("* ")
    return [p for p in panels(out) if p and p[0].startswith(heading)]


def choices(panel: list[str]) -> list[str]:
    return [label for line in panel for _, label in CHOICE.findall(line)]


def refusals(out: str) -> list[str]:
    """The terminal's and the service's refusals: a line of its own starting with a cross."""
    return re.findall(r"^✗ .*$", out, re.M)


def is_card(label: str) -> bool:
    return CARD_LABEL.fullmatch(label) is not None


def typed(label: str, rng: random.Random) -> str:
    """A card label (`D♠`, `10♥`) as a person types it: the rank letter and the suit's letter, any case."""
    m = CARD_LABEL.fullmatch(label)
    assert m is not None
    token = m.group(1) + SUIT_LETTER[m.group(2)]
    return token.lower() if rng.random() < 0.5 else token


Typist = Callable[[str, list[str]], str]


async def play_in_process(options: GameOptions, typist: Typist, *, limit: int = 3000) -> tuple[int, str, int]:
    """Play a game with `typist` choosing each line from the screen and the current choices; the exit
    status, the screen, and how many lines were typed."""
    screen = io.StringIO()
    console = Console(file=screen, width=250, highlight=False, color_system=None)
    count = 0

    async def read_line(prompt: str) -> str | None:
        nonlocal count
        count += 1
        if count > limit:
            return None
        out = screen.getvalue()
        hands = hand_panels(out, options.lang)
        line = typist(out, choices(hands[-1]) if hands else [])
        screen.write(f"{prompt}{line}\n")
        return line + "\n"

    status = await play(options, console=console, read_line=read_line)
    return status, screen.getvalue(), count


def card_typist(rng: random.Random) -> Typist:
    """Types a card choice as a bare card (`qs`, `10H`, `DS` in Polish), any other choice by its number:
    the lowest bid when bidding is possible (so the player also declares, gives and fixes contracts)."""

    def typist(out: str, options: list[str]) -> str:
        cards = [label for label in options if is_card(label)]
        if cards:
            return typed(rng.choice(cards), rng)
        if len(options) > 1 and options[1].isdigit():
            return "2"  # the lowest bid (choice 1 is pass)
        return "1"

    return typist


# --- whole games ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "finished"),
    [
        (("--seed", "5", "--level", "easy"), "Game over"),
        (("--seed", "9", "--level", "easy", "--preset", "russian", "--players", "4", "--lang", "pl"), "🏆"),
    ],
)
def test_a_whole_game_by_typing_numbers(args: tuple[str, ...], finished: str, tmp_path: Path) -> None:
    chart = tmp_path / "chart.png"
    result = run_game(*args, "--chart", str(chart), lines="1\n" * 4000)
    assert result.returncode == 0, result.stderr[-2000:]
    assert finished in result.stdout
    assert "🏆" in result.stdout
    assert chart.read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize(
    ("lang", "preset", "players"),
    [
        ("en", "polish", 3),
        ("pl", "polish", 3),
        ("et", "estonian", 3),
        ("ru", "russian", 4),
        ("tr", "polish", 2),
    ],
)
async def test_a_whole_game_typing_bare_cards_and_numbers(lang: str, preset: str, players: int) -> None:
    """Every card move typed as a bare card (in the reader's letters), every other choice by number: the
    game reaches its winner without a single refusal, so each of them was taken."""
    options = GameOptions(preset=preset, players=players, level="easy", lang=lang, seed=11)
    status, out, count = await play_in_process(options, card_typist(random.Random(3)))
    assert status == 0
    assert "🏆" in out
    assert refusals(out) == []
    typed_cards = re.findall(r"^> (\S+)$", out, re.M)
    bare = [t for t in typed_cards if not t.isdigit()]
    assert len(bare) > 50 and len(bare) + 10 < count  # cards and numbers both typed, many times
    t = translator(lang)
    # The player declared, fixed contracts and gave cards too (typed as cards).
    gave = t._("You gave {card} to {name}").split("{")[0]
    assert gave in out


async def test_typed_cards_that_are_not_a_choice_get_the_reason() -> None:
    """A card that is not in the hand, one that does not follow suit, a card while bidding, a number past
    the choices, a word that is nothing: each a clear line naming the terminal's commands, nothing moves."""
    seen: list[str] = []
    plan: list[str] = []

    def typist(out: str, options: list[str]) -> str:
        seen.append(out)
        if plan:
            return plan.pop(0)
        return "1"

    options = GameOptions(level="easy", seed=1)
    plan.extend(["AS", "KH", "99", "/frobnicate", "frobnicate", "quit"])
    status, out, _ = await play_in_process(options, typist)
    assert status == 0
    errors = refusals(out)
    assert len(errors) == 5, errors
    # seed 1: the player bids first; a card now is not a move of this phase
    assert "That move is not possible now." in errors[0]
    assert "You may bid" in out
    assert "Not a choice, a card or a command. Type help for the list." in errors[3]
    assert errors[3] == errors[4]
    assert "/help" not in "\n".join(errors)
    assert "You ended the game." in out


async def test_a_card_not_in_the_hand_and_a_card_that_does_not_follow_suit() -> None:
    rng = random.Random(5)
    asked: dict[str, str] = {}

    def typist(out: str, options: list[str]) -> str:
        hands = hand_panels(out)
        cards = [label for label in options if is_card(label)]
        if cards and "absent" not in asked:
            hand = set(CARD_LABEL.findall(hands[-1][1]))
            absent = next(
                r + s for r in ("9", "J", "Q", "K", "10", "A") for s in "♣♠♥♦" if (r, s) not in hand
            )
            asked["absent"] = absent
            return typed(absent, rng)
        if cards and "follow" not in asked:
            hand_cards = ["".join(c) for c in CARD_LABEL.findall(hands[-1][1])]
            refused = [c for c in hand_cards if c not in cards]
            if refused:
                asked["follow"] = refused[0]
                return typed(refused[0], rng)
        if "follow" in asked and "done" not in asked:
            asked["done"] = "1"
            return "quit"
        return typed(cards[0], rng) if cards else "1"

    status, out, _ = await play_in_process(GameOptions(level="easy", seed=2), typist)
    assert status == 0
    assert "✗ You do not have that card." in out
    assert "✗ You must follow suit." in out or "✗ You must play a trump." in out
    assert "You may play:" in out


def test_ctrl_d_ends_the_game_with_status_0() -> None:
    result = run_game("--seed", "1", "--level", "easy", lines="1\n")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Input ended: the game stops." in result.stdout
    assert "You ended the game." in result.stdout
    assert "Traceback" not in result.stderr
    assert run_game("--level", "easy", lines="").returncode == 0


def test_cards_commands_and_quit() -> None:
    lines = "help\nrules\nscore\nhand\nbid 9999\nQS\nnonsense\n1\nquit\n"
    result = run_game("--seed", "1", "--level", "easy", lines=lines)
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    assert "bid 120 · pass" in out  # the command list (the terminal's words)
    assert "/kick" not in out and "/join" not in out  # not the chat's
    assert "Rules: polish" in out
    assert "Score sheet" in out
    assert "You ended the game." in out
    assert "Unknown command" not in out
    assert "Not a choice, a card or a command. Type help for the list." in out


def test_digits_of_other_scripts_are_not_a_choice() -> None:
    """'²' and '٣' are digits to str.isdigit() but not numbers to int(): the terminal says why, goes on."""
    result = run_game("--seed", "1", "--level", "easy", lines="²\n٣\nquit\n")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert result.stdout.count("Not a choice, a card or a command. Type help for the list.") == 2
    assert "You ended the game." in result.stdout


def test_bad_options_are_refused() -> None:
    result = run_game("--preset", "russian", "--players", "2", lines="")
    assert result.returncode == 2 and "russian" in result.stderr
    result = run_game("--lang", "xx", lines="")
    assert result.returncode == 2


# --- what the screen shows ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def english_game() -> str:
    """A whole game whose player bids when they can (so they declare, see talons, give cards)."""
    result = run_game("--seed", "4", "--level", "easy", lines="2\n1\n" * 3000)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "🏆" in result.stdout
    return result.stdout


def test_the_hand_is_in_the_order_of_the_choices(english_game: str) -> None:
    compared = 0
    for panel in hand_panels(english_game):
        hand = ["".join(c) for c in CARD_LABEL.findall(panel[1])]
        cards = [label for label in choices(panel) if is_card(label)]
        if len(cards) < 2:
            continue
        assert cards == [c for c in hand if c in cards], panel
        compared += 1
    assert compared > 50


def test_the_lobby_is_printed_once(english_game: str) -> None:
    lobbies = [p for p in panels(english_game) if p[0].startswith("A table of 1000")]
    assert len(lobbies) == 1
    (lobby,) = lobbies
    assert lobby[2:] == ["1. You", "2. Ada 🤖 (easy)", "3. Boris 🤖 (easy)"]
    assert "The game has started" not in english_game
    assert "Created by" not in english_game  # a chat's line, not the terminal's


def test_the_talon_is_printed_once_per_deal(english_game: str) -> None:
    # Each deal's result names its public talon once more (who took it), so it is counted apart.
    panels = english_game.split("╭")
    deals: list[list[str]] = [[]]
    in_results = 0
    for panel in panels:
        talons = re.findall(r"(?:Talon|The talon|You took the talon|Talon you took): ([^│\n]+?)\s*│", panel)
        if re.search(r"Deal \d+: result", panel):
            assert len(talons) <= 1 and all(t in deals[-1] for t in talons), (talons, deals[-1])
            in_results += len(talons)
            deals.append([])
        else:
            deals[-1].extend(talons)
    for talons in deals:
        assert len(talons) <= 1, talons
    assert sum(map(len, deals)) >= 5 and in_results >= 1


def test_the_players_are_in_the_same_order_on_every_line(english_game: str) -> None:
    seats = ["You", "Ada", "Boris"]
    checked = 0
    for panel in panels(english_game):
        for line in panel:
            if line.startswith(("Points this deal:", "Scores:")):
                names = re.findall(r"(You|Ada|Boris)", line)
                assert names == [s for s in seats if s in names], line
                checked += 1
    assert checked > 100


def test_sentences_about_the_player_speak_to_them(english_game: str) -> None:
    assert re.search(r"^│ You (made|failed) \d+ \(\d+ points\)\.", english_game, re.M)
    for third_person in ("You bombs", "You plays", "You concedes", "You stayed"):
        assert third_person not in english_game


# --- every language -------------------------------------------------------------------------------------


def english_fragments(lang: str) -> list[str]:
    """The English text of every message the language translates differently, cut at placeholders and
    markup into pieces with a word of three letters or more."""
    with (LOCALES / "en.po").open("rb") as fh:
        english = read_po(fh, locale="en")
    with (LOCALES / f"{lang}.po").open("rb") as fh:
        target = read_po(fh, locale=lang)
    pieces: set[str] = set()
    for message in english:
        if not message.id or not isinstance(message.string, str):
            continue
        other = target.get(message.id)
        if other is None or other.string == message.string:
            continue
        for piece in re.split(r"\{\w*\}|\*\*|\n|\\", message.string):
            piece = piece.strip(" ·:.,()[]|/")
            if re.search(r"[A-Za-z]{3,}", piece):
                pieces.add(piece)
    return sorted(pieces)


@pytest.mark.parametrize(
    ("lang", "args"),
    [
        ("pl", ("--preset", "polish", "--seed", "21")),
        ("ru", ("--preset", "russian", "--players", "4", "--seed", "22")),
        ("et", ("--preset", "estonian", "--seed", "2")),
        ("uk", ("--preset", "russian", "--seed", "24")),
        ("tr", ("--preset", "polish", "--players", "2", "--seed", "25")),
    ],
)
def test_a_whole_game_in_another_language_has_no_english(lang: str, args: tuple[str, ...]) -> None:
    # Raises the bid when it can, so that the player declares (the subject of results, gives cards, sees
    # talons); a "2" with one choice is refused (a terminal message, translated too), then "1" plays.
    result = run_game("--lang", lang, "--level", "easy", *args, lines="2\n2\n2\n1\n" * 2000)
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    assert "🏆" in out
    assert not re.search(r"\bYou\b", out)
    you = translator(lang)._("You")
    assert re.search(rf"(?<!\w){re.escape(you)}(?!\w)", out)
    found = [p for p in english_fragments(lang) if re.search(rf"(?<![\w/]){re.escape(p)}(?!\w)", out)]
    assert not found, found
    # Sentences about the player are said to them, with the verb agreeing ("Играете вы", not "Играет Вы").
    t = translator(lang)
    lines = [line.removeprefix("> ").strip("│ ") for line in out.splitlines()]
    for third, second in TO_READER.items():
        about, to_you = template_regex(t._(third), {"name": re.escape(you)}), template_regex(t._(second))
        # (Polish "Gra: Ty, ..." is both: the sentence has no verb to agree.)
        assert not any(about.fullmatch(line) and not to_you.fullmatch(line) for line in lines), third
    results = [
        template_regex(t._(second))
        for second in ("You made {value} ({points} points).", "You failed {value} ({points} points).")
    ]
    assert any(p.fullmatch(line) for p in results for line in lines)


def test_the_hand_does_not_repeat_the_table(english_game: str) -> None:
    """The table printed just above the hand already says the bids, the declarer, trump and the trick."""
    repeated = ("Bids:", "Declarer:", "Trump:", "Trick:", "Last trick:", "Talon:")
    hands = hand_panels(english_game)
    assert len(hands) > 100
    for panel in hands:
        assert not [line for line in panel if line.startswith(repeated)], panel
    tables = [p for p in panels(english_game) if p[0].startswith("Deal ") and "result" not in p[0]]
    assert sum(line.startswith(("Declarer:", "Last trick:")) for p in tables for line in p) > 100
