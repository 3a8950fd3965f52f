# openhands-vscode-runtime: the two commands of a fresh machine are `make demo` and `make test`.
# Every target installs what it needs, idempotently (stamps make a second run fast).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

VENV ?= $(HOME)/.cache/openhands-vscode-runtime/venv
PY := $(VENV)/bin/python
export OH_VENV := $(VENV)

.PHONY: help deps deps-system deps-python deps-node build build-rust addon demo check test quick test-rust \
        test-conformance test-conformance-live test-conformance-stored test-conformance-sample test-extension-unit test-cross test-cross-linux test-cross-macos test-v1 test-v1-differential test-v1-e2e test-v1-oldest test-remote test-app deps-python-v1 test-node test-runtime test-e2e test-vscode test-dist dist check-versions reference-constraints bench vsix clean

help:
	@echo "make demo   - build what is needed, run the real agent loop (CodeActAgent) on VsCodeRuntime + the headless executor"
	@echo "              (scripted stand-in LLM; set LLM_MODEL and LLM_API_KEY [LLM_BASE_URL] for a real model)"
	@echo "make check  - the static gates: rustfmt, clippy -D warnings, tsc --noEmit, node --check, ruff, the V1 lock (scripts/check.sh)"
	@echo "make test   - install everything needed (idempotent), then run every suite"
	@echo "make test-remote - the network test: agent-server + TLS hub and executor in two network namespaces (root; part of make test)"
	@echo "make bench  - benchmarks (ratios against baselines measured in the same run)"
	@echo "make vsix   - package the openhands-tab extension with the addon (linux-x64)"
	@echo "make dist   - every shippable artifact into dist/ (wheel, sdist, npm tarballs, VSIX)"

## ---- installation -------------------------------------------------------------------------

deps: deps-system deps-python deps-node

deps-system:
	@scripts/setup-system.sh

deps-python: deps-system
	@scripts/setup-python.sh

deps-node:
	@scripts/setup-node.sh npm/executor

## ---- build -------------------------------------------------------------------------------

build-rust:
	cargo build --workspace --exclude oh-node --bins

# The napi addon (debug build) and its generated JS loader.
addon: deps-node
	npm/executor/build.sh

build: build-rust addon

## ---- the main job ------------------------------------------------------------------------

demo: deps-python addon
	$(PY) -m openhands_vscode_runtime.demo

## ---- tests -------------------------------------------------------------------------------

# The tiers (README.md, "Tests"): `check` (linters, < 3 min), `quick` (check + every language's
# unit tests + the conformance sample through the shipped path, < 10 min warm), `test` (everything
# CI runs). scripts/run-suites.sh runs the suites one at a time and prints each one's wall time;
# the distribution (`make dist`: the platform builds, CPU-bound) builds in the background, never
# beside a suite that runs a live reference. Those come first, so that the build starts as early as
# it may: conformance's replay driver and its non-root sample (they fill the run's reference
# store) and the V1 differentials. Beside the build: the drivers that compare with that store
# (addon, hub), V1's end-to-end tests and every other suite; the Linux cross targets (built first)
# are tested while the macOS ones still build. test-dist tests the build's dist/ as it is.
test:
	@scripts/run-suites.sh test deps test-conformance-live test-v1-differential test-v1-oldest bg:dist \
	  test-conformance-stored test-v1-e2e check test-rust test-app test-node test-runtime test-e2e test-remote \
	  test-extension-unit test-vscode test-cross-linux wait:dist test-cross-macos test-dist

quick:
	@scripts/run-suites.sh quick deps check test-rust test-extension-unit test-node test-conformance-sample

# Formatters and linters, every finding fatal; each step's wall time printed at the end.
check:
	scripts/check.sh

# Benches and examples are type-checked by `make check` (clippy --all-targets), which `test` and
# `quick` run first. Then the pure ports (binaryornot, difflib) against the Python they port, on seeded inputs made at
# test time by the V0 venv (tests/parity).
test-rust: deps-python
	cargo test --workspace --exclude oh-node
	tests/parity/run.sh

# Every case through `oh-executor replay` (the Rust core; this driver runs the reference too), the
# sample through the napi addon with the JS fs callbacks (what the file cases prove is the callbacks;
# its bash is replay's oh-shell), every case through the hub (the shipped path: VsCodeRuntime, the
# hub, the headless executor CLI). One reference result per case for the three
# (CONFORMANCE_REFERENCE_STORE; make test's run sets it, a standalone run makes its own). Then the
# sample with both sides as an unprivileged user (root hides permission behaviour).
test-conformance: deps-python deps-node
	@export CONFORMANCE_REFERENCE_STORE=$${CONFORMANCE_REFERENCE_STORE:-$$(mktemp -d /tmp/oh-refstore.XXXXXX)}; \
	  $(MAKE) --no-print-directory test-conformance-live test-conformance-stored

# The drivers that run the reference live (replay: every case, and the sample as an unprivileged
# user), then those that take it from the run's store (CONFORMANCE_REFERENCE_STORE; without one,
# live): the addon's sample and the hub's every case.
test-conformance-live: deps-python deps-node
	tests/conformance/run.sh && tests/conformance/run.sh --sample --as-user oh-v1-test

test-conformance-stored: deps-python deps-node
	tests/conformance/run.sh --driver addon --sample && tests/conformance/run.sh --driver hub

# The sample (every file case, three bash cases of each group) through the hub: `make quick`.
test-conformance-sample: deps-python deps-node
	tests/conformance/run.sh --driver hub --sample

# The other targets (scripts/build-cross.sh), tested where this machine runs them: linux-arm64
# under qemu-user (a conformance subset, the node suite's CLI, execute and connect cases with an
# arm64 Node), the static linux-x64 musl executor natively (the same subset and CLI cases), macOS
# arm64 and x86_64 statically. scripts/setup-cross.sh installs the Debian toolchains (rustc-web,
# aarch64 gcc, qemu); build-cross.sh installs zig (PyPI) for musl and macOS.
test-cross: deps-python deps-node
	OH_CROSS_PART=all tests/cross/run.sh

test-cross-linux: deps-python deps-node
	OH_CROSS_PART=linux tests/cross/run.sh

test-cross-macos: deps-python deps-node
	OH_CROSS_PART=macos tests/cross/run.sh

# OpenHands V1 (software-agent-sdk): the executor's V1 mode against openhands-tools' own
# TerminalExecutor and FileEditor, in a venv of its own per release (scripts/setup-python-v1.sh).
# `test-v1` runs the newest supported release (part of `make test`), `test-v1-oldest` the oldest:
# the sample of cases that covers the SDK code differing between the two (.ci/run runs it after
# `make test`; docs/v1.md, "Versions"; tests/v1/README.md, "The oldest release").
test-v1: deps-system
	V1_PART=all tests/v1/run.sh

test-v1-differential: deps-system
	V1_PART=differential tests/v1/run.sh

test-v1-e2e: deps-system
	V1_PART=e2e tests/v1/run.sh

test-v1-oldest: deps-system
	source scripts/venv-lib.sh && V1_VERSION=$$V1_OLDEST V1_PART=all tests/v1/run.sh

# The agent-server with its TLS hub in one network namespace, the headless executor in another,
# over a veth pair with 1 % loss (nftables), a userspace delay relay and a 5 s link cut
# (tests/remote/README.md): the native executor twice, the addon (Node CLI) once. Root, nftables;
# about 70-80 s once built. Part of `make test` (beside the background build: it compares with no
# reference, and its checks are counts, not times).
test-remote: deps-system
	tests/remote/run.sh

# The OpenHands app (openhands-ai 1.11.0, V1 app server) starting agent-servers with our tools
# through our process sandbox (tests/app; its own venv, OH_VENV_APP).
test-app: deps-system
	tests/app/run.sh

# The V1 venv (idempotent: a stamp keyed by its inputs); OH_VENV_V1 overrides its place.
deps-python-v1: deps-system
	scripts/setup-python-v1.sh

test-node: deps-node deps-python
	npm/executor/test.sh

test-runtime: deps-python addon
	tests/runtime/run.sh
	tests/faults/run.sh

# The real OpenHands server app + CodeActAgent + VsCodeRuntime + the headless executor, driven like
# the tab; the LLM is the scripted stand-in.
test-e2e: deps-python addon
	tests/e2e/run.sh

# The extension in the real extension host (code-server); `test-extension-unit` runs its unit tests.
# It includes a V1 session (an agent-server conversation served by the extension): the V1 venv too.
test-vscode: addon deps-python deps-python-v1
	scripts/setup-node.sh extension
	tests/vscode/run.sh

# The extension's type check and unit tests (vitest, vscode mocked).
test-extension-unit:
	scripts/setup-node.sh extension
	cd extension && npm run typecheck && npm test

# The artifacts of `make dist`, installed outside the repository (fresh venv, empty npm dir).
test-dist: deps-python deps-node
	tests/dist/run.sh

check-versions:
	scripts/check-versions.sh

# The pins of openhands-ai 1.6.0 (tests/reference/README.md), from the installed package's lock.
reference-constraints: deps-python
	$(PY) tests/reference/make_constraints.py > tests/reference/constraints.txt

## ---- benchmarks and packaging ----------------------------------------------------------------

bench: deps-python
	cargo bench -p oh-shell
	cargo bench -p oh-difflib
	cargo bench -p oh-checkpoint   # 10,000 files / 200 MB; the anchor: a shadow-git checkpoint in the same run
	bench/editor.sh   # runs the oh-files bench and OHEditor in one run
	bench/memory.sh   # peak RSS: 100 MB of output, a 50 MB read
	npm/executor/bench/run.sh
	$(PY) openhands-runtime-py/bench/bench_runtime.py
	$(PY) openhands-runtime-py/bench/bench_agent_loop.py   # VsCodeRuntime vs LocalRuntime vs CLIRuntime in the agent loop
	$(PY) openhands-runtime-py/bench/bench_ide_tools.py    # an IDE tool call through VsCodeRuntime vs a read (stand-in host)
	OH_VENV=$(VENV) OH_IDE_BENCH=100 tests/vscode/run.sh --only=ide-bench   # reads and edits in the real VS Code host vs headless, same run, back to back
	OH_VENV=$(VENV) OH_IDE_BENCH=100 OH_IDE_BENCH_GAP_MS=200 tests/vscode/run.sh --only=ide-bench   # the same with 200 ms between actions (the agent's LLM turn): what issue 35's targets are read on
	bench/v1.sh       # OpenHands V1: its own terminal/file editor vs ours, the agent loop with each (also through the agent-server), 4 conversations at once vs one after another
	scripts/build-dist.sh dist && tests/dist/bench.sh dist
	bench/v1_setup.sh # the V1 environment from empty caches: pip, pip + the lock, uv fetched by pip + the lock (needs PyPI)

vsix: deps-node
	extension/scripts/package.sh

# Portable builds are cached by source tree hash (scripts/build-wheel.sh, build-portable-addon.sh).
dist: deps-node
	scripts/build-dist.sh dist

clean:
	cargo clean
