"""The one vocabulary of moves (`bot.vocabulary`): every legal action of fuzzed games, in every preset,
player count and language, reads back from what is typed for it and from its buttons, and the menus offer
exactly the legal actions (the chats' buttons through their pages and one-card-at-a-time picks).

Hypothesis prints the failing game's preset, players, language and seed; the game is replayed from them.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from bot.commands import SECRET_MOVES, encode_payload, parse_text
from bot.i18n import LANGUAGES, translator
from bot.model import ChatRef, UserRef
from bot.render import render_hand
from bot.views import SeatLabel
from bot.vocabulary import (
    MoveError,
    Mover,
    Page,
    Pick,
    card_word,
    menu,
    parse,
    parse_move,
    presses,
    typed,
    words,
)
from core.actions import Action, Discard, Give, Play, TakeTalon
from core.cards import CARD_NAMES
from core.game import GameState, new_game
from core.rules import PRESETS, RuleError, RuleSet, preset
from core.view import seat_view

GAMES = [(name, n) for name, rules in PRESETS.items() for n in rules.player_counts]
NAMES = ("Ala", "Boris", "Cem", "Dana")
GROUP = ChatRef("t", "-100", "Group", False)
DM = ChatRef("t", "1", "Ala", True)
USER = UserRef("t", "1", "Ala")
Press = tuple[str, tuple[str, ...]]
MAX_ACTIONS = 90
"""Actions of one fuzzed game (about two deals)."""


def _rules(name: str, sell: bool) -> RuleSet:
    if not sell:
        return PRESETS[name]
    try:
        return preset(name, {"sell_talon": True})
    except RuleError:
        return PRESETS[name]


def _states(rules: RuleSet, players: int, seed: int) -> list[GameState]:
    """The states of a game of random legal moves, each before its move."""
    rng = random.Random(seed)
    state, _ = new_game(rules, players, seed)
    out = []
    for _ in range(MAX_ACTIONS):
        if state.finished:
            break
        seat = state.to_act
        assert seat is not None
        legal = state.legal_actions(seat)
        out.append(state)
        state = state.clone()  # `out` keeps every state on the way
        state.apply_action(seat, legal[rng.randrange(len(legal))])
    return out


def _by_chat(text: str, mover: Mover, lang: str | None) -> Action:
    """`text` read as a chat reads a message of a reader of `lang` (None: the international notation
    only): `parse_text`, then the move's words."""
    command = parse_text(text, DM if text.split()[0].lstrip("/") in SECRET_MOVES else GROUP, USER)
    assert command is not None, text
    parsed = parse_move(command.name, command.args, mover, langs=(lang,) if lang else ())
    assert not isinstance(parsed, Page | Pick), text
    return parsed


def _chat_buttons(state: GameState, seat: int, lang: str) -> set[Action]:
    """Every action the seat's hand message reaches: pressing each button, turning every page of values
    and picking every card of a give or a lay-down one at a time (each press redraws the hand)."""
    t = translator(lang)
    sv = seat_view(state, seat)
    legal = state.legal_actions(seat)
    mover = Mover.of_state(state, seat)
    labels = [SeatLabel(NAMES[i], False, None, False) for i in range(state.players)]
    reached: set[Action] = set()
    todo: list[tuple[tuple[int, ...], int | None]] = [((), None)]
    seen = set(todo)
    while todo:
        selection, page = todo.pop()
        pressed: list[Press] = []

        def payload(
            name: str, args: tuple[str, ...], pressed: list[tuple[str, tuple[str, ...]]] = pressed
        ) -> str:
            # The payload a chat would carry must fit (Telegram's 64 bytes, the argument classes).
            encode_payload(name, args, 10**9, "t:-1001234567890", "abc")
            pressed.append((name, args))
            return f"{name}:{'.'.join(args)}"

        render_hand(t, sv, labels, legal, payload, selection=selection, page=page)
        for name, args in pressed:
            if name not in ("bid", "pass", "play", "give", "take", "discard", "sell", "blind", "contract"):
                assert name in ("bomb", "concede", "crawl"), name
            parsed = parse_move(name, args, mover, button=True)
            nxt: tuple[tuple[int, ...], int | None] | None = None
            if isinstance(parsed, Page):
                nxt = (selection, parsed.start)
            elif isinstance(parsed, Pick):
                nxt = (parsed.cards, page)
            else:
                reached.add(parsed)
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return reached


def _check_state(state: GameState, lang: str) -> None:
    seat = state.to_act
    assert seat is not None
    legal = list(state.legal_actions(seat))
    mover = Mover.of_state(state, seat)
    sv = seat_view(state, seat)
    assert Mover.of_view(sv) == mover  # the web and the chats see what the engine knows
    for action in legal:
        for who in (lang, None):
            text = typed(action, mover, who)
            assert parse(text, mover, (lang,) if who else ()) == action, (text, action)
            assert _by_chat(text, mover, who) == action, (text, action)
        name, args = words(action, mover)
        assert parse_move(name, args, mover, button=True) == action, (name, args, action)
        steps = presses(action, mover)
        for i, (step_name, step_args) in enumerate(steps):
            got = parse_move(step_name, step_args, mover, button=True)
            if i == len(steps) - 1:
                assert got == action, (steps, got)
            else:  # a card of a give or a lay-down picked: the hand is redrawn with the choice so far
                assert isinstance(got, Pick) and len(got.cards) == i + 1, (steps, got)
    # The menu (the web table, Discord's card choices): exactly the legal actions, each sending its own.
    choices = menu(translator(lang), mover, legal, NAMES)
    assert [c.action for c in choices] == legal
    for c in choices:
        assert parse_move(c.command, c.args, mover, button=True) == c.action
        assert c.label
    # The chats' buttons: through pages and picks, exactly the legal actions. (A give is picked card by
    # card from the whole hand, a lay-down too; both reach every legal give and lay-down.)
    assert _chat_buttons(state, seat, lang) == set(legal)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize(("name", "players"), GAMES)
@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sell=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_every_legal_action_reads_back_from_its_words(
    name: str, players: int, lang: str, sell: bool, seed: int
) -> None:
    """Every preset, player count and language: two fuzzed games each (about two deals)."""
    note(f"preset={name} players={players} lang={lang} sell_talon={sell} seed={seed}")
    for state in _states(_rules(name, sell), players, seed):
        _check_state(state, lang)


def test_the_fuzzed_games_meet_every_kind_of_action() -> None:
    """Games like those fuzzed above (seeds 0-5 of each preset and player count) offer every kind of
    action, a declared marriage among them: else the property would prove little."""
    kinds: set[str] = set()
    for name, players in GAMES:
        for seed in range(6):
            for state in _states(_rules(name, seed % 2 == 1), players, seed):
                for a in state.legal_actions(state.to_act):
                    kinds.add("declare" if isinstance(a, Play) and a.declare else a.kind)
    every = {"bid", "pass", "blind", "take_talon", "sell", "discard", "give", "contract", "bomb", "concede"}
    assert every | {"crawl", "play", "declare"} == kinds


@pytest.mark.parametrize("lang", LANGUAGES)
def test_cards_typed_in_every_language_read_back(lang: str) -> None:
    mover = Mover(0, (0, 1, 2), choose_declare=True)
    for card in range(24):
        for declare in (False, True):
            action = Play(card, declare)
            assert parse(typed(action, mover, lang), mover, (lang,)) == action
        assert parse_move("play", (card_word(card, lang),), mover, langs=(lang,)) == Play(card)


def test_words_of_the_chats() -> None:
    """The typed forms people and the help know (`/give` in seat order from the giver's left)."""
    nine_c, jack_d, king_c = CARD_NAMES.index("9C"), CARD_NAMES.index("JD"), CARD_NAMES.index("KC")
    mover = Mover(1, (0, 1, 2), piles=False)
    give = Give(((0, nine_c), (2, jack_d)))  # seat 2 is on the giver's left, then seat 0
    assert typed(give, mover) == "/give JD 9C"
    assert presses(give, mover) == [("give", ("JD",)), ("give", ("JD", "9C"))]
    assert typed(Discard((nine_c, jack_d)), mover) == "/discard 9C JD"
    assert typed(Play(king_c, True), mover) == "/play KC !"
    assert typed(TakeTalon(1), Mover(0, (0, 1), piles=True)) == "/take 2"
    assert typed(TakeTalon(0), mover) == "/take"
    with pytest.raises(MoveError) as refused:
        parse("/give 9C", mover)
    assert refused.value.code == "bad_give"


def test_one_talon_of_four_cards_is_no_pile() -> None:
    """Estonian with four players deals one talon of four cards: with the talon for sale its declarer is
    offered "Take the talon" (`/take`), not "Take pile 1", which only two musiki (polish, two) offer."""
    t = translator("en")
    cases = ((("estonian", 4), ["Take the talon"]), (("polish", 2), ["Take pile 1", "Take pile 2"]))
    for (name, players), wanted in cases:
        taking = [
            state
            for seed in range(30)
            for state in _states(_rules(name, True), players, seed)
            if any(a.kind == "take_talon" for a in state.legal_actions(state.to_act))
        ]
        assert taking, name
        state = taking[0]
        assert state.to_act is not None
        sv = seat_view(state, state.to_act)
        legal = state.legal_actions(state.to_act)
        choices = [c for c in menu(t, Mover.of_view(sv), legal) if c.kind == "take"]
        assert [c.label for c in choices] == wanted
        assert [typed(c.action, Mover.of_state(state, state.to_act)) for c in choices if c.action] == [
            "/take" if len(wanted) == 1 else f"/take {n}" for n in range(1, len(wanted) + 1)
        ]
