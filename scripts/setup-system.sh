#!/usr/bin/env bash
# System packages the suites need (Debian): tmux for the reference BashSession, git, curl, acl
# (setfacl: tests/v1 grants its unprivileged test user traverse on the way to the venv), and
# ripgrep (OpenHands turns its grep/glob tools into `rg` commands; VsCodeRuntime warns without it),
# openssl (test CAs: tests/remote, the extension's TLS unit tests) and iproute2 (tests/remote's
# network namespaces), and Debian's python3 (by path: the interactive conformance cases).
# Idempotent: apt runs only when something is missing.
set -euo pipefail
need=()
for pair in tmux:tmux git:git curl:curl unzip:unzip rg:ripgrep setfacl:acl openssl:openssl ip:iproute2; do
  cmd=${pair%%:*}; pkg=${pair##*:}
  command -v "$cmd" >/dev/null 2>&1 || need+=("$pkg")
done
# Debian's own interpreter, by path: the interactive conformance cases start it under a 1 s soft
# timeout, where a version manager's shim is too slow to start on a loaded machine.
[ -x /usr/bin/python3 ] || need+=(python3)
[ ${#need[@]} -eq 0 ] && exit 0
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
echo "setup-system: installing ${need[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
