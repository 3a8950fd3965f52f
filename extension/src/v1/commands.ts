import * as vscode from 'vscode';
import type { ManagedAgentServer } from './agentServer';

/** The `openhands.v1.*` commands of the managed agent-server. */
export function registerV1Commands(server: ManagedAgentServer, backendIsV1: () => boolean): vscode.Disposable[] {
  const run = (id: string, f: () => unknown) => vscode.commands.registerCommand(id, f);
  return [
    run('openhands.v1.setUpEnvironment', async () => {
      await server.setUpEnvironment();
      // From nothing to a running server in one command: start (or restart onto the new environment).
      if (backendIsV1()) await (server.state === 'running' ? server.restart() : server.ensure());
    }),
    run('openhands.v1.startAgentServer', () => server.ensure()),
    run('openhands.v1.restartAgentServer', () => server.restart()),
    run('openhands.v1.stopAgentServer', () => server.stop()),
    run('openhands.v1.showAgentServerLog', () => server.output.show(true)),
  ];
}
