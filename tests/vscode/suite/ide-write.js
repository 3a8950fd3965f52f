// The writing IDE tools (docs/ide-tools.md) in the real host, through the MCP endpoint with the
// official MCP client SDK in a separate process: open_file, save_document, open_diff accepted and
// rejected by a click on the diff editor's title bar (the runner drives Chromium) and closed,
// present_review rendered in its panel (HTML shown as text), execute_command's gates, its $vscode
// arguments (a nested Location opens the location), its error messages and its encoded results.
// Called by suite/ide.js inside its session (the endpoint is already served and allowed).
const vscode = require('vscode');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { waitFor, sleep, assert, answerPrompt, uiRequest } = require('./lib');

const ALLOWLIST = 'openhands.ide.executeCommand.allowlist';

async function ui(verb, request) {
  const file = path.join(os.tmpdir(), `oh-ide-ui-${process.pid}-${Date.now()}-${Math.random().toString(16).slice(2)}`);
  await uiRequest(verb, file, request, 45000);
  return fs.existsSync(`${file}.json`) ? JSON.parse(fs.readFileSync(`${file}.json`, 'utf8')) : undefined;
}

const diffTabs = (file) =>
  vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === 'openhands-proposed' && t.input.modified.path === vscode.Uri.file(file).path);

// The title-bar action as the workbench renders it (aria-label = the command's title).
const titleAction = (title) => ({ selector: `.editor-actions [aria-label^="${title}"]` });

const WRITE_PROMPT = 'to open and save files, propose edits and show reviews';

// `ui`: ide.js's runner requests (notifications, click-notification); the runner clicks nothing by itself.
exports.writeTests = async ({ test, runClient, discovery, root, artifacts, ui: uiNote }) => {
  const src = path.join(root, 'src');
  const one = async (tool, args) => {
    const out = await runClient(discovery, { calls: [{ id: 'c', tool, args }] });
    return out.calls.c;
  };
  const okJson = (c, what) => {
    assert(c && !c.isError && c.json, `${what} failed: ${JSON.stringify(c)}`);
    return c.json;
  };

  // The read-only tests left an unsaved error in main.ts: revert it, so closing editors never asks to save.
  for (const doc of vscode.workspace.textDocuments.filter((d) => d.isDirty)) {
    await vscode.window.showTextDocument(doc);
    await vscode.commands.executeCommand('workbench.action.files.revert');
  }

  await test('IDE tools (writing): listed as writing tools (readOnlyHint false)', async () => {
    const out = await runClient(discovery, { calls: [] });
    const writing = out.tools.filter((t) => t.readOnly === false).map((t) => t.name).sort();
    assert(JSON.stringify(writing) === JSON.stringify(['execute_command', 'open_diff', 'open_file', 'present_review', 'save_document']), `writing tools ${JSON.stringify(writing)}`);
  });

  await test('IDE tools (writing): open_file asks for consent once, then opens and selects the range found by start/end text', async () => {
    // Two calls at once (two MCP clients) wait for the same answer: one prompt, answered "Allow".
    const pending = one('open_file', { path: 'src/shapes.ts', start_text: 'export function makeSquare', end_text: 'side * side };\n}' });
    const second = one('open_file', { path: 'src/shapes.ts', start_text: 'export function makeSquare', end_text: 'side * side };\n}' });
    const shown = await answerPrompt(vscode, uiNote, WRITE_PROMPT, 'Allow', 60000);
    assert(shown === 1, `${shown} write consent prompts for two calls at once`);
    okJson(await second, 'open_file (the second call)');
    const r = okJson(await pending, 'open_file');
    const ed = vscode.window.activeTextEditor;
    assert(ed && ed.document.uri.fsPath === path.join(src, 'shapes.ts'), `active editor ${ed && ed.document.uri.fsPath}`);
    assert(ed.selection.start.line === 5 && ed.selection.start.character === 0 && ed.selection.end.line === 7 && ed.selection.end.character === 1, `selection ${JSON.stringify(ed.selection)}`);
    assert(r.range.start.line === 6 && r.range.end.line === 8 && /^export function makeSquare[\s\S]*\}$/.test(r.selected_text), `result ${JSON.stringify(r)}`);
    const missing = await one('open_file', { path: 'src/shapes.ts', start_text: 'no such text' });
    // Allowed once, remembered: the later call asked nothing.
    const after = (await uiNote('notifications')).filter((n) => n.text.includes(WRITE_PROMPT));
    assert(after.length === 0, `a write consent prompt after "Allow": ${JSON.stringify(after)}`);
    assert(missing.isError && missing.text === `start_text "no such text" was not found in ${path.join(src, 'shapes.ts')}`, `missing ${JSON.stringify(missing)}`);
  });

  await test('IDE tools (writing): save_document saves an unsaved buffer, and leaves a clean one alone', async () => {
    const file = path.join(src, 'save-me.txt');
    fs.writeFileSync(file, 'on disk\n');
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
    const ed = await vscode.window.showTextDocument(doc, { preview: false });
    await ed.edit((e) => e.insert(new vscode.Position(0, 0), 'typed '));
    assert(doc.isDirty, 'not dirty');
    const r = okJson(await one('save_document', { path: 'src/save-me.txt' }), 'save_document');
    assert(r.saved === true && r.was_dirty === true && fs.readFileSync(file, 'utf8') === 'typed on disk\n' && !doc.isDirty, `save ${JSON.stringify(r)} disk ${fs.readFileSync(file, 'utf8')}`);
    const again = okJson(await one('save_document', { path: file }), 'save_document again');
    assert(again.saved === false && again.was_dirty === false && again.open === true, `again ${JSON.stringify(again)}`);
    const closed = okJson(await one('save_document', { path: 'src/not-open.txt' }), 'save_document not open');
    assert(closed.open === false && closed.saved === false, `not open ${JSON.stringify(closed)}`);
  });

  const proposeAndAct = async (file, content, act) => {
    const pending = one('open_diff', { path: file, new_content: content });
    await waitFor(`the diff editor for ${path.basename(file)}`, () => diffTabs(file).length > 0, 30000);
    await sleep(500);
    await act();
    const c = await pending;
    await waitFor('the diff tab to close', () => diffTabs(file).length === 0, 10000);
    return c;
  };

  await test('IDE tools (writing): open_diff shows the proposal in the diff editor; a click on "Accept Proposed Change" saves it: FILE_SAVED', async () => {
    const file = path.join(src, 'accept.txt');
    fs.writeFileSync(file, 'old line\n');
    const c = await proposeAndAct(file, 'new line\n', async () => {
      const tab = diffTabs(file)[0];
      assert(tab.input.original.fsPath === file, `left side ${tab.input.original.toString()}`);
      const shot = path.join(artifacts, 'open-diff.png');
      console.log(`@@oh-ui screenshot ${shot}`);
      await waitFor('the screenshot of the diff editor', () => fs.existsSync(`${shot}.done`), 30000);
      await ui('workbench-click', titleAction('Accept Proposed Change'));
    });
    const r = okJson(c, 'open_diff accept');
    assert(r.result === 'FILE_SAVED' && r.path === file, `result ${JSON.stringify(r)}`);
    assert(fs.readFileSync(file, 'utf8') === 'new line\n', `disk ${fs.readFileSync(file, 'utf8')}`);
  });

  await test('IDE tools (writing): open_diff of a new file, accepted: the file is created', async () => {
    const file = path.join(src, 'created', 'new.ts');
    const c = await proposeAndAct(file, 'export const created = 1;\n', () => ui('workbench-click', titleAction('Accept Proposed Change')));
    assert(okJson(c, 'open_diff new').result === 'FILE_SAVED' && fs.readFileSync(file, 'utf8') === 'export const created = 1;\n', `new file ${JSON.stringify(c)}`);
  });

  await test('IDE tools (writing): a click on "Reject Proposed Change": DIFF_REJECTED, the file unchanged', async () => {
    const file = path.join(src, 'reject.txt');
    fs.writeFileSync(file, 'keep me\n');
    const c = await proposeAndAct(file, 'replaced\n', () => ui('workbench-click', titleAction('Reject Proposed Change')));
    const r = okJson(c, 'open_diff reject');
    assert(r.result === 'DIFF_REJECTED' && r.reason === 'rejected', `result ${JSON.stringify(r)}`);
    assert(fs.readFileSync(file, 'utf8') === 'keep me\n', 'the file changed');
  });

  await test('IDE tools (writing): closing the diff tab is a rejection', async () => {
    const file = path.join(src, 'reject.txt');
    const c = await proposeAndAct(file, 'replaced\n', async () => {
      const tab = diffTabs(file)[0];
      await vscode.window.tabGroups.close(tab);
    });
    const r = okJson(c, 'open_diff closed');
    assert(r.result === 'DIFF_REJECTED' && r.reason === 'tab-closed' && fs.readFileSync(file, 'utf8') === 'keep me\n', `result ${JSON.stringify(r)}`);
  });

  await test('IDE tools (writing): present_review renders Markdown in a panel (replace, append, update-section), HTML shown as text', async () => {
    const title = 'Review of the shapes';
    const hostile = 'Watch <script>document.title="pwned"</script> and <img src=x onerror=alert(1)> and [bad](javascript:alert(1)) and [ok](https://example.com)';
    const a = okJson(await one('present_review', { title, markdown: `# Review\n\n## Findings\n\nold finding\n\n## Plan\n\n${hostile}` }), 'review replace');
    assert(a.outcome === 'replaced' && a.revision === 1 && JSON.stringify(a.sections) === JSON.stringify(['review', 'findings', 'plan']), `replace ${JSON.stringify(a)}`);
    const b = okJson(await one('present_review', { title, markdown: '## Risks\n\nnone', mode: 'append' }), 'review append');
    const c = okJson(await one('present_review', { title, markdown: '**count** is a string', mode: 'update-section', heading: 'Findings' }), 'review update');
    assert(b.outcome === 'appended' && c.outcome === 'section-replaced' && c.revision === 3, `modes ${JSON.stringify([b, c])}`);
    const dom = await ui('webview-dom', { selector: '#review[data-oh-review]', revision: 3 });
    fs.writeFileSync(path.join(artifacts, 'review-dom.json'), JSON.stringify(dom, null, 2));
    assert(/count is a string/.test(dom.text) && !/old finding/.test(dom.text) && /Risks/.test(dom.text), `text ${JSON.stringify(dom.text)}`);
    assert(dom.text.includes('<script>document.title="pwned"</script>') && dom.text.includes('<img src=x onerror=alert(1)>'), `hostile text not shown as text: ${JSON.stringify(dom.text)}`);
    const headingCount = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].reduce((n, h) => n + (dom.tags[h] || 0), 0);
    assert(!dom.tags.script && !dom.tags.img && dom.tags.a === 1 && dom.tags.strong === 1 && headingCount === 4, `elements ${JSON.stringify(dom.tags)}`);
    const bad = await one('present_review', { markdown: 'x', mode: 'update-section' });
    assert(bad.isError && bad.text === 'Argument "heading" is required with mode "update-section"', `bad ${JSON.stringify(bad)}`);
  });

  await test('IDE tools (writing): execute_command is refused while off in the workspace, then outside the allowlist', async () => {
    await vscode.commands.executeCommand('openhands.ide.disableExecuteCommand');
    const off = await one('execute_command', { command: 'editor.action.goToLocations', args: [] });
    assert(off.isError && /^Refused: execute_command is off in this workspace\./.test(off.text), `off ${JSON.stringify(off)}`);
    assert(await vscode.commands.executeCommand('openhands.ide.enableExecuteCommand'), 'enable');
    await vscode.workspace.getConfiguration().update(ALLOWLIST, ['editor.action.goToLocations', 'vscode.executeDefinitionProvider', 'openhands.test.noSuchCommand'], vscode.ConfigurationTarget.Global);
    const not = await one('execute_command', { command: 'workbench.action.files.saveAll' });
    assert(not.isError && not.text === 'Refused: the VS Code command "workbench.action.files.saveAll" is not in the setting openhands.ide.executeCommand.allowlist.', `not allowlisted ${JSON.stringify(not)}`);
  });

  await test('IDE tools (writing): execute_command with a nested $vscode Location opens the location', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const shapes = vscode.Uri.file(path.join(src, 'shapes.ts')).toString();
    const at = { $vscode: 'Location', uri: shapes, range: { start: { line: 9, character: 13 }, end: { $vscode: 'Position', line: 9, character: 18 } } };
    const r = okJson(await one('execute_command', { command: 'editor.action.goToLocations', args: [{ $vscode: 'Uri', value: shapes }, { $vscode: 'Position', line: 0, character: 0 }, [at], 'goto', 'not found'] }), 'goToLocations');
    assert(r.command === 'editor.action.goToLocations', `result ${JSON.stringify(r)}`);
    const ed = await waitFor('shapes.ts to be the active editor', () => vscode.window.activeTextEditor && vscode.window.activeTextEditor.document.uri.toString() === shapes && vscode.window.activeTextEditor, 10000);
    assert(ed.selection.start.line === 9 && ed.selection.start.character === 13, `selection ${JSON.stringify(ed.selection)}`);
  });

  await test('IDE tools (writing): execute_command results carry VS Code objects as $vscode values', async () => {
    const main = vscode.Uri.file(path.join(src, 'main.ts')).toString();
    const r = okJson(await one('execute_command', { command: 'vscode.executeDefinitionProvider', args: [{ $vscode: 'Uri', value: main }, { $vscode: 'Position', line: 2, character: 15 }] }), 'definition provider');
    const defs = r.result;
    assert(Array.isArray(defs) && defs.length >= 1, `result ${JSON.stringify(r)}`);
    const d = defs[0];
    // A Location, or a LocationLink whose targetUri/targetRange are tagged.
    const uri = d.$vscode === 'Location' ? d.uri : d.targetUri && d.targetUri.value;
    const range = d.$vscode === 'Location' ? d.range : d.targetRange;
    assert(/shapes\.ts$/.test(uri) && range && range.start.line === 5, `definition ${JSON.stringify(d)}`);
    assert(d.$vscode === 'Location' || (d.targetUri.$vscode === 'Uri' && d.targetRange.$vscode === 'Range'), `not tagged ${JSON.stringify(d)}`);
  });

  await test('IDE tools (writing): execute_command names a bad $vscode value (type, field, wrong type) and an unknown command', async () => {
    const out = await runClient(discovery, {
      calls: [
        { id: 'type', tool: 'execute_command', args: { command: 'editor.action.goToLocations', args: [{ nested: [{ $vscode: 'Foo' }] }] } },
        { id: 'missing', tool: 'execute_command', args: { command: 'editor.action.goToLocations', args: [{ $vscode: 'Position', character: 1 }] } },
        { id: 'wrong', tool: 'execute_command', args: { command: 'editor.action.goToLocations', args: [{ $vscode: 'Location', uri: 'file:///x', range: { start: { line: 'one', character: 0 }, end: { line: 0, character: 0 } } }] } },
        { id: 'unknown', tool: 'execute_command', args: { command: 'openhands.test.noSuchCommand' } },
      ],
    });
    const t = out.calls;
    assert(t.type.isError && t.type.text === 'Unknown VS Code object type: "Foo". Supported types: Uri, Position, Range, Selection, Location (at $[0].nested[0])', `type ${JSON.stringify(t.type)}`);
    assert(t.missing.isError && t.missing.text === 'Invalid VS Code Position: missing required field "line" (at $[0])', `missing ${JSON.stringify(t.missing)}`);
    assert(t.wrong.isError && t.wrong.text === 'Invalid VS Code Position: field "line" must be a number, got string (at $[0].range.start)', `wrong ${JSON.stringify(t.wrong)}`);
    assert(t.unknown.isError && t.unknown.text === 'Unknown VS Code command "openhands.test.noSuchCommand" (no extension registered it)', `unknown ${JSON.stringify(t.unknown)}`);
    await vscode.workspace.getConfiguration().update(ALLOWLIST, undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('openhands.ide.disableExecuteCommand');
  });
};
