/**
 * One JSON request to a server of the tab (the V0 OpenHands server and the V1 agent-server alike):
 * the session API key header, a timeout, and every failure as a `ServerError` whose kind says what
 * fixes it.
 */

/** Why a request failed; decides which fix the tab offers. */
export type ServerErrorKind = 'unreachable' | 'tls' | 'auth' | 'no_settings' | 'not_found' | 'server';

/** Node's TLS error codes for a server certificate that was not accepted, and a pin's mismatch. */
const CERT_CODES = /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ERR_TLS_CERT|PIN_MISMATCH/;

export function isCertificateError(code: string | undefined): boolean {
  return Boolean(code && CERT_CODES.test(code));
}

export class ServerError extends Error {
  constructor(readonly kind: ServerErrorKind, message: string, readonly status?: number) {
    super(message);
    this.name = 'ServerError';
  }
}

export type FetchLike = (url: string, init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal }) =>
  Promise<{ ok: boolean; status: number; statusText: string; text(): Promise<string> }>;

/** Where and how `requestJson` talks to a server (the V0 server and the V1 agent-server alike). */
export interface JsonEndpoint {
  fetchImpl: FetchLike;
  baseUrl: string;
  /** Sent as `X-Session-API-Key` when set. */
  sessionApiKey: string | undefined;
  timeoutMs: number;
  /** How errors name the server ("OpenHands server", "OpenHands agent-server"). */
  serverName: string;
  /** A kind of its own for a failed answer's body (else `not_found` for 404, `server`). */
  classify?: (detail: string) => ServerErrorKind | undefined;
}

/**
 * One JSON request: the key header, a timeout, and every failure as a `ServerError` whose kind
 * says what fixes it (unreachable: settings; tls: the certificate settings; auth: the key). An empty body answers `{}`.
 */
export async function requestJson(ep: JsonEndpoint, method: string, path: string, body?: unknown, timeoutMs = ep.timeoutMs): Promise<unknown> {
  const url = `${ep.baseUrl}${path}`;
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (ep.sessionApiKey) headers['X-Session-API-Key'] = ep.sessionApiKey;
  let response;
  try {
    response = await ep.fetchImpl(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    const cause = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message;
    if (isCertificateError(cause)) {
      const detail = (e as { cause?: Error }).cause?.message ?? cause;
      throw new ServerError('tls', `The ${ep.serverName} at ${ep.baseUrl} was reached, but its TLS certificate was not accepted (${cause}: ${detail}). Nothing was sent. If you trust it, give its CA file (openhands.v1.caFile) or, for a self-signed certificate, its SHA-256 fingerprint (openhands.v1.certSha256).`);
    }
    throw new ServerError('unreachable', `Cannot reach the ${ep.serverName} at ${ep.baseUrl} (${cause}).`);
  }
  const text = await response.text();
  if (response.status === 401 || response.status === 403) {
    throw new ServerError('auth', `The ${ep.serverName} refused ${method} ${path} (HTTP ${response.status}): the session API key is missing or wrong.`, response.status);
  }
  if (!response.ok) {
    const detail = text.slice(0, 300);
    const kind = ep.classify?.(detail) ?? (response.status === 404 ? 'not_found' : 'server');
    const message = kind === 'no_settings' ? `The ${ep.serverName} has no LLM settings yet.` : `${method} ${url} failed: HTTP ${response.status} ${response.statusText} ${detail}`.trim();
    throw new ServerError(kind, message, response.status);
  }
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new ServerError('server', `${method} ${url} answered with something that is not JSON: ${text.slice(0, 200)}`);
  }
}
