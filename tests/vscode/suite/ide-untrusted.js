// In restricted mode the writing IDE tools are refused even in-process (the command other
// extensions and the OpenHands runtime path use), before any prompt, file change or command.
const vscode = require('vscode');
const fs = require('fs');
const path = require('path');

// A test body for untrusted.js's runner: throws on the first refusal that is missing or wrong.
exports.ideWritingRefused = async () => {
  const file = path.join(vscode.workspace.workspaceFolders[0].uri.fsPath, 'untouched.txt');
  fs.writeFileSync(file, 'before\n');
  const calls = [
    ['open_diff', { path: file, new_content: 'after\n' }],
    ['execute_command', { command: 'workbench.action.files.saveAll', args: [] }],
    ['save_document', { path: file }],
  ];
  for (const [tool, args] of calls) {
    let message;
    try {
      await vscode.commands.executeCommand('openhands.ide.callTool', tool, args);
    } catch (e) {
      message = e && e.message;
    }
    const want = `Refused: "${tool}" changes the workspace, and VS Code does not trust this workspace (Restricted Mode).`;
    if (!message || !message.startsWith(want)) throw new Error(`${tool}: ${message === undefined ? 'it ran' : message}`);
  }
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputTextDiff);
  if (tabs.length) throw new Error('a diff editor was opened');
  if (fs.readFileSync(file, 'utf8') !== 'before\n') throw new Error('the file changed');
};
