"""A bot process without a chat platform, for the SIGTERM tests: the ops `Runtime` on Redis, with
neutral commands taken over loopback HTTP the way a webhook adapter takes updates.

    POST /update {"chat": "-100", "user": "1", "name": "Ala", "text": "/bid 120", "delay": 0}
      -> 200 {"messages": [{"kind", "audience", "text"}]}, or 503 once the process is stopping.

`delay` (seconds) holds the update after it was taken and before the service runs it, so a test can
send SIGTERM while an update is in flight (GET /in-flight tells how many are). Settings come from the
environment; LOOP_PORT is the port.
"""

from __future__ import annotations

import asyncio
import os
import sys

from aiohttp import web

from bot.commands import parse_text
from bot.model import ChatRef, Group, Message, Private, UserRef
from bot.ops.runtime import Runtime, ShuttingDown, prepare


def _audience(message: Message) -> str:
    if isinstance(message.audience, Group):
        return "group"
    if isinstance(message.audience, Private):
        return "private"
    return "sender"


async def main() -> int:
    settings = prepare(None, env_file=None)
    runtime = Runtime(settings, platform="loop")

    async def update(request: web.Request) -> web.Response:
        body = await request.json()
        chat = ChatRef("loop", str(body["chat"]), "Loop group")
        user = UserRef("loop", str(body["user"]), str(body["name"]), "en", True)
        try:
            async with runtime.update():
                await asyncio.sleep(float(body.get("delay", 0)))
                command = parse_text(str(body["text"]), chat, user)
                if command is not None and command.name in ("give", "discard"):  # bot.commands.SECRET_MOVES
                    # Cards given or laid down are typed privately (the service refuses them in a group).
                    command = parse_text(
                        str(body["text"]), ChatRef("loop", user.user_id, user.name, True), user
                    )
                if command is None:
                    runtime.metrics.update_handled("loop", "message", "ignored")
                    return web.json_response({"messages": []})
                messages = await runtime.handle(command)
        except ShuttingDown:
            return web.json_response({"error": "stopping"}, status=503)
        return web.json_response(
            {"messages": [{"kind": m.kind, "audience": _audience(m), "text": m.text} for m in messages]}
        )

    async def in_flight(request: web.Request) -> web.Response:
        return web.json_response({"in_flight": runtime.shutdown.in_flight})

    app = web.Application()
    app.router.add_post("/update", update)
    app.router.add_get("/in-flight", in_flight)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", int(os.environ["LOOP_PORT"]))
    await site.start()
    # Registered after the runtime's own hooks, so it runs first: responses of finished updates are
    # written before the store closes.
    runtime.shutdown.on_flush("loop listener", runner.cleanup)
    await runtime.start()
    runtime.health.set_connected("loop", True)
    report = await runtime.run_until_stopped()
    return 0 if report.drained and not report.failed_hooks else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
