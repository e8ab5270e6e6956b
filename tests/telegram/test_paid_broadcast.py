"""`TELEGRAM_PAID_BROADCAST`: every new message carries `allow_paid_broadcast`, edits and deletions do
not (they take no such parameter), and the fake counts the paid messages (0.1 Stars each)."""

from __future__ import annotations

from typing import Any

import pytest
from tgkit import SEND_METHODS, Rig, seat_everyone, settings


async def _play(paid: bool) -> tuple[Rig, list[tuple[str, dict[str, Any]]]]:
    rig = Rig(settings_=settings(telegram_paid_broadcast=paid))
    seen: list[tuple[str, dict[str, Any]]] = []
    inner = rig.fake.handle

    async def handle(token: str, method: str, params: Any, files: Any = None) -> Any:
        response = await inner(token, method, params, files)
        if response.status == 200:
            seen.append((method.lower(), dict(params)))
        return response

    rig.fake.handle = handle  # type: ignore[method-assign]
    await rig.start()
    people = [rig.fake.add_user(n) for n in ("Alice", "Bob", "Carol")]
    table = await seat_everyone(rig, rig.group("Cards", people), people, short=False)
    for _ in range(12):
        assert await table.move()
    return rig, seen


@pytest.mark.parametrize("paid", [True, False])
async def test_sends_carry_the_paid_broadcast_flag_only_when_it_is_on(paid: bool) -> None:
    rig, seen = await _play(paid)
    try:
        sends = [p for m, p in seen if m in SEND_METHODS]
        edits = [p for m, p in seen if m.startswith("edit")]
        assert len(sends) > 10 and edits
        flagged = [p for p in sends if str(p.get("allow_paid_broadcast")).lower() == "true"]
        assert len(flagged) == (len(sends) if paid else 0)
        assert not any("allow_paid_broadcast" in p for p in edits)
        assert rig.fake._world.paid_broadcasts == len(flagged)
    finally:
        await rig.close()
