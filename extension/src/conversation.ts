import type * as vscode from 'vscode';
import type { OpenHandsConfig } from './config';

/** Why a conversation could not be resolved; drives which fix the notification offers. */
export type ConversationErrorKind = 'auth' | 'unreachable' | 'server' | 'config';

export class ConversationError extends Error {
  constructor(readonly kind: ConversationErrorKind, message: string) {
    super(message);
    this.name = 'ConversationError';
  }
}

type Fetch = (url: string, init: { method: string; headers: Record<string, string>; body: string; signal?: AbortSignal }) =>
  Promise<{ ok: boolean; status: number; statusText: string; text(): Promise<string> }>;

const stateKey = (serverUrl: string) => `openhands.conversation:${serverUrl}`;

/**
 * Finds the conversation the executor serves: the configured id in "attach" mode; in "create"
 * mode the one created earlier for this workspace and server (workspaceState), or a new one
 * from `POST {server}/api/conversations`.
 */
export class ConversationResolver {
  constructor(
    private readonly state: vscode.Memento,
    private readonly fetchImpl: Fetch = globalThis.fetch as unknown as Fetch,
    private readonly timeoutMs = 15000,
  ) {}

  /** The id created earlier for this server, if any. */
  remembered(serverUrl: string): string | undefined {
    return this.state.get<string>(stateKey(serverUrl));
  }

  /** Forgets the remembered id (e.g. when the server no longer knows it). */
  forget(serverUrl: string): Thenable<void> {
    return this.state.update(stateKey(serverUrl), undefined);
  }

  async resolve(config: OpenHandsConfig, sessionApiKey: string | undefined): Promise<{ id: string; created: boolean }> {
    if (config.conversationMode === 'attach') {
      if (!config.conversationId) throw new ConversationError('config', 'Conversation mode is "attach" but openhands.conversation.id is empty.');
      return { id: config.conversationId, created: false };
    }
    const known = this.remembered(config.serverUrl);
    if (known) return { id: known, created: false };
    const id = await this.create(config, sessionApiKey);
    await this.state.update(stateKey(config.serverUrl), id);
    return { id, created: true };
  }

  private async create(config: OpenHandsConfig, sessionApiKey: string | undefined): Promise<string> {
    const url = `${config.serverUrl}/api/conversations`;
    const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json' };
    if (sessionApiKey) headers['X-Session-API-Key'] = sessionApiKey;
    const body: Record<string, unknown> = {};
    if (config.initialMessage.trim() !== '') body.initial_user_msg = config.initialMessage;
    let response;
    try {
      response = await this.fetchImpl(url, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      const cause = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message;
      throw new ConversationError('unreachable', `Cannot reach the OpenHands server at ${config.serverUrl} (${cause}).`);
    }
    const text = await response.text();
    if (response.status === 401 || response.status === 403) {
      throw new ConversationError('auth', `The OpenHands server refused to create a conversation (HTTP ${response.status}): the session API key is missing or wrong.`);
    }
    if (!response.ok) {
      throw new ConversationError('server', `POST ${url} failed: HTTP ${response.status} ${response.statusText} ${text.slice(0, 300)}`.trim());
    }
    let parsed: { conversation_id?: unknown; id?: unknown };
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new ConversationError('server', `POST ${url} answered with something that is not JSON: ${text.slice(0, 200)}`);
    }
    const id = parsed.conversation_id ?? parsed.id;
    if (typeof id !== 'string' || id === '') {
      throw new ConversationError('server', `POST ${url} answered without a conversation_id: ${text.slice(0, 200)}`);
    }
    return id;
  }
}
