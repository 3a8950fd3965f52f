"""The client side of the Socket.IO floor in floors.py: a minimal Engine.IO v4 websocket client on a
plain socket, which answers every `oh_event` on `/floor` at once with an acknowledged reply.

    python floor_client.py PORT REPLY_JSON

It stands in for the executor with next to no work of its own, so the time left is the server's
(python-socketio, engine.io, the ASGI server, asyncio and the thread hop), which every delegated
action pays. Frames are masked with a zero key (XOR with zero leaves the payload as is).
"""

from __future__ import annotations

import base64
import json
import os
import socket
import struct
import sys

NAMESPACE = '/floor'


class Conn:
    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(('127.0.0.1', port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                'GET /socket.io/?EIO=4&transport=websocket HTTP/1.1\r\n'
                f'Host: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n'
                f'Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n'
            ).encode()
        )
        self.buf = b''
        while b'\r\n\r\n' not in self.buf:
            self._more()
        head, self.buf = self.buf.split(b'\r\n\r\n', 1)
        if b' 101 ' not in head.split(b'\r\n', 1)[0]:
            raise SystemExit(f'floor client: upgrade refused: {head[:200]!r}')

    def _more(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            raise SystemExit(0)  # the bench closed the server
        self.buf += data

    def _need(self, n: int) -> None:
        while len(self.buf) < n:
            self._more()

    def recv(self) -> str:
        self._need(2)
        length, off = self.buf[1] & 127, 2
        if length == 126:
            self._need(4)
            length, off = struct.unpack('>H', self.buf[2:4])[0], 4
        elif length == 127:
            self._need(10)
            length, off = struct.unpack('>Q', self.buf[2:10])[0], 10
        self._need(off + length)
        text = self.buf[off : off + length].decode()
        self.buf = self.buf[off + length :]
        return text

    def send(self, text: str) -> None:
        data = text.encode()
        n = len(data)
        if n < 126:
            head = struct.pack('>BB', 0x81, 0x80 | n)
        elif n < 65536:
            head = struct.pack('>BBH', 0x81, 0x80 | 126, n)
        else:
            head = struct.pack('>BBQ', 0x81, 0x80 | 127, n)
        self.sock.sendall(head + b'\0\0\0\0' + data)


def main() -> None:
    port, reply = int(sys.argv[1]), json.loads(sys.argv[2])
    conn = Conn(port)
    ack = 0
    while True:
        msg = conn.recv()
        if msg.startswith('0'):  # Engine.IO open: join the namespace
            conn.send(f'40{NAMESPACE},')
        elif msg == '2':  # ping
            conn.send('3')
        elif msg.startswith(f'42{NAMESPACE},'):
            event = json.loads(msg[len(NAMESPACE) + 3 :])
            ack += 1
            body = dict(reply, cause=event[1]['id'])
            conn.send(f'42{NAMESPACE},{ack}' + json.dumps(['oh_event', body]))


if __name__ == '__main__':
    main()
