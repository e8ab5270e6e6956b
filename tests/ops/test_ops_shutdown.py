"""The stop sequence: refuse new updates, finish those in flight, then flush; bounded by timeouts."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from bot.ops.shutdown import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_UNDELIVERED,
    FLUSH_RESERVE,
    STOP_WITHIN,
    GracefulShutdown,
    ShuttingDown,
)


async def test_in_flight_updates_finish_before_flush() -> None:
    stop = GracefulShutdown(drain_timeout=5)
    order: list[str] = []

    async def intake() -> None:
        order.append("intake stopped")

    async def flush() -> None:
        order.append(f"flushed with {stop.in_flight} in flight")

    stop.on_stop_intake("poller", intake)
    stop.on_flush("store", flush)
    release = asyncio.Event()

    async def update(name: str) -> None:
        async with stop.update():
            await release.wait()
            order.append(f"{name} done")

    tasks = [asyncio.create_task(update(n)) for n in ("u1", "u2")]
    await asyncio.sleep(0)
    assert stop.in_flight == 2
    running = asyncio.create_task(stop.shutdown("test"))
    await asyncio.sleep(0.05)
    assert not running.done()
    with pytest.raises(ShuttingDown):
        async with stop.update():
            pass
    release.set()
    report = await running
    await asyncio.gather(*tasks)
    assert order == ["intake stopped", "u1 done", "u2 done", "flushed with 0 in flight"]
    assert report.drained and report.abandoned == 0 and report.reason == "test"


async def test_drain_gives_up_after_its_timeout() -> None:
    stop = GracefulShutdown(drain_timeout=0.1)
    never = asyncio.Event()

    async def stuck() -> None:
        async with stop.update():
            await never.wait()

    task = asyncio.create_task(stuck())
    await asyncio.sleep(0)
    report = await stop.shutdown()
    assert not report.drained and report.abandoned == 1
    task.cancel()


async def test_a_second_request_cuts_the_drain_short() -> None:
    stop = GracefulShutdown(drain_timeout=30)
    never = asyncio.Event()

    async def stuck() -> None:
        async with stop.update():
            await never.wait()

    task = asyncio.create_task(stuck())
    await asyncio.sleep(0)
    running = asyncio.create_task(stop.shutdown())
    await asyncio.sleep(0.02)
    stop.request_stop("SIGTERM again")
    report = await asyncio.wait_for(running, 2)
    assert report.abandoned == 1
    task.cancel()


async def test_hook_failures_and_hangs_do_not_stop_the_sequence() -> None:
    stop = GracefulShutdown(drain_timeout=1, hook_timeout=0.05)
    ran: list[str] = []

    async def broken() -> None:
        raise RuntimeError("boom")

    async def hangs() -> None:
        await asyncio.sleep(10)

    async def fine() -> None:
        ran.append("fine")

    stop.on_stop_intake("broken", broken)
    stop.on_flush("fine", fine)
    stop.on_flush("hangs", hangs)
    report = await stop.shutdown()
    assert report.failed_hooks == ["broken", "hangs"]
    assert ran == ["fine"]


async def test_flush_hooks_run_last_registered_first_and_once() -> None:
    stop = GracefulShutdown()
    ran: list[str] = []
    for name in ("store", "sender"):

        async def hook(name: str = name) -> None:
            ran.append(name)

        stop.on_flush(name, hook)
    first, second = await asyncio.gather(stop.shutdown(), stop.shutdown())
    assert first is second
    assert ran == ["sender", "store"]


async def test_sigterm_requests_the_stop() -> None:
    stop = GracefulShutdown()
    stop.install_signal_handlers()
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        report = await asyncio.wait_for(stop.wait(), 2)
        assert report.reason == "SIGTERM"
        assert not stop.accepting
    finally:
        loop = asyncio.get_running_loop()
        loop.remove_signal_handler(signal.SIGTERM)
        loop.remove_signal_handler(signal.SIGINT)


async def test_an_update_taken_before_the_stop_may_call_nested_updates() -> None:
    stop = GracefulShutdown(drain_timeout=5)
    release = asyncio.Event()
    done: list[str] = []

    async def webhook_update() -> None:
        async with stop.update():  # taken
            await release.wait()
            async with stop.update():  # e.g. Runtime.handle inside the adapter's update: not refused
                done.append("handled")
            assert stop.in_flight == 1

    task = asyncio.create_task(webhook_update())
    await asyncio.sleep(0)
    running = asyncio.create_task(stop.shutdown())
    await asyncio.sleep(0.01)
    release.set()
    report = await running
    await task
    assert done == ["handled"] and report.drained


async def test_the_whole_sequence_ends_within_stop_within() -> None:
    # A stuck update and a hanging hook: the drain leaves FLUSH_RESERVE to the hooks, and a hook gets
    # at most what is left, so the orchestrator's grace period is never overrun.
    stop = GracefulShutdown(drain_timeout=30, hook_timeout=30, stop_within=FLUSH_RESERVE + 0.3)
    never = asyncio.Event()

    async def stuck() -> None:
        async with stop.update():
            await never.wait()

    async def hangs() -> None:
        await asyncio.sleep(60)

    stop.on_flush("hangs", hangs)
    task = asyncio.create_task(stuck())
    await asyncio.sleep(0)
    report = await asyncio.wait_for(stop.shutdown(), FLUSH_RESERVE + 2)
    assert not report.drained and report.failed_hooks == ["hangs"]
    assert report.seconds < stop.stop_within + 0.2
    assert stop.remaining() == 0.0
    task.cancel()


async def test_the_exit_status_says_whether_messages_were_lost() -> None:
    assert STOP_WITHIN < 30  # inside Kubernetes' default grace period
    clean = await GracefulShutdown().shutdown()
    assert clean.exit_code == EXIT_OK == 0
    failing = GracefulShutdown(hook_timeout=0.05)

    async def broken() -> None:
        raise RuntimeError("boom")

    failing.on_flush("broken", broken)
    assert (await failing.shutdown()).exit_code == EXIT_FAILED == 1
    losing = GracefulShutdown()

    async def loses() -> None:
        losing.undelivered(0)
        losing.undelivered(4)

    losing.on_flush("outbox", loses)
    losing.on_flush("broken", broken)
    report = await losing.shutdown()
    assert report.undelivered == 4 and report.exit_code == EXIT_UNDELIVERED == 3
