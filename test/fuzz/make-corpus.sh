#!/bin/sh
# Writes the seed inputs of api-fuzz into test/fuzz/corpus (or $1).
# Each seed is a list of operations in the harness's encoding: an opcode
# byte (taken modulo 23) followed by its argument bytes; see
# LLVMFuzzerTestOneInput in api-fuzz.c.  Slot 0 is the fuzzer's thread,
# slots 1 and 2 are workers; fd selector k < 0xd0 names the k-th open
# harness fd (in fd order), flags byte 0 means flags 0.
#
#   REG slot flags hid(1,2; 0 = NULL)      0        UNREG slot flags   2
#   CREATE slot vector flags               3        CLOSE fdsel        5
#   DUP fdsel mode(<128 dup, else dup2 target fdsel)                   6
#   OPEN kind(0 pipe 1 memfd 2 /dev/null 3 eventfd 4 SEQPACKET pair 5 forged
#        6 STREAM pair 7 DGRAM pair 8 unconnected SEQPACKET)           7
#   REGS slot fdsel flags                  8        UNREGS slot fdsel flags 10
#   SEND slot idxsel(<192: k-th entry)     11       STUI slot          14
#   CLUI/TESTUI sel(odd clui) slot         15       POLL slot          16
#   SETPOLL slot on(<128 off, else on)     17
#   SPIN/STATS sel(odd spin) slot ...      18       STATE slot null    19
#   WAIT slot flags                        20       EXIT slot          21
#   BLOCK/UNBLOCK worker(even: slot 1, odd: slot 2)                    22
set -e
dir=${1:-$(dirname "$0")/corpus}
mkdir -p "$dir"

seed() {
	name=$1
	shift
	out=""
	for b in "$@"; do
		out="$out\\$(printf '%03o' "$b")"
	done
	printf "$out" >"$dir/$name"
}

# One receiver, one sender: send, deliver, release, stale entry.
seed basic 0 1 0 1  3 1 5 0  8 0 0 0  14 1  11 0 0  19 1 0  18 0 1 0 0  5 0  11 0 0  21 0
# Coalescing and priority: UIF = 0 while three vectors (one twice) are
# posted, then STUI delivers them highest first.  (Vector byte: below 128
# picks vector b % 8, 128..231 picks b % 64.)
seed coalesce 0 1 0 2  3 1 137 0  3 1 3 0  3 1 168 0  8 0 0 0  8 0 1 0  8 0 2 0 \
	11 0 0  11 0 1  11 0 1  11 0 2  19 1 0  14 1  18 0 1 0 0
# Polling: posts stay in PIR until uintr_poll, then clearing SN.
seed polling 0 2 0 1  3 2 7 0  3 2 8 0  8 0 0 0  8 0 1 0  17 2 200  14 2 \
	11 0 0  11 0 1  16 2  11 0 0  17 2 0  19 2 0
# uintr_wait with a pending interrupt, UIF = 0 then 1.
seed wait 0 1 0 1  3 1 140 0  8 0 0 0  11 0 0  20 1 0  14 1  11 0 0  20 1 0 20 1 0
# The receiver thread exits with fds open; the sender keeps a harmless
# entry, ESHUTDOWN for a new one, then the fd is closed (stale: SIGILL).
seed exit 0 1 0 1  3 1 4 0  6 0 0  8 0 0 0  21 0  11 0 0  8 2 0 0  10 0 0 0  5 0 \
	8 0 0 0  11 0 0
# Unregister and re-register on the same thread: old fds stay dead,
# EBUSY only for live vectors.
seed reregister 0 1 0 1  3 1 6 0  3 1 6 0  2 1 0  0 1 0 2  3 1 6 0  8 0 0 0 \
	8 0 1 0  11 0 1  14 1  11 0 1  5 0  11 0 0
# Errnos: flags, NULL handler, ENOSPC vectors, EBADF and EOPNOTSUPP fds.
seed errnos 0 0 224 1  0 0 0 0  3 0 5 0  0 0 0 1  3 0 232 0  3 0 236 0  3 0 5 225  3 0 191 0 \
	7 0  7 1 7  7 2  7 3  7 4  7 6  7 7  7 8  8 1 0 0  8 1 1 0  8 1 5 0  8 1 208 0  8 1 255 1 \
	8 1 9 0  8 1 11 0  8 1 13 0  10 2 3 0  10 2 12 0  20 1 0  19 0 240  18 0 0 255 0  18 0 0 0 240
# Self-send on the receiver's own thread and between the two workers.
seed crossing 0 1 0 1  0 2 0 2  3 1 148 0  3 2 149 0  14 1  14 2  8 1 0 0  8 2 0 0 \
	8 2 1 0  8 1 1 0  11 1 0  11 1 1  11 2 0  11 2 1  5 1  11 2 0  11 2 1
# dup2 over a uintr fd (release through dup2) and dup keeping it alive.
seed dup 0 1 0 1  3 1 2 0  3 1 3 0  6 0 0  8 0 0 0  5 0  11 0 0  6 1 200 0  11 0 0 \
	3 1 3 0
# Forged sockets, with the magic and 0..5 memfds.
seed forged 0 1 0 1  3 1 1 0  7 5 2 32 128  0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 \
	0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 \
	8 0 1 0  7 5 5 32 135  0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 \
	0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 8 0 2 0
# A worker blocks the notification signal: posts and a release notice
# queue up; create_fd releases the closed vector at once; the receiver
# unregisters and registers again; unblocking then brings a stale
# notification (spurious) and a stale notice.
seed blocked 0 1 0 1  3 1 133 0  3 1 134 0  8 0 0 0  8 0 1 0  14 1  22 0  11 0 0 \
	11 0 1  5 0  3 1 133 0  2 1 0  0 1 0 2  22 0  18 0 1 200 0  18 0 1 0 0
# Blocked, then uintr_poll and uintr_wait process what the queued
# notification would have; the notification arrives later.
seed blocked-poll 0 2 0 1  3 2 140 0  8 1 0 0  22 1  11 1 0  16 2  14 2  11 1 0 \
	18 1 2 0  20 2 0  22 1  18 0 2 0 0  11 1 0  20 2 0
