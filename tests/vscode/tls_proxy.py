"""A TLS-terminating proxy in front of the agent-server's REST port, for the host session
`v1-remote` (v1-remote-session.sh): the agent-server serves plain http only, so a remote one is put
behind a proxy with a certificate (docs/remote.md); this is that proxy, with the test CA's
certificate. Bytes are relayed unchanged both ways (websockets included).

    python tls_proxy.py LISTEN_HOST TARGET_PORT CERT KEY   # prints the port it listens on, then serves
"""

from __future__ import annotations

import os
import signal
import ssl
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'remote'))
from relays import _Relay  # noqa: E402


class TlsFront(_Relay):
    def __init__(self, listen_host: str, target_port: int, cert: str, key: str) -> None:
        super().__init__(listen_host, '127.0.0.1', target_port)
        self.cert, self.key = cert, key

    def server_ssl(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(self.cert, self.key)
        return ctx


def main() -> None:
    host, target, cert, key = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    front = TlsFront(host, target, cert, key).start()
    print(front.port, flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    stop.wait()
    front.stop()


if __name__ == '__main__':
    main()
