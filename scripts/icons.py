"""Draws the app's PNG icons (static/icons/) from the favicon's design, with the standard library alone.

Run ``python scripts/icons.py`` after changing the design; the PNGs are committed.
The maskable icon keeps the columns inside the central 80 % a platform may crop to.
"""

import struct
import zlib
from pathlib import Path

ICONS = Path(__file__).resolve().parent.parent / "static" / "icons"
BACKGROUND = (0x1D, 0x23, 0x30)
#: The favicon's three kanban columns: x, top, width, height on its 32-unit grid, and colour.
COLUMNS = [
    (6, 7, 5, 18, (0x74, 0x8F, 0xFC)),
    (13.5, 7, 5, 12, (0xF5, 0x9F, 0x00)),
    (21, 7, 5, 7, (0x40, 0xC0, 0x57)),
]


def draw(size: int, *, maskable: bool) -> list[bytearray]:
    """Rows of RGB pixels: the background full-bleed, the columns scaled (to 80 % when maskable)."""
    rows = [bytearray(BACKGROUND * size) for _ in range(size)]
    scale = size / 32 * (0.8 if maskable else 1.0)
    offset = size * 0.1 if maskable else 0.0
    for x, y, width, height, colour in COLUMNS:
        left, top = round(offset + x * scale), round(offset + y * scale)
        right, bottom = round(offset + (x + width) * scale), round(offset + (y + height) * scale)
        for row in rows[top:bottom]:
            row[left * 3 : right * 3] = bytes(colour) * (right - left)
    return rows


def png(rows: list[bytearray]) -> bytes:
    """A truecolour PNG of ``rows`` (PNG spec: signature, IHDR, IDAT, IEND)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    height, width = len(rows), len(rows[0]) // 3
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    raw = b"".join(b"\x00" + bytes(row) for row in rows)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def main() -> None:
    ICONS.mkdir(exist_ok=True)
    for name, size, maskable in [
        ("icon-192.png", 192, False),
        ("icon-512.png", 512, False),
        ("icon-maskable-512.png", 512, True),
        ("apple-touch-icon.png", 180, True),
    ]:
        (ICONS / name).write_bytes(png(draw(size, maskable=maskable)))


if __name__ == "__main__":
    main()
