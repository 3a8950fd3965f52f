/**
 * The IDE tools: what VS Code knows (language intelligence, editors, selections) offered as tools
 * with JSON-schema inputs and JSON results. Transport-free: `mcpServer.ts` serves them over MCP;
 * another front (the OpenHands runtime) can call `runTool` the same way.
 *
 * Conventions shared by every tool (and said in each description):
 * - a file is named by `path`: an absolute path, a path relative to the first workspace folder,
 *   or a URI with a scheme (`file:///...`, `untitled:Untitled-1`);
 * - positions are 1-based: `line` 1 is the first line (as in the editor tool's numbered views and
 *   VS Code's status bar), `column` 1 the first character;
 * - results are JSON objects; ranges are `{start: {line, column}, end: {line, column}}`, 1-based.
 */
import { editorTools, SelectionTracker } from './editorTools';
import { languageTools } from './languageTools';
import { IdeTool, ToolArgumentError, ToolCallContext } from './toolSupport';

export type { IdeTool } from './toolSupport';
export { ToolArgumentError, ToolRefusedError } from './toolSupport';

export interface ToolDeps {
  readonly selections: SelectionTracker;
  /** The writing tools (open_file, save_document, open_diff, present_review, execute_command); absent: read-only tools only. */
  readonly writing?: readonly IdeTool[];
}

export function createTools(deps: ToolDeps): IdeTool[] {
  return [...languageTools(), ...editorTools(deps.selections), ...(deps.writing ?? [])];
}

/** Runs a tool by name with validated arguments; throws ToolArgumentError or the tool's error. */
export async function runTool(tools: readonly IdeTool[], name: string, args: unknown, call?: ToolCallContext): Promise<unknown> {
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new ToolArgumentError(`Unknown tool "${name}". Tools: ${tools.map((t) => t.name).join(', ')}`);
  if (args !== undefined && args !== null && (typeof args !== 'object' || Array.isArray(args))) {
    throw new ToolArgumentError(`The arguments of "${name}" must be a JSON object`);
  }
  const given = (args ?? {}) as Record<string, unknown>;
  const known = Object.keys((tool.inputSchema.properties as Record<string, unknown> | undefined) ?? {});
  const unknown = Object.keys(given).filter((k) => !known.includes(k));
  if (unknown.length) {
    throw new ToolArgumentError(`Unknown argument${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')} for "${name}"; it takes: ${known.join(', ') || 'no arguments'}`);
  }
  return tool.run(given, call);
}

