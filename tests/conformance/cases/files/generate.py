#!/usr/bin/env python3
"""Generates the file-action conformance cases (`cases/files/*.json`).

Run it after editing: `python tests/conformance/cases/files/generate.py`. The JSON files are the
source of truth for the harness; this script only keeps them consistent and short to write.
"""
import base64
import json
from pathlib import Path

HERE = Path(__file__).parent
W = '{WS}'
GROUPS: dict[str, list] = {}


def case(group, name, actions, files=None, dirs=None, b64=None, modes=None, symlinks=None, notes=''):
    setup = {}
    if dirs:
        setup['dirs'] = dirs
    if files:
        setup['files'] = files
    if b64:
        setup['files_b64'] = {k: base64.b64encode(v).decode() for k, v in b64.items()}
    if modes:
        setup['modes'] = modes
    if symlinks:
        setup['symlinks'] = symlinks
    c = {'name': name}
    if notes:
        c['notes'] = notes
    if setup:
        c['setup'] = setup
    c['actions'] = actions
    GROUPS.setdefault(group, []).append(c)


def rd(path, **kw):
    return {'action': 'read', 'args': {'path': path, **kw}}


def view(path, vr=None, **kw):
    args = {'path': path, 'impl_source': 'oh_aci', **kw}
    if vr is not None:
        args['view_range'] = vr
    return {'action': 'read', 'args': args}


def wr(path, content, **kw):
    return {'action': 'write', 'args': {'path': path, 'content': content, **kw}}


def ed(command, path, **kw):
    return {'action': 'edit', 'args': {'command': command, 'path': path, **kw}}


def run(cmd):
    return {'action': 'run', 'args': {'command': cmd}}


FIVE = 'l0\nl1\nl2\nl3\nl4\n'
BIG = ''.join(f'row number {i:05d} of the big file\n' for i in range(3000))
CODE = 'def f():\n    return 1\n\n\nclass A:\n    x = 1\n    y = 2\n\n    def g(self):\n        return self.x\n\nprint(f())\n'

# ------------------------------------------------------------------ read (default)
g = 'read_default'
for s, e in [(0, -1), (2, -1), (10, -1), (1, 3), (2, 100), (-3, 2), (4, 5), (5, 6), (3, 3), (0, 0), (-1, -1), (0, -5), (7, 2)]:
    case(g, f'range_{s}_{e}'.replace('-', 'm'), [rd(f'{W}/f.txt', start=s, end=e)], files={'f.txt': FIVE},
         notes='§3.3 read_lines quirks')
case(g, 'two_lines_1_2', [rd(f'{W}/f.txt', start=1, end=2)], files={'f.txt': 'alpha\nbeta\n'}, notes='Example 6.4')
case(g, 'no_trailing_newline', [rd(f'{W}/f.txt'), rd(f'{W}/f.txt', start=1, end=2)], files={'f.txt': 'a\nb\nc'})
case(g, 'empty_file', [rd(f'{W}/e.txt'), rd(f'{W}/e.txt', start=0, end=3)], files={'e.txt': ''})
case(g, 'crlf_and_cr', [rd(f'{W}/f.txt')], files={'f.txt': 'a\r\nb\rc\r\n\r\nd'}, notes='universal newlines')
case(g, 'relative_to_cwd', [rd('f.txt'), rd('sub/../f.txt'), rd('./sub//g.txt')], files={'f.txt': 'top\n', 'sub/g.txt': 'g\n'},
     notes='relative paths resolve against the shell cwd; .. kept, // and . removed')
case(g, 'relative_after_cd', [run('cd sub'), rd('g.txt'), rd('missing.txt')], files={'sub/g.txt': 'in sub\n'})
case(g, 'not_found', [rd(f'{W}/nope.txt'), rd('nope/x.txt')], notes='error text with cwd')
case(g, 'directory', [rd(f'{W}/d'), rd(f'{W}/d/')], dirs=['d'])
case(g, 'not_utf8', [rd(f'{W}/l.txt')], b64={'l.txt': b'abc\xe9def\n' * 3 + b'plain text ' * 40})
case(g, 'utf8_text', [rd(f'{W}/u.txt')], files={'u.txt': 'héllo wörld — ünïcödé ✓ 日本語\nsecond\n'})
case(g, 'bom_kept', [rd(f'{W}/b.txt')], files={'b.txt': '\ufeffbom line\nnext\n'})
case(g, 'png_data_url', [rd(f'{W}/x.png'), rd(f'{W}/y.PNG'), rd(f'{W}/z.jpg'), rd(f'{W}/z.jpeg'), rd(f'{W}/z.bmp'), rd(f'{W}/z.gif')],
     files={'x.png': 'not really a png\n', 'y.PNG': 'upper\n', 'z.jpg': 'j', 'z.jpeg': 'jj', 'z.bmp': 'b', 'z.gif': 'g'},
     notes='text files with image suffixes pass the binary check and become data URLs')
case(g, 'pdf_video_data_url', [rd(f'{W}/a.pdf'), rd(f'{W}/a.mp4'), rd(f'{W}/a.webm'), rd(f'{W}/a.ogg'), rd(f'{W}/.png')],
     files={'a.pdf': '%PDF-text\n', 'a.mp4': 'm', 'a.webm': 'w', 'a.ogg': 'o', '.png': 'hidden png'})
case(g, 'binary_refused', [rd(f'{W}/bin.dat'), rd(f'{W}/img.png'), rd(f'{W}/x.pyc')],
     b64={'bin.dat': bytes(range(256)) * 4, 'img.png': b'\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR' + bytes(200)}, files={'x.pyc': 'text\n'},
     notes='§3.1 ERROR_BINARY_FILE, .pyc by name')
case(g, 'missing_pyc', [rd(f'{W}/nothere.pyc')], notes='.pyc is binary by name even when missing')
case(g, 'nul_byte', [rd(f'{W}/n.txt')], b64={'n.txt': b'hello\x00world\n'})
case(g, 'symlink', [rd(f'{W}/link')], files={'t.txt': 'target\n'}, symlinks={'link': 't.txt'})
case(g, 'big_file_slice', [rd(f'{W}/big.txt', start=2990, end=3000), rd(f'{W}/big.txt', start=5, end=7)], files={'big.txt': BIG})

# ------------------------------------------------------------------ write
g = 'write'
case(g, 'new_relative', [wr('w/new.txt', 'alpha\nbeta'), rd(f'{W}/w/new.txt')], notes='Example 6: parents created, newline added, mode 0664')
case(g, 'overwrite', [wr(f'{W}/f.txt', 'gamma'), rd(f'{W}/f.txt')], files={'f.txt': 'alpha\nbeta\n'})
case(g, 'range_1_3', [wr(f'{W}/f.txt', 'X\nY', start=1, end=3)], files={'f.txt': '1\n2\n3\n4\n5\n'}, notes='Example 6.3')
case(g, 'trailing_newline_doubles', [wr(f'{W}/f.txt', 'x\n')])
case(g, 'empty_content', [wr(f'{W}/e.txt', ''), wr(f'{W}/f.txt', '')], files={'f.txt': 'old\n'})
for s, e in [(0, 2), (2, -1), (-2, -1), (0, -2), (10, 20), (3, 1), (-10, 1), (5, 5)]:
    case(g, f'range_{s}_{e}'.replace('-', 'm'), [wr(f'{W}/f.txt', 'NEW', start=s, end=e)], files={'f.txt': FIVE},
         notes='insert_lines with Python list slicing')
case(g, 'crlf_existing', [wr(f'{W}/f.txt', 'mid', start=1, end=2)], files={'f.txt': 'a\r\nb\r\nc\r\n'}, notes='untouched lines become LF')
case(g, 'crlf_content', [wr(f'{W}/f.txt', 'a\r\nb\rc')], notes='content written verbatim apart from the split')
case(g, 'directory', [wr(f'{W}/d', 'x')], dirs=['d'])
case(g, 'not_utf8_existing', [wr(f'{W}/l.txt', 'x')], b64={'l.txt': b'caf\xe9\n'})
case(g, 'deep_parents', [wr(f'{W}/a/b/c/d.txt', 'deep'), view(f'{W}/a')])
case(g, 'keeps_mode', [wr(f'{W}/s.sh', 'echo hi')], files={'s.sh': '#!/bin/sh\n'}, modes={'s.sh': '0755'})
case(g, 'unicode', [wr(f'{W}/u.txt', 'ünï\n日本\n'), rd(f'{W}/u.txt')])
case(g, 'dot_segments', [wr(f'{W}/./x//y/z.txt', 'z'), wr(f'{W}/sub/../z.txt', 'z')], dirs=['sub'],
     notes='// and . removed, .. kept in the reported path and resolved by the OS')
case(g, 'then_edit', [wr(f'{W}/f.txt', 'one\ntwo'), ed('str_replace', f'{W}/f.txt', old_str='two', new_str='2'), rd(f'{W}/f.txt')])

# ------------------------------------------------------------------ view (file)
g = 'view_file'
case(g, 'example7', [ed('create', f'{W}/a.py', file_text='x = 1\ny = 2\n'), view(f'{W}/a.py'),
                     ed('str_replace', f'{W}/a.py', old_str=' = ', new_str='='), view(f'{W}/a.py', [2, 3])], notes='Example 7')
case(g, 'full', [view(f'{W}/c.py')], files={'c.py': CODE})
case(g, 'no_trailing_newline', [view(f'{W}/c.txt')], files={'c.txt': 'a\nb'})
case(g, 'empty', [view(f'{W}/e.txt'), view(f'{W}/e.txt', [1, 1])], files={'e.txt': ''})
case(g, 'only_newline', [view(f'{W}/e.txt'), view(f'{W}/e.txt', [1, 1])], files={'e.txt': '\n'})
for vr, nm in [([2, 4], '2_4'), ([1, -1], '1_m1'), ([3, -1], '3_m1'), ([5, 5], '5_5'), ([4, 100], '4_100'), ([0, 2], '0_2'),
               ([6, 7], '6_7'), ([-1, 2], 'm1_2'), ([3, 2], '3_2'), ([3, -2], '3_m2'), ([1], 'one'), ([1, 2, 3], 'three'),
               (['1', '2'], 'strings'), ([1.0, 2], 'float'), ([], 'empty_list'), ([True, 2], 'bool')]:
    case(g, f'range_{nm}', [view(f'{W}/f.txt', vr)], files={'f.txt': FIVE}, notes='§4.5 view_range checks')
case(g, 'range_string_value', [view(f'{W}/f.txt', 'ab'), view(f'{W}/f.txt', '')], files={'f.txt': FIVE})
case(g, 'range_int_value', [view(f'{W}/f.txt', 3)], files={'f.txt': FIVE}, notes='TypeError text')
case(g, 'splitlines_extra_breaks', [view(f'{W}/f.txt', [1, 3]), view(f'{W}/f.txt')], files={'f.txt': 'a\x0cb\nc\x1dd\u2028e\nf\x85g\n'},
     notes='splitlines breaks on \\f \\x1d U+2028 \\x85 in ranged view only')
case(g, 'crlf', [view(f'{W}/f.txt'), view(f'{W}/f.txt', [2, 3])], files={'f.txt': 'a\r\nb\rc\r\n'})
case(g, 'truncated', [view(f'{W}/big.txt')], files={'big.txt': BIG}, notes='16000-char cut before numbering, notice glued')
case(g, 'truncated_on_boundary', [view(f'{W}/b.txt')], files={'b.txt': ('x' * 15 + '\n') * 1000 + 'tail\n'})
case(g, 'range_big', [view(f'{W}/big.txt', [2995, -1]), view(f'{W}/big.txt', [1, 3000])], files={'big.txt': BIG})
case(g, 'wide_line_numbers', [run("yes '' | head -n 1000000 > m.txt; printf end >> m.txt"), view(f'{W}/m.txt', [999995, 1000001])],
     notes='numbers wider than 6 columns')
case(g, 'relative_path', [view('f.txt'), view('nope.txt'), view('')], files={'f.txt': 'x\n'}, notes='suggestion only if it exists')
case(g, 'missing', [view(f'{W}/nope.txt')])
case(g, 'normalised_path', [view(f'{W}//sub/./f.txt/'), view(f'{W}/sub/../sub/f.txt', [1, 1])], files={'sub/f.txt': 'x\ny\n'})
case(g, 'binary_prechecked', [view(f'{W}/bin.dat'), ed('view', f'{W}/bin.dat')], b64={'bin.dat': bytes(range(256))},
     notes='read: ERROR_BINARY_FILE; edit view: validation error')
case(g, 'unicode', [view(f'{W}/u.txt'), view(f'{W}/u.txt', [2, 2])], files={'u.txt': 'héllo\nwörld ✓ 日本語のテキスト\nend'})
case(g, 'utf8_short_binary', [view(f'{W}/e.txt'), ed('view', f'{W}/e.txt')], files={'e.txt': 'é'}, notes='binaryornot: a lone é is binary')
case(g, 'view_as_edit', [ed('view', f'{W}/f.txt'), ed('view', f'{W}')], files={'f.txt': FIVE},
     notes='a view sent as an edit: FileEditObservation with the view text, diff empty')
case(g, 'symlink', [view(f'{W}/link'), view(f'{W}/link', [1, 1])], files={'t.txt': 'target\n'}, symlinks={'link': 't.txt'})
case(g, 'too_large', [run("head -c 11000000 /dev/zero | tr '\\0' a > huge.txt"), view(f'{W}/huge.txt'),
                       ed('str_replace', f'{W}/huge.txt', old_str='a', new_str='b')], notes='10 MiB limit message')
case(g, 'big_file_head', [run("yes 'row with plain text' | head -n 80000 > big.txt"), view(f'{W}/big.txt'), ed('view', f'{W}/big.txt'),
                           view(f'{W}/big.txt', [79999, 80001])], notes='files over 1 MiB: a full view reads only the head')
case(g, 'bom', [view(f'{W}/b.txt')], files={'b.txt': '\ufeffwith bom\nline2\n'}, notes='UTF-8-SIG hides the BOM')
case(g, 'cjk_1024_boundary', [view(f'{W}/c.txt'), view(f'{W}/d.txt')],
     files={'c.txt': '日本語' * 200, 'd.txt': 'a' + '日本語' * 200}, notes='binaryornot on a chunk that cuts a character')

# ------------------------------------------------------------------ view (directory)
g = 'view_dir'
case(g, 'example8', [view(W)], files={'a.py': 'x', 'pkg/mod.py': 'm', 'pkg/sub/deep/z.txt': 'z', '.hidden': 'h', '.git/config': 'c',
                                      'pkg/.secret': 's'}, notes='Example 8')
case(g, 'sort_order', [view(W)], files={'x.txt': '', 'x/child': '', 'B_dir/f': '', 'Zed': '', '_under': '', 'a_dir/f': '', 'a-b': '',
                                        'a.b': '', 'ü': '', 'A': ''}, notes='C.UTF-8 byte order')
case(g, 'empty_dir', [view(f'{W}/d'), view(f'{W}/d/')], dirs=['d'])
case(g, 'only_hidden', [view(f'{W}/d')], files={'d/.a': '', 'd/.b/c': ''})
case(g, 'view_range_refused', [view(f'{W}/d', [1, 2]), view(f'{W}/d', [])], dirs=['d'])
case(g, 'depth_limit', [view(f'{W}/t')], files={'t/1/2/3/4.txt': '', 't/1/f': '', 't/g': ''})
case(g, 'symlinked_dir', [view(f'{W}/top')], files={'real/inner.txt': 'x', 'top/f': ''}, symlinks={'top/ln': '../real', 'top/broken': 'nowhere'},
     notes='find -L follows links; a broken link is listed as a file')
case(g, 'many_entries_truncated', [view(W)], files={f'dir{i:03d}/file_with_a_long_name_{j:03d}.txt': '' for i in range(30) for j in range(20)},
     notes='DIRECTORY notice at 16000 chars before formatting')
case(g, 'edit_on_dir', [ed('str_replace', f'{W}/d', old_str='a', new_str='b'), ed('create', f'{W}/d', file_text='x'),
                        ed('undo_edit', f'{W}/d'), ed('insert', f'{W}/d', insert_line=0, new_str='x'), ed('view', f'{W}/d')], dirs=['d'])
case(g, 'hidden_subdirs_deeper', [view(f'{W}/p')], files={'p/a/.h': '', 'p/a/b': '', 'p/.x/y': '', 'p/c': ''})
case(g, 'relative_dir', [view('sub')], dirs=['sub'])
case(g, 'unicode_names', [view(W)], files={'日本/語.txt': '', 'é.txt': '', 'e.txt': ''})

# ------------------------------------------------------------------ create
g = 'create'
case(g, 'basic', [ed('create', f'{W}/a.py', file_text=CODE), view(f'{W}/a.py')])
case(g, 'diff_x_y', [ed('create', f'{W}/x.txt', file_text='x\ny')], notes='§3.7 create diff')
case(g, 'empty_text', [ed('create', f'{W}/e.txt', file_text=''), view(f'{W}/e.txt')])
case(g, 'missing_file_text', [ed('create', f'{W}/m.txt')])
case(g, 'exists', [ed('create', f'{W}/f.txt', file_text='new')], files={'f.txt': 'old\n'})
case(g, 'exists_dir', [ed('create', f'{W}/d', file_text='new')], dirs=['d'])
case(g, 'missing_parent', [ed('create', f'{W}/nodir/x.txt', file_text='x')], notes='parents are not created')
case(g, 'parent_is_file', [ed('create', f'{W}/f.txt/x.txt', file_text='x')], files={'f.txt': 'f'})
case(g, 'relative', [ed('create', 'rel.txt', file_text='x'), ed('create', 'f.txt', file_text='x')], files={'f.txt': 'f'})
case(g, 'crlf_verbatim', [ed('create', f'{W}/c.txt', file_text='a\r\nb\r\n'), view(f'{W}/c.txt'), rd(f'{W}/c.txt')])
case(g, 'unicode', [ed('create', f'{W}/u.txt', file_text='ünïcödé ✓\n日本語\n'), view(f'{W}/u.txt')])
case(g, 'supported_binary_suffix', [ed('create', f'{W}/doc.pdf', file_text='x'), ed('create', f'{W}/s.MP3', file_text='x')],
     notes='create of a new .pdf is allowed? (validate_path only refuses existing supported binaries for non-view)')
case(g, 'big_truncated_diff', [ed('create', f'{W}/big.txt', file_text=BIG)])
case(g, 'trailing_slash', [ed('create', f'{W}/t.txt/', file_text='t')], notes='message shows the normalised path')

# ------------------------------------------------------------------ str_replace
g = 'str_replace'
case(g, 'basic', [ed('str_replace', f'{W}/c.py', old_str='return 1', new_str='return 2')], files={'c.py': CODE})
case(g, 'multiline', [ed('str_replace', f'{W}/c.py', old_str='    x = 1\n    y = 2\n', new_str='    x = 10\n    y = 20\n    z = 30\n')],
     files={'c.py': CODE})
case(g, 'delete_without_new_str', [ed('str_replace', f'{W}/c.py', old_str='print(f())\n')], files={'c.py': CODE})
case(g, 'delete_empty_new_str', [ed('str_replace', f'{W}/c.py', old_str='class A:\n', new_str='')], files={'c.py': CODE})
case(g, 'not_found', [ed('str_replace', f'{W}/c.py', old_str='nothere', new_str='x')], files={'c.py': CODE})
case(g, 'strip_retry_found', [ed('str_replace', f'{W}/c.py', old_str='  \n  return 1  \n', new_str='\n  return 3\n\n')], files={'c.py': CODE},
     notes='both strings stripped on retry')
case(g, 'strip_retry_not_found', [ed('str_replace', f'{W}/c.py', old_str='\n  nothere \t\n', new_str='x')], files={'c.py': CODE})
case(g, 'multiple', [ed('str_replace', f'{W}/c.py', old_str='return', new_str='yield')], files={'c.py': CODE})
case(g, 'multiple_same_line', [ed('str_replace', f'{W}/f.txt', old_str='a', new_str='b')], files={'f.txt': 'aaa\nxa\n'})
case(g, 'same_new_old', [ed('str_replace', f'{W}/f.txt', old_str='a', new_str='a')], files={'f.txt': 'a\n'})
case(g, 'missing_old_str', [ed('str_replace', f'{W}/f.txt', new_str='a')], files={'f.txt': 'a\n'})
case(g, 'empty_old_str_nonempty_file', [ed('str_replace', f'{W}/f.txt', old_str='', new_str='z')], files={'f.txt': 'a\nb\nc\n'})
case(g, 'empty_old_str_empty_file', [ed('str_replace', f'{W}/e.txt', old_str='', new_str='z'), rd(f'{W}/e.txt')], files={'e.txt': ''})
case(g, 'whitespace_old_str_empty_file', [ed('str_replace', f'{W}/e.txt', old_str='  ', new_str=' z ')], files={'e.txt': ''})
case(g, 'crlf_file_becomes_lf', [ed('str_replace', f'{W}/f.txt', old_str='b', new_str='B')], files={'f.txt': 'a\r\nb\r\nc\r\n'})
case(g, 'new_str_with_cr', [ed('str_replace', f'{W}/f.txt', old_str='b', new_str='B1\rB2\r\nB3'), rd(f'{W}/f.txt')], files={'f.txt': FIVE},
     notes='snippet is re-read with universal newlines')
case(g, 'snippet_at_start', [ed('str_replace', f'{W}/f.txt', old_str='l0', new_str='L0')], files={'f.txt': FIVE})
case(g, 'snippet_at_end_phantom', [ed('str_replace', f'{W}/f.txt', old_str='l4', new_str='L4')], files={'f.txt': FIVE})
case(g, 'snippet_no_trailing_newline', [ed('str_replace', f'{W}/f.txt', old_str='l4', new_str='L4')], files={'f.txt': FIVE[:-1]})
case(g, 'middle_of_big', [ed('str_replace', f'{W}/big.txt', old_str='row number 01500', new_str='ROW 1500\nand more')], files={'big.txt': BIG})
case(g, 'missing_file', [ed('str_replace', f'{W}/nope.txt', old_str='a', new_str='b')])
case(g, 'binary_file', [ed('str_replace', f'{W}/n.txt', old_str='a', new_str='b')], b64={'n.txt': b'a\x00b'},
     notes='binaryornot refuses; charset_normalizer gives a confidence here, so the validation error shows')
case(g, 'supported_binary_suffix', [ed('str_replace', f'{W}/d.pdf', old_str='a', new_str='b')], files={'d.pdf': 'abc'})
case(g, 'unicode', [ed('str_replace', f'{W}/u.txt', old_str='wörld', new_str='мир ✓')], files={'u.txt': 'héllo\nwörld\n日本語\n'})
case(g, 'regex_chars_literal', [ed('str_replace', f'{W}/r.txt', old_str='a.*b(c)', new_str='[x]')], files={'r.txt': 'a.*b(c)\naxxb(c)\n'})
case(g, 'overlapping_occurrences', [ed('str_replace', f'{W}/o.txt', old_str='aa', new_str='b')], files={'o.txt': 'aaa\n'},
     notes='non-overlapping: one match')
case(g, 'relative_path', [ed('str_replace', 'f.txt', old_str='a', new_str='b')], files={'f.txt': 'a'})
case(g, 'readonly_file', [ed('str_replace', f'{W}/ro.txt', old_str='a', new_str='b')], files={'ro.txt': 'a\n'}, modes={'ro.txt': '0444'},
     notes='as root the write succeeds, otherwise Ran into [Errno 13]')
case(g, 'trailing_whitespace_diff', [ed('str_replace', f'{W}/t.txt', old_str='x', new_str='y  ')], files={'t.txt': 'x\n'},
     notes='diff lines are right-stripped')
case(g, 'bom_file', [ed('str_replace', f'{W}/b.txt', old_str='two', new_str='2')], files={'b.txt': '\ufeffone\ntwo\n'})

# ------------------------------------------------------------------ insert
g = 'insert'
NOTE_MODE = 'insert leaves the reference file at mode 0600 (spec §4.13 [F]); we keep the mode, so the tree is compared without modes'
case(g, 'example9', [ed('insert', f'{W}/n.txt', insert_line=2, new_str='NEW'), ed('undo_edit', f'{W}/n.txt'), ed('undo_edit', f'{W}/n.txt'),
                     rd(f'{W}/n.txt')], files={'n.txt': 'x\ny'}, notes='Example 9: glue')
for ln in [0, 1, 3, 5, 9, 10]:
    case(g, f'at_{ln}', [ed('insert', f'{W}/f.txt', insert_line=ln, new_str='A\nB'), rd(f'{W}/f.txt')],
         files={'f.txt': ''.join(f'line{i}\n' for i in range(1, 11))}, notes=NOTE_MODE)
case(g, 'out_of_range', [ed('insert', f'{W}/f.txt', insert_line=6, new_str='x'), ed('insert', f'{W}/f.txt', insert_line=-1, new_str='x')],
     files={'f.txt': FIVE}, notes='no final period')
case(g, 'string_insert_line', [ed('insert', f'{W}/f.txt', insert_line='2', new_str='S'), ed('insert', f'{W}/f.txt', insert_line=' 1 ', new_str='T'),
                               rd(f'{W}/f.txt')], files={'f.txt': FIVE})
case(g, 'bad_string_insert_line', [ed('insert', f'{W}/f.txt', insert_line='two', new_str='S'), ed('insert', f'{W}/f.txt', insert_line='', new_str='S')],
     files={'f.txt': FIVE})
case(g, 'missing_insert_line', [ed('insert', f'{W}/f.txt', new_str='x')], files={'f.txt': FIVE})
case(g, 'missing_new_str', [ed('insert', f'{W}/f.txt', insert_line=1)], files={'f.txt': FIVE})
case(g, 'missing_both', [ed('insert', f'{W}/f.txt')], files={'f.txt': FIVE}, notes='insert_line is checked first')
case(g, 'empty_new_str', [ed('insert', f'{W}/f.txt', insert_line=1, new_str=''), rd(f'{W}/f.txt')], files={'f.txt': FIVE})
case(g, 'empty_file', [ed('insert', f'{W}/e.txt', insert_line=0, new_str='first'), ed('insert', f'{W}/e.txt', insert_line=1, new_str='x'),
                       rd(f'{W}/e.txt')], files={'e.txt': ''})
case(g, 'trailing_newline_in_new_str', [ed('insert', f'{W}/f.txt', insert_line=2, new_str='a\n'), rd(f'{W}/f.txt')], files={'f.txt': FIVE})
case(g, 'crlf_file', [ed('insert', f'{W}/f.txt', insert_line=1, new_str='x'), rd(f'{W}/f.txt')], files={'f.txt': 'a\r\nb\r\n'})
case(g, 'big_middle', [ed('insert', f'{W}/big.txt', insert_line=1500, new_str='inserted 1\ninserted 2')], files={'big.txt': BIG})
case(g, 'new_str_with_cr', [ed('insert', f'{W}/f.txt', insert_line=1, new_str='p\rq'), rd(f'{W}/f.txt')], files={'f.txt': FIVE})
case(g, 'missing_file', [ed('insert', f'{W}/nope.txt', insert_line=0, new_str='x')])
case(g, 'list_insert_line', [ed('insert', f'{W}/f.txt', insert_line=[1], new_str='x')], files={'f.txt': FIVE}, notes='TypeError text')
case(g, 'bool_insert_line', [ed('insert', f'{W}/f.txt', insert_line=True, new_str='x'), rd(f'{W}/f.txt')], files={'f.txt': FIVE})
case(g, 'unicode', [ed('insert', f'{W}/u.txt', insert_line=1, new_str='✓ 日本'), rd(f'{W}/u.txt')], files={'u.txt': 'ä\nö\n'})
case(g, 'many_lines', [ed('insert', f'{W}/f.txt', insert_line=3, new_str='\n'.join(f'n{i}' for i in range(20)))], files={'f.txt': FIVE})

# ------------------------------------------------------------------ undo
g = 'undo'
case(g, 'after_create', [ed('create', f'{W}/a.txt', file_text='a\n'), ed('undo_edit', f'{W}/a.txt'), ed('undo_edit', f'{W}/a.txt')],
     notes='undo after create rewrites the same text, diff empty; then no history')
case(g, 'no_history', [ed('undo_edit', f'{W}/f.txt')], files={'f.txt': 'x'})
case(g, 'replace_then_undo', [ed('str_replace', f'{W}/f.txt', old_str='l2', new_str='L2'), ed('undo_edit', f'{W}/f.txt'), rd(f'{W}/f.txt')],
     files={'f.txt': FIVE})
case(g, 'stack_of_edits', [ed('str_replace', f'{W}/f.txt', old_str=f'l{i}', new_str=f'L{i}') for i in range(5)] +
     [ed('undo_edit', f'{W}/f.txt') for _ in range(6)], files={'f.txt': FIVE})
case(g, 'history_limit_10', [ed('str_replace', f'{W}/f.txt', old_str=f'v{i}', new_str=f'v{i + 1}') for i in range(12)] +
     [ed('undo_edit', f'{W}/f.txt') for _ in range(11)] + [rd(f'{W}/f.txt')], files={'f.txt': 'v0\n'}, notes='10 entries per path')
case(g, 'separate_spellings', [ed('str_replace', f'{W}/f.txt', old_str='a', new_str='b'), ed('undo_edit', f'{W}//f.txt'),
                               ed('undo_edit', f'{W}/./f.txt'), ed('undo_edit', f'{W}/sub/../f.txt')], files={'f.txt': 'a\n'}, dirs=['sub'],
     notes='history keyed by the normalised path, no realpath')
case(g, 'after_external_write', [ed('str_replace', f'{W}/f.txt', old_str='a', new_str='b'), wr(f'{W}/f.txt', 'external'),
                                 ed('undo_edit', f'{W}/f.txt')], files={'f.txt': 'a\n'})
case(g, 'crlf_restored_as_lf', [ed('str_replace', f'{W}/f.txt', old_str='a', new_str='b'), ed('undo_edit', f'{W}/f.txt'), rd(f'{W}/f.txt')],
     files={'f.txt': 'a\r\nc\r\n'})
case(g, 'insert_then_undo', [ed('insert', f'{W}/f.txt', insert_line=5, new_str='end'), ed('undo_edit', f'{W}/f.txt'), rd(f'{W}/f.txt')],
     files={'f.txt': FIVE})
case(g, 'missing_file', [ed('undo_edit', f'{W}/nope.txt')])
case(g, 'big_truncated', [ed('str_replace', f'{W}/big.txt', old_str='row number 02999', new_str='last'), ed('undo_edit', f'{W}/big.txt')],
     files={'big.txt': BIG})
case(g, 'file_deleted', [ed('create', f'{W}/g.txt', file_text='g'), run('rm g.txt'), ed('undo_edit', f'{W}/g.txt'),
                         ed('create', f'{W}/g.txt', file_text='h'), ed('undo_edit', f'{W}/g.txt'), ed('undo_edit', f'{W}/g.txt'),
                         ed('undo_edit', f'{W}/g.txt')])
case(g, 'two_files', [ed('str_replace', f'{W}/a.txt', old_str='a', new_str='A'), ed('str_replace', f'{W}/b.txt', old_str='b', new_str='B'),
                      ed('undo_edit', f'{W}/a.txt'), ed('undo_edit', f'{W}/a.txt'), ed('undo_edit', f'{W}/b.txt')],
     files={'a.txt': 'a', 'b.txt': 'b'})

# ------------------------------------------------------------------ misc / errors
g = 'errors'
case(g, 'unknown_command', [ed('frobnicate', f'{W}/f.txt'), ed('frobnicate', f'{W}/nope'), ed('', f'{W}/f.txt')], files={'f.txt': 'x'},
     notes='path validated before the command')
case(g, 'unknown_command_on_dir', [ed('frobnicate', f'{W}/d')], dirs=['d'])
case(g, 'relative_suggestion', [ed('str_replace', 'f.txt', old_str='x', new_str='y'), ed('undo_edit', 'sub'), ed('insert', 'none', insert_line=0,
                                                                                                                 new_str='x')],
     files={'f.txt': 'x'}, dirs=['sub'])
case(g, 'binary_edits', [ed('undo_edit', f'{W}/n.txt'), ed('insert', f'{W}/n.txt', insert_line=0, new_str='x'), ed('view', f'{W}/n.txt')],
     b64={'n.txt': b'a\x00b'})
case(g, 'supported_binary_edits', [ed('insert', f'{W}/a.docx', insert_line=0, new_str='x'), ed('undo_edit', f'{W}/a.XLSX'),
                                   ed('str_replace', f'{W}/a.wav', old_str='a', new_str='b')],
     files={'a.docx': 'x', 'a.XLSX': 'x', 'a.wav': 'x'})
# The snippet of str_replace and insert is read back through read_file, which validates the new
# file: an edit that makes it binary-looking or too large is written and reported as an error.
case(g, 'str_replace_leaves_binary', [ed('str_replace', f'{W}/s.txt', old_str='ab\n', new_str='日本'), rd(f'{W}/s.txt'),
                                      ed('undo_edit', f'{W}/s.txt'), wr(f'{W}/s.txt', 'text\n'), ed('undo_edit', f'{W}/s.txt'),
                                      rd(f'{W}/s.txt')],
     files={'s.txt': 'ab\n'}, notes='written, history kept, then refused; undo needs a text file again, then restores')
case(g, 'insert_leaves_binary', [ed('insert', f'{W}/s.txt', insert_line=0, new_str='a\x00b'), rd(f'{W}/s.txt'),
                                 wr(f'{W}/s.txt', 'text\n'), ed('undo_edit', f'{W}/s.txt')],
     files={'s.txt': 'x\n'}, notes='written and refused before the history entry: nothing to undo')
case(g, 'str_replace_leaves_too_large', [run("{ head -c 10485700 /dev/zero | tr '\\0' a; printf 'X\\n'; } > big.txt"),
                                         ed('str_replace', f'{W}/big.txt', old_str='X', new_str='Y' * 100),
                                         view(f'{W}/big.txt', [1, 1]), run('wc -c < big.txt; tail -c 20 big.txt')],
     notes='an edit past the 10 MiB limit is written, then refused')
case(g, 'pyc_edit', [ed('str_replace', f'{W}/m.pyc', old_str='a', new_str='b'), ed('view', f'{W}/m.pyc')], files={'m.pyc': 'a\n'})
case(g, 'path_with_quote', [ed('create', f"{W}/it's.txt", file_text='q'), view(f"{W}/it's.txt"),
                            ed('create', f"{W}/no/it's.txt", file_text='q')], notes='repr of the path in OSError text')
case(g, 'nul_after_utf8', [view(f'{W}/n.txt')], files={'n.txt': 'héllo wörld ünïcödé\x00'}, notes='chardet utf-8 overrides the NUL')
case(g, 'mixed_sequence', [ed('create', f'{W}/s.py', file_text='a = 1\n'), ed('insert', f'{W}/s.py', insert_line=1, new_str='b = 2'),
                           ed('str_replace', f'{W}/s.py', old_str='a = 1', new_str='a = 0'), view(f'{W}/s.py', [1, 2]),
                           ed('undo_edit', f'{W}/s.py'), ed('undo_edit', f'{W}/s.py'), ed('undo_edit', f'{W}/s.py'), ed('undo_edit', f'{W}/s.py'),
                           rd(f'{W}/s.py')])

total = 0
for name, cases in GROUPS.items():
    (HERE / f'{name}.json').write_text(json.dumps(cases, indent=1, ensure_ascii=False) + '\n', encoding='utf-8')
    total += len(cases)
print(f'{total} cases in {len(GROUPS)} groups')
