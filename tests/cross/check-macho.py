"""Static checks of the macOS artifacts, which this machine cannot run (tests/cross/run.sh).

    python tests/cross/check-macho.py ARCH MIN_MACOS EXECUTABLE ADDON

ARCH is arm64 or x86_64, MIN_MACOS the oldest macOS release it must load on (11.0, 10.15).
For each Mach-O file (a thin 64-bit one, read with the load-command layout of <mach-o/loader.h>):
- the CPU type is ARCH; the file type is an executable (the headless executor) or a dylib/bundle
  (the napi addon);
- the minimum OS version (LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX) is MIN_MACOS;
- every library it loads is the system's (/usr/lib/, /System/Library/Frameworks/), never a path
  of this machine;
- every imported symbol is bound (dyld's bind opcodes or chained fixups) to one of those
  libraries, except in the addon the N-API functions, which Node provides at load time
  (`-undefined dynamic_lookup`): those, and only those, are looked up dynamically;
- the addon's install name is @rpath-relative, not the path it was linked at;
- arm64 files carry a code signature (macOS on Apple silicon runs no unsigned code) whose page
  hashes match the file;
- no path of the build machine appears anywhere in the file ($HOME, the repository).
Prints a summary per file; exits 1 on the first file that fails a check (all problems listed).
"""

from __future__ import annotations

import hashlib
import os
import struct
import sys
from pathlib import Path

CPU = {'arm64': 0x0100000C, 'x86_64': 0x01000007}
MH_EXECUTE, MH_DYLIB, MH_BUNDLE = 2, 6, 8
LC_SYMTAB, LC_LOAD_DYLIB, LC_ID_DYLIB, LC_LOAD_WEAK_DYLIB = 0x2, 0xC, 0xD, 0x80000018
LC_REEXPORT_DYLIB, LC_LAZY_LOAD_DYLIB, LC_LOAD_UPWARD_DYLIB = 0x8000001F, 0x20, 0x80000023
LC_RPATH, LC_CODE_SIGNATURE = 0x8000001C, 0x1D
LC_VERSION_MIN_MACOSX, LC_BUILD_VERSION = 0x24, 0x32
LC_DYLD_INFO, LC_DYLD_INFO_ONLY, LC_DYLD_CHAINED_FIXUPS = 0x22, 0x80000022, 0x80000034
PLATFORM_MACOS = 1
DYLIB_CMDS = (LC_LOAD_DYLIB, LC_LOAD_WEAK_DYLIB, LC_REEXPORT_DYLIB, LC_LAZY_LOAD_DYLIB, LC_LOAD_UPWARD_DYLIB)
DYNAMIC_LOOKUP_ORDINAL = 0xFE
SYSTEM_PREFIXES = ('/usr/lib/', '/System/Library/Frameworks/')
REPO = Path(__file__).resolve().parents[2]


def version(v: int) -> str:
    s = f'{v >> 16}.{(v >> 8) & 0xFF}'
    return s + (f'.{v & 0xFF}' if v & 0xFF else '')


def cstr(data: bytes, off: int) -> str:
    end = data.index(b'\0', off)
    return data[off:end].decode('utf-8', 'replace')


def uleb(b: bytes, i: int) -> tuple[int, int]:
    r = s = 0
    while True:
        x = b[i]
        i += 1
        r |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return r, i


def bind_ordinals(data: bytes, off: int, size: int, out: dict[str, int]) -> None:
    """Which library each symbol is bound to, from dyld's bind opcodes (<mach-o/loader.h>): the
    symbol table's library ordinal is advisory, dyld follows these."""
    b = data[off:off + size]
    i, ordinal, sym = 0, 0, None
    while i < len(b):
        op, imm = b[i] & 0xF0, b[i] & 0x0F
        i += 1
        if op == 0x10:  # SET_DYLIB_ORDINAL_IMM
            ordinal = imm
        elif op == 0x20:  # SET_DYLIB_ORDINAL_ULEB
            ordinal, i = uleb(b, i)
        elif op == 0x30:  # SET_DYLIB_SPECIAL_IMM: 0 self, -1 main executable, -2 flat lookup
            ordinal = (imm | 0xF0) & 0xFF if imm else 0
        elif op == 0x40:  # SET_SYMBOL_TRAILING_FLAGS_IMM + name
            end = b.index(b'\0', i)
            sym = b[i:end].decode('utf-8', 'replace')
            i = end + 1
        elif op in (0x60, 0x70, 0x80, 0xA0):  # addend (sleb), segment+offset, add addr, bind+add
            i = uleb(b, i)[1]
            if op == 0xA0 and sym:
                out[sym] = ordinal
        elif op == 0xC0:  # DO_BIND_ULEB_TIMES_SKIPPING_ULEB
            i = uleb(b, uleb(b, i)[1])[1]
            if sym:
                out[sym] = ordinal
        elif op in (0x90, 0xB0) and sym:  # DO_BIND, DO_BIND_ADD_ADDR_IMM_SCALED
            out[sym] = ordinal


def chained_ordinals(data: bytes, off: int, out: dict[str, int]) -> None:
    """The same from LC_DYLD_CHAINED_FIXUPS (imports format 1: DYLD_CHAINED_IMPORT)."""
    _v, _starts, imports, symbols, count, fmt, _sfmt = struct.unpack_from('<7I', data, off)
    if fmt != 1:
        raise ValueError(f'chained fixups import format {fmt} not read by this check')
    for k in range(count):
        (x,) = struct.unpack_from('<I', data, off + imports + 4 * k)
        out[cstr(data, off + symbols + (x >> 9))] = x & 0xFF


def signature_problems(data: bytes, off: int, size: int) -> list[str]:
    """Checks the code directory's page hashes against the file (an ad-hoc signature that a later
    edit of the file, e.g. a strip, left stale makes macOS kill the process on Apple silicon)."""
    magic, _length, count = struct.unpack_from('>III', data, off)
    if magic != 0xFADE0CC0:  # CSMAGIC_EMBEDDED_SIGNATURE
        return [f'code signature magic {magic:#x}']
    problems = []
    found = False
    for k in range(count):
        _type, blob = struct.unpack_from('>II', data, off + 12 + 8 * k)
        b = off + blob
        if struct.unpack_from('>I', data, b)[0] != 0xFADE0C02:  # CSMAGIC_CODEDIRECTORY
            continue
        found = True
        (_m, _len, _ver, _flags, hash_off, _ident, _nspecial, ncode, limit, hsize, htype, _plat,
         page_log) = struct.unpack_from('>IIIIIIIIIBBBB', data, b)
        if htype != 2:  # CS_HASHTYPE_SHA256
            problems.append(f'code directory hash type {htype} not checked here')
            continue
        page = 1 << page_log
        for n in range(ncode):
            chunk = data[n * page:min((n + 1) * page, limit)]
            want = data[b + hash_off + n * hsize:b + hash_off + (n + 1) * hsize]
            if hashlib.sha256(chunk).digest()[:hsize] != want:
                problems.append(f'code signature: page {n} of {ncode} does not match its hash (a stale signature)')
                break
    if not found:
        problems.append('code signature without a code directory')
    return problems


def parse(data: bytes) -> dict:
    magic, cputype, _sub, filetype, ncmds, _size, _flags, _res = struct.unpack_from('<IiiIIIII', data, 0)
    if magic != 0xFEEDFACF:
        raise ValueError(f'not a thin little-endian 64-bit Mach-O (magic {magic:#x})')
    info = {'cputype': cputype & 0xFFFFFFFF, 'filetype': filetype, 'dylibs': [], 'rpaths': [],
            'minos': None, 'signed': False, 'imports': [], 'id': None, 'signature_problems': []}
    bound: dict[str, int] = {}
    off = 32
    symtab = None
    for _ in range(ncmds):
        cmd, cmdsize = struct.unpack_from('<II', data, off)
        if cmd in DYLIB_CMDS:
            (name_off,) = struct.unpack_from('<I', data, off + 8)
            info['dylibs'].append(cstr(data, off + name_off))
        elif cmd == LC_RPATH:
            (path_off,) = struct.unpack_from('<I', data, off + 8)
            info['rpaths'].append(cstr(data, off + path_off))
        elif cmd == LC_BUILD_VERSION:
            platform, minos = struct.unpack_from('<II', data, off + 8)
            if platform == PLATFORM_MACOS:
                info['minos'] = version(minos)
        elif cmd == LC_VERSION_MIN_MACOSX:
            (minos,) = struct.unpack_from('<I', data, off + 8)
            info['minos'] = version(minos)
        elif cmd == LC_ID_DYLIB:
            (name_off,) = struct.unpack_from('<I', data, off + 8)
            info['id'] = cstr(data, off + name_off)
        elif cmd in (LC_DYLD_INFO, LC_DYLD_INFO_ONLY):
            _ro, _rs, bo, bs, wo, ws, lo, ls = struct.unpack_from('<8I', data, off + 8)
            for o, n in ((bo, bs), (wo, ws), (lo, ls)):
                if n:
                    bind_ordinals(data, o, n, bound)
        elif cmd == LC_DYLD_CHAINED_FIXUPS:
            (dataoff,) = struct.unpack_from('<I', data, off + 8)
            chained_ordinals(data, dataoff, bound)
        elif cmd == LC_CODE_SIGNATURE:
            info['signed'] = True
            dataoff, datasize = struct.unpack_from('<II', data, off + 8)
            info['signature_problems'] = signature_problems(data, dataoff, datasize)
        elif cmd == LC_SYMTAB:
            symtab = struct.unpack_from('<IIII', data, off + 8)
        off += cmdsize
    if symtab:
        symoff, nsyms, stroff, _strsize = symtab
        for i in range(nsyms):
            n_strx, n_type, _n_sect, n_desc, _n_value = struct.unpack_from('<IBBHQ', data, symoff + 16 * i)
            if n_type & 0xE0:  # a debugging (stab) entry
                continue
            if (n_type & 0x0E) == 0 and (n_type & 0x01):  # N_UNDF | N_EXT: an import
                name = cstr(data, stroff + n_strx)
                info['imports'].append((name, bound.get(name, (n_desc >> 8) & 0xFF)))
    return info


def check(path: str, arch: str, min_macos: str, role: str) -> list[str]:
    data = Path(path).read_bytes()
    problems = []
    try:
        info = parse(data)
    except (ValueError, struct.error) as e:
        return [f'{path}: {e}']
    if info['cputype'] != CPU[arch]:
        problems.append(f'CPU type {info["cputype"]:#x}, expected {arch} ({CPU[arch]:#x})')
    want = (MH_EXECUTE,) if role == 'executable' else (MH_DYLIB, MH_BUNDLE)
    if info['filetype'] not in want:
        problems.append(f'file type {info["filetype"]}, expected one of {want} ({role})')
    if info['minos'] != min_macos:
        problems.append(f'minimum macOS {info["minos"]}, expected {min_macos}')
    for lib in info['dylibs']:
        if not lib.startswith(SYSTEM_PREFIXES):
            problems.append(f'loads {lib}, not a system library')
    if role == 'addon' and info['id'] and not info['id'].startswith('@rpath/'):
        problems.append(f'install name {info["id"]!r} (expected @rpath/...)')
    for rp in info['rpaths']:
        problems.append(f'has an rpath {rp}')
    n_dylibs = len(info['dylibs'])
    flat = sorted(name for name, ordinal in info['imports'] if ordinal == DYNAMIC_LOOKUP_ORDINAL)
    if role == 'executable' and flat:
        problems.append(f'{len(flat)} symbols looked up dynamically (an executable binds each to a library): {flat[:5]}')
    if role == 'addon':
        not_napi = [s for s in flat if not s.startswith(('_napi_', '_node_api_'))]
        if not_napi:
            problems.append(f'symbols looked up dynamically that Node does not provide: {not_napi[:10]}')
        if not flat:
            problems.append('no N-API symbol is looked up dynamically: not a napi addon?')
    bad_ordinal = [(s, o) for s, o in info['imports'] if o != DYNAMIC_LOOKUP_ORDINAL and not (1 <= o <= n_dylibs)]
    if bad_ordinal:
        problems.append(f'imports bound to no loaded library: {bad_ordinal[:5]}')
    if arch == 'arm64' and not info['signed']:
        problems.append('no code signature (macOS on Apple silicon refuses unsigned code)')
    problems += info['signature_problems']
    # $HOME (the caches, where the sources are built) and the checkout; not the checkout's parent,
    # which may be a shared folder such as /tmp/ (the tools' descriptions name /tmp/run.py).
    for p in {os.path.expanduser('~') + '/', str(REPO) + '/'}:
        i = data.find(p.encode())
        if i >= 0:
            end = data.find(b'\0', i)
            problems.append(f'contains the build machine path {data[i:min(end, i + 120)].decode("utf-8", "replace")!r}')
    by_lib: dict[str, int] = {}
    for _name, ordinal in info['imports']:
        lib = 'dynamic lookup' if ordinal == DYNAMIC_LOOKUP_ORDINAL else (
            info['dylibs'][ordinal - 1].rsplit('/', 1)[-1] if 1 <= ordinal <= n_dylibs else f'ordinal {ordinal}')
        by_lib[lib] = by_lib.get(lib, 0) + 1
    print(f'check-macho: {path}: {arch} {role}, macOS >= {info["minos"]}, signed={info["signed"]}, '
          f'imports {len(info["imports"])} ({", ".join(f"{k}: {v}" for k, v in sorted(by_lib.items()))})')
    return [f'{path}: {p}' for p in problems]


def main() -> int:
    if len(sys.argv) != 5 or sys.argv[1] not in CPU:
        print(__doc__, file=sys.stderr)
        return 2
    arch, min_macos, exe, addon = sys.argv[1:]
    problems = check(exe, arch, min_macos, 'executable') + check(addon, arch, min_macos, 'addon')
    for p in problems:
        print(f'check-macho: {p}', file=sys.stderr)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
