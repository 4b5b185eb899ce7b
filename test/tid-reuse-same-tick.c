/*
 * Issue item 7 (a sender never signals a thread that is not the live
 * registered receiver), reference 2.7 (after the receiver thread exits, new
 * uintr_register_sender -> ESHUTDOWN).  As tid-reuse, but the thread that
 * gets the dead receiver's tid starts within the same clock tick as the
 * receiver did, so the two have the same start time in /proc: the library
 * must still tell them apart.  A receiver thread registers, creates a
 * vector fd and leaves with a raw SYS_exit (no library hook); a new thread
 * gets its tid at once (by /proc/sys/kernel/ns_last_pid, which needs
 * privilege: skipped without it; rounds are repeated until the start times
 * match, skipped if they never do).  On the new thread, registering as a
 * sender on the dead receiver's fd must fail ESHUTDOWN; if it did not, its
 * send must at least not reach the thread (no notification processed).
 */
#include "helpers-lifetime.h"

#include <sys/resource.h>

#define V 10
#define ROUNDS 1000

static int fd;
static _Atomic pid_t rx_tid;
static _Atomic unsigned long long rx_start;

static void *receiver(void *arg)
{
	static const unsigned int vec[] = { V };

	(void)arg;
	lt_become_receiver(1, vec, &fd);
	uintr_stui();
	rx_start = lt_thread_start_time(lt_tid);
	rx_tid = lt_tid;
	syscall(SYS_exit, 0); /* no pthread cleanup, no library hook */
	return NULL;
}

struct probe {
	pid_t target;
	_Atomic pid_t tid;
	_Atomic int same;
	int reg, err;
	unsigned long long notifications;
};

static void *probe_main(void *arg)
{
	struct probe *p = arg;
	struct uintr_stats before, after;

	if (t_gettid() != p->target || lt_thread_start_time(p->target) != rx_start) {
		p->tid = t_gettid();
		return NULL;
	}
	p->same = 1;
	before = lt_process_stats();
	errno = 0;
	p->reg = uintr_register_sender(fd, 0);
	p->err = errno;
	if (p->reg >= 0) {
		uintr_senduipi((unsigned long long)p->reg);
		getppid();
	}
	after = lt_process_stats();
	p->notifications = after.notifications - before.notifications;
	p->tid = t_gettid();
	return NULL;
}

static int write_last_pid(pid_t pid)
{
	FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
	int ok;

	if (!f)
		return 0;
	ok = fprintf(f, "%d", (int)pid) > 0;
	return fclose(f) == 0 && ok;
}

/*
 * Start times are in clock ticks of CLOCK_BOOTTIME.  Starting a round just
 * after a tick begins leaves the whole tick for the receiver's life and
 * the reuse; whether they shared it is then checked, not assumed.
 */
static void wait_tick_start(void)
{
	long hz = sysconf(_SC_CLK_TCK);
	long long period = 1000000000ll / (hz > 0 ? hz : 100);
	struct timespec ts;

	do
		CHECK(clock_gettime(CLOCK_BOOTTIME, &ts) == 0);
	while ((ts.tv_sec * 1000000000ll + ts.tv_nsec) % period > period / 20);
}

static pid_t read_last_pid(void)
{
	FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "r");
	int v = 0;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 0;
		fclose(f);
	}
	return (pid_t)v;
}

int main(void)
{
	struct probe p;
	struct rlimit rl;
	void *rx_stack;
	int round;

	if (T_TSAN) {
		/* TSan keeps waiting for the thread that left with SYS_exit. */
		printf("skip: a raw SYS_exit thread cannot be joined under ThreadSanitizer\n");
		return T_SKIP;
	}
	lt_counts_init();
	if (!write_last_pid(read_last_pid())) {
		printf("skip: /proc/sys/kernel/ns_last_pid not writable\n");
		return T_SKIP;
	}
	/* Each round leaves the library a few fds of the vanished receiver. */
	CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	for (round = 0; round < ROUNDS; round++) {
		rx_tid = 0;
		wait_tick_start();
		t_join(lt_start_own_stack(receiver, NULL, &rx_stack));
		CHECK(munmap(rx_stack, LT_STACK) == 0);
		CHECK(rx_tid != 0);
		WAIT_UNTIL(lt_thread_start_time(rx_tid) == 0); /* tid free */

		memset(&p, 0, sizeof(p));
		p.target = rx_tid;
		CHECK(write_last_pid(rx_tid - 1));
		t_join(t_start(probe_main, &p));
		if (p.same) {
			if (p.reg >= 0)
				fprintf(stderr, "tid %d reused in the receiver's clock tick: "
						"register_sender on the dead receiver's fd returned "
						"%d (send -> %llu notifications here), expected "
						"ESHUTDOWN\n", (int)p.target, p.reg,
					p.notifications);
			CHECK_EQ(p.notifications, 0);
			CHECK_EQ(p.reg, -1);
			CHECK_EQ(p.err, ESHUTDOWN);
			return T_PASS;
		}
		close(fd);
	}
	printf("skip: no tid reuse within one clock tick in %d rounds\n", ROUNDS);
	return T_SKIP;
}
