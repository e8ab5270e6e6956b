"""`/review` in the chats: only finished deals, only the asker's own choices, privately, and no card
another player held (read with the suite's card detector, `fakes/cardspy.py`)."""

from __future__ import annotations

import random

from botkit import Harness, errors, make_user

from bot.i18n import translator
from bot.model import Private
from bot.render.review import render_choice
from core.actions import Give, Play
from core.cards import CardMask, cards_of
from core.game import GameState, unroll
from fakes.cardspy import readings

ALA, BARTEK, CELINA = make_user(0), make_user(1), make_user(2, "pl")


def own_cards(state: GameState, deal: int, seat: int) -> CardMask:
    """Every card `seat` held in a finished deal: as dealt, the talon when it declared, cards given to it."""
    layout, log = state.history[deal - 1]
    mine = layout.hands[seat]
    actions = unroll(log)
    declarer = next((s for s, a in actions if type(a) is Give), None)
    if declarer == seat:
        for c in layout.talon or (layout.piles[0] + layout.piles[1] if layout.piles else ()):
            mine |= 1 << c
    for _, a in actions:
        if type(a) is Give:
            for target, c in a.cards:
                if target == seat:
                    mine |= 1 << c
    return mine


def foreign_cards(text: str, lang: str, mine: CardMask) -> list[str]:
    """Cards the text names that were not the reader's own (a token whose every reading is another's)."""
    return [r.token for r in readings(text, [lang]) if all(not mine >> c & 1 for c in r.cards)]


async def test_review_only_after_a_deal_only_own_choices_privately(harness: Harness) -> None:
    h = harness
    await h.open_table([ALA, BARTEK], computers=1)
    out = await h.text(ALA, "/review")
    assert [m.kind for m in out] == ["error"], "no finished deal yet: the deal in progress is not reviewed"
    assert "once it is over" in out[0].text
    rng = random.Random(5)
    users = {0: ALA, 1: BARTEK}
    while not (await h.state()).history:
        assert await h.play_turn(rng, users, sensible=True)
    state = await h.state()
    assert len(state.history) == 1
    # The deal in progress (deal 2) is refused, also when asked by its number.
    out = await h.text(ALA, "/review 2")
    assert [m.kind for m in out] == ["error"] and "once it is over" in out[0].text
    # Someone who does not sit at the table gets no review.
    out = await h.text(CELINA, "/review")
    assert [m.kind for m in out] == ["error"] and "Internal" not in out[0].text

    for user, seat in ((ALA, 0), (BARTEK, 1)):
        out = await h.text(user, "/review")
        assert not errors(out)
        reviews = [m for m in out if m.kind == "review"]
        assert len(reviews) == 1
        message = reviews[0]
        assert isinstance(message.audience, Private) and message.audience.user == user
        assert "deal 1" in message.text
        mine = own_cards(state, 1, seat)
        assert foreign_cards(message.text, message.language, mine) == []
    # Nothing of the table changed: the review is not a move.
    after = await h.state()
    assert len(after.history) == 1 and after.actions_this_deal() == state.actions_this_deal()


def test_the_check_sees_another_players_card() -> None:
    """The privacy check above is not blind: a text naming a card of another hand is caught."""
    t = translator("pl")
    mine = (1 << 5) | (1 << 11)
    text = f"Rozdanie 1, lewa 2: {render_choice(t, Play(5))} ... {render_choice(t, Play(17))}"
    assert foreign_cards(text, "pl", mine) == [t.card(17)]
    assert cards_of(mine) == (5, 11)
