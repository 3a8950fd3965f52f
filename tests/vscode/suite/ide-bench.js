// A latency bench, not a test of behaviour (run by run.sh only with OH_IDE_BENCH=N): IDE tool
// calls through the OpenHands runtime path in the real host. `bench_ide_tools.py --wait-executor`
// runs an embedded VsCodeRuntime; this window's executor joins it (attach mode), and the script
// times `call_tool_mcp(hover)` (VsCodeRuntime -> executor channel -> this extension -> TypeScript)
// beside a plain `read` action in the same run. Figures are printed as `oh-test bench` lines;
// the one test only checks that the bench ran to the end.
const vscode = require('vscode');
const fs = require('fs');
const path = require('path');
const { waitFor, assert, runner, uiRequester } = require('./lib');

const KEY = process.env.OH_TEST_KEY;
const ARTIFACTS = process.env.OH_TEST_ARTIFACTS || '/tmp';
const RESULT = process.env.OH_TEST_BENCH_RESULT;
const RUN_PROMPT = 'Allow OpenHands to run commands and edit files';

/** A UI request to the runner (host.mjs); `notifications` returns the list. */
const ui = uiRequester(ARTIFACTS);

exports.run = async () => {
  const run = runner({ stopOnFailure: true });
  const root = vscode.workspace.workspaceFolders[0].uri.fsPath;
  await run.test('IDE tools bench: hover through VsCodeRuntime and the executor channel, beside a read', async () => {
    assert(RESULT && KEY, 'OH_TEST_BENCH_RESULT / OH_TEST_KEY not set');
    const api = await vscode.extensions.getExtension('openhands-vscode-runtime.openhands-tab').activate();
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(path.join(root, 'src', 'main.ts')));
    await vscode.window.showTextDocument(doc, { preview: false });
    const done = vscode.commands.executeCommand('openhands.setSessionApiKey');
    await ui('type-quickinput', KEY);
    for (const f of fs.readdirSync(ARTIFACTS).filter((n) => n.startsWith('ui-type-quickinput-') && !n.endsWith('.done'))) fs.unlinkSync(path.join(ARTIFACTS, f));
    // The command reconnects the executor, which first asks for the executor consent: answered below.
    await vscode.commands.executeCommand('notifications.showList');
    try {
      await waitFor('the executor to connect', async () => {
        if (api.snapshot.state === 'connected' || api.snapshot.state === 'executing') return true;
        await vscode.commands.executeCommand('notifications.showList'); // a toast that timed out is listed there
        if ((await ui('notifications')).some((n) => n.text.includes(RUN_PROMPT))) await ui('click-notification', { text: RUN_PROMPT, label: 'Allow' });
        return false;
      }, 60000, 500);
    } catch (e) {
      throw new Error(`${e.message}; executor ${JSON.stringify(api.snapshot)}`);
    }
    await done;
    await waitFor('the bench result', () => fs.existsSync(RESULT), 600000, 500);
    const r = JSON.parse(fs.readFileSync(RESULT, 'utf8'));
    console.log(`oh-test bench runtime path: ${r.tool} n=${r.n} p50 ${r.tool_p50_ms.toFixed(2)} ms p90 ${r.tool_p90_ms.toFixed(2)} ms; read p50 ${r.read_p50_ms.toFixed(2)} ms p90 ${r.read_p90_ms.toFixed(2)} ms; ratio p50 ${r.tool_over_read_p50.toFixed(2)}x`);
  });
  run.finish('IDE tools bench');
};
