"""A listening socket that records every connection it receives (what it was sent, first 4 KiB)
to a log file: the server a hostile workspace's settings name. Prints `READY <port>`."""

from __future__ import annotations

import socket
import sys
import threading


def main() -> None:
    log_path = sys.argv[1]
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(('127.0.0.1', 0))
    srv.listen(16)
    print(f'READY {srv.getsockname()[1]}', flush=True)
    lock = threading.Lock()

    def record(conn: socket.socket, peer: tuple) -> None:
        conn.settimeout(2)
        try:
            data = conn.recv(4096)
        except OSError:
            data = b''
        with lock, open(log_path, 'a') as f:
            f.write(f'connection from {peer}: {data!r}\n')
        conn.close()

    while True:
        conn, peer = srv.accept()
        # Record the connection itself at once, then what it sends.
        with lock, open(log_path, 'a') as f:
            f.write(f'accepted {peer}\n')
        threading.Thread(target=record, args=(conn, peer), daemon=True).start()


if __name__ == '__main__':
    main()
