import type { AgentServerEndpoint } from './agentServerClient';

/**
 * "Use This Window as an Agent Canvas Backend": Agent Canvas (npm `@openhands/agent-canvas`)
 * reaches agent-servers it calls backends, each an URL plus its API key, added in its UI (backend
 * switcher, Manage Backends, Add Backend); nothing on its command line or in its URL adds one. So
 * the command says the URL of this window's agent-server, puts its key in the clipboard, and, when
 * `agent-canvas` is on PATH, starts Canvas's own frontend (`--frontend-only`: its static UI behind
 * its ingress, no agent-server of its own) and opens it in the browser. The agent-server answers
 * a browser on localhost (its CORS always allows localhost origins). No `vscode` here.
 */
export interface CanvasUi {
  copy(text: string): Promise<void>;
  /** Shows `message` with the `actions`; answers the one chosen (undefined: dismissed). */
  offer(message: string, actions: string[]): Promise<string | undefined>;
  error(message: string): void;
  /** Runs `argv` in a terminal named `name` (the user sees Canvas's output and stops it there). */
  runInTerminal(name: string, argv: string[]): void;
  openBrowser(url: string): Promise<void>;
}

export interface CanvasBackendDeps {
  /** The agent-server: the managed one (started when needed) or `openhands.v1.url`'s. */
  endpoint: () => Promise<AgentServerEndpoint | undefined>;
  /** The absolute path of an executable on PATH, if there is one. */
  findOnPath: (name: string) => Promise<string | undefined>;
  /** A free TCP port on 127.0.0.1 for Canvas's frontend. */
  freePort: () => Promise<number>;
  /** Resolves once `url` answers HTTP (false: it did not within the wait). */
  waitForHttp: (url: string) => Promise<boolean>;
  ui: CanvasUi;
}

/** What the command did (the tests read it). */
export interface CanvasOutcome {
  backendUrl?: string;
  keyCopied: boolean;
  /** `agent-canvas` on PATH. */
  canvas?: string;
  /** The Canvas frontend opened in the browser. */
  opened?: string;
}

export const COPY_URL = 'Copy URL';
export const COPY_KEY = 'Copy API Key';
export const OPEN_CANVAS = 'Open Agent Canvas';
export const CANVAS_TERMINAL = 'Agent Canvas';

export async function useAsCanvasBackend(deps: CanvasBackendDeps): Promise<CanvasOutcome> {
  let endpoint: AgentServerEndpoint | undefined;
  try {
    endpoint = await deps.endpoint();
  } catch (e) {
    deps.ui.error(`OpenHands: no agent-server to offer Agent Canvas: ${(e as Error).message}`);
    return { keyCopied: false };
  }
  if (!endpoint) {
    deps.ui.error('OpenHands: no agent-server to offer Agent Canvas: start the V1 agent-server (OpenHands: Start Agent Server (V1)) or set "openhands.v1.url".');
    return { keyCopied: false };
  }
  const url = endpoint.baseUrl;
  const key = endpoint.sessionApiKey;
  if (key) await deps.ui.copy(key);
  const canvas = await deps.findOnPath('agent-canvas');
  const outcome: CanvasOutcome = { backendUrl: url, keyCopied: Boolean(key), canvas };
  const message = [
    `Agent Canvas backend: ${url}`,
    key ? 'Its API key is in the clipboard.' : 'This agent-server takes no API key.',
    'In Agent Canvas: the backend switcher, Manage Backends, Add Backend, with this URL and the key. Its conversations run in this window while it is open.',
    canvas ? '' : 'Agent Canvas is not on PATH (npm install -g @openhands/agent-canvas; Node 24 or newer).',
  ].filter(Boolean).join(' ');
  const actions = [COPY_URL, ...(key ? [COPY_KEY] : []), ...(canvas ? [OPEN_CANVAS] : [])];
  for (;;) {
    const choice = await deps.ui.offer(message, actions);
    if (choice === COPY_URL) await deps.ui.copy(url);
    else if (choice === COPY_KEY && key) await deps.ui.copy(key);
    else if (choice === OPEN_CANVAS && canvas) {
      outcome.opened = await openCanvas(deps, canvas);
      return outcome;
    } else return outcome;
  }
}

/** Starts Canvas's frontend on a free port in a terminal and opens it once it answers. */
async function openCanvas(deps: CanvasBackendDeps, canvas: string): Promise<string | undefined> {
  const port = await deps.freePort();
  const url = `http://localhost:${port}/`;
  deps.ui.runInTerminal(CANVAS_TERMINAL, [canvas, '--frontend-only', '--port', String(port)]);
  if (!(await deps.waitForHttp(url))) {
    deps.ui.error(`OpenHands: Agent Canvas did not answer at ${url} (see the "${CANVAS_TERMINAL}" terminal).`);
    return undefined;
  }
  await deps.ui.openBrowser(url);
  return url;
}
