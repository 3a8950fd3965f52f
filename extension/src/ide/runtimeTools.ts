/**
 * The IDE tools as the OpenHands runtime path calls them (`call_tool_mcp` actions through the
 * executor; docs/ide-tools.md): the announced list, and a call answering MCP `CallToolResult` JSON
 * (errors as `isError`). The runtime may give up on a call (its reply timeout passed): the
 * executor then aborts the call's signal, the tool sees it (open_diff withdraws its diff and
 * closes the editor) and the call answers at once as cancelled, whatever the tool still does.
 */
import type { RuntimeIdeTools } from '../executorService';
import type { IdeToolInfo } from '../native';
import { toolError, toolResult } from './mcpServer';
import type { ToolCallContext } from './toolSupport';

export const CANCELLED_MESSAGE = 'Cancelled: the OpenHands runtime stopped waiting for this call (its reply timeout passed).';

export function runtimeIdeTools(
  list: readonly IdeToolInfo[],
  call: (name: string, args: unknown, ctx?: ToolCallContext) => Promise<unknown>,
  log: { debug(m: string): void },
): RuntimeIdeTools {
  return {
    list,
    async call(name, argumentsJson, signal) {
      const t0 = Date.now();
      let result;
      try {
        result = toolResult(await untilAborted(call(name, JSON.parse(argumentsJson), { signal }), signal));
      } catch (e) {
        result = toolError(e);
      }
      log.debug(`runtime IDE tool ${name} answered in ${Date.now() - t0} ms${'isError' in result ? ' (error)' : ''}`);
      return JSON.stringify(result);
    },
  };
}

/** `work`, or a rejection with CANCELLED_MESSAGE as soon as `signal` aborts (whichever is first). */
function untilAborted<T>(work: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error(CANCELLED_MESSAGE));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
