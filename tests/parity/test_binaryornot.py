"""binaryornot's verdict (the pre-check of the server's reads and OHEditor's binary test) against
ours, on the seeded samples of `binary_samples.py`: every sample is written to a file, the
reference is `binaryornot.check.is_binary(path)` itself (binaryornot 0.4.4 + chardet 5.2.0, the
V0 venv), ours is `oh_files::is_binary` through `examples/binary_verdicts.rs` on the same path.

Our chardet step knows BOMs and UTF-8 only (docs/compatibility.md, "Binary detection"), so some
samples differ. Which ones is pinned below, sample by sample, with the rule that explains each
class: a new difference, or one that goes away, fails the test (then update the list and the
figures in the docs)."""

from __future__ import annotations

import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import binary_samples  # noqa: E402
import rust_example  # noqa: E402


def _two_high_bytes(data: bytes) -> bool:
    # A lone 2-byte UTF-8 character (`ö`) or any two bytes >= 0x80: chardet answers a single-byte
    # code page (TIS-620, ISO-8859-5, ...) with confidence 0.99, so the reference calls it text;
    # ours counts one multi-byte character (< 4) and calls it binary.
    return len(data) == 2 and all(b >= 0x80 for b in data)


def _bomless_utf16(data: bytes) -> bool:
    # UTF-16 without a BOM: chardet sometimes takes it for a single-byte code page (ISO-8859-9)
    # with confidence > 0.9 and the NULs decode, so the reference calls it text; ours does not
    # detect BOM-less UTF-16 and calls a NUL binary.
    return not data.startswith((b'\xff\xfe', b'\xfe\xff')) and b'\x00' in data[:1024]


DIFFERENCE_CLASSES = {
    'two high bytes (a lone ö)': _two_high_bytes,
    'BOM-less UTF-16': _bomless_utf16,
}

# The samples that differ for binary_samples.SEED, and the class each belongs to.
EXPECTED_DIFFERENCES = {
    'short/122': 'two high bytes (a lone ö)',
    'short/355': 'two high bytes (a lone ö)',
    'short/375': 'two high bytes (a lone ö)',
    'random_bytes/44': 'two high bytes (a lone ö)',
    'utf16le/58': 'BOM-less UTF-16',
}


def test_binaryornot_verdicts(tmp_path):
    from importlib.metadata import version

    from binaryornot.check import is_binary

    # The pinned differences are those of these releases (tests/reference/constraints.txt).
    assert (version('binaryornot'), version('chardet')) == ('0.4.4', '5.2.0')

    samples = binary_samples.samples()
    assert len(samples) >= 4000
    paths = []
    for n, (_, data) in enumerate(samples):
        path = tmp_path / f'{n}.txt'
        path.write_bytes(data)
        paths.append(str(path))
    reference = [is_binary(p) for p in paths]
    ours = [a == '1' for a in rust_example.answers('oh-files', 'binary_verdicts', paths)]

    data_of = dict(samples)
    differing = {sid for (sid, _), r, o in zip(samples, reference, ours) if r != o}
    for sid, cls in EXPECTED_DIFFERENCES.items():
        assert DIFFERENCE_CLASSES[cls](data_of[sid]), f'{sid} is listed as "{cls}" but is not one'
    new = sorted(differing - EXPECTED_DIFFERENCES.keys())
    gone = sorted(EXPECTED_DIFFERENCES.keys() - differing)
    detail = [f'{sid}: reference {"binary" if reference[i] else "text"}, {data_of[sid][:60]!r}'
              for i, (sid, _) in enumerate(samples) if sid in new]
    assert not new and not gone, f'new differences: {detail}; no longer different: {gone}'
    by_class = collections.Counter(EXPECTED_DIFFERENCES[s] for s in differing)
    print(f'binaryornot: {len(samples) - len(differing)}/{len(samples)} identical; differing: {dict(by_class)}')
