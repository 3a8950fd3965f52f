#!/usr/bin/env bash
# The unprivileged user the differential suites' non-root passes run as (tests/v1/README.md,
# tests/conformance/README.md):
#   setup-test-user.sh USER PATH...
# creates USER (a system user with its own group, no login shell, no home: the suite gives it a
# HOME of its own) when missing, and makes sure USER can reach every PATH: a directory on the way
# that USER cannot traverse (root's 0700 home holds pyenv's Python, under which the venvs are
# built) gets an ACL entry granting USER traverse only (`x`: no listing, no reading of anything
# not already world-readable). Needs root and setfacl (setup-system.sh installs `acl`); as
# another user there is nothing to do (the suite then runs as that user).
# Idempotent: a second run changes nothing.
set -euo pipefail
user=$1; shift
[ "$(id -u)" -eq 0 ] || exit 0
if ! id -u "$user" >/dev/null 2>&1; then
  # uid == gid, as for a login user made by useradd and for OpenHands' sandbox user: the V0
  # reference chowns a written file to (user_id, user_id), which fails when the two differ.
  id=999
  while getent passwd "$id" >/dev/null || getent group "$id" >/dev/null; do id=$((id - 1)); done
  echo "setup-test-user: creating the system user $user ($id:$id)" >&2
  groupadd --system --gid "$id" "$user"
  useradd --system --uid "$id" --gid "$id" --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$user"
fi
as_user() { setpriv --reuid="$user" --regid="$user" --init-groups "$@"; }
for path in "$@"; do
  path=$(realpath -m "$path")
  dir=$path; [ -d "$dir" ] || dir=$(dirname "$dir")
  # Every ancestor, from / down: the first one USER cannot traverse blocks all below it.
  walk=/
  IFS=/ read -ra parts <<< "${dir#/}"
  for part in "" "${parts[@]}"; do
    [ -n "$part" ] && walk=${walk%/}/$part
    if ! as_user test -x "$walk"; then
      echo "setup-test-user: granting $user traverse (x) on $walk" >&2
      setfacl -m "u:$user:x" "$walk"
    fi
  done
  if ! as_user test -r "$path"; then
    echo "setup-test-user: $user still cannot read $path" >&2
    exit 1
  fi
done
