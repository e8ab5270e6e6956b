"""Image sniffing for sendPhoto: Telegram rejects bytes it cannot decode as an image.

Only the header is read (PNG, GIF, JPEG, WebP): enough to refuse garbage with
IMAGE_PROCESS_FAILED and to report width/height like the real PhotoSize objects.
"""

from __future__ import annotations

import struct


def image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) of a PNG, GIF, JPEG or WebP image, or None if the bytes are not one."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) >= 24 and data[12:16] == b"IHDR":
        width, height = struct.unpack(">II", data[16:24])
        return _positive(width, height)
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
        return _positive(width, height)
    if data.startswith(b"\xff\xd8"):
        return _jpeg_size(data)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP" and len(data) >= 30:
        if data[12:16] == b"VP8 ":
            width, height = struct.unpack("<HH", data[26:30])
            return _positive(width & 0x3FFF, height & 0x3FFF)
        if data[12:16] == b"VP8L" and len(data) >= 25:
            bits = int.from_bytes(data[21:25], "little")
            return _positive((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    pos = 2
    while pos + 9 < len(data):
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            pos += 2
            continue
        (length,) = struct.unpack(">H", data[pos + 2 : pos + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[pos + 5 : pos + 9])
            return _positive(width, height)
        pos += 2 + length
    return None


def _positive(width: int, height: int) -> tuple[int, int] | None:
    return (width, height) if width > 0 and height > 0 else None


def photo_sizes(width: int, height: int, file_size: int) -> list[tuple[int, int, int]]:
    """The (width, height, approximate size) variants Telegram stores: thumbnails up to the original."""
    sizes: list[tuple[int, int, int]] = []
    biggest = max(width, height)
    for side in (90, 320, 800, 1280):
        if biggest > side:
            scale = side / biggest
            w, h = max(1, round(width * scale)), max(1, round(height * scale))
            sizes.append((w, h, max(1, round(file_size * scale * scale))))
    if biggest <= 1280:
        sizes.append((width, height, file_size))
    else:
        sizes[-1] = (sizes[-1][0], sizes[-1][1], file_size)
    return sizes
