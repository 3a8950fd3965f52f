"""The files of the binaryornot differential (`test_binaryornot.py`): seeded, so a seed gives the
same samples on every machine. Each class is one kind of file the docs make a claim about
(docs/compatibility.md, "Binary detection"); a sample's id is `class/index`."""

from __future__ import annotations

import random

SEED = 20261127

ASCII_WORDS = ['def', 'return', 'x = 1', 'print(x)', 'the', 'file', 'import os', '#', '{', '}', 'if', 'else:',
               '    ', '\t', 'for i in range(10):', 'name', 'value', '"s"', "'c'", '//', '<div>', 'SELECT *']
# Non-ASCII characters of each UTF-8 length: 2 bytes (Latin, Greek, Cyrillic), 3 bytes (CJK,
# symbols), 4 bytes (emoji, which chardet's UTF-8 state machine rejects).
UTF8_CHARS = {
    2: 'éöüßçñøåæÆÖÜÉ' + 'αβγδλπΩ' + 'абвгдежзПРС',
    3: '日本語中文字漢한국어✓€→…“”',
    4: '🎉😀🚀𝔘𐍈',
}
LATIN1_WORDS = ['café', 'naïve', 'Grüße', 'Köln', 'señor', 'façade', 'déjà', 'Ærø', 'smörgåsbord', 'über',
                'crème brûlée', '½', '©', '±', 'ÿ']


def _ascii_text(rng: random.Random, size: int) -> str:
    out: list[str] = []
    n = 0
    while n < size:
        w = rng.choice(ASCII_WORDS)
        out.append(w)
        out.append(rng.choice([' ', ' ', ' ', '\n', '\r\n']))
        n += len(w) + 1
    return ''.join(out)[:size]


def _utf8_text(rng: random.Random, size: int, density: float, widths: list[int]) -> str:
    """ASCII text in which each character is replaced by a non-ASCII one with probability density."""
    base = _ascii_text(rng, size)
    return ''.join(rng.choice(UTF8_CHARS[rng.choice(widths)]) if rng.random() < density else c for c in base)


def _size(rng: random.Random) -> int:
    # Most files are under the 1024-byte chunk; some are over it, so the chunk cuts a character.
    return rng.choice([rng.randint(1, 40), rng.randint(40, 400), rng.randint(400, 1100), rng.randint(1000, 3000)])


def _utf8(rng: random.Random) -> bytes:
    density = rng.choice([0.001, 0.005, 0.02, 0.05, 0.1, 0.3, 0.6, 1.0])
    widths = rng.choice([[2], [3], [4], [2, 3], [2, 3, 4]])
    return _utf8_text(rng, _size(rng), density, widths).encode('utf-8')


def _utf8_bom(rng: random.Random) -> bytes:
    return b'\xef\xbb\xbf' + _utf8(rng)


def _short(rng: random.Random) -> bytes:
    """1 to 8 characters: a lone accented letter, a few CJK characters, a word."""
    n = rng.randint(1, 8)
    pool = rng.choice([UTF8_CHARS[2], UTF8_CHARS[3], UTF8_CHARS[4], UTF8_CHARS[2] + 'abc xyz', 'abc xyz\n'])
    text = ''.join(rng.choice(pool) for _ in range(n))
    latin1_ok = all(ord(c) < 256 for c in text)
    return text.encode(rng.choice(['utf-8', 'utf-8', 'utf-8', 'latin-1']) if latin1_ok else 'utf-8')


def _latin1(rng: random.Random) -> bytes:
    size = _size(rng)
    out: list[str] = []
    n = 0
    density = rng.choice([0.02, 0.1, 0.3, 0.8])
    while n < size:
        w = rng.choice(LATIN1_WORDS) if rng.random() < density else rng.choice(ASCII_WORDS)
        out.append(w + rng.choice([' ', ' ', '\n']))
        n += len(w) + 1
    return ''.join(out)[:size].encode('latin-1')


def _random_bytes(rng: random.Random) -> bytes:
    return bytes(rng.randrange(256) for _ in range(_size(rng)))


def _ascii_with_high_bytes(rng: random.Random) -> bytes:
    """Text with a few random bytes >= 0x80 (a corrupt or unknown 8-bit file)."""
    data = bytearray(_ascii_text(rng, _size(rng)).encode())
    for _ in range(rng.randint(1, 12)):
        data[rng.randrange(len(data))] = rng.randrange(0x80, 0x100)
    return bytes(data)


def _control(rng: random.Random) -> bytes:
    """ASCII text with control characters: NUL, ESC, DEL, the C0 set, at a chosen rate."""
    data = bytearray(_ascii_text(rng, _size(rng)).encode())
    rate = rng.choice([0.001, 0.01, 0.1, 0.4, 0.9])
    for i in range(len(data)):
        if rng.random() < rate:
            data[i] = rng.choice([0, 1, 7, 0x0e, 0x0f, 0x1b, 0x1f, 0x7f])
    return bytes(data)


def _unicode_text(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return _ascii_text(rng, _size(rng) // 2 + 1)
    return _utf8_text(rng, _size(rng) // 2 + 1, rng.choice([0.05, 0.3, 1.0]), rng.choice([[2], [3], [2, 3, 4]]))


def _wide(encoding: str, bom: bool):
    def make(rng: random.Random) -> bytes:
        data = _unicode_text(rng).encode(encoding)
        if bom:
            data = {'utf-16-le': b'\xff\xfe', 'utf-16-be': b'\xfe\xff',
                    'utf-32-le': b'\xff\xfe\x00\x00', 'utf-32-be': b'\x00\x00\xfe\xff'}[encoding] + data
        return data
    return make


# class name -> (how many, generator). Together at least 4,000 samples.
CLASSES = {
    'ascii': (300, lambda rng: _ascii_text(rng, _size(rng)).encode()),
    'utf8': (1200, _utf8),
    'utf8_bom': (200, _utf8_bom),
    'short': (400, _short),
    'latin1': (400, _latin1),
    'ascii_with_high_bytes': (200, _ascii_with_high_bytes),
    'random_bytes': (400, _random_bytes),
    'control': (300, _control),
    'utf16le_bom': (100, _wide('utf-16-le', True)),
    'utf16be_bom': (100, _wide('utf-16-be', True)),
    'utf16le': (100, _wide('utf-16-le', False)),
    'utf16be': (100, _wide('utf-16-be', False)),
    'utf32le_bom': (100, _wide('utf-32-le', True)),
    'utf32be_bom': (100, _wide('utf-32-be', True)),
    'utf32le': (100, _wide('utf-32-le', False)),
    'utf32be': (100, _wide('utf-32-be', False)),
}


def samples(seed: int = SEED) -> list[tuple[str, bytes]]:
    """Every sample as (`class/index`, bytes), in a fixed order."""
    out = []
    for name, (count, make) in CLASSES.items():
        rng = random.Random(f'{seed}/{name}')  # one stream per class: resizing one leaves the others
        out.extend((f'{name}/{i}', make(rng)) for i in range(count))
    return out
