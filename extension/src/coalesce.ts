/**
 * A function that runs `run` once, `delayMs` after the first of any number of calls: what the
 * window's status bar, context keys and tab status do on each change of the executor's state and
 * activity. The executor reports three to five changes per agent action, on the extension host's
 * thread, ahead of the action's own file callbacks; refreshing the UI for each made every action
 * wait for it (docs/performance.md, "Where the rest went").
 */
export function coalesce(run: () => void, delayMs: number): (() => void) & { dispose(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let disposed = false;
  const schedule = () => {
    if (timer || disposed) return;
    timer = setTimeout(() => {
      timer = undefined;
      run();
    }, delayMs);
  };
  return Object.assign(schedule, {
    dispose() {
      disposed = true;
      clearTimeout(timer);
      timer = undefined;
    },
  });
}
