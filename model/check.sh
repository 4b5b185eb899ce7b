#!/bin/bash
# Model-check uintr.pml with spin: see README.md.
#
#   ./check.sh              what CI runs (group "ci", about 10 minutes)
#   ./check.sh lib          every configuration of the library as written
#   ./check.sh old          earlier code: each must FAIL (the bugs since fixed)
#   ./check.sh all          lib and old
#   ./check.sh quick        1-sender configurations (under a minute)
#   ./check.sh NAME...      the named configurations (./check.sh list)
#
# One summary line per configuration.  Exit status 0 only if every search
# was complete and found no error -- except the old-* configurations,
# which model code with known bugs: they must find an error (a model that
# stops finding them has lost its teeth).  Environment: JOBS (searches at once, default 2), MEMLIM (MB per search, default 10000),
# PANFLAGS (extra ./pan flags, e.g. -c0 to go on past errors),
# WORK (directory for the runs, default a fresh one under /tmp; a failing
# run leaves its trail there), KEEP=1 keeps WORK even if all passed.

set -u
here=$(cd "$(dirname "$0")" && pwd)
model=$here/uintr.pml
memlim=${MEMLIM:-10000}
jobs=${JOBS:-2}
work=${WORK:-$(mktemp -d /tmp/uintr-model.XXXXXX)}
mkdir -p "$work" || exit 2

command -v spin >/dev/null 2>&1 || { echo "check.sh: spin not found (apt-get install spin)" >&2; exit 2; }
command -v gcc >/dev/null 2>&1 || { echo "check.sh: gcc not found" >&2; exit 2; }

# name | kind (safety, or ltl:<claim>) | spin defines | what
configs='
mix|safety||2 senders x 2 posts, every receiver call, handler depth 1
wait2|safety|-DACTS=9 -DWAIT_SPIN=1|2 senders x 2 posts, stui/clui/uintr_wait (default spin)
wait2b|safety|-DACTS=9 -DWAIT_SPIN=0|2 senders x 2 posts, stui/clui/uintr_wait (spin 0: block at once)
ns3w|safety|-DNS=3 -DPOSTS=1 -DACTS=9 -DWAIT_SPIN=1|3 senders x 1 post, stui/clui/uintr_wait (default spin)
nowait|safety|-DACTS=23|2 senders x 2 posts, all calls but uintr_wait
wait2s|safety|-DACTS=9|2 senders x 2 posts, stui/clui and uintr_wait, spin changed at will
nvec3|safety|-DNVEC=3 -DACTS=7|3 vectors, stui/clui/poll/set_polling
ns3|safety|-DNS=3 -DPOSTS=1|3 senders x 1 post, every receiver call
uaf|safety|-DNS=1 -DHANDLER_UNREG|user handler unregisters: no use of a freed receiver, never notified after
uaf2|safety|-DNS=2 -DPOSTS=1 -DHANDLER_UNREG|as uaf, 2 senders x 1 post
counters|safety|-DACTS=3 -DCOUNTERS|2 senders x 2 posts, stui/clui/poll, notification counter
sigq|safety|-DNS=2 -DPOSTS=1 -DACTS=1 -DSIGQ_FULL|signal queue full once: a post after the failure is not lost
kill|safety|-DKILL -DNS=2 -DPOSTS=1|one sender killed at any step: no ON left without a notification, later posts notified
kill-wait|safety|-DKILL -DNS=1 -DACTS=9|one sender x 2 posts killed, stui/clui/uintr_wait
ltl-wait|ltl:wait_returns|-DACTS=9|LTL: a post made while uintr_wait waits makes it return
ltl-wakes|ltl:wakes|-DACTS=9|LTL: uintr_wait never stays asleep with PIR/UIRR set
ltl-pir|ltl:pir_drained|-DACTS=9|LTL: PIR is drained while notifications are on
ltl-uif|ltl:uif_delivers|-DACTS=9|LTL: recognized interrupts are delivered while UIF=1
loop|safety|-DLOOP -DACTS=45|event-loop state: 2 senders x 2 posts, stui/clui/set_polling/wait/loop fd, drain, epoll_wait
loop1|safety|-DLOOP -DNS=2 -DPOSTS=1 -DACTS=47|event-loop state: 2 senders x 1 post, every call but unregister
loop3|safety|-DLOOP -DNS=3 -DPOSTS=1 -DACTS=33|event-loop state: 3 senders x 1 post, stui/clui, loop fd, drain, epoll_wait
loop-kill|safety|-DLOOP -DKILL -DNS=2 -DPOSTS=1 -DACTS=33|event-loop state: one sender killed at any step
loop-unreg|safety|-DLOOP -DNS=1 -DHANDLER_UNREG -DACTS=49|event-loop state: the handler unregisters inside the drain
old-loop|safety|-DLOOP -DOLD_LOOP -DNS=2 -DPOSTS=1 -DACTS=33|a drain without EPOCH: a slow sender sets ON after the drain
old-loop-arm|safety|-DLOOP -DOLD_LOOP_ARM -DNS=2 -DPOSTS=1 -DACTS=33|a drain that arms without looking at PIR again
old-loop-reset-late|safety|-DLOOP -DOLD_LOOP_RESET_LATE -DNS=2 -DPOSTS=1 -DACTS=33|a drain that reads the eventfd after SN := 0: a post notified after it is consumed
sp1|safety|-DSAFEPOINT -DNS=1 -DACTS=65|instrumented state: 1 sender x 2 posts, stui/clui, set_safepoints, safepoints, the watchdog
sp1-all|safety|-DSAFEPOINT -DNS=1 -DACTS=95|instrumented state: 1 sender x 2 posts, every call with safepoints (6 min)
sp2|safety|-DSAFEPOINT -DNS=2 -DPOSTS=1 -DACTS=65|instrumented state: 2 senders x 1 post, stui/clui, safepoints, the watchdog (5 min)
sp-nodefer|safety|-DSAFEPOINT -DNS=1 -DNODEFER -DMAXNEST=2 -DACTS=65|instrumented state: the SA_NODEFER handler of the code before 3e44b34, depth 2
sp-unreg|safety|-DSAFEPOINT -DNS=1 -DHANDLER_UNREG -DACTS=81|instrumented state: the handler unregisters
sp-big|safety|-DSAFEPOINT -DNS=2 -DPOSTS=1 -DACTS=71|instrumented state: 2 senders, stui/clui, poll, set_polling, safepoints (7 min)
old-sp-leave|safety|-DSAFEPOINT -DOLD_SP_LEAVE -DNS=1 -DACTS=65|leaving the instrumented state without the poll: a post left in PIR with SN clear
old-mix|safety|-DOLD|the code of da70323: as mix
old-nostrict|safety|-DOLD -DNO_STRICT|the code of da70323: only "never asleep with PIR/UIRR set"
old-ltl-wait|ltl:wait_returns|-DOLD -DACTS=9|the code of da70323: as ltl-wait
old-ltl-wakes|ltl:wakes|-DOLD -DACTS=9|the code of da70323: as ltl-wakes
old-uaf|safety|-DNS=1 -DHANDLER_UNREG -DNO_RETIRE|ffb705b: unregister from a handler frees r under stui/poll/wait
old-counters|safety|-DOLD -DNODEFER -DMAXNEST=2 -DACTS=3 -DCOUNTERS|ffb705b: notification counter by load + store, SA_NODEFER handler nested on itself
old-sigq|safety|-DNS=2 -DPOSTS=1 -DACTS=1 -DSIGQ_FULL -DOLD_FASTPATH -DOLD_NOTIFY|ffb705b: fast path strands a post after a give-back
old-kill|safety|-DKILL -DNS=2 -DPOSTS=1 -DOLD_NOTIFY|ffb705b: a sender killed between CAS ON and its signal leaves ON set
since|safety|-DACTS=3 -DSTRICT_SINCE|(fails by design) the literal "post since the last delivery"
q-mix|safety|-DNS=1|quick: 1 sender, every call
q-nodefer|safety|-DNS=1 -DNODEFER -DMAXNEST=2|quick: 1 sender, the SA_NODEFER handler of the code before 3e44b34, depth 2
q-old|safety|-DNS=1 -DOLD|quick: 1 sender, the code of da70323
'

group_lib='mix wait2 wait2b ns3w nowait wait2s nvec3 ns3 uaf uaf2 counters sigq kill kill-wait ltl-wait ltl-wakes ltl-pir ltl-uif loop loop1 loop3 loop-kill loop-unreg sp1 sp1-all sp2 sp-unreg sp-big'
group_old='old-mix old-nostrict old-ltl-wait old-ltl-wakes old-uaf old-counters old-sigq old-kill q-old old-loop old-loop-arm old-loop-reset-late old-sp-leave'
group_ci='kill counters wait2 wait2b uaf2 sigq kill-wait old-mix old-ltl-wait old-uaf old-counters old-sigq old-kill loop1 loop3 loop-kill loop-unreg old-loop old-loop-arm old-loop-reset-late sp1 sp-unreg old-sp-leave'
group_quick='q-mix q-nodefer q-old'

lookup() {
	printf '%s\n' "$configs" | while IFS='|' read -r n k d w; do
		[ "$n" = "$1" ] && { printf '%s|%s|%s|%s\n' "$n" "$k" "$d" "$w"; break; }
	done
}

if [ $# -eq 0 ]; then set -- $group_ci; fi
case "${1:-}" in
list)
	printf '%s\n' "$configs" | while IFS='|' read -r n k d w; do
		[ -n "$n" ] && printf '%-14s %-18s %-40s %s\n' "$n" "$k" "$d" "$w"
	done
	exit 0 ;;
lib) set -- $group_lib ;;
old) set -- $group_old ;;
all) set -- $group_lib $group_old ;;
quick) set -- $group_quick ;;
esac

# Check one configuration; prints its summary line(s); returns 0 if it
# came out as expected, 1 if not, 2 if it could not run.
check_one() {
	name=$1
	st=0
	line=$(lookup "$name")
	if [ -z "$line" ]; then
		echo "check.sh: unknown configuration '$name' (./check.sh list)" >&2
		return 2
	fi
	kind=$(printf '%s' "$line" | cut -d'|' -f2)
	defs=$(printf '%s' "$line" | cut -d'|' -f3)
	dir=$work/$name
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$model" "$dir/uintr.pml"
	(
		cd "$dir" || exit 2
		# shellcheck disable=SC2086
		spin $defs -a uintr.pml >spin.out 2>&1 || { cat spin.out; exit 2; }
		case $kind in
		safety)
			gcc -O2 -w -DSAFETY -DNOCLAIM -DCOLLAPSE -DMEMLIM="$memlim" -o pan pan.c &&
			./pan -m100000 -w28 ${PANFLAGS:-} >pan.out 2>&1 ;;
		ltl:*)
			gcc -O2 -w -DCOLLAPSE -DNFAIR=3 -DMEMLIM="$memlim" -o pan pan.c &&
			./pan -a -f -A -m100000 -w28 ${PANFLAGS:-} -N "${kind#ltl:}" >pan.out 2>&1 ;;
		esac
		exit 0
	) || { echo "$name: spin or gcc failed (see $dir)"; return 2; }

	out=$dir/pan.out
	errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$out" | tail -n 1)
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$out" | tail -n 1)
	trans=$(sed -n 's/^ *\([0-9.e+]*\) transitions.*/\1/p' "$out" | tail -n 1)
	depth=$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' "$out" | tail -n 1)
	secs=$(sed -n 's/^pan: elapsed time \([0-9.e+-]*\) seconds.*/\1/p' "$out" | tail -n 1)
	mem=$(sed -n 's/^ *\([0-9.]*\).total actual memory usage.*/\1/p' "$out" | tail -n 1)
	result=PASS
	expect=PASS
	case $name in old-*|q-old) expect=FAIL ;; esac
	incomplete=0
	if grep -q -e 'max search depth too small' -e 'reached -DMEMLIM bound' \
		-e 'out of memory' -e 'too many processes' "$out"; then
		incomplete=1
	fi
	if [ -z "$errors" ]; then
		result=ERROR
		st=1
	elif [ "$errors" != 0 ]; then
		result=FAIL
		[ $expect = FAIL ] || st=1
	elif [ $incomplete = 1 ] || grep -q 'Search not completed' "$out"; then
		result=INCOMPLETE
		st=1
	elif [ $expect = FAIL ]; then
		result="PASS(expected FAIL)"
		st=1
	fi
	[ $expect = FAIL ] && [ "$result" = FAIL ] && result="FAIL(expected)"
	printf '%-13s %-16s states=%s transitions=%s depth=%s errors=%s time=%ss mem=%sMB\n' \
		"$name" "$result" "${states:-?}" "${trans:-?}" "${depth:-?}" "${errors:-?}" \
		"${secs:-?}" "${mem:-?}"
	if [ "$result" = FAIL ] || [ "$result" = "FAIL(expected)" ]; then
		what=$(grep -m1 -e 'assertion violated' -e 'acceptance cycle' -e 'invalid end state' "$out")
		echo "    $what"
		echo "    trail: cd $dir && spin $defs -t -p -g uintr.pml"
	fi
	[ "$result" = PASS ] && rm -f "$dir/pan" "$dir/pan.c" "$dir/pan.h" "$dir/pan.b" \
		"$dir/pan.m" "$dir/pan.p" "$dir/pan.t"
	return $st
}

# Run the configurations, JOBS at a time; print in the order given.
status=0
running=0
for name in "$@"; do
	mkdir -p "$work/.out"
	( check_one "$name" >"$work/.out/$name" 2>&1; echo $? >"$work/.out/$name.rc" ) &
	running=$((running + 1))
	if [ $running -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait
for name in "$@"; do
	cat "$work/.out/$name"
	rc=$(cat "$work/.out/$name.rc" 2>/dev/null || echo 2)
	[ "$rc" -gt "$status" ] && status=$rc
done
rm -rf "$work/.out"

if [ $status = 0 ] && [ -z "${WORK:-}" ] && [ -z "${KEEP:-}" ]; then
	rm -rf "$work"
else
	echo "runs in $work"
fi
exit $status
