#!/usr/bin/env python3
"""Rebuilds fuzz/corpus/versions/, the seeds of fuzz_versions: a flags byte,
a kept manifest, a NUL and a tags file (format/SPEC.md sections 1.1 and 1.3),
checksums computed with the system's libxxhash. The manifests are those of
the target's fixture dataset (its UUIDs below), sound and damaged in the ways
issue 47 found: a tag line whose key is damaged, a changed number, a leading
zero, an empty name, a tag named twice, a uuid holding a byte that is not
UTF-8, all under valid checksums; plus a checksum mismatch, no tags file,
and a manifest 2 with segment, field group and drop lines."""
import ctypes
import ctypes.util
import pathlib

OUT = pathlib.Path(__file__).resolve().parent / "corpus" / "versions"
# The fixture's versions 1 and 2 (fuzz_versions.cc, WriteDataset): content-
# derived, so the same in every build.
UUID1 = b"6993e4d4-74ef-8548-a415-5c7581fbdd68"
UUID2 = b"49f17816-4671-8940-bd3e-c7040c957992"
OTHER = b"92bb11e6-5989-8bd0-a0c6-6b0b514a456f"

_xxhash = ctypes.CDLL(ctypes.util.find_library("xxhash") or "libxxhash.so.0")
_xxhash.XXH3_64bits.restype = ctypes.c_uint64
_xxhash.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]


def signed(body):
    return body + b"checksum %016x\n" % _xxhash.XXH3_64bits(body, len(body))


def manifest(generation, uuid):
    return signed(b"unirecord-manifest 1\ngeneration %d\nshards 1\nuuid %s\n" % (generation, uuid))


def tags(*lines):
    return signed(b"unirecord-tags 1\n" + b"".join(line + b"\n" for line in lines))


def seed(latest, manifest_text, tags_text=None):
    return bytes([1 if latest else 0]) + manifest_text + (b"" if tags_text is None else b"\0" + tags_text)


V1, V2 = manifest(1, UUID1), manifest(2, UUID2)
SOUND = tags(b"tag best 2", b"tag keep 1")
SEEDS = {
    "sound-kept": seed(False, V1, SOUND),
    "sound-latest": seed(True, V2, SOUND),
    "no-tags": seed(False, V1),
    "damaged-key": seed(False, V1, tags(b"tag best 2", b"ta- keep 1")),
    "changed-number": seed(False, V1, tags(b"tag best 2", b"tag keep 9")),
    "leading-zero": seed(False, V1, tags(b"tag best 2", b"tag keep 01")),
    "empty-name": seed(False, V1, tags(b"tag best 2", b"tag  1")),
    "named-twice": seed(False, V1, tags(b"tag keep 1", b"tag keep 2")),
    "tags-checksum-mismatch": seed(False, V1, b"unirecord-tags 1\ntag keep 1\nchecksum 0000000000000000\n"),
    "uuid-not-utf8": seed(False, manifest(1, b"\xff" + UUID1[1:]), SOUND),
    "uuid-not-utf8-latest": seed(True, manifest(2, UUID2[:20] + b"\xc3" + UUID2[21:]), SOUND),
    "uuid-uppercase": seed(False, manifest(1, UUID1.upper()), SOUND),
    "manifest2-segments": seed(True, signed(
        b"unirecord-manifest 2\ngeneration 2\nshards 2\nuuid " + OTHER + b"\nsegment 1 1 0 " + UUID1 +
        b"\nsegment 2 1 3 " + UUID2 + b"\nfields 1 2 " + OTHER + b" y,z%2C\ndrop 2 x\nreport rejects\n"), SOUND),
}


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.iterdir():
        old.unlink()
    for name, data in SEEDS.items():
        (OUT / name).write_bytes(data)
    print(f"{len(SEEDS)} seeds in {OUT}")


if __name__ == "__main__":
    main()
