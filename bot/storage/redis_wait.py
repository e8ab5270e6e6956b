"""Acknowledged moves (`wait_replicas`): the save and a `WAIT n timeout` go in one request on one
connection (WAIT counts that connection's writes only), to the table's master on a cluster; fewer
acknowledgements than asked raise `StorageUncertain` after the save's follow-up is written."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Final

from redis import exceptions as rx
from redis.asyncio import RedisCluster

from bot.storage import redis_scripts as lua
from bot.storage.redis_base import RedisBase

__all__ = ["RedisWait"]

_REPLICAS_RECHECK_S: Final = 5.0
"""How long a master seen with fewer replicas than `wait_replicas` is waited on for only those."""


class RedisWait(RedisBase):
    """The save script's request, with the replicas' acknowledgement when asked for."""

    async def _save_script(
        self, table_key: str, keys: Sequence[str], args: Sequence[Any]
    ) -> tuple[Any, int | None]:
        """The save script's reply, and with `wait_replicas` how many replicas acknowledged it.

        WAIT counts the writes of its own connection only, so it goes in one pipeline with the script:
        on one connection to a standalone server, and on a cluster to the node of the table's slot
        (the cluster pipeline sends each node's commands on one connection, in order). A save the
        cluster redirected elsewhere meanwhile (MOVED during a failover) counts as unacknowledged."""
        if self._wait_replicas <= 0:
            return await self.script(lua.SAVE, keys, args), None
        async with self._session():
            node = self._r.get_node_from_key(table_key) if isinstance(self._r, RedisCluster) else None
            name = "" if node is None else node.name
            wanted = self._wanted_replicas(name)
            if wanted == 0:
                # A master known to have no replica (its own was lost and promoted it): nothing to
                # wait for, and nothing more to be had; the save is as safe as this master.
                return await self.script(lua.SAVE, keys, args), self._wait_replicas
            for command, body in (("EVALSHA", lua.SAVE.sha), ("EVAL", lua.SAVE.source)):
                pipe = self._r.pipeline(transaction=False)
                pipe.execute_command(command, body, len(keys), *keys, *args)
                options: dict[str, Any] = {} if node is None else {"target_nodes": node}
                pipe.execute_command("WAIT", wanted, self._wait_timeout_ms, **options)
                reply, acked = await pipe.execute(raise_on_error=False)
                if isinstance(reply, rx.NoScriptError):
                    continue  # not run: send the source (the WAIT beside it counted nothing)
                if isinstance(reply, Exception):
                    raise reply
                if isinstance(acked, Exception):
                    return reply, 0
                if isinstance(self._r, RedisCluster) and node is not None:
                    now_at = self._r.get_node_from_key(table_key)
                    if now_at is None or now_at.name != node.name:
                        return reply, 0
                if int(acked) >= wanted:
                    return reply, self._wait_replicas
                # Too few: a replica slow or cut off (uncertain), or none left to ask (after a failover
                # the promoted master has none until the lost node comes back as its replica).
                online = await self._online_replicas(node)
                self._replicas_seen[name] = (online, time.monotonic() + _REPLICAS_RECHECK_S)
                return reply, self._wait_replicas if online == 0 else int(acked)
        raise AssertionError("unreachable: EVAL does not answer NOSCRIPT")

    def _wanted_replicas(self, node: str) -> int:
        """How many replicas to WAIT for on `node`: `wait_replicas`, or fewer for a while after the node
        was seen with fewer replicas attached (0: none to wait for)."""
        seen = self._replicas_seen.get(node)
        if seen is None or seen[1] < time.monotonic():
            return self._wait_replicas
        return min(self._wait_replicas, seen[0])

    async def _online_replicas(self, node: Any) -> int:
        """Replicas attached to `node` (INFO replication, state=online)."""
        options: dict[str, Any] = {} if node is None else {"target_nodes": node}
        info = await self._r.execute_command("INFO", "replication", **options)
        if isinstance(info, dict) and node is not None and node.name in info:
            info = info[node.name]
        if isinstance(info, dict):
            return sum(1 for k, v in info.items() if k.startswith("slave") and "online" in str(v))
        return str(info).count("state=online")
