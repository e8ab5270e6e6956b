"""Registered application commands and the interaction data a Discord client builds when a user runs one.

A user can only invoke what the application registered (global or guild), with options of the registered
types, choices and ranges; the fake enforces this the way the Discord client UI does, so a test cannot
send an interaction that real Discord would never deliver.
"""

from __future__ import annotations

import copy
from typing import Any

from . import errors
from .errors import FakeUsageError
from .models import FakeChannel, FakeGuild, FakeMember, FakeRole, FakeUser
from .snowflake import SnowflakeFactory
from .validation import CHAT_INPUT, SUB_COMMAND, SUB_COMMAND_GROUP, validate_command, validate_commands

JSON = dict[str, Any]

STRING, INTEGER, BOOLEAN, USER, CHANNEL, ROLE, MENTIONABLE, NUMBER, ATTACHMENT = 3, 4, 5, 6, 7, 8, 9, 10, 11
MAX_SAFE_INT = 2**53


class CommandStore:
    """Global and per-guild command registrations of the fake application."""

    def __init__(self, application_id: int, ids: SnowflakeFactory) -> None:
        self.application_id = application_id
        self._ids = ids
        self.global_commands: dict[tuple[int, str], JSON] = {}
        self.guild_commands: dict[int, dict[tuple[int, str], JSON]] = {}

    def _table(self, guild_id: int | None) -> dict[tuple[int, str], JSON]:
        if guild_id is None:
            return self.global_commands
        return self.guild_commands.setdefault(guild_id, {})

    def _normalise(self, body: JSON, guild_id: int | None, existing: JSON | None) -> JSON:
        cmd = copy.deepcopy(body)
        ctype = cmd.get("type", CHAT_INPUT)
        cmd["type"] = ctype
        cmd["id"] = existing["id"] if existing else str(self._ids.next())
        cmd["application_id"] = str(self.application_id)
        cmd["version"] = str(self._ids.next())
        cmd.setdefault("description", "")
        cmd.setdefault("default_member_permissions", None)
        cmd.setdefault("nsfw", False)
        cmd.setdefault("name_localizations", None)
        cmd.setdefault("description_localizations", None)
        if cmd.get("default_member_permissions") is not None:
            cmd["default_member_permissions"] = str(cmd["default_member_permissions"])
        if guild_id is None:
            cmd.setdefault("dm_permission", True)
            cmd["integration_types"] = cmd.get("integration_types") or [0]
            if cmd.get("contexts") is None:
                cmd["contexts"] = [0, 1, 2] if cmd.get("dm_permission", True) else [0]
        else:
            cmd["guild_id"] = str(guild_id)
            cmd["contexts"] = None
            cmd.pop("dm_permission", None)
        return cmd

    def bulk_overwrite(self, guild_id: int | None, body: Any) -> list[JSON]:
        validate_commands(body)
        table = self._table(guild_id)
        new: dict[tuple[int, str], JSON] = {}
        for item in body:
            key = (item.get("type", CHAT_INPUT), item["name"])
            new[key] = self._normalise(item, guild_id, table.get(key))
        table.clear()
        table.update(new)
        return [copy.deepcopy(c) for c in new.values()]

    def upsert(self, guild_id: int | None, body: Any) -> tuple[JSON, bool]:
        errs = errors.FormErrors()
        validate_command(errs, (), body)
        errs.raise_if_any()
        table = self._table(guild_id)
        key = (body.get("type", CHAT_INPUT), body["name"])
        existed = key in table
        table[key] = self._normalise(body, guild_id, table.get(key))
        return copy.deepcopy(table[key]), not existed

    def list(self, guild_id: int | None) -> list[JSON]:
        return [copy.deepcopy(c) for c in self._table(guild_id).values()]

    def get(self, guild_id: int | None, command_id: int) -> JSON:
        for cmd in self._table(guild_id).values():
            if int(cmd["id"]) == command_id:
                return cmd
        raise errors.unknown_command()

    def edit(self, guild_id: int | None, command_id: int, body: JSON) -> JSON:
        cmd = self.get(guild_id, command_id)
        merged = {k: v for k, v in cmd.items() if k not in ("id", "application_id", "version", "guild_id")}
        merged.update(body)
        errs = errors.FormErrors()
        validate_command(errs, (), merged)
        errs.raise_if_any()
        table = self._table(guild_id)
        old_key = (cmd["type"], cmd["name"])
        del table[old_key]
        new = self._normalise(merged, guild_id, cmd)
        table[(new["type"], new["name"])] = new
        return copy.deepcopy(new)

    def delete(self, guild_id: int | None, command_id: int) -> None:
        cmd = self.get(guild_id, command_id)
        del self._table(guild_id)[(cmd["type"], cmd["name"])]

    def find(self, guild_id: int | None, name: str, ctype: int = CHAT_INPUT) -> JSON | None:
        """What the Discord client would offer: the guild's own registration first, then the global one."""
        if guild_id is not None:
            found = self.guild_commands.get(guild_id, {}).get((ctype, name))
            if found is not None:
                return found
        return self.global_commands.get((ctype, name))


def _option_path(cmd: JSON, subcommand: str | None) -> tuple[list[JSON], list[str]]:
    """Resolve "group sub" / "sub" to the option list of the leaf and the names walked."""
    options: list[JSON] = cmd.get("options") or []
    has_subs = any(o.get("type") in (SUB_COMMAND, SUB_COMMAND_GROUP) for o in options)
    if not subcommand:
        if has_subs:
            raise FakeUsageError(f"/{cmd['name']} needs a subcommand")
        return options, []
    walked: list[str] = []
    for part in subcommand.split():
        match = next(
            (
                o
                for o in options
                if o.get("name") == part and o.get("type") in (SUB_COMMAND, SUB_COMMAND_GROUP)
            ),
            None,
        )
        if match is None:
            raise FakeUsageError(f"/{cmd['name']} has no subcommand {subcommand!r}")
        walked.append(part)
        options = match.get("options") or []
    if any(o.get("type") in (SUB_COMMAND, SUB_COMMAND_GROUP) for o in options):
        raise FakeUsageError(f"{subcommand!r} is a group; name a subcommand in it")
    return options, walked


class OptionBuilder:
    """Turns Python values into option payloads and the ``resolved`` map, checking them like the client."""

    def __init__(self, guild: FakeGuild | None, channel: FakeChannel) -> None:
        self.guild = guild
        self.channel = channel
        self.resolved: dict[str, dict[str, JSON]] = {}

    def _add(self, kind: str, key: int, payload: JSON) -> None:
        self.resolved.setdefault(kind, {})[str(key)] = payload

    def _user(self, value: Any) -> str:
        user = value.user if isinstance(value, FakeMember) else value
        if not isinstance(user, FakeUser):
            raise FakeUsageError(f"expected a user, got {value!r}")
        self._add("users", user.id, user.payload())
        if self.guild is not None and user.id in self.guild.members:
            member = self.guild.members[user.id]
            self._add(
                "members",
                user.id,
                member.payload(with_user=False, permissions=self.guild.permissions_in(user, self.channel)),
            )
        return str(user.id)

    def _channel(self, value: Any, spec: JSON) -> str:
        if not isinstance(value, FakeChannel):
            raise FakeUsageError(f"expected a channel, got {value!r}")
        allowed = spec.get("channel_types")
        if allowed and value.type not in allowed:
            raise FakeUsageError(f"channel type {value.type} not allowed for option {spec['name']}")
        self._add(
            "channels",
            value.id,
            {
                "id": str(value.id),
                "name": value.name,
                "type": value.type,
                "permissions": str(self.guild.permissions_in(self._invoker, value) if self.guild else 0),
                "parent_id": str(value.parent_id) if value.parent_id else None,
                "flags": 0,
            },
        )
        return str(value.id)

    def _role(self, value: Any) -> str:
        if not isinstance(value, FakeRole):
            raise FakeUsageError(f"expected a role, got {value!r}")
        self._add("roles", value.id, value.payload())
        return str(value.id)

    _invoker: FakeUser

    def value(self, spec: JSON, value: Any) -> Any:
        otype = spec["type"]
        name = spec["name"]
        if otype == STRING:
            if not isinstance(value, str):
                raise FakeUsageError(f"option {name} takes a string, got {value!r}")
            lo, hi = spec.get("min_length", 0), spec.get("max_length", 6000)
            if not lo <= len(value) <= hi:
                raise FakeUsageError(f"option {name}: length must be in [{lo}, {hi}]")
            out: Any = value
        elif otype in (INTEGER, NUMBER):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise FakeUsageError(f"option {name} takes a number, got {value!r}")
            if otype == INTEGER and not isinstance(value, int):
                raise FakeUsageError(f"option {name} takes an integer, got {value!r}")
            lo, hi = spec.get("min_value", -MAX_SAFE_INT), spec.get("max_value", MAX_SAFE_INT)
            if not lo <= value <= hi:
                raise FakeUsageError(f"option {name}: value must be in [{lo}, {hi}]")
            out = value
        elif otype == BOOLEAN:
            if not isinstance(value, bool):
                raise FakeUsageError(f"option {name} takes a boolean, got {value!r}")
            out = value
        elif otype == USER:
            out = self._user(value)
        elif otype == CHANNEL:
            out = self._channel(value, spec)
        elif otype == ROLE:
            out = self._role(value)
        elif otype == MENTIONABLE:
            out = self._role(value) if isinstance(value, FakeRole) else self._user(value)
        else:
            raise FakeUsageError(f"option type {otype} is not supported by the fake")
        choices = spec.get("choices")
        if choices and out not in [c["value"] for c in choices]:
            raise FakeUsageError(f"option {name}: {value!r} is not one of the offered choices")
        return out


def build_command_data(
    cmd: JSON,
    *,
    subcommand: str | None,
    options: dict[str, Any],
    guild: FakeGuild | None,
    channel: FakeChannel,
    invoker: FakeUser,
    focused: str | None = None,
) -> JSON:
    """The ``data`` of an APPLICATION_COMMAND (or, with ``focused``, AUTOCOMPLETE) interaction."""
    leaf_specs, walked = _option_path(cmd, subcommand)
    builder = OptionBuilder(guild, channel)
    builder._invoker = invoker
    by_name = {o["name"]: o for o in leaf_specs}
    unknown = set(options) - set(by_name)
    if unknown:
        raise FakeUsageError(
            f"unknown options {sorted(unknown)} for /{cmd['name']} {subcommand or ''}".strip()
        )
    leaf: list[JSON] = []
    for spec in leaf_specs:
        name = spec["name"]
        if name not in options:
            if spec.get("required") and focused is None:
                raise FakeUsageError(f"option {name} is required")
            continue
        value = options[name]
        if name == focused:
            if not spec.get("autocomplete"):
                raise FakeUsageError(f"option {name} has no autocomplete")
            # While typing, the client sends the raw text, whatever the option's type.
            leaf.append({"name": name, "type": spec["type"], "value": str(value), "focused": True})
            continue
        leaf.append({"name": name, "type": spec["type"], "value": builder.value(spec, value)})
    if focused is not None and focused not in options:
        raise FakeUsageError(f"focused option {focused} needs the text typed so far")
    nested: list[JSON] = leaf
    if walked:
        specs: list[JSON] = cmd.get("options") or []
        chain: list[JSON] = []
        for part in walked:
            spec = next(o for o in specs if o["name"] == part)
            chain.append({"name": part, "type": spec["type"]})
            specs = spec.get("options") or []
        chain[-1]["options"] = leaf
        for i in range(len(chain) - 2, -1, -1):
            chain[i]["options"] = [chain[i + 1]]
        nested = [chain[0]]
    data: JSON = {"id": cmd["id"], "name": cmd["name"], "type": cmd["type"], "options": nested}
    if cmd.get("guild_id"):
        data["guild_id"] = cmd["guild_id"]
    if builder.resolved:
        data["resolved"] = builder.resolved
    return data
