import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ConversationSocket, stopAction, userMessage } from './conversationSocket';
import { FakeSocket } from '../test/fakeSocket';

const handlers = () => ({ onEvent: vi.fn(), onStatus: vi.fn(), onServerError: vi.fn(), onConnected: vi.fn(), onDisconnected: vi.fn() });

describe('conversation socket (default namespace)', () => {
  beforeEach(() => {
    FakeSocket.all = [];
  });

  it('joins with the web UI query and reconnects after the last event received', () => {
    const h = handlers();
    const s = new ConversationSocket('http://s', 'c1', 4, 'key', h, FakeSocket.factory);
    s.connect();
    const fake = FakeSocket.last;
    expect(fake.url).toBe('http://s');
    expect(fake.options).toMatchObject({ path: '/socket.io', transports: ['websocket'], query: { conversation_id: 'c1', latest_event_id: '4', session_api_key: 'key' } });
    fake.open();
    expect(h.onConnected).toHaveBeenCalled();
    fake.fire('oh_event', { id: 3, action: 'message' }); // in the history already
    fake.fire('oh_event', { id: 6, action: 'message' });
    fake.fire('oh_event', { id: 5, action: 'message' }); // late, but new
    fake.fire('oh_event', { id: 6, action: 'message' }); // twice
    fake.fire('oh_event', { status_update: true, type: 'info', id: 'STATUS$READY', message: 'ready' });
    fake.fire('oh_event', { error: true, message: 'bad' });
    expect(h.onEvent.mock.calls.map((c) => c[0].id)).toEqual([6, 5]);
    expect(h.onStatus).toHaveBeenCalledWith({ type: 'info', id: 'STATUS$READY', message: 'ready' });
    expect(h.onServerError).toHaveBeenCalledWith('bad');
    fake.drop();
    fake.reconnectAttempt();
    expect(fake.io.opts.query).toMatchObject({ latest_event_id: '6' });
  });

  it('sends user actions only while connected (nothing is buffered for later)', () => {
    const s = new ConversationSocket('http://s', 'c1', -1, undefined, handlers(), FakeSocket.factory);
    s.connect();
    expect(() => s.send(userMessage('hi'))).toThrow(/not connected/);
    FakeSocket.last.open();
    s.send(userMessage('hi', new Date(0)));
    s.send(stopAction());
    expect(FakeSocket.last.emitted).toEqual([
      ['oh_user_action', { action: 'message', args: { content: 'hi', image_urls: [], file_urls: [], timestamp: '1970-01-01T00:00:00.000Z' } }],
      ['oh_user_action', { action: 'change_agent_state', args: { agent_state: 'stopped' } }],
    ]);
    expect(FakeSocket.last.options.query.session_api_key).toBeUndefined();
  });

  it('a refusal by the server ends the socket; a transport error is retried', () => {
    const h = handlers();
    const s = new ConversationSocket('http://s', 'c1', -1, 'bad', h, FakeSocket.factory);
    s.connect();
    FakeSocket.last.fire('connect_error', new Error('websocket error'));
    expect(h.onDisconnected).toHaveBeenLastCalledWith('websocket error', false);
    FakeSocket.last.fire('connect_error', new Error('invalid_session_api_key'));
    expect(h.onDisconnected).toHaveBeenLastCalledWith('invalid_session_api_key', true);
  });
});
