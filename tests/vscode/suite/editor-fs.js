// The agent's reads and edits in the real host, one per path of extension/src/fsBridge.ts and
// openDocuments.ts, each checked on the disk bytes, the editor's text and its undo: a read of an
// open document (answered from the document), a read and an edit of a closed file (stat and read
// from the local disk, the write through workspace.fs), an edit of an open, unmodified document (applied to it and saved: one undo
// step, no reload from disk), the same with a save participant that would change the text
// (files.insertFinalNewline: the bytes are written to disk instead), and with another extension's
// participant, which no setting announces (saved, then the agent's bytes written after all).
// Called by suite/index.js in its session (the stand-in backend delegates one action at a time).
const vscode = require('vscode');
const fs = require('fs');
const path = require('path');
const { sleep, assert, waitFor } = require('./lib');
const { RecordingFs } = require('./trust');

/** The calls `provider` (a RecordingFs) received on `file`, in order. */
const callsOn = (provider, file) => provider.calls.filter(([, f]) => f === file).map(([op]) => op);

/** Runs `f` with `provider` serving `file:` for `vscode.workspace.fs` in this extension host. */
async function withProvider(provider, f) {
  const reg = vscode.workspace.registerFileSystemProvider('file', provider, { isCaseSensitive: true });
  try {
    return await f();
  } finally {
    reg.dispose();
  }
}

/**
 * Records, for each change of `doc`, what the disk held at that moment (a change made to the
 * document comes before its save; a reload comes after the write), and each save of it.
 */
function watchDocument(doc, file) {
  const seen = { changes: [], saves: 0 };
  const subs = [
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.document === doc && e.contentChanges.length) seen.changes.push({ diskAtChange: fs.readFileSync(file, 'utf8'), text: doc.getText() });
    }),
    vscode.workspace.onDidSaveTextDocument((d) => {
      if (d === doc) seen.saves++;
    }),
  ];
  seen.dispose = () => subs.forEach((s) => s.dispose());
  return seen;
}

/** Writes `text` to `file` and opens it in an editor (unmodified); returns the document. */
async function openWith(file, text) {
  fs.writeFileSync(file, text);
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
  await vscode.window.showTextDocument(doc, { preview: false });
  return doc;
}

/** One undo in the document's editor restores `oldText` (unsaved); redo brings back `newText`, saved. */
async function checkUndo(doc, oldText, newText) {
  await vscode.window.showTextDocument(doc, { preview: false });
  await vscode.commands.executeCommand('undo');
  await waitFor('the undo', () => doc.getText() !== newText, 5000, 20);
  assert(doc.getText() === oldText && doc.isDirty, `after one undo: ${JSON.stringify(doc.getText())} dirty ${doc.isDirty}`);
  await vscode.commands.executeCommand('redo');
  await waitFor('the redo', () => doc.getText() === newText, 5000, 20);
  assert(!doc.isDirty, 'the document is dirty after redo (its saved state is not the agent\'s text)');
}

exports.editorFsTests = async ({ test, delegate, root }) => {
  const dir = path.join(root, 'editor-fs');
  fs.mkdirSync(dir, { recursive: true });
  const edit = (file, oldStr, newStr) =>
    delegate({ action: 'edit', message: '', args: { path: file, command: 'str_replace', file_text: null, old_str: oldStr, new_str: newStr, insert_line: null, content: '', start: 1, end: -1, thought: '', security_risk: -1, impl_source: 'oh_aci' } });
  const read = (file) => delegate({ action: 'read', message: '', args: { path: file, start: 0, end: -1, thought: '', security_risk: -1, impl_source: 'oh_aci', view_range: null } });
  const edited = (obs) => assert(obs.observation === 'edit' && /has been edited/.test(obs.content), `observation ${JSON.stringify(obs)}`);

  await test('agent file paths: a read of an open, unmodified document is answered from the document (no workspace.fs call)', async () => {
    const file = path.join(dir, 'read-open.txt');
    const doc = await openWith(file, 'shown in an editor\n');
    const version = doc.version;
    const provider = new RecordingFs(new Map());
    const obs = await withProvider(provider, () => read(file));
    assert(obs.observation === 'read' && obs.content.includes('shown in an editor'), `read ${JSON.stringify(obs)}`);
    assert(callsOn(provider, file).length === 0, `workspace.fs calls for the open document: ${JSON.stringify(callsOn(provider, file))}`);
    assert(fs.readFileSync(file, 'utf8') === 'shown in an editor\n' && doc.getText() === 'shown in an editor\n', 'the disk or the editor changed');
    assert(doc.version === version && !doc.isDirty, `the document was edited by a read: version ${version} -> ${doc.version}`);
  });

  await test('agent file paths: a read of a closed file is answered from the local disk (no workspace.fs call)', async () => {
    const file = path.join(dir, 'read-closed.txt');
    fs.writeFileSync(file, 'on disk only\n');
    const provider = new RecordingFs(new Map());
    const obs = await withProvider(provider, () => read(file));
    assert(obs.observation === 'read' && obs.content.includes('on disk only'), `read ${JSON.stringify(obs)}`);
    assert(callsOn(provider, file).length === 0, `workspace.fs calls for a read of a closed file: ${JSON.stringify(callsOn(provider, file))}`);
    assert(fs.readFileSync(file, 'utf8') === 'on disk only\n', 'the disk changed');
    assert(!vscode.workspace.textDocuments.some((d) => d.uri.fsPath === file), 'a read opened a document');
  });

  await test('agent file paths: an edit of a closed file: stat and read on the local disk, the write through workspace.fs, the agent\'s bytes on disk, no editor', async () => {
    const file = path.join(dir, 'edit-closed.txt');
    fs.writeFileSync(file, 'alpha\nsecond line\n');
    const provider = new RecordingFs(new Map());
    edited(await withProvider(provider, () => edit(file, 'alpha', 'beta')));
    const calls = callsOn(provider, file);
    assert(!calls.includes('stat') && !calls.includes('readFile'), `stat or readFile through workspace.fs: ${JSON.stringify(calls)}`);
    assert(provider.calls.some(([op, f]) => op === 'writeFile' && f === file), 'the write did not go through workspace.fs');
    const disk = fs.readFileSync(file);
    assert(disk.equals(Buffer.from('beta\nsecond line\n')), `disk ${JSON.stringify(disk.toString())}`);
    assert(!vscode.workspace.textDocuments.some((d) => d.uri.fsPath === file), 'an edit opened a document');
  });

  await test('agent file paths: an edit of an open, unmodified document is applied to it and saved: no reload, one undo step, the agent\'s bytes', async () => {
    const file = path.join(dir, 'edit-open.txt');
    const oldText = 'const greeting = "hello";\nexport default greeting;\n';
    const newText = 'const greeting = "hello, world";\nexport default greeting;\n';
    const doc = await openWith(file, oldText);
    const seen = watchDocument(doc, file);
    try {
      edited(await edit(file, '"hello"', '"hello, world"'));
      // Shown when the agent hears back; nothing more comes (a reload would be a second change).
      assert(doc.getText() === newText && !doc.isDirty, `the editor ${JSON.stringify(doc.getText())} dirty ${doc.isDirty}`);
      await sleep(500);
      assert(fs.readFileSync(file).equals(Buffer.from(newText)), `disk ${JSON.stringify(fs.readFileSync(file, 'utf8'))}`);
      assert(seen.changes.length === 1 && seen.changes[0].diskAtChange === oldText, `document changes (with the disk at each): ${JSON.stringify(seen.changes)}`);
      assert(seen.saves === 1, `${seen.saves} saves of the document`);
    } finally {
      seen.dispose();
    }
    await checkUndo(doc, oldText, newText);
  });

  await test('agent file paths: with a save participant that would change the text (files.insertFinalNewline), the edit is written to disk and the editor reloads it', async () => {
    const file = path.join(dir, 'edit-open-participant.txt');
    const oldText = 'alpha\nno final newline';
    const newText = 'gamma\nno final newline';
    const files = vscode.workspace.getConfiguration('files');
    await files.update('insertFinalNewline', true, vscode.ConfigurationTarget.Global);
    const doc = await openWith(file, oldText);
    const seen = watchDocument(doc, file);
    try {
      edited(await edit(file, 'alpha', 'gamma'));
      assert(fs.readFileSync(file).equals(Buffer.from(newText)), `disk ${JSON.stringify(fs.readFileSync(file, 'utf8'))} (the participant ran)`);
      // The bridge waits up to 2 s for the reload; a loaded machine may take longer.
      await waitFor('the editor to show the edit', () => doc.getText() === newText, 5000, 20);
      assert(!doc.isDirty, 'the editor is dirty after the reload');
      assert(seen.saves === 0, `${seen.saves} saves of the document`);
      assert(seen.changes.length >= 1 && seen.changes.every((c) => c.diskAtChange === newText), `document changes (with the disk at each): ${JSON.stringify(seen.changes)}`);
    } finally {
      seen.dispose();
      await files.update('insertFinalNewline', undefined, vscode.ConfigurationTarget.Global);
    }
    await checkUndo(doc, oldText, newText);
  });

  await test('agent file paths: a save participant of another extension changes the text: the agent\'s bytes are written to disk after all and the editor shows them', async () => {
    const file = path.join(dir, 'edit-open-other-participant.txt');
    const oldText = 'alpha\nsecond line\n';
    const newText = 'omega\nsecond line\n';
    const doc = await openWith(file, oldText);
    // What a formatter extension does on save; no setting tells the bridge about it in advance.
    let ran = 0;
    const participant = vscode.workspace.onWillSaveTextDocument((e) => {
      if (e.document !== doc) return;
      ran++;
      e.waitUntil(Promise.resolve([vscode.TextEdit.insert(new vscode.Position(0, 0), '// formatted\n')]));
    });
    try {
      edited(await edit(file, 'alpha', 'omega'));
      assert(ran === 1, `the participant ran ${ran} times`);
      assert(fs.readFileSync(file).equals(Buffer.from(newText)), `disk ${JSON.stringify(fs.readFileSync(file, 'utf8'))}`);
      await waitFor('the editor to show the agent\'s bytes', () => doc.getText() === newText, 5000, 20);
      assert(!doc.isDirty, 'the editor is dirty');
    } finally {
      participant.dispose();
    }
  });
};
