"""The Discord driver's privacy check is not vacuous: a card of a hand put into any field of a channel
message (content, embed title, description, field, footer, button label, select option, custom id), as
a label or as a code, is reported."""

from __future__ import annotations

import random
from typing import Any

import pytest
from dckit import Driver, PrivacyLeak, World, running_bot

from bot.commands import encode_payload
from bot.i18n import translator
from bot.storage import MemoryStore
from core.cards import CARD_NAMES, cards_of
from fakes.discord import FakeDiscord


def _button(**fields: Any) -> list[dict[str, Any]]:
    return [{"type": 1, "components": [{"type": 2, "style": 1, "custom_id": "x", "label": "Go", **fields}]}]


FORMS = {
    "content as codes": lambda label, code, tid: {"content": f"[9C JD {code} …]"},
    "embed title": lambda label, code, tid: {"embeds": [{"title": f"Table {label}"}]},
    "embed description": lambda label, code, tid: {"embeds": [{"description": f"cards: {code.lower()}"}]},
    "embed field": lambda label, code, tid: {"embeds": [{"fields": [{"name": "Hand", "value": label}]}]},
    "embed footer": lambda label, code, tid: {"embeds": [{"description": "x", "footer": {"text": label}}]},
    "button label": lambda label, code, tid: {"components": _button(label=f"My hand {label}")},
    "button custom id": lambda label, code, tid: {
        "components": _button(custom_id="t|" + encode_payload("play", (code,), 1, tid))
    },
    "select option": lambda label, code, tid: {
        "components": [
            {
                "type": 1,
                "components": [
                    {"type": 3, "custom_id": "pick", "options": [{"label": "Pick", "value": code}]}
                ],
            }
        ]
    },
}


@pytest.mark.parametrize("form", FORMS)
async def test_the_driver_catches_a_card_in_any_field(fake: FakeDiscord, world: World, form: str) -> None:
    async with running_bot(fake, MemoryStore()) as bot:
        driver = Driver(fake, world.channel, world.users[:3], [bot], random.Random(1))
        await driver.open("polish")
        _, doc, state = await driver.peek()
        assert doc is not None and state is not None and not state.finished
        lang = doc.settings.language
        driver.check_privacy(state, lang)  # the real messages show no secret card
        card = next(iter(cards_of(state.deal.hands[state.deal.active[0]])))
        body = FORMS[form](translator(lang).card(card), CARD_NAMES[card], doc.id)
        fake.create_message(world.channel, world.users[0], body, [])
        with pytest.raises(PrivacyLeak, match=CARD_NAMES[card]):
            driver.check_privacy(state, lang)
