"""Differential suite for the executor's OpenHands V1 mode (README.md).

Every V0 conformance case that maps onto V1 actions runs live on two fresh workspaces: through
openhands-tools' own tools (the reference; its terminal is V1's default tmux pane pool, its
subprocess backend only for the cases v1_cases.SUBPROCESS_ONLY names with the measurement) and
through `oh-executor replay` (ours). Observations are normalised and compared field by field;
deviations.json names what may differ (v1_deviations). Where the reference itself varies, the
one rule of tests/conformance/reference_variants.py applies: ours runs once, the reference up to
three times, ours must equal one of its results; such cases are named at the end.

Passes: `root` (every case, as root) and `non-root` (the cases without a terminal step, as the
unprivileged V1_TEST_USER), each in a process of its own. The root pass needs root: not root, the
suite fails. `--oldest-sample SITE` runs only the cases that cover the code that differs between
this release and the newest (v1_oldest). Modules: v1_cases (which cases, which backend), v1_sides
(running each side), v1_compare (normalising, comparing), v1_deviations (the list), v1_oldest.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')
sys.path.insert(0, str(Path(__file__).resolve().parent))

from v1_cases import REPO, backend_for, load_cases, sends_control_key, uses_terminal  # noqa: E402
from reference_variants import judge  # noqa: E402  (tests/conformance: put on the path by v1_cases)
from v1_compare import compare  # noqa: E402
from deviation_list import entry_for  # noqa: E402  (tests/conformance, as above)
from v1_deviations import DEVIATIONS_FILE, check_case, docs_table, load_deviations, \
    rewrite_deviations, write_docs  # noqa: E402
from v1_sides import CASE_TIMEOUT, run_ours, run_reference, run_sides  # noqa: E402

TEST_USER = os.environ.get('V1_TEST_USER', 'oh-v1-test')
PASSES = ('root', 'non-root')


def v1_version() -> str:
    from importlib.metadata import version
    return version('openhands-tools')


def run_case(cid: str, case: dict, root: str, entry: dict | None) -> dict:
    """One case on both sides (ours once), judged against its deviation entry; on a difference
    the reference alone runs again (reference_variants.judge)."""
    backend = backend_for(cid, case)

    def reference(c, ws, start):
        return run_reference(c, ws, start, backend)

    sides = run_sides(case, root, {'reference': reference, 'ours': run_ours})
    ours = sides['ours']
    if 'hung' in ours or 'crashed' in ours:
        result = compare(cid, sides['reference'], ours)
    else:
        j = judge(ours, [sides['reference']], 1, lambda: run_sides(case, root, {'reference': reference})['reference'],
                  equal=lambda ref, o: not check_case(compare(cid, ref, o), entry),
                  key=lambda ref: json.dumps(ref, sort_keys=True))
        result = compare(cid, j.variants[j.matched] if j.identical else j.variants[0], ours)
        result.update(reference_runs=j.runs, reference_variants=len(j.variants))
        if j.reference_varied:
            result['reference_varied'] = True
    result['backend'] = backend
    return result


def run_cases(cases: list[tuple[str, dict]], pass_name: str, workers: int, deviations: dict) -> list[dict]:
    """Every case, `workers` at a time, then the control-key cases one at a time: V1's side
    answers a C-c/C-d/C-z step with the prompt only if its session shows it within the 1 s
    no-change timeout; with three cases (six shells) sharing two cores, V1's side missed that in
    13 cases of one run (ours answered `^C`/130 in every one)."""
    root = tempfile.mkdtemp(prefix='ohv1-')

    def one(c):
        hit = entry_for(deviations, c[0], pass_name)
        return run_case(c[0], c[1], root, hit[1] if hit else None)

    try:
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            results = list(pool.map(one, [c for c in cases if not sends_control_key(c[1])]))
        results += [one(c) for c in cases if sends_control_key(c[1])]
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return results


def measure(cases: list[tuple[str, dict]], backend: str, runs: int, workers: int, out: Path) -> int:
    """The reference alone, `runs` times per terminal case on `backend`: which cases it answers
    differently from run to run (every distinct result kept in `out`)."""
    root = tempfile.mkdtemp(prefix='ohv1-measure-')
    terminal = [(cid, c) for cid, c in cases if uses_terminal(c)]

    def one(item):
        cid, case = item
        seen: dict[str, dict] = {}
        for _ in range(runs):
            r = run_sides(case, root, {'reference': lambda c, ws, s: run_reference(c, ws, s, backend)})['reference']
            seen.setdefault(json.dumps(r, sort_keys=True), {'times': 0, 'result': r})['times'] += 1
        return cid, list(seen.values())

    try:
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            found = dict(pool.map(one, [c for c in terminal if not sends_control_key(c[1])]))
        found.update(one(c) for c in terminal if sends_control_key(c[1]))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    out.write_text(json.dumps({'backend': backend, 'runs': runs, 'variants': found}, indent=1))
    varied = {cid: ', '.join(str(x['times']) for x in v) for cid, v in found.items() if len(v) > 1}
    print(f'{backend}: {len(found)} terminal cases, {runs} runs each; {len(varied)} gave more than one result:')
    for cid, n in sorted(varied.items()):
        print(f'  {cid}: distinct results seen {n} times')
    print(f'every result: {out}')
    return 0


def worker_main(args) -> int:
    """One pass in this process (as whichever user started it); the results go to --out."""
    ids = json.loads(Path(args.cases_file).read_text())
    cases = dict(load_cases([]))
    results = run_cases([(cid, cases[cid]) for cid in ids], args.pass_name, args.j, load_deviations())
    Path(args.out).write_text(json.dumps(results))
    sys.stdout.flush()
    os._exit(0)  # a hung side's thread cannot be joined; leave without waiting for it


def run_pass(name: str, ids: list[str], workers: int, user: pwd.struct_passwd | None) -> list[dict]:
    """A pass in a process of its own: as `user` (a clean HOME it owns, the same .inputrc) or as
    this process's user."""
    scratch = tempfile.mkdtemp(prefix=f'ohv1-{name}-')
    env = dict(os.environ)
    kwargs: dict = {}
    if user is not None:
        home = os.path.join(scratch, 'home')
        os.mkdir(home)
        src = os.path.join(os.environ.get('HOME', ''), '.inputrc')
        if os.path.exists(src):
            shutil.copy(src, home)
        for d, _, files in os.walk(scratch):
            for p in [d] + [os.path.join(d, f) for f in files]:
                os.chown(p, user.pw_uid, user.pw_gid)
        # SHELL: tmux starts a session's command through it, else through the login shell (nologin
        # for the test user), and CI may start the run without it.
        env.update(HOME=home, USER=user.pw_name, LOGNAME=user.pw_name, SHELL='/bin/bash')
        kwargs = {'user': user.pw_uid, 'group': user.pw_gid, 'extra_groups': []}
    cases_file, out = os.path.join(scratch, 'cases.json'), os.path.join(scratch, 'results.json')
    Path(cases_file).write_text(json.dumps(ids))
    if user is not None:
        os.chown(cases_file, user.pw_uid, user.pw_gid)
    cmd = [sys.executable, __file__, '--worker', '--pass-name', name, '--cases-file', cases_file,
           '--out', out, '-j', str(workers)]
    try:
        # Hung cases are bounded by CASE_TIMEOUT each (up to three reference runs); this bounds a
        # worker that wedges elsewhere.
        proc = subprocess.run(cmd, env=env, cwd=scratch, timeout=len(ids) * CASE_TIMEOUT * 3 + 300, **kwargs)
        if proc.returncode != 0 or not os.path.exists(out):
            raise RuntimeError(f'the {name} pass exited with {proc.returncode} without results')
        return json.loads(Path(out).read_text())
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('selectors', nargs='*', help='substrings of case ids')
    ap.add_argument('-j', type=int, default=int(os.environ.get('V1_WORKERS', '3')))
    ap.add_argument('--report', default=os.environ.get('V1_ARTIFACTS', str(REPO / 'tests' / 'artifacts' / 'v1')))
    ap.add_argument('--passes', default=','.join(PASSES), help=f'comma-separated, of {", ".join(PASSES)}')
    ap.add_argument('--non-root-cases', choices=('editor', 'all'), default='editor',
                    help='which cases the non-root pass runs: those without a terminal step (default) or all')
    ap.add_argument('--oldest-sample', metavar='NEWEST_SITE',
                    help="run only oldest_sample.json's cases, after checking that the SDK's diff to the newest "
                         "release (its venv's site-packages) is the one the sample was chosen from")
    ap.add_argument('--sdk-diff', metavar='NEWEST_SITE', help='print the SDK diff to the newest release and its hash')
    ap.add_argument('--measure', metavar='BACKEND', choices=('tmux', 'subprocess'),
                    help='run only the reference, --runs times per terminal case, and report which cases vary')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--rewrite-deviations', metavar='RESULTS',
                    help="rewrite deviations.json's fields from a run's results.json (for review; reasons kept)")
    ap.add_argument('--docs-table', action='store_true', help="print docs/v1.md's deviation list")
    ap.add_argument('--write-docs', action='store_true', help="with --docs-table: put it into docs/v1.md")
    ap.add_argument('--worker', action='store_true', help=argparse.SUPPRESS)
    ap.add_argument('--pass-name', help=argparse.SUPPRESS)
    ap.add_argument('--cases-file', help=argparse.SUPPRESS)
    ap.add_argument('--out', help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker_main(args)
    if args.rewrite_deviations:
        rewrite_deviations(Path(args.rewrite_deviations))
        print(f'rewrote {DEVIATIONS_FILE}; review `git diff`, write the TODO reasons, then '
              f'`{Path(__file__).name} --docs-table --write-docs`')
        return 0
    if args.sdk_diff:
        from v1_oldest import print_sdk_diff
        return print_sdk_diff(Path(args.sdk_diff))
    if args.measure:
        os.makedirs(args.report, exist_ok=True)
        return measure(load_cases(args.selectors), args.measure, args.runs, args.j,
                       Path(args.report, f'measure-{args.measure}.json'))
    deviations = load_deviations()
    if args.docs_table:
        if args.write_docs:
            write_docs(deviations)
        else:
            print(docs_table(deviations))
        return 0
    from v1_run import orchestrate
    return orchestrate(args, deviations, v1_version(), run_pass, TEST_USER)


if __name__ == '__main__':
    code = main()
    sys.stdout.flush()
    # A hung side's thread cannot be joined; leave without waiting for it.
    os._exit(code)
