#!/usr/bin/env node
// Records the terminal stream a real executor session hands the extension (the addon's
// onTerminalData chunks, as the agent terminal receives them) for a few commands, as JSON
// {"commands": [...], "chunks": [...]}. Regenerates src/__fixtures__/terminal-session.json:
//   npm/executor/build.sh && node extension/scripts/capture-terminal-session.cjs DIR > extension/src/__fixtures__/terminal-session.json
// DIR holds src/greet.py; the shell's own init command (alias git) comes first.
const path = require('node:path');
const { Executor } = require(path.join(__dirname, '../../npm/executor'));

const dir = process.argv[2];
const commands = ['ls src && cat src/greet.py'];
const chunks = [];
const ex = new Executor({ serverUrl: 'http://127.0.0.1:9', conversationId: 'capture', workspaceRoot: dir }, null, {
  onTerminalData: (d) => chunks.push(Buffer.from(d).toString('utf8')),
});
(async () => {
  let id = 1;
  for (const command of commands) await ex.execute(JSON.stringify({ id: id++, action: 'run', args: { command } }));
  await new Promise((r) => setTimeout(r, 300)); // the last prompt's chunks are delivered asynchronously
  await ex.stop();
  process.stdout.write(JSON.stringify({ commands: ['alias git="git --no-pager"', ...commands], chunks }, null, 1) + '\n');
})();
