"""Over many random games: no group message ever holds a card that is private at that moment, and no
private message holds a card its player may not know.

The test keeps its own copy of the game, fed with the actions the service stored, and takes the engine's
events as the truth about who saw which card: a card is public once an event for everyone showed it in
the current deal (a played card, a talon shown to all...), and known to a seat once an event for that
seat or for everyone showed it. Messages are read by the suite's one detector of cards (`fakes/cardspy.py`:
labels in every language and order, codes, button labels and payloads).
"""

from __future__ import annotations

import random

import pytest
from botkit import Clock, Harness, action_text, make_user, quiet_settings

from bot.handlers import Handlers
from bot.i18n import LANGUAGES
from bot.model import ChatRef, Group, Message, Private, Sender, UserRef
from bot.service import Service
from bot.snapshot import GameSpec, decode_action
from bot.storage import MemoryStore
from core import events as ev
from core.game import GameState, new_game
from fakes import cardspy

CASES = [
    ("polish", 2),
    ("polish", 3),
    ("polish", 4),
    ("estonian", 2),
    ("estonian", 3),
    ("estonian", 4),
    ("russian", 3),
    ("russian", 4),
]


class Witness:
    """The test's own copy of the game and of who saw which card in which deal."""

    def __init__(self, spec: dict[str, object]) -> None:
        s = GameSpec.from_json(spec)  # type: ignore[arg-type]
        self.state: GameState
        self.state, events = new_game(s.rules, s.players, s.seed, first_dealer=s.first_dealer)
        self.players = s.players
        self.deal = 0
        self.public: dict[int, set[int]] = {}
        self.seen: dict[int, list[set[int]]] = {}
        self.done = 0
        self.touched: set[int] = set()
        self._note(events)

    def _note(self, events: list[ev.Event]) -> None:
        for e in events:
            if e.kind == ev.DEAL_STARTED:
                self.deal = e.value
            self.touched.add(self.deal)
            public = self.public.setdefault(self.deal, set())
            seen = self.seen.setdefault(self.deal, [set() for _ in range(self.players)])
            if e.kind == ev.DEAL_STARTED:
                continue  # its "cards" are the seats in play, not cards
            if e.audience is None:
                public.update(e.cards)
                for s in seen:
                    s.update(e.cards)
            else:
                seen[e.audience].update(e.cards)

    def catch_up(self, actions: list[str]) -> None:
        self.touched = {self.deal}
        for text in actions[self.done :]:
            seat, action = decode_action(text)
            events = self.state.apply_action(seat, action)
            self._note(events)
        self.done = len(actions)

    def allowed_public(self) -> set[int]:
        return set().union(*(self.public.get(d, set()) for d in self.touched))

    def allowed_for(self, seat: int) -> set[int]:
        return set().union(*(self.seen.get(d, [set()] * self.players)[seat] for d in self.touched))


def cards_in(message: Message, allowed: set[int]) -> list[str]:
    """Cards outside `allowed` that a message shows, in any form (`cardspy`): text, button labels and
    button payloads."""
    private = set(range(24)) - allowed
    return cardspy.leaks(cardspy.message_parts(message.text, message.buttons), private, [message.language])


def check(messages: list[Message], witness: Witness, seats: dict[str, int]) -> None:
    public = witness.allowed_public()
    for m in messages:
        if isinstance(m.audience, Group):
            assert m.kind != "hand"
            leaked = cards_in(m, public)
            assert not leaked, (m.kind, leaked)
        else:
            user = m.audience.user if isinstance(m.audience, Private | Sender) else None
            assert user is not None
            seat = seats.get(user.key)
            allowed = public if seat is None else witness.allowed_for(seat)
            leaked = cards_in(m, allowed)
            assert not leaked, (user.key, m.kind, leaked)


NOISE = [
    "/play QS", "/bid 100", "/pass", "/give 9C JD", "/contract 200", "/hand", "/table", "/score", "/export"
]  # fmt: skip


@pytest.mark.parametrize(("preset", "players"), CASES)
@pytest.mark.parametrize("seed", [1, 2])
async def test_no_private_card_reaches_the_wrong_eyes(preset: str, players: int, seed: int) -> None:
    rng = random.Random(f"{preset}{players}{seed}")
    clock = Clock()
    store = MemoryStore(clock=clock)
    settings = quiet_settings(
        table_updates=rng.choice(["compact", "every_action"]), default_language=rng.choice(LANGUAGES)
    )
    service = Service(store, settings, handlers=Handlers, clock=clock, rng=random.Random(seed))
    h = Harness(service, store, clock, chat=ChatRef("t", f"-{seed}{players}", "Group"))
    humans_n = rng.randint(1, players)
    humans = [make_user(i, rng.choice(LANGUAGES)) for i in range(humans_n)]
    outs: list[Message] = []
    outs += await h.text(humans[0], f"/new {preset}")
    for user in humans[1:]:
        outs += await h.text(user, "/join")
    for _ in range(players - humans_n):
        outs += await h.text(humans[0], "/add_ai easy")
    outs += await h.text(humans[0], "/start")
    _, doc = await h.doc()
    assert doc is not None and doc.game is not None and doc.status == "game"
    seats = {s.user: i for i, s in enumerate(doc.seats) if s.user is not None}
    users: dict[int, UserRef] = {i: u for u in humans for k, i in seats.items() if k == u.key}
    witness = Witness(doc.game.spec)
    witness.catch_up(doc.game.actions)
    check(outs, witness, seats)
    for _ in range(250):
        _, doc = await h.doc()
        assert doc is not None and doc.game is not None
        if doc.status == "finished":
            break
        state = witness.state
        seat = state.to_act
        assert seat is not None and seat in users, "a human must be to act"
        user = users[seat]
        roll = rng.random()
        if roll < 0.1:
            noisy = rng.choice(humans)
            out = await h.text(noisy, rng.choice(NOISE))
        elif roll < 0.55 and h.hands.get(user.key) and h.hands[user.key].buttons:
            buttons = [b.payload for row in h.hands[user.key].buttons for b in row]
            out = await h.press(user, rng.choice(buttons))
        else:
            legal = list(state.legal_actions(seat))
            action = legal[rng.randrange(len(legal))]
            out = await h.text(user, action_text(action, state, seat))
        _, doc = await h.doc()
        assert doc is not None and doc.game is not None
        witness.catch_up(doc.game.actions)
        check(out, witness, seats)
    await service.close()
