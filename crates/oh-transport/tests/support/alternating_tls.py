"""A TLS front that presents certificate A on its first connection and B on every later one,
relaying the plaintext to a server on 127.0.0.1 (tests/tls.rs: a pin is checked on a connection of
its own, so the real connection must be held to the certificate that check saw).

    alternating_tls.py --target PORT --first A.pem A.key --then B.pem B.key
prints {"ev": "listening", "port": N} and {"ev": "accepted", "n": N, "cert": "first"|"then"}.
"""

import argparse
import asyncio
import json
import ssl

ap = argparse.ArgumentParser()
ap.add_argument('--target', type=int, required=True)
ap.add_argument('--first', nargs=2, required=True)
ap.add_argument('--then', nargs=2, required=True)
args = ap.parse_args()


def context(cert: str, key: str) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    return ctx


contexts = [context(*args.first), context(*args.then)]
count = 0


async def pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, ssl.SSLError):
        pass
    finally:
        writer.close()


async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    global count
    count += 1
    which = 'first' if count == 1 else 'then'
    print(json.dumps({'ev': 'accepted', 'n': count, 'cert': which}), flush=True)
    try:
        await writer.start_tls(contexts[0] if count == 1 else contexts[1])
    except (ConnectionError, ssl.SSLError, OSError):
        writer.close()
        return
    up_reader, up_writer = await asyncio.open_connection('127.0.0.1', args.target)
    await asyncio.gather(pump(reader, up_writer), pump(up_reader, writer))


async def main() -> None:
    server = await asyncio.start_server(serve, '127.0.0.1', 0)
    print(json.dumps({'ev': 'listening', 'port': server.sockets[0].getsockname()[1]}), flush=True)
    await server.serve_forever()


asyncio.run(main())
