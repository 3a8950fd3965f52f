#!/usr/bin/env bash
# The network test (`make test-remote`; README.md here): two network namespaces joined by a veth
# pair, the V1 agent-server with its TLS hub in one, the headless executor in the other, a lossy
# link that is cut mid-command. Needs root, `ip` and `openssl` (installs nftables); builds the
# headless executor, the addon (npm/executor/build.sh) and the V1 venv (scripts/setup-python-v1.sh)
# if needed. Every address it uses exists only inside the two namespaces, which are removed at the
# end, however it ends.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
source "$repo/scripts/venv-lib.sh"
[ "$(id -u)" = 0 ] || { echo "tests/remote: needs root (network namespaces, nftables)" >&2; exit 1; }
# nftables is the one package only this test needs (idempotent, as scripts/setup-system.sh).
command -v nft >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nftables; }
for tool in ip nft openssl; do
  command -v "$tool" >/dev/null || { echo "tests/remote: needs $tool (apt-get install iproute2 nftables openssl)" >&2; exit 1; }
done
"$repo/scripts/setup-python-v1.sh"
venv=$(v1_venv_path "$V1_NEWEST")
target=$(cd "$repo" && cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
(cd "$repo" && cargo build -q -p oh-headless --bin openhands-vscode-executor)
"$repo/npm/executor/build.sh" >/dev/null 2>&1 || "$repo/npm/executor/build.sh"   # quiet unless it fails
export OH_VSCODE_EXECUTOR=${OH_VSCODE_EXECUTOR:-$target/debug/openhands-vscode-executor}

# Names and a /24 of 10.x unique to this run (the pid picks the third byte).
tag=ohr$$
srv=$tag-srv exe=$tag-exe
net=10.213.$(( $$ % 250 + 1 ))
server_ip=$net.1 executor_ip=$net.2
work=$(mktemp -d /tmp/oh-remote.XXXXXX)
home=$(mktemp -d /tmp/oh-remote-home.XXXXXX)
cleanup() {
  ip netns del "$srv" 2>/dev/null || true
  ip netns del "$exe" 2>/dev/null || true
  rm -rf "$work" "$home"
}
trap cleanup EXIT

ip netns add "$srv"
ip netns add "$exe"
ip link add "$tag-s" type veth peer name "$tag-e"
ip link set "$tag-s" netns "$srv"
ip link set "$tag-e" netns "$exe"
ip -n "$srv" addr add "$server_ip/24" dev "$tag-s"
ip -n "$exe" addr add "$executor_ip/24" dev "$tag-e"
for ns in "$srv" "$exe"; do ip -n "$ns" link set lo up; done
ip -n "$srv" link set "$tag-s" up
ip -n "$exe" link set "$tag-e" up

export HOME=$home LANG=C.UTF-8 LC_ALL=C.UTF-8 LITELLM_LOCAL_MODEL_COST_MAP=True OPENHANDS_SUPPRESS_BANNER=1
export LOG_LEVEL=${LOG_LEVEL:-WARNING} PYENV_REHASH_TIMEOUT=1
# Three passes. The native headless executor with the hub's default heartbeat (10 s + 10 s: the
# connection outlives the cut, TCP retransmits) and with 2 s + 2 s (both ends drop it during the
# cut: the executor reconnects and the pending action and its reply are delivered again, still once
# each); then the Node CLI, i.e. the addon the extension loads, in a Node process, with 2 s + 2 s.
native=${OH_VSCODE_EXECUTOR}
node_cli=$repo/npm/executor/bin/openhands-vscode-executor.js
for pass in native:default native:2 addon:2; do
  executor=${pass%%:*} heartbeat=${pass##*:}
  start=$(date +%s)
  rm -rf "${work:?}"/*
  driver_args=(--server-ip "$server_ip" --executor-netns "$exe" --executor-link "$tag-e" --work "$work"
               --one-way-ms "${REMOTE_ONE_WAY_MS:-25}" --cut-seconds "${REMOTE_CUT_SECONDS:-5}")
  [ "$heartbeat" = default ] || driver_args+=(--heartbeat "$heartbeat")
  if [ "$executor" = native ]; then export OH_VSCODE_EXECUTOR=$native; else export OH_VSCODE_EXECUTOR=$node_cli; fi
  ip netns exec "$exe" nft flush ruleset
  echo "tests/remote: $executor executor, heartbeat $heartbeat"
  ip netns exec "$srv" "$venv/bin/python" "$repo/tests/remote/remote_test.py" "${driver_args[@]}"
  echo "tests/remote: $executor executor, heartbeat $heartbeat: passed in $(( $(date +%s) - start )) s"
done
