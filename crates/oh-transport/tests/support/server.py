"""A python-socketio server implementing the runtime side of docs/protocol.md, for tests.

Controlled through stdin (one JSON command a line); reports through stdout (one JSON event a line):

  {"cmd": "send", "payload": {...}}           emit oh_event to the registered executor
                                              (payloads with an int id are kept pending until
                                              replied, and re-sent on every registration)
  {"cmd": "send_raw", "args": [...]}          emit oh_event with arbitrary arguments
  {"cmd": "send_binary"}                      emit an unsealed oh_event of bare bytes (an injection)
  {"cmd": "tamper", "how": H, "payload": {...}}  send `payload` as oh_event the way a party between
                                              the ends could: H = unsealed, forged (a MAC made with
                                              another key), changed (body swapped after sealing),
                                              replay (the last sealed message again), skip (seq + 1),
                                              swap (the next two sealed out of order)
  {"cmd": "send_deep", "id": N, "depth": D}   emit oh_event {"id": N, "action": "run", "args":
                                              {"command": [[[...]]]}} nested D deep
  {"cmd": "drop"}                             namespace disconnect of the executor
  {"cmd": "drop_hard"}                        close the executor's Engine.IO session
  {"cmd": "quit"}

`--tls-cert PEM --tls-key PEM` serves https/wss (tests/tls.rs).

  {"ev": "listening"} {"ev": "registered", "sid", "auth", "query"} {"ev": "reply", "data"}
  {"ev": "disconnected", "sid"} {"ev": "refused", "message"}
  {"ev": "received", "what", "data"}          (--impostor) everything a connection sent
  {"ev": "session_broken", "reason"}          a message from the executor failed its check

Everything after the proofs is sealed (openhands_vscode_runtime/protocol.py, imported from this
checkout: the one Python copy of the protocol). The handshake is protocol 3's (docs/protocol.md): a challenge with the server's proof of --key,
then the executor's proof, then the welcome. `--impostor` makes it a server on the configured port
that does not know the key: it answers the connect with a challenge whose proof is made with
another key (`--impostor-mode challenge`) or with a welcome straight away
(`--impostor-mode welcome`), sends a `run` action that would create --marker right away, and
reports everything it receives.
"""

import argparse
import asyncio
import json
import secrets
import sys
import threading
import time
import urllib.parse
import uuid

import pathlib

import socketio
import uvicorn
from socketio.exceptions import ConnectionRefusedError

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[4] / "openhands-runtime-py" / "src"))
from openhands_vscode_runtime import protocol as P  # noqa: E402

NS = P.NAMESPACE

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--conversation", default="conv1")
ap.add_argument("--key", default="test-key")
ap.add_argument("--welcome-protocol", type=int, default=P.PROTOCOL_VERSION)
ap.add_argument("--impostor", action="store_true")
ap.add_argument("--impostor-mode", choices=["challenge", "welcome"], default="challenge")
ap.add_argument("--marker", default="/nonexistent/marker")
ap.add_argument("--no-change-timeout", type=float, default=10)
ap.add_argument("--runtime-session", default=str(uuid.uuid4()))
ap.add_argument("--break-next-reply", action="store_true", help="change the next reply's body before checking it (a relay would)")
ap.add_argument("--tls-cert", help="serve TLS with this certificate chain (PEM) and --tls-key")
ap.add_argument("--tls-key")
ap.add_argument("--no-resend", action="store_true", help="do not re-send pending actions on registration")
args = ap.parse_args()

sio = socketio.AsyncServer(async_mode="asgi", cors_allowed_origins="*", max_http_buffer_size=64 * 1024 * 1024)
app = socketio.ASGIApp(sio)
state = {"sid": None, "pending": {}, "challenged": {}, "bound": {}, "last_sealed": None, "held": None}


async def send(sid, event, payload):
    """Seal and emit (in seal order: one lock per connection)."""
    bound = state["bound"].get(sid)
    if bound is None:
        return
    binding, lock = bound
    async with lock:
        env = binding.seal(event, payload)
        if event == "oh_event":
            state["last_sealed"] = env
        await sio.emit(event, env, to=sid, namespace=NS)


def marker_action():
    return {"id": 666, "action": "run", "timeout": 30.0, "args": {"command": f"echo owned > {args.marker}", "is_input": False,
            "thought": "", "blocking": False, "is_static": False, "cwd": None, "hidden": False,
            "confirmation_state": "confirmed", "security_risk": -1}}


def out(obj):
    obj["t"] = time.time()
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def refuse(code, message, **extra):
    out({"ev": "refused", "message": message, "code": code})
    raise ConnectionRefusedError(message, P.refusal(code, message, **extra))


@sio.on("connect", namespace=NS)
async def connect(sid, environ, auth=None):
    qs = urllib.parse.parse_qs(environ.get("QUERY_STRING", ""))
    q = {k: v[0] for k, v in qs.items()}
    conv = q.get("conversation_id")
    if not conv:
        refuse(P.R_NO_CONVERSATION, "oh-executor: conversation_id is required")
    if conv != args.conversation:
        refuse(P.R_NO_RUNTIME, f"oh-executor: no VsCodeRuntime for conversation {conv}")
    if args.impostor:
        out({"ev": "received", "what": "connect", "data": {"query": environ.get("QUERY_STRING", ""), "auth": auth,
             "headers": {k: v for k, v in environ.items() if k.startswith("HTTP_")}}})
        asyncio.get_running_loop().create_task(impostor(sid, conv, auth))
        return
    p = (auth or {}).get("protocol") if isinstance(auth, dict) else None
    if p != P.PROTOCOL_VERSION:
        refuse(P.R_PROTOCOL, f"oh-executor: protocol mismatch: server speaks {P.PROTOCOL_VERSION}, executor sent {p}",
               server_protocol=P.PROTOCOL_VERSION)
    cn = auth.get("client_nonce")
    if not P.is_nonce(cn):
        refuse(P.R_NO_KEY, "oh-executor: missing session_api_key")
    sn = secrets.token_hex(32)
    state["challenged"][sid] = (conv, cn, sn, auth, q)
    asyncio.get_running_loop().create_task(challenge(sid, conv, cn, sn))


async def challenge(sid, conv, cn, sn):
    await asyncio.sleep(0)
    await sio.emit(P.EV_CHALLENGE, {"server_nonce": sn, "server_proofs": [P.server_proof(args.key, conv, cn, sn)]},
                   to=sid, namespace=NS)


async def impostor(sid, conv, auth):
    await asyncio.sleep(0)
    if args.impostor_mode == "challenge":
        cn = (auth or {}).get("client_nonce") or ""
        sn = secrets.token_hex(32)
        await sio.emit(P.EV_CHALLENGE, {"server_nonce": sn, "server_proofs": [P.server_proof("impostor-guess", conv, cn, sn)]},
                       to=sid, namespace=NS)
    else:
        # Whatever protocol the executor speaks (a protocol-1 executor accepts this and runs the action).
        protocol = (auth or {}).get("protocol", 3) if isinstance(auth, dict) else 3
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
    conv, cn, sn, _connect_auth, q = entry
    signed = data.get("auth") if isinstance(data, dict) else None
    key = P.proving_key(data.get("proof") if isinstance(data, dict) else None, [args.key], conv, sn, cn,
                        signed) if isinstance(signed, str) else None
    if key is None:
        message = "oh-executor: invalid session_api_key: the executor's proof matches no key this runtime accepts"
        out({"ev": "refused", "message": message})
        await sio.emit(P.EV_REFUSED, P.refusal(P.R_INVALID_PROOF, message), to=sid, namespace=NS)
        await sio.disconnect(sid, namespace=NS)
        return
    auth = json.loads(signed)
    state["bound"][sid] = (P.SessionBinding(key, conv, cn, sn, "server"), asyncio.Lock())
    old = state["sid"]
    state["sid"] = sid
    if old and old != sid:
        await send(old, P.EV_REPLACED, {"message": "a newer executor registered"})
        await sio.disconnect(old, namespace=NS)
    await send(
        sid,
        P.EV_WELCOME,
        {
            "protocol": args.welcome_protocol,
            "conversation_id": conv,
            "runtime_session": args.runtime_session,
            "session": {"no_change_timeout_seconds": args.no_change_timeout},
        },
    )
    out({"ev": "registered", "sid": sid, "auth": auth, "query": q})
    if not args.no_resend:
        for payload in list(state["pending"].values()):
            await send(sid, "oh_event", payload)


@sio.on("disconnect", namespace=NS)
async def disconnect(sid, *a):
    state["bound"].pop(sid, None)
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
        return
    bound = state["bound"].get(sid)
    if bound is None:
        return
    if args.break_next_reply and isinstance(data, dict) and isinstance(data.get("body"), str):
        args.break_next_reply = False
        data = dict(data, body=data["body"].replace("real", "fake"))
    try:
        data = bound[0].open("oh_event", data)
    except P.BindingError as e:
        out({"ev": "session_broken", "reason": str(e)})
        await send(sid, P.EV_REFUSED, P.refusal(P.R_SESSION, f"oh-executor: the server ended this session: {e}"))
        await sio.disconnect(sid, namespace=NS)
        return
    ack = await accept_reply(data, now)
    await send(sid, P.EV_ACK, ack)


async def accept_reply(data, now):
    if isinstance(data, dict):
        waiter = state.setdefault("waiters", {}).pop(data.get("cause"), None)
        if waiter is not None and not waiter.done():
            waiter.set_result(now)
            state["pending"].pop(data.get("cause"), None)
            return {"cause": data.get("cause"), "ok": True}
    out({"ev": "reply", "data": data})
    cause = data.get("cause") if isinstance(data, dict) else None
    if not isinstance(data, dict) or "observation" not in data or "cause" not in data:
        return {"cause": cause, "ok": False, "error": "not an observation with a cause"}
    if data.get("id") not in (None, -1):
        return {"cause": cause, "ok": False, "error": "a reply must not carry an id"}
    state["pending"].pop(data["cause"], None)
    return {"cause": cause, "ok": True}


async def command(cmd):
    c = cmd.get("cmd")
    sid = state["sid"]
    if c == "send":
        payload = cmd["payload"]
        if isinstance(payload, dict) and isinstance(payload.get("id"), int) and cmd.get("pending", True):
            state["pending"][payload["id"]] = payload
        if sid:
            await send(sid, "oh_event", payload)
    elif c == "cancel":
        if sid:
            await send(sid, P.EV_CANCEL, {"id": cmd["id"]})
    elif c == "send_raw":
        # The first argument sealed (a JSON body of any shape), the others as they are.
        if sid:
            rest = cmd["args"][1:]
            binding, lock = state["bound"][sid]
            async with lock:
                env = binding.seal("oh_event", cmd["args"][0] if cmd["args"] else None)
                await sio.emit("oh_event", tuple([env, *rest]), to=sid, namespace=NS)
    elif c == "send_binary":
        if sid:
            await sio.emit("oh_event", b"\x00raw bytes\xff", to=sid, namespace=NS)
    elif c == "tamper":
        if sid:
            await tamper(sid, cmd["how"], cmd.get("payload"))
    elif c == "send_deep":
        if sid:
            nested = []
            for _ in range(cmd["depth"]):
                nested = [nested]
            await send(sid, "oh_event", {"id": cmd["id"], "action": "run", "args": {"command": nested}})
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
            await send(state["sid"], "oh_event", payload)
            t1 = await asyncio.wait_for(fut, 30)
            rtts.append((t1 - t0) * 1000)
        out({"ev": "bench", "rtts": rtts})
    elif c == "quit":
        out({"ev": "bye"})
        sys.stdout.flush()
        import os

        os._exit(0)


async def tamper(sid, how, payload):
    """What a party between the ends could send (it has no session key)."""
    binding, lock = state["bound"][sid]
    async with lock:
        if how == "unsealed":
            await sio.emit("oh_event", payload, to=sid, namespace=NS)
        elif how == "forged":
            other = P.SessionBinding("not-the-key", args.conversation, "a" * 64, "b" * 64, "server")
            other.send_seq = binding.send_seq
            await sio.emit("oh_event", other.seal("oh_event", payload), to=sid, namespace=NS)
        elif how == "changed":
            env = binding.seal("oh_event", {"id": 999_999, "action": "run", "args": {"command": "true"}})
            env["body"] = json.dumps(payload)
            await sio.emit("oh_event", env, to=sid, namespace=NS)
        elif how == "replay":
            await sio.emit("oh_event", state["last_sealed"], to=sid, namespace=NS)
        elif how == "skip":
            binding.send_seq += 1
            await sio.emit("oh_event", binding.seal("oh_event", payload), to=sid, namespace=NS)
        elif how == "swap":
            first = binding.seal("oh_event", payload)
            second = binding.seal("oh_event", {"id": 999_998, "action": "run", "args": {"command": "true"}})
            await sio.emit("oh_event", second, to=sid, namespace=NS)
            await sio.emit("oh_event", first, to=sid, namespace=NS)


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
    tls = {"ssl_certfile": args.tls_cert, "ssl_keyfile": args.tls_key} if args.tls_cert else {}
    config = uvicorn.Config(app, host="127.0.0.1", port=args.port, log_level="warning", ws="websockets", **tls)
    server = uvicorn.Server(config)

    async def announce():
        while not server.started:
            await asyncio.sleep(0.02)
        out({"ev": "listening"})

    asyncio.create_task(announce())
    await server.serve()


asyncio.run(main())
