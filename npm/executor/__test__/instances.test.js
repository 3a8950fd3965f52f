'use strict';
// Several executors in one process (the VS Code window's V1 pool: one per conversation): each has
// its own bash session, environment and working directory, and they run at the same time.
const test = require('node:test');
const assert = require('node:assert');
const { addon, tmpdir } = require('./helpers');

test('two executors in one process: own shells, own environments, concurrent commands', async (t) => {
  const { Executor } = addon();
  const make = () => new Executor({ serverUrl: 'http://127.0.0.1:9', conversationId: 'none', workspaceRoot: tmpdir(), noChangeTimeoutSeconds: 10 }, null);
  const a = make();
  const b = make();
  t.after(() => Promise.all([a.stop(), b.stop()]));
  let id = 0;
  const run = async (ex, command) => JSON.parse(await ex.execute(JSON.stringify({ id: ++id, action: 'run', args: { command, blocking: false } })));
  const pidA = /pid=(\d+)/.exec((await run(a, 'echo pid=$$; export ONLY_IN_A=yes; cd /')).content)[1];
  const seenByB = (await run(b, 'echo pid=$$ var=${ONLY_IN_A:-unset} cwd=$PWD')).content;
  const pidB = /pid=(\d+)/.exec(seenByB)[1];
  assert.notStrictEqual(pidA, pidB);
  assert.match(seenByB, /var=unset/);
  assert.doesNotMatch(seenByB, /cwd=\/(\s|$)/);
  assert.match((await run(a, 'echo var=$ONLY_IN_A cwd=$PWD')).content, /var=yes cwd=\/(\s|$)/);
  // Both shells work at once: each command's start comes before the other's end.
  const stamp = 'date +%s.%N; sleep 1.5; date +%s.%N';
  const [ra, rb] = await Promise.all([run(a, stamp), run(b, stamp)]);
  const times = (r) => r.content.trim().split('\n').slice(0, 2).map(Number);
  const [a0, a1] = times(ra);
  const [b0, b1] = times(rb);
  assert.ok(a0 < b1 && b0 < a1, `not concurrent: A ${a0}..${a1}, B ${b0}..${b1}`);
});
