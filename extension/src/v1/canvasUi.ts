import { constants } from 'fs';
import { access } from 'fs/promises';
import { createServer } from 'net';
import * as path from 'path';
import * as vscode from 'vscode';
import type { AgentServerEndpoint } from './agentServerClient';
import { useAsCanvasBackend, type CanvasOutcome } from './canvasBackend';

/** An executable named `name` in one of PATH's folders. */
export async function findOnPath(name: string, pathVar = process.env.PATH ?? ''): Promise<string | undefined> {
  for (const dir of pathVar.split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Up to 60 s for `url` to answer (Canvas's launcher starts its ingress and static server first). */
async function waitForHttp(url: string, timeoutMs = 60000): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    try {
      await fetch(url, { signal: AbortSignal.timeout(2000) });
      return true;
    } catch {
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  return false;
}

/** `openhands.v1.useAsCanvasBackend` (answers what it did, for the tests). */
export function registerCanvasCommand(endpoint: () => Promise<AgentServerEndpoint | undefined>, backendIsV1: () => boolean): vscode.Disposable {
  return vscode.commands.registerCommand('openhands.v1.useAsCanvasBackend', async (): Promise<CanvasOutcome | undefined> => {
    if (!backendIsV1()) {
      void vscode.window.showInformationMessage('OpenHands: an Agent Canvas backend is a V1 agent-server ("openhands.mode").');
      return undefined;
    }
    return useAsCanvasBackend({
      endpoint,
      findOnPath: (name) => findOnPath(name),
      freePort,
      waitForHttp: (url) => waitForHttp(url),
      ui: {
        copy: (text) => Promise.resolve(vscode.env.clipboard.writeText(text)),
        offer: (message, actions) => Promise.resolve(vscode.window.showInformationMessage(message, ...actions)),
        error: (message) => void vscode.window.showErrorMessage(message),
        runInTerminal: (name, argv) => vscode.window.createTerminal({ name, shellPath: argv[0], shellArgs: argv.slice(1) }).show(true),
        openBrowser: async (url) => {
          await vscode.env.openExternal(vscode.Uri.parse(url));
        },
      },
    });
  });
}
