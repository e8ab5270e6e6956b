"""Operations: settings checks, `thousand doctor`, metrics, health endpoints, logging, graceful shutdown.

A process entry point (the Telegram or Discord adapter's `main`) wires them up; see `bot.ops.runtime`
and docs/OPERATIONS.md for what an adapter calls.
"""
