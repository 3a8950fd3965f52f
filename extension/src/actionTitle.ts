import { maskSecretExports } from './secretMask';

/**
 * The one human title of an agent's action, for the tab's conversation (tab/eventModel.ts) and
 * the executor's recent actions (activity.ts): V0 action names (`run`, `edit`, ...) and the V1
 * executor's (`v1_terminal`, `v1_file_editor`) alike. Secret exports (`export NAME=$'…'`) are masked.
 */
export function actionTitle(action: string, args: Record<string, unknown>, message?: string): string {
  const path = str(args.path);
  switch (action) {
    case 'run':
    case 'v1_terminal': {
      const command = maskSecretExports(str(args.command));
      if (args.is_input === true || args.is_input === 'true') return `input: ${command}`;
      return command || '(empty command: read more output)';
    }
    case 'run_ipython':
      return firstLine(str(args.code));
    case 'read':
      return `Read ${path}`;
    case 'write':
      return `Wrote ${path}`;
    case 'edit':
    case 'v1_file_editor': {
      const cmd = str(args.command);
      if (cmd === 'view') return `Viewed ${path}`;
      if (cmd === 'create') return `Created ${path}`;
      if (cmd === 'undo_edit') return `Undid the last edit of ${path}`;
      return `Edited ${path}`;
    }
    case 'browse':
      return `Browse ${str(args.url)}`;
    case 'call_tool_mcp':
      return `Tool ${str(args.name)}`;
    default:
      return firstLine(str(message)) || action || 'unknown action';
  }
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v);
}

function firstLine(s: string): string {
  const line = s.split('\n', 1)[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
