# Sourced by run.sh (not run on its own): how a host session is judged (judge_session) and how
# many tests each one must report (EXPECTED).

# The number of tests each host session reports (its suite's `test(...)` calls): a session that
# stops early, or whose FAIL line is lost, reports fewer and fails here. Update with the suite.
declare -A EXPECTED=([standin]=13 [untrusted]=3 [trust]=5 [ide]=29 [conversation]=7
  [two-a]=1 [two-b]=1 [confirm]=4 [ide-agent]=4 [v1]=3 [v1tab]=9 [v1tab-attach]=9 [v1-managed]=3 [v1-parallel]=8 [v1-canvas]=8 [v1-remote]=3 [multiroot]=3 [ide-bench]=1)
[ -z "${OH_IDE_BENCH:-}" ] || EXPECTED[ide]=30  # suite/ide.js adds its latency bench as a test
# Judges one host session from its log and exit code: each PASS/FAIL line counts, then the session
# must have printed exactly one SUMMARY whose counts are the lines seen, reported as many tests as
# expected, and exited 0 exactly when nothing failed (a host that crashed or a suite that threw
# without a FAIL line exits non-zero).
judge_session() {
  local s=$1 log="$ARTIFACTS/host-$1.log" rc=${HOST_RC[$1]:-none} p=0 f=0 line summaries
  if [ ! -f "$log" ]; then fail "the $s session did not run (see the lines above)"; return; fi
  while IFS= read -r line; do
    case "$line" in
      "@@oh-test PASS "*) pass "${line#@@oh-test PASS }"; p=$((p + 1)) ;;
      "@@oh-test FAIL "*) fail "${line#@@oh-test FAIL }"; f=$((f + 1)) ;;
    esac
  done < <(grep -E '@@oh-test (PASS|FAIL) ' "$log" 2>/dev/null | sed -E 's/^.*(@@oh-test)/\1/' | cut -c1-400)
  summaries="$(grep -E '@@oh-test SUMMARY ' "$log" 2>/dev/null | sed -E 's/^.*@@oh-test SUMMARY //')"
  if [ -z "$summaries" ]; then
    fail "the $s session did not finish: no SUMMARY (see $log)"
  elif [ "$(printf '%s\n' "$summaries" | wc -l)" != 1 ]; then
    fail "the $s session printed more than one SUMMARY: $(echo $summaries)"
  elif [ "$summaries" != "$p passed, $f failed" ]; then
    fail "the $s session's SUMMARY says \"$summaries\" but $p PASS and $f FAIL lines were seen"
  fi
  [ $((p + f)) -eq "${EXPECTED[$s]}" ] || fail "the $s session reported $((p + f)) tests, ${EXPECTED[$s]} expected"
  if [ "$rc" = none ]; then
    fail "the $s session's exit code was not recorded (run.sh bug)"
  elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    fail "the $s session's host exited $rc although no FAIL line was seen (see $log)"
  elif [ "$rc" -eq 0 ] && [ "$f" -ne 0 ]; then
    fail "the $s session's host exited 0 although $f test(s) failed"
  fi
}
