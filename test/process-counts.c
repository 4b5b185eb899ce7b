/*
 * Exact accounting across processes (reference 2.3 "inherited across fork
 * ... any holder may become a sender", 5.1 posting and coalescing, 10.2-3):
 * one receiver thread; two forked child processes, each a sender to its
 * own vector (11, 12) through the inherited fd.
 *  1. Each child sends 5000 times, waiting for each delivery before the
 *     next (the counters are in MAP_SHARED memory made before fork): every
 *     send is delivered exactly once, so the totals are exactly 5000.
 *  2. Each child fires 10000 sends without waiting, writing the send's
 *     number to shared memory before each: posts of a pending vector
 *     coalesce, so the burst gives between 1 and 10000 deliveries, and a
 *     delivery reads the last number (nothing is lost); then one more send,
 *     whose number a delivery reads too.  The child notes the count when it
 *     sees that.  One more delivery may still come: a post that lands after
 *     the PIR drain feeding the delivery that read the last number is
 *     recognized again (PIR and UIRR are distinct, reference 5.2), so once
 *     the receiver has drained everything the count is the child's or one
 *     more, and never more than the posts.
 * Every delivery ran on the receiver thread, nothing else was delivered.
 */
#include "helpers-lifetime.h"

#define NCHILD 2
#define SYNC_SENDS 5000
#define BURST 10000
#define STOP_VECTOR 1

struct report {
	_Atomic unsigned long long seen_deliveries[NCHILD]; /* burst + last send */
};

static void child(int k, int fd, struct report *rep)
{
	unsigned int v = 11 + (unsigned int)k;
	unsigned long long base, d;
	int i, idx;

	idx = uintr_register_sender(fd, 0);
	CHECK_EQ(idx, 0);
	for (i = 1; i <= SYNC_SENDS; i++) {
		lt_send_wait(idx, v);
		CHECK_EQ(lt_count(v), i);
	}

	base = lt_count(v);
	CHECK_EQ(base, SYNC_SENDS);
	for (i = 1; i <= BURST; i++) {
		atomic_store(&lt_c->seq[v], (unsigned long long)i);
		uintr_senduipi((unsigned long long)idx);
	}
	WAIT_UNTIL(atomic_load(&lt_c->seen[v]) == BURST);
	d = lt_count(v) - base;
	CHECK(d >= 1 && d <= BURST + 1);

	atomic_store(&lt_c->seq[v], BURST + 1);
	uintr_senduipi((unsigned long long)idx);
	WAIT_UNTIL(atomic_load(&lt_c->seen[v]) == BURST + 1);
	d = lt_count(v) - base;
	CHECK(d >= 2 && d <= BURST + 2);
	rep->seen_deliveries[k] = d;
	exit(T_PASS);
}

int main(void)
{
	static const unsigned int vec[] = { 11, 12, STOP_VECTOR };
	struct report *rep;
	pid_t pid[NCHILD];
	struct lt_rx rx;
	unsigned int v;
	int k, stop_idx;

	lt_counts_init();
	rep = mmap(NULL, sizeof(*rep), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(rep != MAP_FAILED);
	lt_rx_start(&rx, 3, vec);

	for (k = 0; k < NCHILD; k++) {
		pid[k] = fork();
		CHECK(pid[k] >= 0);
		if (pid[k] == 0)
			child(k, rx.fd[k], rep);
	}
	for (k = 0; k < NCHILD; k++)
		t_wait_child_ok(pid[k]);

	/* The stop vector is the lowest: whatever the children posted is
	 * delivered before it, so the counts are final after this. */
	stop_idx = uintr_register_sender(rx.fd[2], 0);
	CHECK(stop_idx >= 0);
	lt_rx_stop(&rx, stop_idx);

	for (k = 0; k < NCHILD; k++) {
		unsigned long long d, seen_d = rep->seen_deliveries[k];

		v = 11 + (unsigned int)k;
		d = lt_count(v) - SYNC_SENDS;
		if (d != seen_d)
			CHECK_EQ(d, seen_d + 1);
		CHECK(d <= BURST + 1);
		CHECK_EQ(atomic_load(&lt_c->seen[v]), BURST + 1);
	}
	for (v = 0; v < UINTR_MAX_VECTORS; v++)
		if (v != 11 && v != 12 && v != STOP_VECTOR)
			CHECK_EQ(lt_count(v), 0);
	CHECK_EQ(atomic_load(&lt_c->wrong_thread), 0);
	printf("deliveries of %d + 1 sends: %llu, %llu\n", BURST,
	       lt_count(11) - SYNC_SENDS, lt_count(12) - SYNC_SENDS);
	return T_PASS;
}
