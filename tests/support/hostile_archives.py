""".npz archives that claim more than they hold, for tests/workflow/test_npz.py: a deflated
run of zeros (a zip bomb: 1.2 GB from 1.17 MB), a zip directory that lies about a member's
size, and a directory whose members share one compressed kernel."""

from __future__ import annotations

import struct
import zipfile
import zlib
from io import BytesIO

import numpy as np

MIB = 1 << 20


def npy_header(shape: tuple, dtype=np.float64) -> bytes:
    """The .npy header (format 1.0) of a C-order array of `shape` and `dtype`."""
    with BytesIO() as stream:
        fields = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False}
        np.lib.format.write_array_header_1_0(stream, {**fields, "shape": shape})
        return stream.getvalue()


def deflated_zeros(header: bytes, mebibytes: int) -> tuple[bytes, int, int]:
    """(raw deflate stream, its uncompressed size, CRC-32) of `header` then `mebibytes`
    MiB of zeros, built without compressing them all: after a full flush the compressor
    starts from an empty dictionary, so every MiB of zeros compresses to the same bytes
    (checked below on two of them)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    zeros = bytes(MIB)
    head = compressor.compress(header) + compressor.flush(zlib.Z_FULL_FLUSH)
    chunk = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    assert compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH) == chunk
    stream = head + chunk * (mebibytes - 1) + chunk + compressor.flush()
    crc = zlib.crc32(header)
    for _ in range(mebibytes):
        crc = zlib.crc32(zeros, crc)
    return stream, len(header) + mebibytes * MIB, crc


def write_zip(path, members: list[tuple[str, bytes, int, int]], aliases: int = 0) -> None:
    """A zip of deflated `members` (name, raw deflate stream, uncompressed size, CRC-32),
    written field by field (zipfile compresses what it writes; these streams are made
    already). `aliases`: that many more central-directory entries naming the first
    member's bytes again, as the overlapping-member bombs do."""
    local, central, offset = [], [], 0
    for name, stream, size, crc in members:
        encoded = name.encode()
        fields = (20, 0, zipfile.ZIP_DEFLATED, 0, 0x21, crc, len(stream), size, len(encoded), 0)
        header = struct.pack("<IHHHHHIIIHH", 0x04034B50, *fields) + encoded
        local.append(header + stream)
        central.append((encoded, fields, offset))
        offset += len(header) + len(stream)
    first = central[0]
    central += [
        (f"alias{i}.npy".encode(), first[1][:-2] + (9 + len(str(i)), 0), first[2])
        for i in range(aliases)
    ]
    directory = b"".join(
        struct.pack("<IH", 0x02014B50, 20)
        + struct.pack("<HHHHHIIIHH", *fields)
        + struct.pack("<HHHII", 0, 0, 0, 0, at)
        + encoded
        for encoded, fields, at in central
    )
    end = struct.pack(
        "<IHHHHIIH", 0x06054B50, 0, 0, len(central), len(central), len(directory), offset, 0
    )
    with open(path, "wb") as fh:
        fh.write(b"".join(local) + directory + end)


def zeros_bomb(path, mebibytes: int = 1150) -> None:
    """An .npz of one member X.npy: float64 zeros, `mebibytes` MiB of them, deflated (the
    default: 1.2 GB from a 1.17 MB file), every size and checksum in it true."""
    header = npy_header((mebibytes * MIB // 8,))
    write_zip(path, [("X.npy", *deflated_zeros(header, mebibytes))])


def overlapping_bomb(path, aliases: int = 200) -> None:
    """An .npz of one deflated MiB of zeros named `aliases` more times by its directory:
    each entry within any ratio cap, all of them together 200 MiB from 1 KB."""
    header = npy_header((MIB // 8,))
    write_zip(path, [("X.npy", *deflated_zeros(header, 1))], aliases=aliases)


def lying_directory(path, member: str, claimed: int) -> None:
    """Rewrite the .npz `path` with every member deflated, `member`'s .npy header claiming
    `claimed` float64s, and the zip directory saying the member holds that many bytes (its
    local header and data stay true: zipfile reads the directory's word)."""
    with zipfile.ZipFile(path) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    with BytesIO(members[member]) as stream:
        np.lib.format.read_magic(stream)
        np.lib.format.read_array_header_1_0(stream)
        data = members[member][stream.tell() :]
    header = npy_header((claimed,))
    members[member] = header + data
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
        info = archive.getinfo(member)
        info.file_size = len(header) + claimed * 8  # written into the directory at close
