"""A python-socketio server implementing the runtime side of docs/protocol.md, for tests.

Controlled through stdin (one JSON command a line); reports through stdout (one JSON event a line):

  {"cmd": "send", "payload": {...}}           emit oh_event to the registered executor
                                              (payloads with an int id are kept pending until
                                              replied, and re-sent on every registration)
  {"cmd": "send_raw", "args": [...]}          emit oh_event with arbitrary arguments
  {"cmd": "send_binary", "payload": {...}}    emit oh_event whose payload carries a binary
                                              attachment (payload["blob"] = bytes), and a bare bytes one
  {"cmd": "send_deep", "id": N, "depth": D}   emit oh_event {"id": N, "action": "run", "args":
                                              {"command": [[[...]]]}} nested D deep
  {"cmd": "drop"}                             namespace disconnect of the executor
  {"cmd": "drop_hard"}                        close the executor's Engine.IO session
  {"cmd": "quit"}

  {"ev": "listening"} {"ev": "registered", "sid", "auth", "query"} {"ev": "reply", "data"}
  {"ev": "disconnected", "sid"} {"ev": "refused", "message"}
  {"ev": "received", "what", "data"}          (--impostor) everything a connection sent

The handshake is protocol 2's (docs/protocol.md): a challenge with the server's proof of --key,
then the executor's proof, then the welcome. `--impostor` makes it a server on the configured port
that does not know the key: it answers the connect with a challenge whose proof is made with
another key (`--impostor-mode challenge`) or with a welcome straight away
(`--impostor-mode welcome`), sends a `run` action that would create --marker right away, and
reports everything it receives.
"""

import argparse
import asyncio
import hashlib
import hmac
import json
import secrets
import sys
import threading
import time
import urllib.parse
import uuid

import socketio
import uvicorn
from socketio.exceptions import ConnectionRefusedError

NS = "/oh-executor"

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--conversation", default="conv1")
ap.add_argument("--key", default="test-key")
ap.add_argument("--welcome-protocol", type=int, default=2)
ap.add_argument("--impostor", action="store_true")
ap.add_argument("--impostor-mode", choices=["challenge", "welcome"], default="challenge")
ap.add_argument("--marker", default="/nonexistent/marker")
ap.add_argument("--no-change-timeout", type=float, default=10)
ap.add_argument("--runtime-session", default=str(uuid.uuid4()))
ap.add_argument("--no-resend", action="store_true", help="do not re-send pending actions on registration")
args = ap.parse_args()

sio = socketio.AsyncServer(async_mode="asgi", cors_allowed_origins="*", max_http_buffer_size=64 * 1024 * 1024)
app = socketio.ASGIApp(sio)
state = {"sid": None, "pending": {}, "challenged": {}}


def proof(key, label, conv, first, second):
    return hmac.new(key.encode(), "\n".join((label, conv, first, second)).encode(), hashlib.sha256).hexdigest()


def marker_action():
    return {"id": 666, "action": "run", "timeout": 30.0, "args": {"command": f"echo owned > {args.marker}", "is_input": False,
            "thought": "", "blocking": False, "is_static": False, "cwd": None, "hidden": False,
            "confirmation_state": "confirmed", "security_risk": -1}}


def out(obj):
    obj["t"] = time.time()
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def refuse(message):
    out({"ev": "refused", "message": message})
    raise ConnectionRefusedError(message)


@sio.on("connect", namespace=NS)
async def connect(sid, environ, auth=None):
    qs = urllib.parse.parse_qs(environ.get("QUERY_STRING", ""))
    q = {k: v[0] for k, v in qs.items()}
    conv = q.get("conversation_id")
    if not conv:
        refuse("oh-executor: conversation_id is required")
    if conv != args.conversation:
        refuse(f"oh-executor: no VsCodeRuntime for conversation {conv}")
    if args.impostor:
        out({"ev": "received", "what": "connect", "data": {"query": environ.get("QUERY_STRING", ""), "auth": auth,
             "headers": {k: v for k, v in environ.items() if k.startswith("HTTP_")}}})
        asyncio.get_running_loop().create_task(impostor(sid, conv, auth))
        return
    p = (auth or {}).get("protocol") if isinstance(auth, dict) else None
    if p != 2:
        refuse(f"oh-executor: protocol mismatch: server speaks 2, executor sent {p}")
    cn = auth.get("client_nonce")
    if not isinstance(cn, str) or len(cn) != 64:
        refuse("oh-executor: missing session_api_key")
    sn = secrets.token_hex(32)
    state["challenged"][sid] = (conv, cn, sn, auth, q)
    asyncio.get_running_loop().create_task(challenge(sid, conv, cn, sn))


async def challenge(sid, conv, cn, sn):
    await asyncio.sleep(0)
    await sio.emit("oh_executor_challenge", {"server_nonce": sn, "server_proofs": [proof(args.key, "oh-executor/2 server", conv, cn, sn)]},
                   to=sid, namespace=NS)


async def impostor(sid, conv, auth):
    await asyncio.sleep(0)
    if args.impostor_mode == "challenge":
        cn = (auth or {}).get("client_nonce") or ""
        sn = secrets.token_hex(32)
        await sio.emit("oh_executor_challenge", {"server_nonce": sn, "server_proofs": [proof("impostor-guess", "oh-executor/2 server", conv, cn, sn)]},
                       to=sid, namespace=NS)
    else:
        # Whatever protocol the executor speaks (a protocol-1 executor accepts this and runs the action).
        protocol = (auth or {}).get("protocol", 2) if isinstance(auth, dict) else 2
        await sio.emit("oh_executor_welcome", {"protocol": protocol, "conversation_id": conv, "runtime_session": "impostor", "session": {}},
                       to=sid, namespace=NS)
    await sio.emit("oh_event", marker_action(), to=sid, namespace=NS)


@sio.on("oh_executor_auth", namespace=NS)
async def on_auth(sid, data=None):
    if args.impostor:
        out({"ev": "received", "what": "oh_executor_auth", "data": data})
        await sio.emit("oh_event", marker_action(), to=sid, namespace=NS)
        return
    entry = state["challenged"].pop(sid, None)
    if entry is None:
        return
    conv, cn, sn, auth, q = entry
    expected = proof(args.key, "oh-executor/2 executor", conv, sn, cn)
    if not isinstance(data, dict) or not hmac.compare_digest(str(data.get("proof")), expected):
        message = "oh-executor: invalid session_api_key: the executor's proof matches no key this runtime accepts"
        out({"ev": "refused", "message": message})
        await sio.emit("oh_executor_refused", {"message": message}, to=sid, namespace=NS)
        await sio.disconnect(sid, namespace=NS)
        return
    old = state["sid"]
    state["sid"] = sid
    if old and old != sid:
        await sio.emit("oh_executor_replaced", {"message": "a newer executor registered"}, to=old, namespace=NS)
        await sio.disconnect(old, namespace=NS)
    await sio.emit(
        "oh_executor_welcome",
        {
            "protocol": args.welcome_protocol,
            "conversation_id": conv,
            "runtime_session": args.runtime_session,
            "session": {"no_change_timeout_seconds": args.no_change_timeout},
        },
        to=sid,
        namespace=NS,
    )
    out({"ev": "registered", "sid": sid, "auth": auth, "query": q})
    if not args.no_resend:
        for payload in list(state["pending"].values()):
            await sio.emit("oh_event", payload, to=sid, namespace=NS)


@sio.on("disconnect", namespace=NS)
async def disconnect(sid, *a):
    if state["sid"] == sid:
        state["sid"] = None
    out({"ev": "disconnected", "sid": sid})


@sio.on("*", namespace=NS)
async def any_event(event, sid, data=None):
    if args.impostor:
        out({"ev": "received", "what": event, "data": data})


@sio.on("oh_event", namespace=NS)
async def on_reply(sid, data=None):
    now = time.perf_counter()
    if args.impostor:
        out({"ev": "received", "what": "oh_event", "data": data})
        return {"ok": True}
    if isinstance(data, dict):
        waiter = state.setdefault("waiters", {}).pop(data.get("cause"), None)
        if waiter is not None and not waiter.done():
            waiter.set_result(now)
            state["pending"].pop(data.get("cause"), None)
            return {"ok": True}
    out({"ev": "reply", "data": data})
    if not isinstance(data, dict) or "observation" not in data or "cause" not in data:
        return {"ok": False, "error": "not an observation with a cause"}
    if data.get("id") not in (None, -1):
        return {"ok": False, "error": "a reply must not carry an id"}
    state["pending"].pop(data["cause"], None)
    return {"ok": True}


async def command(cmd):
    c = cmd.get("cmd")
    sid = state["sid"]
    if c == "send":
        payload = cmd["payload"]
        if isinstance(payload, dict) and isinstance(payload.get("id"), int) and cmd.get("pending", True):
            state["pending"][payload["id"]] = payload
        if sid:
            await sio.emit("oh_event", payload, to=sid, namespace=NS)
    elif c == "cancel":
        if sid:
            await sio.emit("oh_executor_cancel", {"id": cmd["id"]}, to=sid, namespace=NS)
    elif c == "send_raw":
        if sid:
            await sio.emit("oh_event", tuple(cmd["args"]), to=sid, namespace=NS)
    elif c == "send_binary":
        if sid:
            payload = dict(cmd["payload"])
            payload["blob"] = b"\x00\x01binary\xff"
            await sio.emit("oh_event", payload, to=sid, namespace=NS)
            await sio.emit("oh_event", b"\x00raw bytes\xff", to=sid, namespace=NS)
    elif c == "send_deep":
        if sid:
            nested = []
            for _ in range(cmd["depth"]):
                nested = [nested]
            await sio.emit("oh_event", {"id": cmd["id"], "action": "run", "args": {"command": nested}}, to=sid, namespace=NS)
    elif c == "drop":
        if sid:
            await sio.disconnect(sid, namespace=NS)
    elif c == "drop_hard":
        if sid:
            eio_sid = sio.manager.eio_sid_from_sid(sid, NS)
            state["sid"] = None
            await sio.eio.disconnect(eio_sid)
    elif c == "bench":
        # Sequential round trips: emit an action, wait for its reply; report each RTT in ms.
        rtts = []
        base = cmd.get("first_id", 1_000_000)
        for i in range(cmd.get("n", 100)):
            aid = base + i
            payload = {"id": aid, "action": "run", "args": {"command": cmd.get("command", "echo hi"), "is_input": False, "thought": "",
                       "blocking": False, "is_static": False, "cwd": None, "hidden": False, "confirmation_state": "confirmed",
                       "security_risk": -1}, "timeout": 120.0}
            fut = asyncio.get_running_loop().create_future()
            state.setdefault("waiters", {})[aid] = fut
            t0 = time.perf_counter()
            await sio.emit("oh_event", payload, to=state["sid"], namespace=NS)
            t1 = await asyncio.wait_for(fut, 30)
            rtts.append((t1 - t0) * 1000)
        out({"ev": "bench", "rtts": rtts})
    elif c == "quit":
        out({"ev": "bye"})
        sys.stdout.flush()
        import os

        os._exit(0)


def stdin_reader(loop):
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            cmd = json.loads(line)
        except ValueError:
            continue
        asyncio.run_coroutine_threadsafe(command(cmd), loop)
    import os

    os._exit(0)


async def main():
    loop = asyncio.get_running_loop()
    threading.Thread(target=stdin_reader, args=(loop,), daemon=True).start()
    config = uvicorn.Config(app, host="127.0.0.1", port=args.port, log_level="warning", ws="websockets")
    server = uvicorn.Server(config)

    async def announce():
        while not server.started:
            await asyncio.sleep(0.02)
        out({"ev": "listening"})

    asyncio.create_task(announce())
    await server.serve()


asyncio.run(main())
