"""`thousand play --web`: the terminal game, also served as the web table on 127.0.0.1.

The game runs as `thousand play` runs it (the terminal still shows it and takes typed moves); the same
table is served on the loopback interface only, and the terminal prints the page's address, a link
signed for the one player with a key made up for this process. Moves from the page go through the same
service; what they cause is shown in the terminal too.
"""

from __future__ import annotations

import asyncio
import random
import secrets

from aiohttp import web
from rich.console import Console
from rich.text import Text

from adapters.console.app import ConsoleGame, GameOptions, ReadLine, game_settings, stdin_lines
from adapters.web.app import WebOptions, WebTable, make_runner
from bot.handlers import Handlers
from bot.model import Message
from bot.service import Service
from bot.storage import MemoryStore
from bot.weblinks import signer_for

__all__ = ["play_web", "run_web"]

HOST = "127.0.0.1"


async def play_web(
    options: GameOptions,
    port: int = 0,
    *,
    console: Console | None = None,
    read_line: ReadLine | None = None,
) -> int:
    """Run one game with its web page on 127.0.0.1:`port` (0: any free port); the exit status."""
    settings = game_settings(options, _env_file=None, web_secret=secrets.token_urlsafe(32))
    signer = signer_for(settings)
    assert signer is not None
    rng = random.Random(options.seed) if options.seed is not None else None
    service = Service(MemoryStore(), settings, handlers=Handlers, rng=rng)
    screen = console or Console(highlight=False)
    game = ConsoleGame(service, screen, read_line or stdin_lines(), options)

    async def show(messages: list[Message]) -> None:
        for message in messages:
            game.show(message)

    table = WebTable(
        service,
        signer,
        WebOptions(link_seconds=24 * 3600, session_seconds=24 * 3600),
        deliver=show,
    )
    runner = make_runner(table)
    await runner.setup()
    site = web.TCPSite(runner, HOST, port)
    try:
        await site.start()
        bound = runner.addresses[0][1] if runner.addresses else port
        url = table.link(game.chat.key, game.user, options.lang, base=f"http://{HOST}:{bound}")
        screen.print(Text(url, style="bold"), soft_wrap=True)
        return await game.loop()
    finally:
        await runner.cleanup()
        await service.close()


def run_web(options: GameOptions, port: int = 0) -> int:
    return asyncio.run(play_web(options, port))
