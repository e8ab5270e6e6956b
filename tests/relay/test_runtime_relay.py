"""The relay in the bot processes' runtime (`Runtime(..., relay="tg")`): a Telegram process and a Discord
process on one Redis; a command handled by one returns only its own platform's messages, and the other
platform's person gets theirs through the other process's delivery."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from kit import until

from bot.commands import parse_text
from bot.model import ChatRef, Message, Private, UserRef
from bot.ops.runtime import Runtime
from bot.public.tables import PublicMatch, open_public_table
from bot.settings import Settings

ALA = UserRef("tg", "90000101", "Ala", "pl")
BORIS = UserRef("dc", "90000202", "Boris", "ru")
EVE = UserRef("web", "90000303", "Eve", "en")


def settings(url: str) -> Settings:
    return Settings(  # type: ignore[call-arg]
        _env_file=None, redis_url=url, ai_workers=0, charts=False, turn_seconds=0, metrics_port=0
    )


@pytest.fixture
async def runtimes(redis_url: str) -> AsyncIterator[dict[str, tuple[Runtime, list[Message]]]]:
    out: dict[str, tuple[Runtime, list[Message]]] = {}
    for name, code in (("telegram", "tg"), ("discord", "dc")):
        runtime = Runtime(settings(redis_url), platform=name, relay=code)
        shown: list[Message] = []

        async def deliver(messages: list[Message], shown: list[Message] = shown) -> None:
            shown.extend(messages)

        await runtime.start(deliver, signals=False, timers=False)
        out[code] = (runtime, shown)
    yield out
    for runtime, _ in out.values():
        await runtime.stop()


async def test_each_process_sends_its_own_and_hands_over_the_rest(
    runtimes: dict[str, tuple[Runtime, list[Message]]],
) -> None:
    tg, tg_shown = runtimes["tg"]
    dc, dc_shown = runtimes["dc"]
    table_id, opened = await open_public_table(tg.service, PublicMatch((ALA, BORIS, EVE), "polish", 3))
    mine = await tg.route(opened)
    assert mine and {m.audience.user.key for m in mine} == {ALA.key}  # type: ignore[union-attr]
    # Boris's copy comes to the Discord process; Eve's page reads the table itself (nothing handed over).
    await until(lambda: any(m.kind == "table" for m in dc_shown))
    assert {m.audience.user.key for m in dc_shown} == {BORIS.key}  # type: ignore[union-attr]
    assert {m.language for m in dc_shown} == {"ru"}
    assert tg_shown == []  # nothing of the Telegram person came back through the relay
    # A command Boris sends on Discord: the Discord process answers him, Ala's copies go to Telegram.
    said = await dc.handle(parse_text("/say gl", ChatRef("dc", BORIS.user_id, BORIS.name, True), BORIS))  # type: ignore[arg-type]
    assert [m.audience.user.key for m in said] == [BORIS.key]  # type: ignore[union-attr]
    await until(lambda: any(m.kind == "phrase" for m in tg_shown))
    phrase = next(m for m in tg_shown if m.kind == "phrase")
    assert isinstance(phrase.audience, Private) and phrase.audience.user == ALA and phrase.language == "pl"
    assert table_id.startswith("pub:")


async def test_a_group_table_is_untouched(runtimes: dict[str, tuple[Runtime, list[Message]]]) -> None:
    tg, tg_shown = runtimes["tg"]
    group = ChatRef("tg", "-100777", "Friday")
    messages = await tg.handle(parse_text("/new", group, ALA))  # type: ignore[arg-type]
    assert messages and all(m.kind != "error" for m in messages)
    await asyncio.sleep(0.2)
    assert tg_shown == [] and runtimes["dc"][1] == []
