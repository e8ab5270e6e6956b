"""Nothing of another language in a game: computers named as the table's language writes names, the phase
named as its prompt says it, one card of a give typed with the help's verb, and the first trick's rule on
marriages said to the player it concerns (the engine applied it silently)."""

from __future__ import annotations

import io
import random
from collections.abc import Iterator

import pytest
from rich.console import Console

from adapters.console.app import ConsoleGame, GameOptions, play
from adapters.console.verbs import word
from adapters.web.viewjson import view_json
from bot.commands import from_payload, parse_text
from bot.handlers import Handlers
from bot.handlers.lobby import AI_NAMES, COMPUTER_NAMES
from bot.i18n import LANGUAGES, translator
from bot.model import ChatRef, UserRef
from bot.render import FIRST_TRICK_NOTE, PHASE_NAMES, first_trick_note
from bot.service import Service
from bot.settings import Settings
from bot.snapshot import GameCache
from bot.storage import MemoryStore
from bot.table import TableDoc
from core.actions import Bid, Give, Pass, Play
from core.cards import MARRIAGE_MASKS
from core.deal import Phase
from core.game import GameState, new_game
from core.rules import preset
from core.view import seat_view


async def _run(lang: str, lines: Iterator[str], **options: object) -> str:
    out = io.StringIO()
    console = Console(file=out, width=200, highlight=False, color_system=None)

    async def read_line(prompt: str) -> str | None:
        out.write(prompt)
        return next(lines, None)

    status = await play(
        GameOptions(lang=lang, level="easy", **options),  # type: ignore[arg-type]
        console=console,
        read_line=read_line,
    )
    assert status == 0
    return out.getvalue()


@pytest.mark.parametrize("lang", LANGUAGES)
async def test_computers_are_named_as_the_tables_language_writes_names(lang: str) -> None:
    text = await _run(lang, iter(["quit"]), seed=3)
    names = COMPUTER_NAMES.get(lang, AI_NAMES)
    assert f"{names[0]} 🤖" in text and f"{names[1]} 🤖" in text
    if lang in ("ru", "uk"):
        assert not any(f"{n} 🤖" in text for n in AI_NAMES), text[:600]


# The stem the phase name and the prompt of giving cards share in each language ("отдача карт" /
# "отдайте карту"; the phase was "снос карт", laying cards away, while the prompt said to give one).
GIVE_STEM = {"en": "giv", "pl": "da", "ru": "отда", "uk": "відда", "et": "an", "tr": "ver"}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_phase_of_giving_cards_is_named_as_its_prompt_says(lang: str) -> None:
    t = translator(lang)
    phase = t._(PHASE_NAMES[Phase.EXCHANGE]).lower()
    prompt = t._("give a card to {name}.").lower()
    stem = GIVE_STEM[lang]
    assert any(w.startswith(stem) for w in phase.split()), phase
    assert any(w.startswith(stem) for w in prompt.split()), prompt
    assert word(lang, "give").startswith(stem[:2])  # the verb the terminal's help names


@pytest.mark.parametrize("lang", ["ru", "pl", "en"])
async def test_give_one_card_at_a_time_with_the_helps_verb(lang: str) -> None:
    """`отдай 9♣` while a give is under way adds that card, as typing the card alone does (it was refused:
    the service's `give` wants all the cards at once)."""
    t = translator(lang)
    give = word(lang, "give")
    out = io.StringIO()
    console = Console(file=out, width=200, highlight=False, color_system=None)
    store = MemoryStore()
    settings = Settings(_env_file=None, redis_url=None, default_language=lang, default_preset="russian",
                        turn_seconds=0, default_ai_level="easy", table_updates="every_action", charts=False,
                        ai_workers=0, command_limit=0)  # fmt: skip
    service = Service(store, settings, handlers=Handlers, rng=random.Random(5))
    typed: list[str] = []
    picked: list[int] = []
    exchanges = 0

    async def read_line(prompt: str) -> str | None:
        nonlocal exchanges
        out.write(prompt)
        stored = await store.load("console:local")
        assert stored is not None
        doc = TableDoc.model_validate_json(stored.document)
        if doc.game is None or doc.status != "game" or len(typed) >= 6 or len(typed) > 300:
            return "quit"
        state = GameCache().state(doc.serial, doc.game.spec, doc.game.actions)
        me = doc.seat_of("console:you")
        if state.to_act != me:
            return "1"
        if state.phase == Phase.EXCHANGE:
            # One card a line: the first card not picked yet (the picks are the hand's, until all are given).
            card = next(c for c in range(24) if state.deal.hands[me] >> c & 1 and c not in picked)
            picked.append(card)
            typed.append(f"{give} {t.card(card)}")
            return typed[-1]
        if picked:  # the give went through: the deal moved on from the exchange
            exchanges += 1
            picked.clear()
        bids = [a.value for a in state.legal_actions(me) if isinstance(a, Bid)]
        return f"bid {bids[-1]}" if bids and state.phase == Phase.BIDDING else "1"

    game = ConsoleGame(service, console, read_line, GameOptions(lang=lang, level="easy", preset="russian"))
    try:
        assert await game.loop() == 0
    finally:
        await service.close()
    text = out.getvalue()
    assert exchanges >= 1, (typed, text[-1500:])
    assert t._("Give one card to each other player.") not in text, text[-1500:]
    assert t._("Not a choice, a card or a command. Type help for the list.") not in text


def _first_lead(seed: int) -> tuple[GameState, int] | None:
    """A polish game at its first trick's lead, with the leader holding a marriage."""
    state, _ = new_game(preset("polish"), 3, seed)
    for _ in range(60):
        seat = state.to_act
        if seat is None or seat < 0:
            return None
        if state.phase == Phase.PLAY:
            hand = state.deal.hands[seat]
            return (state, seat) if any(hand & m == m for m in MARRIAGE_MASKS) else None
        legal = state.legal_actions(seat)
        passes = [a for a in legal if isinstance(a, Pass)]
        gives = [a for a in legal if isinstance(a, Give)]
        action = passes[0] if passes else gives[0] if gives else legal[0]
        state.apply_action(seat, action)
    return None


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_first_tricks_marriage_rule_is_said_to_the_leader(lang: str) -> None:
    t = translator(lang)
    found = next(x for seed in range(200) if (x := _first_lead(seed)) is not None)
    state, seat = found
    note = t._(FIRST_TRICK_NOTE)
    assert first_trick_note(t, seat_view(state, seat)) == note
    for other in range(3):
        if other != seat:
            assert first_trick_note(t, seat_view(state, other)) is None  # the pair is the leader's secret
    # Led with a card of the marriage: no marriage declared, and the leader is told why.
    hand = state.deal.hands[seat]
    pair = next(m for m in MARRIAGE_MASKS if hand & m == m)
    king = pair.bit_length() - 1
    assert not any(isinstance(a, Play) and a.declare for a in state.legal_actions(seat))
    after = state.clone()
    after.apply_action(seat, Play(king))
    assert after.deal.declared == 0
    assert first_trick_note(t, seat_view(after, seat)) == note
    # Next deal's later tricks: nothing is said (the rule is about the first trick only).
    later = after.clone()
    while later.phase == Phase.PLAY and later.deal.tricks == 0:
        s = later.to_act
        later.apply_action(s, later.legal_actions(s)[0])
    if later.phase == Phase.PLAY:
        assert first_trick_note(t, seat_view(later, later.to_act)) is None


@pytest.mark.parametrize("lang", ["pl", "en"])
async def test_the_first_tricks_rule_reaches_the_chats_hand_and_the_web_page(lang: str) -> None:
    """Said where the leader reads it: the hand (the chats, the terminal) and the web page's prompt."""
    t = translator(lang)
    note = t._(FIRST_TRICK_NOTE)
    chat = ChatRef("console", "local", "Terminal", private=True)
    user = UserRef("console", "you", "Ala", lang, True)
    for seed in range(40):
        store = MemoryStore()
        settings = Settings(_env_file=None, redis_url=None, default_language=lang, default_preset="polish",
                            turn_seconds=0, default_ai_level="easy", table_updates="every_action",
                            charts=False, ai_workers=0, command_limit=0)  # fmt: skip
        service = Service(store, settings, handlers=Handlers, rng=random.Random(seed))
        try:
            for text in ("/new polish", "/add_ai easy", "/add_ai easy", "/start"):
                messages = await service.handle(parse_text(text, chat, user))  # type: ignore[arg-type]
            for _ in range(30):
                stored = await store.load(chat.key)
                assert stored is not None
                doc = TableDoc.model_validate_json(stored.document)
                assert doc.game is not None
                state = GameCache().state(doc.serial, doc.game.spec, doc.game.actions)
                me = doc.seat_of(user.key)
                if state.phase == Phase.PLAY or state.to_act != me:
                    break
                legal = state.legal_actions(me)
                passes = [a for a in legal if isinstance(a, Pass)]
                command = "/pass" if passes else None
                if command is None:
                    hand = [m for m in messages if m.kind == "hand"]
                    payload = hand[-1].buttons[0][0].payload
                    messages = await service.handle(from_payload(payload, chat, user))
                else:
                    messages = await service.handle(parse_text(command, chat, user))  # type: ignore[arg-type]
            leads = state.phase == Phase.PLAY and state.to_act == me and not state.deal.trick
            if not (leads and not state.deal.tricks):
                continue
            held = state.deal.hands[me]
            hands = [m.text for m in messages if m.kind == "hand"]
            view = view_json(doc, stored.version, state, me, lang)
            if not any(held & m == m for m in MARRIAGE_MASKS):
                assert not any(note in h for h in hands) and note not in view["prompt"]
                continue
            assert hands and note in hands[-1], hands[-1:]
            assert note in view["prompt"], view["prompt"]
            return
        finally:
            await service.close()
    pytest.fail("no seed led the first trick holding a marriage")
