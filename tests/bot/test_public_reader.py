"""A public table's copies of a group message are drawn for each reader's seat (`bot.reader`): the
declarer reads "Ty…/Вы не сыграли 105" about their own contract, the others read the declarer's name, each
in their own language, as the engine scored the deal."""

from __future__ import annotations

import random

import pytest
from botkit import Clock, Harness, action_text, errors, quiet_settings

from bot.commands import parse_text
from bot.handlers import Handlers
from bot.i18n import translator
from bot.model import ChatRef, Message, Private, UserRef
from bot.public.tables import PublicMatch, open_public_table
from bot.reader import TO_READER
from bot.service import Service
from bot.storage import MemoryStore
from core.ai import choose_action
from core.view import seat_view

PLAYERS = (
    UserRef("tg", "90000101", "Ala", "pl"),
    UserRef("dc", "90000202", "Boris", "ru"),
    UserRef("web", "90000303", "Eve", "en"),
)
MADE = "{name} made {value} ({points} points)."
FAILED = "{name} failed {value} ({points} points)."


@pytest.fixture
async def pub(clock: Clock) -> Harness:
    store = MemoryStore(clock=clock)
    service = Service(store, quiet_settings(), handlers=Handlers, clock=clock)
    return Harness(service, store, clock)


async def test_each_reader_of_a_public_result_is_told_their_own_contract_as_you(pub: Harness) -> None:
    h = pub
    table_id, _ = await open_public_table(h.service, PublicMatch(PLAYERS, "polish", 3, "normal"))
    h.chat = ChatRef("pub", table_id.split(":", 1)[1])
    _, doc = await h.doc()
    assert doc is not None
    seats = {u.key: doc.seat_of(u.key) for u in PLAYERS}
    rng = random.Random(3)
    checked = 0
    for _ in range(400):
        state = await h.state()
        seat = state.to_act
        if seat is None or seat < 0 or checked >= 2:
            break
        user = next(u for u in PLAYERS if seats[u.key] == seat)
        action = choose_action(
            "easy", seat_view(state, seat), list(state.legal_actions(seat)), seed=rng.getrandbits(32)
        )
        dm = ChatRef(user.platform, user.user_id, user.name, True)
        replies: list[Message] = await h.command(parse_text(action_text(action, state, seat), dm, user))  # type: ignore[arg-type]
        assert not errors(replies), [m.text for m in replies]
        done = await h.state()
        for m in replies:
            if m.kind != "result":
                continue
            assert m.key is not None
            number = int(m.key.rsplit(":", 1)[1])  # result:<serial>:<deal>
            r = next(x for x in done.results if x.number == number)
            if r.ending != "played":
                continue
            assert isinstance(m.audience, Private)
            reader = seats[m.audience.user.key]
            t = translator(m.language)
            template = MADE if r.made else FAILED
            other = FAILED if r.made else MADE
            values = {"value": r.contract, "points": r.points[r.declarer]}
            if reader == r.declarer:
                expected = t._(TO_READER[template]).format(**values)
                wrong = t._(template).format(name=doc.seats[r.declarer].name, **values)
            else:
                expected = t._(template).format(name=doc.seats[r.declarer].name, **values)
                wrong = t._(TO_READER[template]).format(**values)
            assert expected in m.body, (m.language, expected, m.body)
            assert wrong not in m.body and t._(TO_READER[other]).format(**values) not in m.body, m.body
            checked += 1
    assert checked >= 2
