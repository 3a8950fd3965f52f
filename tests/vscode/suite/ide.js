// The IDE tools (docs/ide-tools.md) in a real VS Code host (code-server) with its built-in
// TypeScript language features, through the MCP endpoint, from a separate Node process using the
// official MCP client SDK (../ide-mcp-client.mjs) that finds the endpoint through the discovery
// file. Workspace: fixtures/ide-workspace (see its README for the line numbers asserted here).
// Each test prints "@@oh-test PASS|FAIL <name>"; run by run.sh in its own host session.
const vscode = require('vscode');
const fs = require('fs');
const os = require('os');
const path = require('path');
const crypto = require('crypto');
const { execFile } = require('child_process');
const { waitFor, sleep, assert, answerPrompt, runner, uiRequester } = require('./lib');
const { writeTests } = require('./ide-write');

const EXT_ID = 'openhands-vscode-runtime.openhands-tab';
const ARTIFACTS = process.env.OH_TEST_ARTIFACTS || os.tmpdir();
/** A UI request to the runner (host.mjs); this session's runner clicks nothing by itself. */
const ui = uiRequester(ARTIFACTS, 30000);
const SERVE_PROMPT = 'Allow MCP clients on this machine to use VS Code';

function runClient(discovery, plan) {
  const planFile = path.join(os.tmpdir(), `oh-ide-plan-${process.pid}-${Date.now()}.json`);
  fs.writeFileSync(planFile, JSON.stringify(plan));
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [path.join(__dirname, '..', 'ide-mcp-client.mjs'), discovery, planFile], { timeout: 120000, maxBuffer: 32 * 1024 * 1024, env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' } }, (err, stdout, stderr) => {
      fs.rmSync(planFile, { force: true });
      if (err) return reject(new Error(`MCP client failed: ${err.message}\n${stderr}`));
      try {
        resolve(JSON.parse(stdout.trim().split('\n').pop()));
      } catch (e) {
        reject(new Error(`MCP client printed no JSON: ${stdout}\n${stderr}`));
      }
    });
  });
}

exports.run = async () => {
  const run = runner();
  const test = run.test;

  const folder = vscode.workspace.workspaceFolders[0].uri;
  const root = folder.fsPath;
  const mainTs = path.join(root, 'src', 'main.ts');
  const shapesTs = path.join(root, 'src', 'shapes.ts');
  // The documented name: the first 16 hex digits of sha256(folder URI), in $OPENHANDS_VSCODE_MCP_DIR.
  const discoveryDir = process.env.OPENHANDS_VSCODE_MCP_DIR;
  const discovery = path.join(discoveryDir || '/nonexistent', `${crypto.createHash('sha256').update(folder.toString()).digest('hex').slice(0, 16)}.json`);
  let info;
  let out;

  await test('IDE tools: not served before the user allowed them', async () => {
    assert(discoveryDir, 'OPENHANDS_VSCODE_MCP_DIR is not set for the extension host');
    const ext = vscode.extensions.getExtension(EXT_ID);
    assert(ext, `${EXT_ID} is not installed`);
    await ext.activate();
    await sleep(1000);
    assert(!fs.existsSync(discovery), `a discovery file exists before consent: ${discovery}`);
  });

  await test('IDE tools: the start command asks for consent, then serves on 127.0.0.1 with a 0600 discovery file', async () => {
    const started = vscode.commands.executeCommand('openhands.ide.startServer');
    const shown = await answerPrompt(vscode, ui, SERVE_PROMPT, 'Allow', 30000);
    assert(shown === 1, `${shown} consent prompts to serve the IDE tools`);
    await started;
    await waitFor('the discovery file', () => fs.existsSync(discovery), 30000);
    info = JSON.parse(fs.readFileSync(discovery, 'utf8'));
    assert(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/.test(info.url), `url ${info.url}`);
    assert(/^[0-9a-f]{64}$/.test(info.token) && info.headers.Authorization === `Bearer ${info.token}`, 'token/header');
    assert((fs.statSync(discovery).mode & 0o777) === 0o600, `mode ${(fs.statSync(discovery).mode & 0o777).toString(8)}`);
    assert(info.workspace.folders[0] === folder.toString(), `workspace ${JSON.stringify(info.workspace)}`);
  });
  if (!info) run.stop();

  let editor;
  await test('IDE tools: an unsaved edit with a type error in an open editor (TypeScript reports it)', async () => {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(mainTs));
    editor = await vscode.window.showTextDocument(doc, { preview: false });
    const ok = await editor.edit((e) => e.insert(new vscode.Position(doc.lineCount - 1, 0), 'const broken: string = 42;\n'));
    assert(ok && doc.isDirty, 'the edit was not applied');
    // VS Code's own view first (the language server starts here): the error of the unsaved line 6.
    await waitFor('TypeScript to report the unsaved error', () => vscode.languages.getDiagnostics(doc.uri).some((d) => d.range.start.line === 5), 90000, 300);
    editor.selection = new vscode.Selection(2, 6, 2, 12); // "square" on line 3
    await sleep(300);
    editor.selection = new vscode.Selection(0, 0, 0, 0); // cleared again: the latest selection must stay
    await sleep(300);
  });

  await test('IDE tools: an MCP client (official SDK, separate process) finds the endpoint through the discovery file and lists the tools', async () => {
    out = await runClient(discovery, {
      probes: true,
      calls: [
        { id: 'diag_main', tool: 'diagnostics', args: { path: 'src/main.ts' } },
        { id: 'diag_shapes', tool: 'diagnostics', args: { path: shapesTs, wait_ms: 5000 } },
        { id: 'diag_shapes_tab', tool: 'diagnostics', args: { path: shapesTs, wait_ms: 20000, open_in_tab: true } },
        { id: 'diag_ws', tool: 'diagnostics', args: {} },
        { id: 'hover', tool: 'hover', args: { path: 'src/main.ts', line: 3, column: 7 } },
        { id: 'definition', tool: 'definition', args: { path: 'src/main.ts', line: 3, column: 16 } },
        { id: 'type_definition', tool: 'type_definition', args: { path: 'src/main.ts', line: 3, column: 7 } },
        { id: 'references', tool: 'references', args: { path: vscode.Uri.file(shapesTs).toString(), line: 6, column: 17 } },
        { id: 'document_symbols', tool: 'document_symbols', args: { path: 'src/shapes.ts' } },
        { id: 'workspace_symbols', tool: 'workspace_symbols', args: { query: 'makeSquare' } },
        { id: 'folders', tool: 'get_workspace_folders', args: {} },
        { id: 'editors', tool: 'get_open_editors', args: {} },
        { id: 'selection', tool: 'get_selection', args: {} },
        { id: 'latest', tool: 'get_latest_selection', args: {} },
        { id: 'dirty_main', tool: 'check_document_dirty', args: { path: mainTs } },
        { id: 'dirty_shapes', tool: 'check_document_dirty', args: { path: 'src/shapes.ts' } },
        { id: 'bad_line', tool: 'hover', args: { path: 'src/main.ts', line: 0 } },
        { id: 'bad_arg', tool: 'hover', args: { path: 'src/main.ts', line: 1, colum: 2 } },
        { id: 'past_end', tool: 'definition', args: { path: 'src/main.ts', line: 99 } },
      ],
    });
    fs.writeFileSync(path.join(ARTIFACTS, 'ide-mcp-client.json'), JSON.stringify(out, null, 2));
    const names = out.tools.map((t) => t.name).sort();
    const readOnly = ['check_document_dirty', 'definition', 'diagnostics', 'document_symbols', 'get_latest_selection', 'get_open_editors', 'get_selection', 'get_workspace_folders', 'hover', 'references', 'type_definition', 'workspace_symbols'];
    const writing = ['execute_command', 'open_diff', 'open_file', 'present_review', 'save_document'];
    assert(JSON.stringify(names) === JSON.stringify([...readOnly, ...writing].sort()), `tools ${JSON.stringify(names)}`);
    assert(out.tools.every((t) => t.readOnly === !writing.includes(t.name) && t.inputSchema.type === 'object'), 'read-only tools say so, writing tools do not; every schema is an object');
    assert(out.tools.filter((t) => 'line' in (t.inputSchema.properties || {})).every((t) => /1-based/.test(t.description)), 'position tools say 1-based');
  });
  if (!out) run.stop();
  const call = (id) => {
    const c = out.calls[id];
    assert(c, `no result for ${id}`);
    return c;
  };
  const ok = (id) => {
    const c = call(id);
    assert(!c.isError && c.json, `${id} failed: ${c.text || c.thrown}`);
    return c.json;
  };

  await test('IDE tools: diagnostics of an open file see the unsaved error (1-based line), not only what is on disk', async () => {
    const r = ok('diag_main');
    assert(r.document && r.document.dirty === true, `document ${JSON.stringify(r.document)}`);
    const e = r.diagnostics.find((d) => d.range.start.line === 6);
    assert(e && e.severity === 'error' && /Type 'number' is not assignable to type 'string'/.test(e.message) && e.source === 'ts' && e.path === mainTs, `diagnostics ${JSON.stringify(r.diagnostics)}`);
    assert(!fs.readFileSync(mainTs, 'utf8').includes('broken'), 'the edit reached the disk');
    assert(r.severity === 'warning' && r.counts.error >= 1, `filter ${r.severity} counts ${JSON.stringify(r.counts)}`);
  });

  await test('IDE tools: diagnostics of a file not open in a tab: opened without showing it, and the result says TypeScript did not report', async () => {
    const r = ok('diag_shapes');
    assert(r.document.opened_by_tool === 'hidden' && r.document.in_editor_tab === false && r.document.reported === false, `document ${JSON.stringify(r.document)}`);
    assert(/open_in_tab/.test(r.document.note) && r.diagnostics.length === 0, `result ${JSON.stringify(r)}`);
  });

  await test('IDE tools: diagnostics with open_in_tab: the type error on line 10, the tab closed again, focus kept', async () => {
    const r = ok('diag_shapes_tab');
    const e = r.diagnostics.find((d) => d.range.start.line === 10);
    assert(e && e.severity === 'error' && /Type 'string' is not assignable to type 'number'/.test(e.message) && e.code === 2322 && e.path === shapesTs, `diagnostics ${JSON.stringify(r)}`);
    assert(r.document.opened_by_tool === 'tab' && r.document.reported === true && r.document.dirty === false, `document ${JSON.stringify(r.document)}`);
    const editors = ok('editors').editors;
    assert(!editors.some((x) => x.path === shapesTs), `shapes.ts is still in a tab: ${JSON.stringify(editors)}`);
    assert(vscode.window.activeTextEditor && vscode.window.activeTextEditor.document.uri.fsPath === mainTs, 'main.ts is no longer the active editor');
    const ws = ok('diag_ws');
    assert(ws.diagnostics.some((d) => d.path === mainTs && d.range.start.line === 6), `workspace diagnostics ${JSON.stringify(ws)}`);
  });

  await test('IDE tools: hover gives the type at a 1-based position', async () => {
    const r = ok('hover');
    const text = r.hovers.flatMap((h) => h.contents).join('\n');
    assert(/const square: Shape/.test(text), `hover ${JSON.stringify(r)}`);
  });

  await test('IDE tools: definition and type_definition point to the declarations in shapes.ts', async () => {
    const d = ok('definition');
    assert(d.locations.length === 1 && d.locations[0].path === shapesTs && d.locations[0].range.start.line === 6 && /function makeSquare/.test(d.locations[0].text), `definition ${JSON.stringify(d)}`);
    const t = ok('type_definition');
    assert(t.locations.length === 1 && t.locations[0].path === shapesTs && t.locations[0].range.start.line === 1 && /interface Shape/.test(t.locations[0].text), `type_definition ${JSON.stringify(t)}`);
  });

  await test('IDE tools: references of makeSquare: the declaration and the three uses in main.ts', async () => {
    const r = ok('references');
    const got = r.locations.map((l) => `${path.basename(l.path)}:${l.range.start.line}`).sort();
    assert(JSON.stringify(got) === JSON.stringify(['main.ts:1', 'main.ts:3', 'main.ts:5', 'shapes.ts:6']), `references ${JSON.stringify(got)}`);
  });

  await test('IDE tools: document and workspace symbols', async () => {
    const d = ok('document_symbols');
    const names = d.symbols.map((s) => `${s.name}:${s.kind}:${s.range.start.line}`);
    for (const want of ['Shape:Interface:1', 'makeSquare:Function:6', 'count:Variable:10']) assert(names.includes(want), `document symbols ${JSON.stringify(names)}`);
    const w = ok('workspace_symbols');
    assert(w.symbols.some((s) => /^makeSquare\b/.test(s.name) && s.path === shapesTs && s.range.start.line === 6), `workspace symbols ${JSON.stringify(w)}`);
  });

  await test('IDE tools: workspace folders, open editors (dirty, active, language), dirty checks', async () => {
    const f = ok('folders');
    assert(f.folders.length === 1 && f.folders[0].path === root, `folders ${JSON.stringify(f)}`);
    const e = ok('editors').editors.find((x) => x.path === mainTs);
    assert(e && e.dirty === true && e.active === true && e.language === 'typescript', `editors ${JSON.stringify(ok('editors'))}`);
    const m = ok('dirty_main');
    assert(m.open === true && m.dirty === true, `main ${JSON.stringify(m)}`);
    const s = ok('dirty_shapes');
    assert(s.dirty === false && s.path === shapesTs, `shapes ${JSON.stringify(s)}`);
  });

  await test('IDE tools: current selection and the latest non-empty one', async () => {
    const s = ok('selection').selection;
    assert(s && s.path === mainTs && s.text === '' && s.range.start.line === 1 && s.range.start.column === 1, `selection ${JSON.stringify(s)}`);
    const l = ok('latest').selection;
    assert(l && l.path === mainTs && l.text === 'square' && l.range.start.line === 3 && l.range.start.column === 7 && l.range.end.column === 13, `latest ${JSON.stringify(l)}`);
  });

  await test('IDE tools: bad arguments are tool errors that name the argument', async () => {
    const a = call('bad_line');
    assert(a.isError && a.text === 'Argument "line" must be at least 1, got 0', `bad_line ${JSON.stringify(a)}`);
    const b = call('bad_arg');
    assert(b.isError && /^Unknown argument "colum" for "hover"; it takes: path, line, column$/.test(b.text), `bad_arg ${JSON.stringify(b)}`);
    const c = call('past_end');
    assert(c.isError && /Argument "line" is 99, past the end of .*main\.ts \(\d+ lines\)/.test(c.text), `past_end ${JSON.stringify(c)}`);
  });

  await test('IDE tools: a call without the token is refused (401), a cross-origin call is refused (403)', async () => {
    const p = out.probes;
    assert(!p.noToken.ok && /Unauthorized/.test(p.noToken.error), `no token ${JSON.stringify(p.noToken)}`);
    assert(p.noTokenRaw.status === 401, `no token raw ${JSON.stringify(p.noTokenRaw)}`);
    assert(!p.wrongToken.ok && /Unauthorized/.test(p.wrongToken.error), `wrong token ${JSON.stringify(p.wrongToken)}`);
    assert(!p.crossOrigin.ok && /Forbidden: Origin/.test(p.crossOrigin.error), `cross origin ${JSON.stringify(p.crossOrigin)}`);
    assert(p.crossOriginRaw.status === 403 && JSON.parse(p.crossOriginRaw.body).error.message === 'Forbidden: Origin "http://evil.example" is not allowed', `cross origin raw ${JSON.stringify(p.crossOriginRaw)}`);
  });

  await test('IDE tools: a VS Code terminal gets the endpoint in its environment', async () => {
    const file = path.join(os.tmpdir(), `oh-ide-env-${process.pid}.txt`);
    fs.rmSync(file, { force: true });
    // /bin/sh: no ~/.bashrc (a slow rc file must not decide the test).
    const term = vscode.window.createTerminal({ name: 'ide-env-check', shellPath: '/bin/sh' });
    term.sendText(`printf '%s\\n%s\\n%s\\n' "$OPENHANDS_VSCODE_MCP_URL" "$OPENHANDS_VSCODE_MCP_DISCOVERY" "\${#OPENHANDS_VSCODE_MCP_TOKEN}" > ${file}.tmp && mv ${file}.tmp ${file}`);
    const text = await waitFor('the terminal to write its environment', () => fs.existsSync(file) && fs.readFileSync(file, 'utf8'), 30000, 300);
    term.dispose();
    fs.rmSync(file, { force: true });
    const [url, disc, tokenLength] = text.split('\n');
    assert(url === info.url && disc === discovery && tokenLength === '64', `terminal env: ${JSON.stringify(text)}`);
  });

  await writeTests({ test, runClient, discovery, root, artifacts: ARTIFACTS, ui });

  if (process.env.OH_IDE_BENCH) {
    await test('IDE tools: latency bench (figures only)', async () => {
      const n = Number(process.env.OH_IDE_BENCH) || 200;
      const b = await runClient(discovery, { bench: { n, tool: 'hover', args: { path: 'src/main.ts', line: 3, column: 7 }, readPath: mainTs } });
      const b2 = await runClient(discovery, { bench: { n, tool: 'check_document_dirty', args: { path: 'src/main.ts' }, readPath: mainTs } });
      // "oh-test bench" lines reach the runner's output (host.mjs forwards oh-test lines) without counting as tests.
      // A writing tool: the write gate (trust + remembered consent) on every call, and an editor shown.
      const b3 = await runClient(discovery, { bench: { n, tool: 'open_file', args: { path: 'src/shapes.ts', preserve_focus: true }, readPath: mainTs } });
      for (const x of [b.bench, b2.bench, b3.bench]) console.log(`oh-test bench ${JSON.stringify(x)}`);
      fs.writeFileSync(path.join(ARTIFACTS, 'bench.json'), JSON.stringify([b.bench, b2.bench, b3.bench], null, 2));
    });
  }

  await test('IDE tools: the stop command closes the endpoint and removes the discovery file', async () => {
    await vscode.commands.executeCommand('openhands.ide.stopServer');
    assert(!fs.existsSync(discovery), 'the discovery file is still there');
    let refused = false;
    try {
      await fetch(info.url, { method: 'POST', headers: { Authorization: `Bearer ${info.token}` } });
    } catch {
      refused = true;
    }
    assert(refused, 'the endpoint still answers');
  });

  // Leave the buffer as it was on disk so the host can close without a save prompt.
  try {
    await vscode.commands.executeCommand('workbench.action.files.revert');
  } catch {}
  run.finish('IDE tools');
};
