#!/usr/bin/env node
// The headless OpenHands executor: registers with a VsCodeRuntime (docs/protocol.md) and runs its
// delegated actions in a persistent bash session, with files on the executor's own filesystem
// (Rust's LocalFs: no round trip through JavaScript).
'use strict';

const fs = require('node:fs');
const fsp = require('node:fs/promises');
const path = require('node:path');

const USAGE = `usage: openhands-vscode-executor --url URL --conversation ID --workspace DIR [--root DIR]...
                                 [--session-api-key-fd N | --session-api-key-file PATH]
                                 [--ca-file PEM | --cert-sha256 FINGERPRINT]
                                 [--no-change-timeout SECONDS] [--log-level LEVEL] [--exit-on-stdin-eof]

  --url URL                  the OpenHands server / runtime, e.g. http://127.0.0.1:3000 or
                             https://agent.example:8443; plain http only to this machine (a host
                             whose addresses are all loopback)
  --ca-file PEM              with https: trust only the CA certificate(s) in this file (default:
                             the system's trust store)
  --cert-sha256 FINGERPRINT  with https: accept exactly the (self-signed) certificate with this
                             SHA-256 fingerprint (hex, \`:\` between bytes allowed), any host name
  --conversation ID          the conversation whose VsCodeRuntime delegates to this executor
  --workspace DIR            workspace root (the shell starts there)
  --root DIR                 another folder of the workspace (repeatable): named to the agent,
                             covered by checkpoints
  --session-api-key-fd N     read the session key from inherited file descriptor N (a pipe the
                             launcher writes it to and closes) up to end of file, then close it
  --session-api-key-file PATH
                             a file holding the session key. Never on the command line (every
                             local user reads it: ps, /proc/PID/cmdline), never in the environment
                             (the agent's shell reads its parent's: /proc/PPID/environ)
  --no-change-timeout N      seconds without output before a command returns (the runtime may override)
  --log-level LEVEL          error | warn | info (default) | debug | trace; logs go to stderr
  --exit-on-stdin-eof        stop (status 0) when standard input reaches end of file: a parent that
                             keeps a pipe to it open takes the executor with it when it dies, even
                             by SIGKILL (what the Python runtime does); input is read and discarded

Exit status: 0 after SIGTERM/SIGINT, at end of input with --exit-on-stdin-eof, or when replaced by a newer executor, 2 when the runtime refuses
the connection (unknown conversation, bad key, protocol mismatch) or cannot be reached, 1 otherwise.`;

function parseArgs(argv) {
  const out = { roots: [] };
  const names = {
    '--url': 'url',
    '--conversation': 'conversation',
    '--session-api-key-file': 'sessionApiKeyFile',
    '--session-api-key-fd': 'sessionApiKeyFd',
    '--workspace': 'workspace',
    '--no-change-timeout': 'noChangeTimeout',
    '--log-level': 'logLevel',
    '--ca-file': 'caFile',
    '--cert-sha256': 'certSha256',
  };
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    if (arg === '-h' || arg === '--help') {
      out.help = true;
      continue;
    }
    if (arg === '--version') {
      out.version = true;
      continue;
    }
    if (arg === '--exit-on-stdin-eof') {
      out.exitOnStdinEof = true;
      continue;
    }
    let value;
    const eq = arg.indexOf('=');
    if (arg.startsWith('--') && eq > 0) {
      value = arg.slice(eq + 1);
      arg = arg.slice(0, eq);
    }
    if (arg === '--root') {
      if (value === undefined) {
        if (i + 1 >= argv.length) throw new Error('--root needs a value');
        value = argv[++i];
      }
      if (!value) throw new Error('--root needs a folder');
      out.roots.push(value);
      continue;
    }
    const key = names[arg];
    if (arg === '--session-api-key')
      throw new Error(
        '--session-api-key is gone: a key on the command line is readable by every local user (ps, /proc/PID/cmdline); ' +
          'pass it with --session-api-key-fd N or --session-api-key-file PATH',
      );
    if (!key) throw new Error(`unknown argument ${arg}`);
    if (value === undefined) {
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
      value = argv[++i];
    }
    out[key] = value;
  }
  if (out.sessionApiKeyFd !== undefined) {
    const fd = /^\s*\d+\s*$/.test(out.sessionApiKeyFd) ? Number(out.sessionApiKeyFd) : -1;
    // 1 and 2 are the logs; 0 is the parent's pipe with --exit-on-stdin-eof.
    if (!(fd >= 3 || (fd === 0 && !out.exitOnStdinEof)))
      throw new Error(
        `--session-api-key-fd must be an inherited file descriptor: 3 or more (or 0 without --exit-on-stdin-eof), not ${JSON.stringify(out.sessionApiKeyFd)}`,
      );
    out.sessionApiKeyFd = fd;
    if (out.sessionApiKeyFile) throw new Error('--session-api-key-fd and --session-api-key-file: give one');
  }
  return out;
}

const REFUSED_KEY_VARIABLE = 'OH_SESSION_API_KEY';
const MAX_KEY_BYTES = 64 * 1024;

/**
 * Throws (code EBADF) unless descriptor `fd` can be the launcher's. Node opens descriptors of its
 * own before this code runs (its event loop's epoll and eventfds, and pipes: both ends of each),
 * and marks inherited ones close-on-exec, so that flag tells nothing here: reading or closing one
 * of Node's own would break it. Linux names each descriptor in /proc/self/fd: the launcher's is a
 * pipe whose other end is not in this process, a socket or a file.
 */
function notOneOfOurOwn(fd) {
  const own = Object.assign(new Error("not inherited: it is one of this process's own"), { code: 'EBADF' });
  let target;
  try {
    target = fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    throw Object.assign(new Error('bad file descriptor'), { code: 'EBADF' });
  }
  if (target.startsWith('anon_inode:')) throw own;
  if (target.startsWith('pipe:')) {
    for (const other of fs.readdirSync('/proc/self/fd')) {
      if (Number(other) === fd) continue;
      let t;
      try {
        t = fs.readlinkSync(`/proc/self/fd/${other}`);
      } catch {
        continue; // the directory's own descriptor, gone
      }
      if (t === target) throw own;
    }
  }
}

/** The key's text: inherited descriptor `sessionApiKeyFd` read to end of file and closed (the
 * agent's bash must not inherit it), or the file. */
function readKey(args) {
  if (args.sessionApiKeyFd === undefined) return fs.readFileSync(args.sessionApiKeyFile, 'utf8');
  const fd = args.sessionApiKeyFd;
  if (fd >= 3 && fs.existsSync('/proc/self/fd')) notOneOfOurOwn(fd);
  const chunks = [];
  let total = 0;
  try {
    const buf = Buffer.alloc(4096);
    for (;;) {
      let n;
      try {
        n = fs.readSync(fd, buf, 0, buf.length, null);
      } catch (e) {
        // A launcher's non-blocking socket pair (Node's extra stdio pipes): wait for the rest.
        if (e.code !== 'EAGAIN') throw e;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
        continue;
      }
      if (n === 0) break;
      total += n;
      if (total > MAX_KEY_BYTES) throw new Error(`more than ${MAX_KEY_BYTES} bytes: not a key`);
      chunks.push(Buffer.from(buf.subarray(0, n)));
    }
  } finally {
    try {
      fs.closeSync(fd);
    } catch {
      // not open: the read above already said so
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The exit status for a failure (2: the runtime refused the connection or could not be reached,
 * 1: any other failure; docs above): the addon decides from its ErrorCode
 * (`exitStatusOf`, the same rule as the native CLI), so no list of codes lives here.
 */
function exitStatus(addon, code) {
  try {
    return addon.exitStatusOf(code);
  } catch {
    return 1; // not one of the addon's codes (e.g. napi's own GenericFailure)
  }
}

function log(level, target, message) {
  process.stderr.write(`${new Date().toISOString()} ${level.toUpperCase().padEnd(5)} ${target}: ${message}\n`);
}

async function main() {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`openhands-vscode-executor: ${e.message}\n${USAGE}\n`);
    return 64;
  }
  if (args.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (args.version) {
    process.stdout.write(`${require('../package.json').version}\n`);
    return 0;
  }
  const missing = ['url', 'conversation', 'workspace'].filter((k) => !args[k]);
  if (missing.length) {
    process.stderr.write(`openhands-vscode-executor: missing --${missing.join(', --')}\n${USAGE}\n`);
    return 64;
  }
  const workspace = path.resolve(args.workspace);
  try {
    if (!(await fsp.stat(workspace)).isDirectory()) throw new Error('not a directory');
  } catch (e) {
    process.stderr.write(`openhands-vscode-executor: workspace ${workspace}: ${e.message}\n`);
    return 66;
  }
  // The other folders of a multi-root workspace: absolute, existing folders, as the workspace.
  const extraRoots = [];
  for (const root of args.roots) {
    const resolved = path.resolve(root);
    try {
      if (!(await fsp.stat(resolved)).isDirectory()) throw new Error('not a directory');
    } catch (e) {
      process.stderr.write(`openhands-vscode-executor: root ${resolved}: ${e.message}\n`);
      return 66;
    }
    if (resolved !== workspace && !extraRoots.includes(resolved)) extraRoots.push(resolved);
  }
  let noChange;
  if (args.noChangeTimeout !== undefined) {
    noChange = Number(args.noChangeTimeout);
    if (!Number.isFinite(noChange) || noChange < 0) {
      process.stderr.write(`openhands-vscode-executor: --no-change-timeout must be a number of seconds\n`);
      return 64;
    }
    // The bash session counts whole seconds.
    noChange = Math.max(noChange > 0 ? 1 : 0, Math.round(noChange));
  }

  // The key, from the launcher's pipe or a file, never from the environment: a process's initial
  // environment stays readable in /proc/PID/environ for its whole life (deleting the variable
  // changes Node's copy, not that block), by the agent's shell too (/proc/$PPID/environ).
  if (process.env[REFUSED_KEY_VARIABLE] !== undefined) {
    process.stderr.write(
      `openhands-vscode-executor: $${REFUSED_KEY_VARIABLE} is set: a key in the environment stays readable in ` +
        `/proc/PID/environ for the executor's whole life, by the agent's shell too (/proc/$PPID/environ), so it is ` +
        `not read. Pass the key with --session-api-key-fd N (a pipe) or --session-api-key-file PATH, and unset ` +
        `${REFUSED_KEY_VARIABLE}\n`,
    );
    return 66;
  }
  let sessionApiKey;
  if (args.sessionApiKeyFd !== undefined || args.sessionApiKeyFile) {
    const what =
      args.sessionApiKeyFd !== undefined ? `--session-api-key-fd ${args.sessionApiKeyFd}` : `--session-api-key-file ${args.sessionApiKeyFile}`;
    try {
      sessionApiKey = readKey(args).replace(/[\r\n]+$/, '');
    } catch (e) {
      const hint = e.code === 'EBADF' ? ' (the launcher did not pass it open)' : '';
      process.stderr.write(`openhands-vscode-executor: ${what}: ${e.message}${hint}\n`);
      return 66;
    }
    if (!sessionApiKey) {
      process.stderr.write(`openhands-vscode-executor: ${what}: no key (empty up to end of file)\n`);
      return 66;
    }
  }
  const addon = require('../index.js');
  const { Executor } = addon;
  let executor;
  try {
    executor = new Executor(
      {
        serverUrl: args.url,
        conversationId: args.conversation,
        sessionApiKey,
        workspaceRoot: workspace,
        extraRoots,
        noChangeTimeoutSeconds: noChange,
        clientName: `openhands-vscode-executor-cli/${require('../package.json').version}`,
        logLevel: args.logLevel || 'info',
        caFile: args.caFile || undefined,
        certSha256: args.certSha256 || undefined,
      },
      null, // files on Rust's LocalFs
      {
        onLog: log,
        onStatus: (status, message) => log('info', 'executor', `status ${status}${message ? `: ${message}` : ''}`),
      },
    );
  } catch (e) {
    // The addon checks the certificate settings (as the native binary does before it starts).
    const prefix = 'options.caFile / options.certSha256: ';
    if (!String(e.message).startsWith(prefix)) throw e;
    process.stderr.write(`openhands-vscode-executor: --ca-file / --cert-sha256: ${e.message.slice(prefix.length)}\n${USAGE}\n`);
    return 64;
  }

  let stopping = null;
  const stop = (signal) => {
    if (!stopping) {
      log('info', 'executor', `${signal}: stopping`);
      stopping = executor.stop().catch((e) => log('error', 'executor', `stop failed: ${e.message}`));
    }
    return stopping;
  };
  process.on('SIGTERM', () => stop('SIGTERM').then(() => process.exit(0)));
  process.on('SIGINT', () => stop('SIGINT').then(() => process.exit(0)));
  if (args.exitOnStdinEof) {
    // The spawning process holds the other end of the pipe: end of file means it is gone (or
    // asked us to stop), whatever way it ended. Input is discarded; an error ends it the same way.
    const eof = () => stop('end of stdin (--exit-on-stdin-eof)').then(() => process.exit(0));
    process.stdin.on('data', () => {});
    process.stdin.once('end', eof);
    process.stdin.once('error', eof);
  }

  try {
    await executor.start();
  } catch (e) {
    if (stopping) {
      await stopping;
      return 0;
    }
    process.stderr.write(`openhands-vscode-executor: ${e.code}: ${e.message}\n`);
    await executor.stop().catch(() => {});
    return exitStatus(addon, e.code);
  }
  log('info', 'executor', `registered with ${args.url} for conversation ${args.conversation} (executor ${executor.executorId})`);
  const closed = await executor.waitUntilClosed();
  if (stopping) {
    await stopping;
    return 0;
  }
  await executor.stop().catch(() => {});
  const detail = [closed.code, closed.message].filter(Boolean).join(': ');
  process.stderr.write(`openhands-vscode-executor: connection closed (${closed.reason}${detail ? `: ${detail}` : ''})\n`);
  if (closed.reason !== 'failed') return 0;
  return exitStatus(addon, closed.code);
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`openhands-vscode-executor: ${e && e.stack ? e.stack : e}\n`);
    process.exit(1);
  },
);
