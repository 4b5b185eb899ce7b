#!/bin/sh
# test/repeat.sh N TARGET [MAKE ARGS...]: run `make TARGET` N times in a row
# and count, per run, the suite's verdict line ("P passed, F failed[, S
# skipped]"), so that a flake shows as a run with F > 0 (issue 16 section 0:
# a flake is a bug to fix, never to retry).  Every run's output is kept in
# $REPEAT_LOGDIR (default build/repeat) as TARGET-K.log; the last line is
# "TARGET: R runs, G green, B red" and the names of the tests that failed,
# with how often.  The first run also builds what the suite needs.
n=${1:?usage: test/repeat.sh N TARGET [MAKE ARGS...]}
target=${2:?usage: test/repeat.sh N TARGET [MAKE ARGS...]}
shift 2
logdir=${REPEAT_LOGDIR:-build/repeat}
mkdir -p "$logdir"
green=0 red=0 k=1
: >"$logdir/$target-failed"
while [ "$k" -le "$n" ]; do
	log=$logdir/$target-$k.log
	make --no-print-directory "$@" "$target" >"$log" 2>&1
	rc=$?
	verdicts=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tr '\n' ';')
	# A target may run several suites (check-sanitize, check-cross): the run
	# is green when make succeeded and every suite it ran failed nothing.
	if [ "$rc" -eq 0 ] && [ -n "$verdicts" ] &&
	   ! grep -Eq '^[0-9]+ passed, [1-9][0-9]* failed' "$log"; then
		green=$((green + 1)); state=green
	else
		red=$((red + 1)); state=red
		grep '^FAIL ' "$log" | awk '{ print $2 }' >>"$logdir/$target-failed"
	fi
	printf '%s run %d/%d: %s  %s\n' "$target" "$k" "$n" "$state" "$verdicts"
	k=$((k + 1))
done
echo "$target: $n runs, $green green, $red red"
[ -s "$logdir/$target-failed" ] && sort "$logdir/$target-failed" | uniq -c | sed 's/^/  failed: /'
[ "$red" -eq 0 ]
