"""Autocomplete of `/thousand bid` and `/thousand contract`: every legal value can be found by typing, in
random deals, and Discord's limit of 25 choices is kept."""

from __future__ import annotations

import random

from dckit import Driver, World, payload_of, running_bot, settings

from adapters.discord.suggest import MAX_CHOICES, Suggest
from bot import vocabulary
from bot.commands import SECRET_MOVES, parse_text
from bot.handlers import Handlers
from bot.model import ChatRef, Command, UserRef
from bot.service import Service
from bot.snapshot import GameCache
from bot.storage import MemoryStore
from bot.table import TableDoc
from core.actions import Action, Bid, Contract
from core.deal import Phase
from core.game import GameState
from fakes.discord import FakeDiscord

CHAT = ChatRef("dc", "42", "#cards")
PEOPLE = [UserRef("dc", str(i), name) for i, name in enumerate(("Ala", "Bob", "Cleo"))]


async def _typed(service: Service, user: UserRef, text: str) -> None:
    command = parse_text(text, CHAT, user)
    assert command is not None
    out = await service.handle(command)
    assert not [m for m in out if m.kind == "error"], [m.text for m in out]


async def test_every_legal_bid_and_contract_can_be_typed() -> None:
    store = MemoryStore()
    service = Service(store, settings(turn_seconds=0), handlers=Handlers, rng=random.Random(5))
    suggest = Suggest(service)
    cache = GameCache()
    rng = random.Random(2)
    seen = {Bid: 0, Contract: 0}
    try:
        await _typed(service, PEOPLE[0], "/new russian")
        for user in PEOPLE[1:]:
            await _typed(service, user, "/join")
        await _typed(service, PEOPLE[0], "/start")
        for _ in range(600):
            stored = await store.load(CHAT.key)
            assert stored is not None
            doc = TableDoc.model_validate_json(stored.document)
            if doc.status != "game" or doc.game is None:
                break
            state = cache.state(doc.serial, doc.game.spec, doc.game.actions)
            seat = state.to_act
            assert seat is not None
            user = PEOPLE[seat]
            legal = list(state.legal_actions(seat))
            for kind, ask in ((Bid, suggest.bids), (Contract, suggest.contracts)):
                values = [a.value for a in legal if type(a) is kind]
                offered = await ask(CHAT.key, user.key, "")
                assert len(offered) <= MAX_CHOICES and set(offered) <= set(values)
                if not values:
                    continue
                seen[kind] += 1
                assert offered[0] == values[0] and offered[-1] == values[-1]
                for v in values:
                    # The first digit, or all of them, narrows the list to one that holds the value.
                    narrowed = await ask(CHAT.key, user.key, str(v)[:1])
                    assert v in narrowed and len(narrowed) <= MAX_CHOICES, (v, narrowed)
                    assert v in await ask(CHAT.key, user.key, str(v))
                # Someone else asking gets nothing: choices are the typist's own moves.
                other = PEOPLE[(seat + 1) % 3]
                assert await ask(CHAT.key, other.key, "") == []
            if state.deal.phase == Phase.PLAY and all(seen.values()):
                break
            action = legal[rng.randrange(len(legal))]
            if state.deal.phase in (Phase.BIDDING, Phase.CONTRACT) and isinstance(action, Bid | Contract):
                # Bid or fix the highest value now and then, so that contracts have a range too.
                values = [a.value for a in legal if type(a) is type(action)]
                action = type(action)(values[-1] if rng.random() < 0.2 else values[0])
            out = await service.handle(_move_command(action, state, seat, user))
            assert not [m for m in out if m.kind == "error"], [m.text for m in out]  # a refused move stalls
        assert all(seen.values()), seen
    finally:
        await service.close()


def _move_command(action: Action, state: GameState, seat: int, user: UserRef) -> Command:
    """The typed command of a move (`bot.vocabulary.typed`); a give or a lay-down from the player's
    private chat, as the channel refuses secret moves."""
    mover = vocabulary.Mover.of_state(state, seat)
    name, _ = vocabulary.words(action, mover)
    chat = ChatRef("dc", f"dm{user.user_id}", user.name, True) if name in SECRET_MOVES else CHAT
    command = parse_text(vocabulary.typed(action, mover), chat, user)
    assert command is not None
    return command


async def test_bid_pages_on_the_ephemeral_hand(fake: FakeDiscord, world: World) -> None:
    """Pages of bids turn on the player's ephemeral hand (the interaction updates it), save nothing, and
    the top bid found there is a move."""
    async with running_bot(fake, MemoryStore(), settings(), seed=3) as bot:
        for attempt in range(40):
            driver = Driver(fake, world.channel, world.users[:3], [bot], random.Random(attempt))
            await driver.open("russian")
            version, _, state = await driver.peek()
            assert state is not None and state.to_act is not None
            bids = [a.value for a in state.legal_actions(state.to_act) if isinstance(a, Bid)]
            if len(bids) <= 12:
                await driver.settle(await fake.slash(world.users[0], world.channel, "thousand", "end"))
                continue
            user = world.users[:3][state.to_act]
            hand = await driver.hand_for(user, version)
            moves = [(c, p) for c in hand.custom_ids() if (p := payload_of(c)) is not None]
            assert str(bids[-1]) not in [p[1][0] for _, p in moves if p[0] == "bid" and p[1]]
            cid = await driver.turn_pages(user, hand, moves, "bid", bids[-1])
            assert cid is not None and driver.stats["pages"] >= 1
            assert (await driver.peek())[0] == version, "turning pages saves nothing"
            it = await fake.press(user, hand, cid)
            await driver.settle(it)
            _, _, state = await driver.peek()
            assert state is not None and state.deal.bid == bids[-1]
            return
    raise AssertionError("no deal with more bids than a page")
