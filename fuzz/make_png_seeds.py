#!/usr/bin/env python3
"""Rebuilds fuzz/corpus/png/: small PNGs of every colour type and bit depth
(plain and Adam7), palette + tRNS, a palette shorter than its indices, and
damaged copies (cut short, a flipped IDAT byte, a header claiming a huge
size), the seeds of fuzz_image's PNG path. Written with Python's zlib, not
PIL: PIL cannot write 16-bit colour."""
import pathlib
import struct
import sys
import zlib

OUT = pathlib.Path(__file__).resolve().parent / "corpus" / "png"
CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
DEPTHS = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16), 6: (8, 16)}


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def pack_row(samples, depth):
    if depth >= 8:
        return bytes(b for s in samples for b in (s.to_bytes(2, "big") if depth == 16 else bytes([s])))
    per_byte = 8 // depth
    out = bytearray()
    for i in range(0, len(samples), per_byte):
        byte = 0
        for k in range(per_byte):
            s = samples[i + k] if i + k < len(samples) else 0
            byte |= s << (8 - depth * (k + 1))
        out.append(byte)
    return bytes(out)


def adam7(width, height):
    """(x0, y0, dx, dy) of the seven passes."""
    return [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def encode(width, height, depth, ctype, pixel, interlace=False, plte=None, trns=None):
    """pixel(x, y) -> tuple of samples. Filter 0 on every row."""
    raw = bytearray()
    passes = adam7(width, height) if interlace else [(0, 0, 1, 1)]
    for x0, y0, dx, dy in passes:
        xs = range(x0, width, dx)
        if not xs:
            continue
        for y in range(y0, height, dy):
            raw += b"\0" + pack_row([s for x in xs for s in pixel(x, y)], depth)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, ctype, 0, 0, int(interlace)))
    if plte is not None:
        png += chunk(b"PLTE", plte)
    if trns is not None:
        png += chunk(b"tRNS", trns)
    return png + chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + chunk(b"IEND", b"")


def sample_pixel(depth, ctype):
    top = (1 << depth) - 1
    n = CHANNELS[ctype]
    return lambda x, y: tuple((x * 37 + y * 101 + c * 71) * 2654435761 % (top + 1) for c in range(n))


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.iterdir():
        old.unlink()
    seeds = {}
    for ctype, depths in DEPTHS.items():
        for depth in depths:
            for interlace in (False, True):
                plte = bytes(i % 256 for i in range(3 * min(256, 1 << depth))) if ctype == 3 else None
                name = f"type{ctype}-{depth}bit{'-adam7' if interlace else ''}.png"
                seeds[name] = encode(13, 9, depth, ctype, sample_pixel(depth, ctype), interlace, plte)
    seeds["palette-trns.png"] = encode(13, 9, 8, 3, lambda x, y: ((x + y) % 4,), plte=bytes(range(12)), trns=b"\x00\x80")
    seeds["palette-short-plte.png"] = encode(13, 9, 8, 3, lambda x, y: ((x * y) % 256,), plte=bytes(range(6)))
    seeds["gray16-trns.png"] = encode(13, 9, 16, 0, sample_pixel(16, 0), trns=b"\x01\x00")
    seeds["rgb8-trns.png"] = encode(13, 9, 8, 2, sample_pixel(8, 2), trns=b"\0\1\0\2\0\3")
    good = seeds["type2-8bit.png"]
    idat = good.index(b"IDAT")
    seeds["bad-cut-in-idat.png"] = good[: idat + 30]
    seeds["bad-no-iend.png"] = good[:-12]
    seeds["bad-flipped-idat.png"] = good[: idat + 12] + bytes([good[idat + 12] ^ 0x10]) + good[idat + 13:]
    seeds["bad-huge-header.png"] = good[:16] + struct.pack(">II", 60000, 60000) + good[24:]
    for name, data in seeds.items():
        (OUT / name).write_bytes(data)
    print(f"{len(seeds)} seeds in {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
