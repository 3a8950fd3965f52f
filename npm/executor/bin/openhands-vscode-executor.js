#!/usr/bin/env node
// The headless OpenHands executor: registers with a VsCodeRuntime (docs/protocol.md) and runs its
// delegated actions in a persistent bash session, with files on the executor's own filesystem.
// The command line is the native binary's own code (crates/oh-front, `oh_front::cli`) run through
// this package's addon: this file only hands it the arguments and Node's signals.
'use strict';

const { version } = require('../package.json');
const addon = require('../index.js');

// Node's handlers (not the addon's): a listener here replaces Node's default of dying at once,
// so the executor stops its shell and leaves with status 0, as the native binary does.
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => addon.stopCli(signal));

addon.runCli(process.argv.slice(2), version).then(
  (status) => process.exit(status),
  (e) => {
    process.stderr.write(`openhands-vscode-executor: ${e && e.stack ? e.stack : e}\n`);
    process.exit(1);
  },
);
