"""The Bot API calls that tests and benches count, by their lower-cased method name (the fake's `handle`
sees them so)."""

from __future__ import annotations

SEND_METHODS = frozenset({"sendmessage", "sendphoto", "senddocument"})
"""The methods that post a new message (the ones that notify, and that `allow_paid_broadcast` applies to)."""
COUNTED_METHODS = SEND_METHODS | {
    "editmessagetext",
    "editmessagereplymarkup",
    "deletemessage",
    "deletemessages",
}
"""What a move costs in Bot API calls (issue 13): every send, edit and deletion; answers to presses not."""
