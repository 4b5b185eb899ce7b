#!/bin/sh
# The test driver: runs each test program (exit 0 pass, 1 fail, 77 skip)
# with a time limit; prints one line per test and, last, "N passed, M failed".
# RUNNER (e.g. "qemu-aarch64 -L /usr/aarch64-linux-gnu") prefixes each run.
# TEST_TIMEOUT sets the per-test limit in seconds (default 120).
limit=${TEST_TIMEOUT:-120}
# Tests that start programs of their own start them through the runner too.
export UINTR_TEST_RUNNER="$RUNNER"
pass=0 fail=0 skip=0 failed=""
logdir=${TEST_LOGDIR:-build/test-logs}
mkdir -p "$logdir"
for t in "$@"; do
	name=$(basename "$t")
	start=$(date +%s.%N)
	runner=$RUNNER
	case $t in
	*/test/compat/later-*)	# ... under Intel's later ABI
		name=compat/$name; runner="$(dirname "$0")/../tools/uintr-run --abi=later" ;;
	*/test/compat/*)	# -muintr programs run under the emulation
		name=compat/$name; runner="$(dirname "$0")/../tools/uintr-run" ;;
	*/test/plugin/*) name=plugin/$name ;;	# built with the safepoint plugin
	*/examples/muintr/*)
		name=examples/muintr/$name; runner="$(dirname "$0")/../tools/uintr-run" ;;
	*/examples/*) name=examples/$name ;;
	esac
	mkdir -p "$(dirname "$logdir/$name")"
	timeout -k 5 "$limit" $runner "$t" >"$logdir/$name.log" 2>&1
	rc=$?
	secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
	case $rc in
	0) pass=$((pass + 1)); printf 'PASS  %-40s %6.2fs\n' "$name" "$secs" ;;
	77) skip=$((skip + 1)); printf 'SKIP  %-40s %s\n' "$name" "$(tail -n 1 "$logdir/$name.log")" ;;
	*) fail=$((fail + 1)); failed="$failed $name"
	   [ $rc -eq 124 ] && echo "  (timed out after ${limit}s)" >>"$logdir/$name.log"
	   printf 'FAIL  %-40s exit %d\n' "$name" "$rc"
	   sed 's/^/      | /' "$logdir/$name.log" | tail -n 20 ;;
	esac
done
[ -n "$failed" ] && echo "failed:$failed"
if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
