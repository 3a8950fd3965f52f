// Runs in a workspace that is NOT trusted (restricted mode): the extension must not execute.
const vscode = require('vscode');
const { sleep, runner } = require('./lib');

const BACKEND = process.env.OH_TEST_BACKEND;

exports.run = async () => {
  const run = runner();
  await run.test('an untrusted workspace never executes: blocked with "Manage Workspace Trust", no conversation, no connection', async () => {
    if (vscode.workspace.isTrusted) throw new Error('the workspace is trusted; the test needs restricted mode');
    const ext = vscode.extensions.getExtension('openhands-vscode-runtime.openhands-tab');
    if (!ext) throw new Error('openhands-tab is not installed');
    const before = await (await fetch(`${BACKEND}/test/state`)).json();
    const api = await ext.activate();
    await vscode.commands.executeCommand('workbench.view.extension.openhands');
    await api.start(); // resolves once the start decided (blocked here): nothing can connect later
    const s = api.snapshot;
    if (s.state !== 'blocked' || !(s.fixes || []).includes('trust')) throw new Error(`state ${JSON.stringify(s)}`);
    const st = await (await fetch(`${BACKEND}/test/state`)).json();
    if (Object.keys(st).length !== Object.keys(before).length) throw new Error(`a conversation was created: ${JSON.stringify(st)}`);
    if (Object.values(st).some((c) => c.registered)) throw new Error(`an executor is registered: ${JSON.stringify(st)}`);
  });
  await run.test('an untrusted workspace never serves the IDE tools: the start command leaves no discovery file', ideToolsNotServed);
  await run.test('an untrusted workspace refuses the writing IDE tools (open_diff, execute_command, save_document) with the reason',
    require('./ide-untrusted').ideWritingRefused);
  run.finish('untrusted-workspace');
};

// The IDE tools' MCP endpoint (docs/ide-tools.md) is never served in restricted mode, even when asked.
async function ideToolsNotServed() {
  const crypto = require('crypto');
  const fs = require('fs');
  const os = require('os');
  const path = require('path');
  const folder = vscode.workspace.workspaceFolders[0].uri.toString();
  const dir = process.env.OPENHANDS_VSCODE_MCP_DIR || path.join(os.homedir(), '.openhands', 'vscode-mcp');
  const file = path.join(dir, `${crypto.createHash('sha256').update(folder).digest('hex').slice(0, 16)}.json`);
  await vscode.commands.executeCommand('openhands.ide.startServer');
  await sleep(500);
  if (fs.existsSync(file)) {
    fs.rmSync(file, { force: true });
    throw new Error(`the IDE tools were served: ${file}`);
  }
}
