"""Whole games through Discord: every move a slash command or a button press of a (fake) person.

Each game checks, at every step, that no card secret at that moment is in any channel message or in
any version of one (edits included), that the player whose turn it is was pinged (once, and the older
ping removed); and at the end, that every interaction was answered within 3 seconds without error, and
that the channel sends kept to the budget.
"""

from __future__ import annotations

import random

import pytest
from dckit import (
    E2E,
    SHORT_GAME,
    Driver,
    World,
    assert_channel_budget,
    assert_interactions_answered,
    assert_one_table_message_per_deal,
    running_bot,
    settings,
    speed_up,
)

from bot.storage import RedisStore
from fakes.discord import FakeDiscord


@pytest.mark.parametrize(
    ("preset", "people", "computers", "seed", "charts"),
    [
        pytest.param("polish", 3, 0, 11, False, id="polish-3-people"),
        pytest.param("russian", 2, 2, 12, True, id="russian-2-people-2-computers-chart"),
        pytest.param("estonian", 2, 0, 13, False, id="estonian-2-people"),
        pytest.param("polish", 3, 1, 14, False, id="polish-3-people-1-computer"),
    ],
)
async def test_whole_game(
    fake: FakeDiscord,
    world: World,
    redis_url: str,
    preset: str,
    people: int,
    computers: int,
    seed: int,
    charts: bool,
) -> None:
    speed_up(fake)
    store = RedisStore.from_url(redis_url, prefix=f"e2e{seed}")
    async with running_bot(fake, store, settings(charts=charts), config=E2E, seed=seed) as bot:
        driver = Driver(fake, world.channel, world.users[:people], [bot], random.Random(seed))
        await driver.open(preset, computers=computers, options=SHORT_GAME)
        doc = await driver.play()
        _, _, state = await driver.peek()
        assert state is not None
        deals = len(state.results)
    assert doc.status == "finished" and doc.ended == "won"
    assert driver.stats["steps"] >= 10
    finals = [
        m for m in fake.messages(world.channel) if m.embeds and "Score sheet" in m.embeds[0]["description"]
    ]
    assert len(finals) == 1 and "Winner" in finals[0].embeds[0]["description"]
    if charts:  # the score chart image, attached to the final score sheet
        [chart] = finals[0].attachments
        assert chart.filename == "chart.png" and chart.data.startswith(b"\x89PNG")
        assert finals[0].embeds[-1]["image"]["url"] == "attachment://chart.png"
    results = [
        m for m in fake.messages(world.channel) if m.embeds and ": result**" in m.embeds[0]["description"]
    ]
    assert len(results) == deals  # each deal's result is a message of its own
    assert not [m for m in fake.messages(world.channel) if m.content.startswith("<@")], (
        "a ping outlived the game"
    )
    if people > 1:
        assert driver.stats["pings_seen"] > 0
        assert driver.stats["hand_refreshed"] > 0, "no open hand was refreshed for its next turn"
    assert driver.stats["slash"] > 0 and driver.stats["autocomplete"] > 0
    assert assert_interactions_answered(fake) > driver.stats["steps"]
    assert assert_channel_budget(fake, world.channel, E2E.channel_limit, E2E.channel_window) > 0
    assert fake.rate_limited_count == 0
    redeals = sum(r.ending == "redeal" for r in state.results)
    assert deals - redeals <= assert_one_table_message_per_deal(fake, world.channel) <= deals
    print(dict(driver.stats))
