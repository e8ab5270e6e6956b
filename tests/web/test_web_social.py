"""The web table's phrases, block and report (issue 25, `adapters/web/social.py`): only the four commands
the chats have, only at a public table, answered as the chats answer; a phrase said anywhere at the table
(a chat's `/say` too) reaches the page in the reader's language, signed, and nothing else does."""

from __future__ import annotations

import asyncio

from test_web_queue import COMPUTERS_AFTER, POLISH3, QRig, qrig

from bot.model import ChatRef, Command, UserRef

__all__ = ["qrig"]


async def _seated(qrig: QRig, lang: str = "en") -> tuple[str, str]:
    token = await qrig.guest("Ann", lang)
    await qrig.post("/api/queue/join", {"player": token, "options": POLISH3})
    await asyncio.sleep(COMPUTERS_AFTER + 0.1)
    status, data = await qrig.post("/api/queue/go", {"player": token})
    assert status == 200 and data["state"] == "seated", data
    return data["session"], data["table"]


async def test_phrases_block_and_report_from_the_page(qrig: QRig) -> None:
    session, _ = await _seated(qrig, "pl")
    status, data = await qrig.post("/api/social/choices", {"session": session})
    assert status == 200 and [p["value"] for p in data["phrases"]] == ["gl", "wp", "ty", "oops"]
    assert data["phrases"][0]["name"] == "Powodzenia!" and len(data["reasons"]) == 4
    # Anything but the four commands, or odd arguments, is refused before the service sees it.
    for bad in (
        {"command": "end"},
        {"command": "say", "args": "gl"},
        {"command": "say", "args": ["x" * 33]},
        {"command": "report", "args": ["1", "2", "3"]},
        {"command": "say", "args": ["gl\n"]},
    ):
        status, data = await qrig.post("/api/social", {"session": session, **bad})
        assert status == 400, (bad, data)
    # A phrase: the page reads it back (the others' chats get it too), in the reader's language.
    status, data = await qrig.post("/api/social", {"session": session, "command": "say", "args": ["gl"]})
    assert status == 200 and data["ok"], data
    _, data = await qrig.post("/api/phrases", {"session": session})
    assert [(p["seat"], p["name"], p["text"]) for p in data["phrases"]] == [(0, "Ann", "Powodzenia!")]
    # An unknown phrase is the chats' refusal (the list of phrases), not a message to anyone.
    _, data = await qrig.post("/api/social", {"session": session, "command": "say", "args": ["hello"]})
    assert not data["ok"] and "gl" in data["text"]
    # Block and report a computer: refused as in the chats.
    _, data = await qrig.post("/api/social", {"session": session, "command": "block", "args": ["2"]})
    assert not data["ok"] and data["text"], data
    _, data = await qrig.post(
        "/api/social", {"session": session, "command": "report", "args": ["2", "abuse"]}
    )
    assert not data["ok"] and data["text"], data


async def test_a_chats_phrase_reaches_the_page(qrig: QRig) -> None:
    session, table = await _seated(qrig)
    stored = await qrig.store.load(table)
    assert stored is not None
    # The table's own `say` (as a chat's /say would run it), from the web person: the page shows it.
    user = UserRef("web", qrig.web.signer.read(session, "session", 0).user, "Ann", "en")
    await qrig.service.handle(
        Command("say", ("ty",), ChatRef("web", user.user_id, "Ann", private=True), user)
    )
    _, data = await qrig.post("/api/phrases", {"session": session})
    assert [p["text"] for p in data["phrases"]] == ["Thanks!"]


async def test_not_at_a_group_table(qrig: QRig) -> None:
    from bot.weblinks import Claims

    session = qrig.web.session_for(Claims("session", "tg:-100123", "42", "Ann", "en", "tg", 2e9))
    status, _ = await qrig.post("/api/social", {"session": session, "command": "say", "args": ["gl"]})
    assert status == 403
    status, data = await qrig.post("/api/phrases", {"session": session})
    assert status == 200 and data["phrases"] == []
