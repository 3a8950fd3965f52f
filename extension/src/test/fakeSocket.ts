/** A stand-in for socket.io-client's socket: records emits, lets a test play the server. */
export class FakeSocket {
  static all: FakeSocket[] = [];
  connected = false;
  readonly emitted: Array<[string, unknown]> = [];
  private readonly handlers = new Map<string, Array<(...a: unknown[]) => void>>();
  private readonly managerHandlers = new Map<string, Array<(...a: unknown[]) => void>>();
  readonly io: { opts: { query?: Record<string, unknown> }; on: (e: string, f: (...a: unknown[]) => void) => void };

  constructor(readonly url: string, readonly options: Record<string, any>) {
    FakeSocket.all.push(this);
    this.io = {
      opts: { query: options.query },
      on: (e, f) => this.managerHandlers.set(e, [...(this.managerHandlers.get(e) ?? []), f]),
    };
  }

  static factory = (url: string, options: Record<string, unknown>) => new FakeSocket(url, options) as any;
  static get last(): FakeSocket {
    return FakeSocket.all[FakeSocket.all.length - 1];
  }

  on(event: string, f: (...a: unknown[]) => void): this {
    this.handlers.set(event, [...(this.handlers.get(event) ?? []), f]);
    return this;
  }
  emit(event: string, data: unknown): this {
    this.emitted.push([event, data]);
    return this;
  }
  disconnect(): this {
    this.connected = false;
    return this;
  }
  /** Server side: */
  fire(event: string, ...args: unknown[]): void {
    for (const f of this.handlers.get(event) ?? []) f(...args);
  }
  open(): void {
    this.connected = true;
    this.fire('connect');
  }
  drop(reason = 'transport close'): void {
    this.connected = false;
    this.fire('disconnect', reason);
  }
  reconnectAttempt(): void {
    for (const f of this.managerHandlers.get('reconnect_attempt') ?? []) f(1);
  }
}
