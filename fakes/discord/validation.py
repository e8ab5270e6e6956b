"""Request body validation with Discord's documented limits.

Failures are collected into one 50035 "Invalid Form Body" error whose ``errors`` tree is keyed by the
offending field path, which is what the real API returns and what discord.py renders in exceptions.
"""

from __future__ import annotations

from typing import Any

from .errors import FormErrors, empty_message
from .models import FLAG_EPHEMERAL, FLAG_IS_COMPONENTS_V2, FLAG_SUPPRESS_EMBEDS, FLAG_SUPPRESS_NOTIFICATIONS

JSON = dict[str, Any]
Path = tuple[str | int, ...]

CONTENT_LIMIT = 2000
EMBEDS_LIMIT = 10
EMBED_TOTAL_LIMIT = 6000
V1_ROWS_LIMIT = 5
ROW_WIDTH = 5
V2_COMPONENTS_LIMIT = 40
CUSTOM_ID_LIMIT = 100
BUTTON_LABEL_LIMIT = 80
SELECT_OPTIONS_LIMIT = 25

ACTION_ROW, BUTTON, STRING_SELECT, TEXT_INPUT = 1, 2, 3, 4
SELECT_TYPES = {3, 5, 6, 7, 8}
V2_TOP_LEVEL = {1, 9, 10, 12, 13, 14, 17}
LINK_STYLE, PREMIUM_STYLE = 5, 6

#: Flags a bot may set when sending; anything else is silently dropped like Discord does.
SENDABLE_FLAGS = FLAG_SUPPRESS_EMBEDS | FLAG_SUPPRESS_NOTIFICATIONS | FLAG_EPHEMERAL | FLAG_IS_COMPONENTS_V2


def _check_len(errors: FormErrors, path: Path, value: Any, limit: int, *, minimum: int = 0) -> None:
    if value is None:
        return
    if not isinstance(value, str):
        errors.add(path, "BASE_TYPE_STRING", "Must be a string.")
        return
    if len(value) > limit:
        errors.max_length(path, limit)
    elif len(value) < minimum:
        errors.add(path, "BASE_TYPE_BAD_LENGTH", f"Must be between {minimum} and {limit} in length.")


def validate_embeds(errors: FormErrors, embeds: Any) -> None:
    if not isinstance(embeds, list):
        errors.add(("embeds",), "BASE_TYPE_LIST", "Must be an array.")
        return
    if len(embeds) > EMBEDS_LIMIT:
        errors.max_length(("embeds",), EMBEDS_LIMIT)
    total = 0
    for i, embed in enumerate(embeds):
        base: Path = ("embeds", i)
        if not isinstance(embed, dict):
            errors.add(base, "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
            continue
        for key, limit in (("title", 256), ("description", 4096)):
            _check_len(errors, (*base, key), embed.get(key), limit)
            total += len(embed.get(key) or "")
        colour = embed.get("color")
        if colour is not None and (not isinstance(colour, int) or not 0 <= colour <= 0xFFFFFF):
            errors.add(
                (*base, "color"), "NUMBER_TYPE_MAX", "int value should be less than or equal to 16777215."
            )
        footer = embed.get("footer") or {}
        _check_len(errors, (*base, "footer", "text"), footer.get("text"), 2048)
        total += len(footer.get("text") or "")
        author = embed.get("author") or {}
        _check_len(errors, (*base, "author", "name"), author.get("name"), 256)
        total += len(author.get("name") or "")
        fields = embed.get("fields") or []
        if len(fields) > 25:
            errors.max_length((*base, "fields"), 25)
        for j, fld in enumerate(fields):
            for key, limit in (("name", 256), ("value", 1024)):
                value = fld.get(key)
                if value is None or value == "":
                    errors.required((*base, "fields", j, key))
                else:
                    _check_len(errors, (*base, "fields", j, key), value, limit)
                    total += len(value)
    if total > EMBED_TOTAL_LIMIT:
        errors.add(
            ("embeds",), "MAX_EMBED_SIZE_EXCEEDED", f"Embed size exceeds maximum size of {EMBED_TOTAL_LIMIT}"
        )


class _ComponentChecker:
    def __init__(self, errors: FormErrors, *, v2: bool) -> None:
        self.errors = errors
        self.v2 = v2
        self.count = 0
        self.custom_ids: set[str] = set()

    def custom_id(self, path: Path, comp: JSON, *, required: bool = True) -> None:
        cid = comp.get("custom_id")
        if cid is None:
            if required:
                self.errors.required((*path, "custom_id"))
            return
        _check_len(self.errors, (*path, "custom_id"), cid, CUSTOM_ID_LIMIT, minimum=1)
        if isinstance(cid, str):
            if cid in self.custom_ids:
                self.errors.add(
                    (*path, "custom_id"),
                    "COMPONENT_CUSTOM_ID_DUPLICATED",
                    "Component custom id cannot be duplicated",
                )
            self.custom_ids.add(cid)

    def button(self, path: Path, comp: JSON) -> None:
        style = comp.get("style")
        if style not in (1, 2, 3, 4, 5, 6):
            self.errors.add((*path, "style"), "BASE_TYPE_CHOICES", "Value must be one of {1, 2, 3, 4, 5, 6}.")
            return
        _check_len(self.errors, (*path, "label"), comp.get("label"), BUTTON_LABEL_LIMIT)
        if style == LINK_STYLE:
            if not comp.get("url"):
                self.errors.add((*path, "url"), "BUTTON_COMPONENT_URL_REQUIRED", "A url is required")
            if "custom_id" in comp:
                self.errors.add(
                    (*path, "custom_id"),
                    "BUTTON_COMPONENT_CUSTOM_ID_NOT_ALLOWED",
                    "A custom id cannot be specified for link buttons",
                )
            _check_len(self.errors, (*path, "url"), comp.get("url"), 512)
        elif style == PREMIUM_STYLE:
            if not comp.get("sku_id"):
                self.errors.required((*path, "sku_id"))
        else:
            self.custom_id(path, comp)
            if comp.get("url"):
                self.errors.add(
                    (*path, "url"),
                    "BUTTON_COMPONENT_URL_NOT_ALLOWED",
                    "A url cannot be specified for this button",
                )
        if style != PREMIUM_STYLE and not comp.get("label") and not comp.get("emoji"):
            self.errors.add(
                (*path, "label"),
                "BUTTON_COMPONENT_LABEL_REQUIRED",
                "A label or emoji is required for buttons",
            )

    def select(self, path: Path, comp: JSON) -> None:
        self.custom_id(path, comp)
        _check_len(self.errors, (*path, "placeholder"), comp.get("placeholder"), 150)
        lo = comp.get("min_values", 1)
        hi = comp.get("max_values", 1)
        if not isinstance(lo, int) or not 0 <= lo <= 25:
            self.errors.add(
                (*path, "min_values"), "NUMBER_TYPE_MAX", "int value should be less than or equal to 25."
            )
        if not isinstance(hi, int) or not 1 <= hi <= 25:
            self.errors.add(
                (*path, "max_values"), "NUMBER_TYPE_MAX", "int value should be less than or equal to 25."
            )
        if comp.get("type") == STRING_SELECT:
            options = comp.get("options") or []
            if not options:
                self.errors.add((*path, "options"), "BASE_TYPE_MIN_LENGTH", "Must be 1 or more in length.")
            if len(options) > SELECT_OPTIONS_LIMIT:
                self.errors.max_length((*path, "options"), SELECT_OPTIONS_LIMIT)
            for k, opt in enumerate(options):
                for key in ("label", "value"):
                    if not opt.get(key):
                        self.errors.required((*path, "options", k, key))
                    _check_len(self.errors, (*path, "options", k, key), opt.get(key), 100)
                _check_len(self.errors, (*path, "options", k, "description"), opt.get("description"), 100)

    def row(self, path: Path, row: JSON) -> None:
        children = row.get("components")
        if not isinstance(children, list) or not children:
            self.errors.add((*path, "components"), "BASE_TYPE_MIN_LENGTH", "Must be 1 or more in length.")
            return
        if len(children) > ROW_WIDTH:
            self.errors.max_length((*path, "components"), ROW_WIDTH)
        has_select = any(c.get("type") in SELECT_TYPES for c in children if isinstance(c, dict))
        if has_select and len(children) > 1:
            self.errors.add(
                (*path, "components"),
                "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
                "The specified component exceeds the maximum width",
            )
        for j, child in enumerate(children):
            self.component((*path, "components", j), child, in_row=True)

    def component(self, path: Path, comp: Any, *, in_row: bool) -> None:
        if not isinstance(comp, dict):
            self.errors.add(path, "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
            return
        self.count += 1
        ctype = comp.get("type")
        if ctype == ACTION_ROW:
            if in_row:
                self.errors.add(
                    (*path, "type"), "UNION_TYPE_CHOICES", 'Value of field "type" must be one of (2, 3).'
                )
                return
            self.row(path, comp)
        elif ctype == BUTTON:
            if not in_row and not self.v2:
                self.errors.add(
                    (*path, "type"), "UNION_TYPE_CHOICES", 'Value of field "type" must be one of (1,).'
                )
                return
            self.button(path, comp)
        elif ctype in SELECT_TYPES:
            if not in_row:
                self.errors.add(
                    (*path, "type"), "UNION_TYPE_CHOICES", 'Value of field "type" must be one of (1,).'
                )
                return
            self.select(path, comp)
        elif self.v2 and ctype in (9, 10, 11, 12, 13, 14, 17):
            if ctype == 10:
                _check_len(self.errors, (*path, "content"), comp.get("content"), 4000, minimum=1)
            for j, child in enumerate(comp.get("components") or []):
                self.component((*path, "components", j), child, in_row=False)
            accessory = comp.get("accessory")
            if isinstance(accessory, dict):
                self.component((*path, "accessory"), accessory, in_row=True)
        else:
            self.errors.add(
                (*path, "type"), "BASE_TYPE_CHOICES", f"Value must be a valid component type, got {ctype}."
            )


def validate_components(errors: FormErrors, components: Any, *, v2: bool) -> None:
    if not isinstance(components, list):
        errors.add(("components",), "BASE_TYPE_LIST", "Must be an array.")
        return
    checker = _ComponentChecker(errors, v2=v2)
    if not v2 and len(components) > V1_ROWS_LIMIT:
        errors.max_length(("components",), V1_ROWS_LIMIT)
    for i, comp in enumerate(components):
        if not v2 and isinstance(comp, dict) and comp.get("type") != ACTION_ROW:
            errors.add(
                ("components", i, "type"), "UNION_TYPE_CHOICES", 'Value of field "type" must be one of (1,).'
            )
            continue
        if v2 and isinstance(comp, dict) and comp.get("type") not in V2_TOP_LEVEL:
            errors.add(("components", i, "type"), "UNION_TYPE_CHOICES", "Invalid top-level component type.")
            continue
        checker.component(("components", i), comp, in_row=False)
    if v2 and checker.count > V2_COMPONENTS_LIMIT:
        errors.add(
            ("components",),
            "MAX_COMPONENTS_EXCEEDED",
            f"Total number of components exceeds the maximum of {V2_COMPONENTS_LIMIT}.",
        )


def assign_component_ids(components: list[JSON]) -> None:
    """Discord numbers components without an ``id`` sequentially, depth first."""
    used: set[int] = set()
    order: list[JSON] = []

    def walk(items: list[JSON]) -> None:
        for comp in items:
            order.append(comp)
            if isinstance(comp.get("id"), int):
                used.add(comp["id"])
            walk(comp.get("components") or [])
            if isinstance(comp.get("accessory"), dict):
                walk([comp["accessory"]])

    walk(components)
    counter = 1
    for comp in order:
        if not isinstance(comp.get("id"), int):
            while counter in used:
                counter += 1
            comp["id"] = counter
            used.add(counter)


def validate_message(
    body: JSON, *, files: int, editing: bool, keep_attachments: bool = False, prefix: Path = ()
) -> None:
    """Validate a message body (channel message, webhook, or an interaction callback's ``data``)."""
    errors = FormErrors(prefix)
    flags = body.get("flags") or 0
    if not isinstance(flags, int):
        errors.add(("flags",), "NUMBER_TYPE_COERCE", "Value is not int.")
        flags = 0
    v2 = bool(flags & FLAG_IS_COMPONENTS_V2)
    content = body.get("content")
    _check_len(errors, ("content",), content, CONTENT_LIMIT)
    embeds = body.get("embeds")
    if embeds is None and body.get("embed") is not None:
        embeds = [body["embed"]]
    if embeds is not None:
        validate_embeds(errors, embeds)
    components = body.get("components")
    if components is not None:
        validate_components(errors, components, v2=v2)
    if v2:
        if content:
            errors.add(
                ("content",),
                "MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2",
                "The 'content' field cannot be used when using MessageFlags.IS_COMPONENTS_V2",
            )
        if embeds:
            errors.add(
                ("embeds",),
                "MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2",
                "The 'embeds' field cannot be used when using MessageFlags.IS_COMPONENTS_V2",
            )
    if files > 10:
        errors.max_length(("files",), 10)
    errors.raise_if_any()
    if not editing:
        has_body = (
            bool(content) or bool(embeds) or bool(components) or files > 0 or bool(body.get("sticker_ids"))
        )
        has_body = has_body or bool(body.get("poll")) or keep_attachments
        if not has_body:
            raise empty_message()


# Application commands ---------------------------------------------------------------------------------------

CHAT_INPUT, USER_COMMAND, MESSAGE_COMMAND = 1, 2, 3
SUB_COMMAND, SUB_COMMAND_GROUP = 1, 2
OPTION_TYPES = set(range(1, 12))


def _valid_name(name: Any, *, chat_input: bool) -> bool:
    if not isinstance(name, str) or not 1 <= len(name) <= 32:
        return False
    if not chat_input:
        return True
    return all(ch.isalnum() or ch in "-_'" for ch in name) and name == name.lower()


def _validate_options(errors: FormErrors, path: Path, options: Any, *, depth: int) -> None:
    if options is None:
        return
    if not isinstance(options, list):
        errors.add(path, "BASE_TYPE_LIST", "Must be an array.")
        return
    if len(options) > 25:
        errors.max_length(path, 25)
    seen: set[str] = set()
    seen_optional = False
    kinds = set()
    for i, opt in enumerate(options):
        p: Path = (*path, i)
        otype = opt.get("type")
        if otype not in OPTION_TYPES:
            errors.add((*p, "type"), "BASE_TYPE_CHOICES", "Value must be one of {1, 2, ..., 11}.")
            continue
        kinds.add("sub" if otype in (SUB_COMMAND, SUB_COMMAND_GROUP) else "value")
        name = opt.get("name")
        if not _valid_name(name, chat_input=True):
            errors.add((*p, "name"), "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid")
        elif name in seen:
            errors.add(
                (*p, "name"), "APPLICATION_COMMAND_OPTIONS_NAME_ALREADY_EXISTS", "Option name already exists"
            )
        else:
            seen.add(name)
        _check_len(errors, (*p, "description"), opt.get("description"), 100, minimum=1)
        if not opt.get("description"):
            errors.required((*p, "description"))
        if otype == SUB_COMMAND_GROUP:
            if depth > 0:
                errors.add(
                    (*p, "type"), "APPLICATION_COMMAND_OPTION_TYPE_INVALID", "Sub-command groups cannot nest"
                )
            for j, child in enumerate(opt.get("options") or []):
                if child.get("type") != SUB_COMMAND:
                    errors.add(
                        (*p, "options", j, "type"),
                        "APPLICATION_COMMAND_OPTION_TYPE_INVALID",
                        "Sub-command groups may only contain sub-commands",
                    )
            _validate_options(errors, (*p, "options"), opt.get("options"), depth=depth + 1)
        elif otype == SUB_COMMAND:
            _validate_options(errors, (*p, "options"), opt.get("options"), depth=2)
        else:
            if opt.get("required"):
                if seen_optional:
                    errors.add(
                        (*p, "required"),
                        "APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID",
                        "Required options must be placed before non-required options",
                    )
            else:
                seen_optional = True
            choices = opt.get("choices") or []
            if len(choices) > 25:
                errors.max_length((*p, "choices"), 25)
            if choices and opt.get("autocomplete"):
                errors.add(
                    (*p, "autocomplete"),
                    "APPLICATION_COMMAND_OPTION_CHOICES_AUTOCOMPLETE",
                    "Autocomplete cannot be set with choices",
                )
            for k, choice in enumerate(choices):
                _check_len(errors, (*p, "choices", k, "name"), choice.get("name"), 100, minimum=1)
                if isinstance(choice.get("value"), str):
                    _check_len(errors, (*p, "choices", k, "value"), choice.get("value"), 100)
    if len(kinds) > 1:
        errors.add(
            path,
            "APPLICATION_COMMAND_OPTIONS_TYPE_INVALID",
            "Sub-command and sub-command group option types are mutually exclusive to all other types",
        )


def validate_commands(commands: Any) -> None:
    """Validate a bulk overwrite body (list of application commands)."""
    errors = FormErrors()
    if not isinstance(commands, list):
        errors.add((), "BASE_TYPE_LIST", "Must be an array.")
        errors.raise_if_any()
        return
    names: set[tuple[int, str]] = set()
    counts = {CHAT_INPUT: 0, USER_COMMAND: 0, MESSAGE_COMMAND: 0}
    for i, cmd in enumerate(commands):
        validate_command(errors, (i,), cmd)
        ctype = cmd.get("type", CHAT_INPUT) if isinstance(cmd, dict) else CHAT_INPUT
        key = (ctype, str(cmd.get("name")) if isinstance(cmd, dict) else "")
        if key in names:
            errors.add(
                (i, "name"), "APPLICATION_COMMANDS_DUPLICATE_NAME", "Application command names must be unique"
            )
        names.add(key)
        counts[ctype] = counts.get(ctype, 0) + 1
    if counts[CHAT_INPUT] > 100:
        errors.add((), "APPLICATION_COMMAND_TOO_MANY", "Maximum number of chat input commands reached (100)")
    errors.raise_if_any()


def validate_command(errors: FormErrors, path: Path, cmd: Any) -> None:
    if not isinstance(cmd, dict):
        errors.add(path, "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
        return
    ctype = cmd.get("type", CHAT_INPUT)
    if ctype not in (CHAT_INPUT, USER_COMMAND, MESSAGE_COMMAND, 4):
        errors.add((*path, "type"), "BASE_TYPE_CHOICES", "Value must be one of {1, 2, 3, 4}.")
        return
    if not _valid_name(cmd.get("name"), chat_input=ctype == CHAT_INPUT):
        errors.add((*path, "name"), "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid")
    desc = cmd.get("description")
    if ctype == CHAT_INPUT:
        if not desc:
            errors.required((*path, "description"))
        _check_len(errors, (*path, "description"), desc, 100)
        _validate_options(errors, (*path, "options"), cmd.get("options"), depth=0)
    elif desc:
        errors.add(
            (*path, "description"),
            "APPLICATION_COMMAND_CONTEXT_MENU_DESCRIPTION",
            "Context menu commands cannot have description",
        )
