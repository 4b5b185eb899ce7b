/*
 * A receiver flooded by its senders keeps running its own code (issue:
 * hostile peers; reference 5.1 coalescing, 8).  Two sender threads and one
 * sender process post vectors 30, 31 and 32 to one receiver thread as fast
 * as they can, without waiting; the receiver (UIF = 1, never polling)
 * meanwhile does a fixed amount of its own work, 20 rounds of 1 000 000
 * loop iterations.  Only when it has finished do the senders stop.
 * Checks: the work completed while the flood went on (posts were made and
 * interrupts delivered during every round of it: the receiver was
 * interrupted, not starved); then one last post per vector, numbered, is
 * delivered and read by the handler (nothing lost); no vector delivered
 * more often than posted; notifications no more than posts; every
 * delivery on the receiver thread; no spurious notification.
 */
#include "helpers-lifetime.h"

#include <sys/prctl.h>

#define NSENDERS 3
#define ROUNDS 20
#define ROUND_WORK 1000000

static const unsigned int vecs[NSENDERS] = { 30, 31, 32 };

struct flood {
	_Atomic unsigned long long posts[NSENDERS];
	_Atomic int stop;
	_Atomic int started[NSENDERS];
	_Atomic int final_sent[NSENDERS];
};

static struct flood *fl;
static _Atomic int rx_ready, rx_done;
/* The receiver's own work done so far, published every 64 Ki iterations:
 * the main thread waits for it by progress, not by a total time (under
 * qemu the work takes some 40 s). */
static _Atomic unsigned long long rx_progress;
static int fds[NSENDERS];

static void flood(int k)
{
	int idx = uintr_register_sender(fds[k], 0);
	unsigned int v = vecs[k];

	CHECK(idx >= 0);
	atomic_store(&fl->started[k], 1);
	while (!atomic_load(&fl->stop)) {
		atomic_fetch_add(&fl->posts[k], 1);
		uintr_senduipi((unsigned long long)idx);
	}
	/* The last post, numbered: the handler must read this number. */
	atomic_store(&lt_c->seq[v], 1);
	atomic_fetch_add(&fl->posts[k], 1);
	uintr_senduipi((unsigned long long)idx);
	atomic_store(&fl->final_sent[k], 1);
	CHECK(uintr_unregister_sender(fds[k], 0) == 0);
}

static void *sender_thread(void *arg)
{
	flood((int)(intptr_t)arg);
	return NULL;
}

static unsigned long long total_posts(void)
{
	unsigned long long n = 0;
	int k;

	for (k = 0; k < NSENDERS; k++)
		n += atomic_load(&fl->posts[k]);
	return n;
}

static void *receiver(void *arg)
{
	volatile unsigned long long work = 0;
	int r, i, k;

	(void)arg;
	lt_become_receiver(NSENDERS, vecs, fds);
	uintr_stui();
	rx_ready = 1;
	for (k = 0; k < NSENDERS; k++)
		WAIT_UNTIL(atomic_load(&fl->started[k]));
	for (r = 0; r < ROUNDS; r++) {
		unsigned long long posts0 = total_posts();
		unsigned long long deliveries0 = atomic_load(&lt_c->total);

		for (i = 0; i < ROUND_WORK; i++) {
			work++;
			if ((i & 0xffff) == 0)
				atomic_store(&rx_progress, (unsigned long long)r * ROUND_WORK + i);
		}
		/* The round got done.  The flood goes on and interrupts us: a
		 * round can be shorter than a time slice of the senders on a
		 * loaded machine, so wait for both if they have not happened. */
		WAIT_UNTIL(total_posts() > posts0);
		WAIT_UNTIL(atomic_load(&lt_c->total) != deliveries0);
	}
	CHECK_EQ(work, (unsigned long long)ROUNDS * ROUND_WORK);
	rx_done = 1;
	/* Until every last post is delivered. */
	for (k = 0; k < NSENDERS; k++)
		WAIT_UNTIL(atomic_load(&fl->final_sent[k]) && atomic_load(&lt_c->seen[vecs[k]]) == 1);
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	unsigned long long posts = 0;
	struct uintr_stats ps;
	pthread_t rx, tx[NSENDERS - 1];
	pid_t pid, parent;
	int k;

	lt_counts_init();
	fl = mmap(NULL, sizeof(*fl), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(fl != MAP_FAILED);
	rx = t_start(receiver, NULL);
	WAIT_UNTIL(rx_ready);

	parent = getpid();
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		/* Never outlive a failed test: the flood would go on for ever. */
		CHECK(prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 && getppid() == parent);
		flood(NSENDERS - 1);
		exit(T_PASS);
	}
	for (k = 0; k < NSENDERS - 1; k++)
		tx[k] = t_start(sender_thread, (void *)(intptr_t)k);

	WAIT_PROGRESS(rx_done, atomic_load(&rx_progress));
	atomic_store(&fl->stop, 1);
	for (k = 0; k < NSENDERS - 1; k++)
		t_join(tx[k]);
	t_wait_child_ok(pid);
	t_join(rx);

	for (k = 0; k < NSENDERS; k++) {
		unsigned int v = vecs[k];

		CHECK_EQ(atomic_load(&lt_c->seen[v]), 1);
		CHECK(lt_count(v) <= atomic_load(&fl->posts[k]));
		posts += atomic_load(&fl->posts[k]);
	}
	CHECK_EQ(atomic_load(&lt_c->wrong_thread), 0);
	CHECK_EQ(atomic_load(&lt_c->bad_vector), 0);
	CHECK(uintr_get_stats(&ps, UINTR_STATS_PROCESS) == 0);
	CHECK_EQ(ps.spurious, 0);
	CHECK(ps.notifications <= posts);
	CHECK_EQ(ps.delivered, atomic_load(&lt_c->total));
	printf("%d rounds of work done under a flood of %llu posts: %llu deliveries, "
	       "%llu notifications\n", ROUNDS, posts, (unsigned long long)atomic_load(&lt_c->total),
	       (unsigned long long)ps.notifications);
	return T_PASS;
}
