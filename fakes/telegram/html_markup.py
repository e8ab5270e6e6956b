"""The Bot API's `parse_mode=HTML`: the tags it accepts, the entities it yields, its error texts.

Telegram's parser is strict (an unescaped `<` or an unknown tag rejects the whole message with
400), which is exactly the kind of failure a bot must survive, so the fake parses as strictly and
answers with the same wording ("can't parse entities: Unsupported start tag \"x\" at byte offset N").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .entities import Entity, sort_entities, utf16_len
from .errors import ApiError

_SIMPLE = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "span": "spoiler",
}
SUPPORTED_TAGS = frozenset({*_SIMPLE, "a", "code", "pre", "blockquote", "tg-emoji"})
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_ENTITY_RE = re.compile(r"&(?:#(\d{1,8})|#[xX]([0-9a-fA-F]{1,8})|([a-zA-Z]{2,8}));")
_URL_RE = re.compile(r"^(?:(?:https?|tg|ftp)://\S+|[\w-]+(?:\.[\w-]+)+(?:[/?#]\S*)?)$")


@dataclass
class _Open:
    tag: str
    argument: str | None
    offset: int
    byte_pos: int


class _Parser:
    def __init__(self, source: str) -> None:
        self.src = source
        self.pos = 0
        self.out: list[str] = []
        self.u16 = 0
        self.stack: list[_Open] = []
        self.entities: list[Entity] = []

    def fail(self, detail: str) -> ApiError:
        return ApiError.bad_request(f"can't parse entities: {detail}")

    def byte_offset(self, pos: int) -> int:
        return len(self.src[:pos].encode())

    def emit(self, chunk: str) -> None:
        self.out.append(chunk)
        self.u16 += utf16_len(chunk)

    def at_end(self) -> bool:
        return self.pos >= len(self.src)

    def peek(self) -> str:
        return self.src[self.pos] if self.pos < len(self.src) else ""

    def skip_spaces(self) -> None:
        while not self.at_end() and self.src[self.pos].isspace():
            self.pos += 1

    def decode_entity(self) -> str | None:
        match = _ENTITY_RE.match(self.src, self.pos)
        if match is None:
            return None
        decimal, hexa, name = match.groups()
        if name is not None:
            if name not in _NAMED:
                return None
            char = _NAMED[name]
        else:
            code = int(decimal, 10) if decimal is not None else int(hexa, 16)
            if code == 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                return None
            char = chr(code)
        self.pos = match.end()
        return char

    def run(self) -> tuple[str, list[Entity]]:
        while not self.at_end():
            char = self.src[self.pos]
            if char == "&":
                decoded = self.decode_entity()
                if decoded is not None:
                    self.emit(decoded)
                    continue
            if char != "<":
                self.emit(char)
                self.pos += 1
                continue
            tag_pos = self.pos
            self.pos += 1
            if self.peek() == "/":
                self.end_tag(tag_pos)
            else:
                self.start_tag(tag_pos)
        if self.stack:
            raise self.fail(f'Can\'t find end tag corresponding to start tag "{self.stack[-1].tag}"')
        return "".join(self.out), sort_entities(self.entities)

    def start_tag(self, tag_pos: int) -> None:
        name_start = self.pos
        while not self.at_end() and not self.src[self.pos].isspace() and self.src[self.pos] != ">":
            self.pos += 1
        if self.at_end():
            raise self.fail(f"Unclosed start tag at byte offset {self.byte_offset(tag_pos)}")
        tag = self.src[name_start : self.pos].lower()
        if tag not in SUPPORTED_TAGS:
            raise self.fail(f'Unsupported start tag "{tag}" at byte offset {self.byte_offset(tag_pos)}')
        argument: str | None = None
        while self.peek() != ">":
            name, value = self.attribute(tag, tag_pos)
            if name is None:
                break
            argument = _argument(tag, name, value, argument)
        self.pos += 1
        if tag == "span" and argument != "spoiler":
            raise self.fail(
                f'Tag "span" must have class "tg-spoiler" at byte offset {self.byte_offset(tag_pos)}'
            )
        self.stack.append(_Open(tag, argument, self.u16, tag_pos))

    def attribute(self, tag: str, tag_pos: int) -> tuple[str | None, str | None]:
        self.skip_spaces()
        if self.at_end():
            raise self.fail(f'Unclosed start tag "{tag}" at byte offset {self.byte_offset(tag_pos)}')
        if self.peek() == ">":
            return None, None
        name_start = self.pos
        while not self.at_end() and not self.src[self.pos].isspace() and self.src[self.pos] not in "=>/\"'":
            self.pos += 1
        name = self.src[name_start : self.pos].lower()
        if not name:
            raise self.fail(
                f'Empty attribute name in the tag "{tag}" at byte offset {self.byte_offset(tag_pos)}'
            )
        self.skip_spaces()
        if self.at_end():
            raise self.fail(f'Unclosed start tag "{tag}" at byte offset {self.byte_offset(tag_pos)}')
        if self.peek() != "=":
            return name, None
        self.pos += 1
        self.skip_spaces()
        if self.at_end():
            raise self.fail(f'Unclosed start tag "{tag}" at byte offset {self.byte_offset(tag_pos)}')
        quote = self.peek()
        if quote not in "\"'":
            token_start = self.pos
            while not self.at_end() and (self.src[self.pos].isalnum() or self.src[self.pos] in ".-"):
                self.pos += 1
            if self.at_end() or not (self.src[self.pos].isspace() or self.src[self.pos] == ">"):
                raise self.fail(
                    f"Unexpected end of name token at byte offset {self.byte_offset(token_start)}"
                )
            return name, self.src[token_start : self.pos].lower()
        self.pos += 1
        value: list[str] = []
        while not self.at_end() and self.src[self.pos] != quote:
            if self.src[self.pos] == "&":
                decoded = self.decode_entity()
                if decoded is not None:
                    value.append(decoded)
                    continue
            value.append(self.src[self.pos])
            self.pos += 1
        if self.at_end():
            raise self.fail(f"Unclosed start tag at byte offset {self.byte_offset(tag_pos)}")
        self.pos += 1
        return name, "".join(value)

    def end_tag(self, tag_pos: int) -> None:
        self.pos += 1
        name_start = self.pos
        while not self.at_end() and not self.src[self.pos].isspace() and self.src[self.pos] != ">":
            self.pos += 1
        name = self.src[name_start : self.pos].lower()
        self.skip_spaces()
        if self.peek() != ">":
            raise self.fail(f"Unclosed end tag at byte offset {self.byte_offset(tag_pos)}")
        self.pos += 1
        if not self.stack:
            raise self.fail(f"Unexpected end tag at byte offset {self.byte_offset(tag_pos)}")
        opened = self.stack.pop()
        if name and name != opened.tag:
            raise self.fail(
                f"Unmatched end tag at byte offset {self.byte_offset(tag_pos)}, "
                f'expected "</{opened.tag}>", found "</{name}>"'
            )
        if self.u16 > opened.offset:
            self.close(opened)

    def close(self, opened: _Open) -> None:
        offset, length = opened.offset, self.u16 - opened.offset
        span: Entity = {"offset": offset, "length": length}
        tag = opened.tag
        if tag in _SIMPLE:
            self.entities.append({"type": _SIMPLE[tag], **span})
        elif tag == "a":
            url = opened.argument
            if url and _URL_RE.match(url):
                self.entities.append({"type": "text_link", **span, "url": url})
        elif tag == "code":
            self.entities.append({"type": "code", **span, **_language(opened.argument)})
        elif tag == "pre":
            last = self.entities[-1] if self.entities else None
            if last and last["type"] == "code" and last["offset"] == offset and last["length"] == length:
                last["type"] = "pre"
            else:
                self.entities.append({"type": "pre", **span})
        elif tag == "blockquote":
            kind = "expandable_blockquote" if opened.argument == "expandable" else "blockquote"
            self.entities.append({"type": kind, **span})
        elif tag == "tg-emoji":
            if not (opened.argument or "").isdigit():
                raise self.fail("Invalid custom emoji identifier specified")
            self.entities.append({"type": "custom_emoji", **span, "custom_emoji_id": opened.argument})


def _argument(tag: str, name: str, value: str | None, current: str | None) -> str | None:
    if tag == "a" and name == "href":
        return value
    if tag == "code" and name == "class" and value and value.startswith("language-"):
        return value.removeprefix("language-")
    if tag == "span" and name == "class" and value == "tg-spoiler":
        return "spoiler"
    if tag == "tg-emoji" and name == "emoji-id":
        return value
    if tag == "blockquote" and name == "expandable":
        return "expandable"
    return current


def _language(argument: str | None) -> dict[str, str]:
    return {"language": argument} if argument else {}


def parse_html(source: str) -> tuple[str, list[Entity]]:
    """Text without tags and its entities; raises ApiError(400) as Telegram does on bad markup."""
    return _Parser(source).run()
