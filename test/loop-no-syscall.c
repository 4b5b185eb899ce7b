/*
 * System calls of a send to the event-loop state (uintr_loop_fd(3), issue
 * 15: "a send to a busy loop makes no syscall; a send to a blocked loop at
 * most one").  A sender thread puts itself under a seccomp filter that
 * traps (SIGSYS, the call not made) every system call but exit and
 * rt_sigreturn, and counts the traps:
 *   - loop blocked in epoll_wait: the first post makes exactly one system
 *     call, write (to the eventfd); 100 more posts of that vector and of
 *     another make none (ON is set).  The trapped write did not happen, so
 *     the main thread writes the loop fd in its place; the loop then
 *     delivers both vectors, highest first.  Three rounds.
 *   - loop busy in uintr_set_polling(1): 1000 posts of each of three
 *     vectors make none; leaving polling delivers each once.
 *   - loop busy in its handler (inside uintr_loop_drain): 1000 posts of two
 *     vectors make none; the same drain delivers them after the handler
 *     returns, without another wake-up.
 * A probe system call under the filter shows the trap works.  Skips (77)
 * where seccomp filters are unavailable (qemu-user), and under
 * ThreadSanitizer, whose runtime makes system calls of its own.
 */
#include "helpers-loop.h"

#include "helpers-seccomp.h"

#define ROUNDS 3

static int fds[8], lfd;
static pid_t loop_tid;
static _Atomic int loop_ready, asleep, polling_on, polling_off_req, hold, in_handler, release;
static _Atomic int sigsys_count, sigsys_nr = -1, bad_nr, probe_traps = -1;
/* The sender's progress: a phase number main waits on. */
static _Atomic int phase, go;
static _Atomic unsigned long long wakeups;
static char skip_reason[128];

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (atomic_load(&sigsys_nr) >= 0 && si->si_syscall != atomic_load(&sigsys_nr))
		atomic_store(&bad_nr, si->si_syscall);
	atomic_store(&sigsys_nr, si->si_syscall);
	atomic_fetch_add(&sigsys_count, 1);
}

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	tl_handler(frame, vector);
	if (vector == 7 && atomic_load(&hold)) {
		atomic_store(&in_handler, 1);
		while (!atomic_load(&release))
			atomic_signal_fence(memory_order_seq_cst);
		atomic_store(&in_handler, 0);
	}
}

static void *loop_thread(void *arg)
{
	struct epoll_event ev;
	int ep, v;

	(void)arg;
	loop_tid = t_gettid();
	CHECK(uintr_register_handler(handler, 0) == 0);
	for (v = 5; v <= 7; v++) {
		fds[v] = uintr_create_fd((unsigned long long)v, 0);
		CHECK(fds[v] >= 0);
	}
	lfd = uintr_loop_fd(0);
	CHECK(lfd >= 0);
	ep = tl_epoll_with(lfd);
	uintr_stui();
	atomic_store(&loop_ready, 1);
	for (;;) {
		if (atomic_load(&polling_off_req) == 1) {
			CHECK(uintr_set_polling(1) == 0);
			atomic_store(&polling_on, 1);
			WAIT_UNTIL(atomic_load(&polling_off_req) == 2);
			CHECK(uintr_set_polling(0) == 0);
			atomic_store(&polling_on, 2);
			WAIT_UNTIL(atomic_load(&polling_off_req) == 0);
			continue;
		}
		atomic_store(&asleep, 1);
		CHECK_EQ(tl_epoll_wait(ep, &ev, 1, -1), 1);
		atomic_store(&asleep, 0);
		atomic_fetch_add(&wakeups, 1);
		CHECK(uintr_loop_drain(0) >= 0);
	}
	return NULL;
}

static int install_filter(void)
{
#ifdef T_AUDIT_ARCH
	struct sock_filter code[] = {
		T_SECCOMP_PROLOGUE(SECCOMP_RET_TRAP),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit_group, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigreturn, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	if (t_seccomp_install(code, (unsigned short)(sizeof(code) / sizeof(code[0]))) != 0) {
		snprintf(skip_reason, sizeof(skip_reason), "seccomp filter: %s", strerror(errno));
		return -1;
	}
	return 0;
#else
	snprintf(skip_reason, sizeof(skip_reason), "no seccomp arch constant here");
	return -1;
#endif
}

/* Under the filter: no system call but by the library.  Spin on `go`. */
static void step(int p)
{
	atomic_store(&phase, p);
	while (atomic_load(&go) < p)
		atomic_signal_fence(memory_order_seq_cst);
}

static void *sender(void *arg)
{
	struct sigaction sa;
	int idx[8], v, r, i;

	(void)arg;
	for (v = 5; v <= 7; v++)
		CHECK((idx[v] = uintr_register_sender(fds[v], 0)) >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGSYS, &sa, NULL) == 0);
	if (install_filter() != 0) {
		atomic_store(&phase, -1);
		return NULL;
	}
	syscall(SYS_getppid); /* probe: must trap */
	probe_traps = sigsys_count;
	sigsys_count = 0;
	sigsys_nr = -1;

	/* Blocked loop: one system call, then none. */
	for (r = 0; r < ROUNDS; r++) {
		step(1 + 2 * r); /* main: the loop sleeps */
		uintr_senduipi((unsigned long long)idx[5]);
		for (i = 0; i < 100; i++) {
			uintr_senduipi((unsigned long long)idx[5]);
			uintr_senduipi((unsigned long long)idx[6]);
		}
		step(2 + 2 * r); /* main: counted, completed the write */
	}
	/* Busy in uintr_set_polling(1). */
	step(10);
	for (i = 0; i < 1000; i++)
		for (v = 5; v <= 7; v++)
			uintr_senduipi((unsigned long long)idx[v]);
	/* Busy in the handler of vector 7. */
	step(11);
	for (i = 0; i < 1000; i++) {
		uintr_senduipi((unsigned long long)idx[5]);
		uintr_senduipi((unsigned long long)idx[6]);
	}
	atomic_store(&phase, 12);
	/* Thread exit would make system calls: stay until the process exits. */
	for (;;)
		atomic_signal_fence(memory_order_seq_cst);
	return NULL;
}

static void wait_asleep(void)
{
	WAIT_UNTIL(atomic_load(&asleep) && t_thread_state(loop_tid) == 'S');
}

/* Let the sender go on to phase p, then wait until it reaches p + 1. */
static void advance(int p)
{
	atomic_store(&go, p);
	WAIT_UNTIL(atomic_load(&phase) == p + 1 || atomic_load(&phase) == 12);
}

int main(void)
{
	unsigned long long one = 1, w;
	int r, main_idx7;

	if (T_TSAN) {
		printf("skip: ThreadSanitizer makes system calls in the sender\n");
		return T_SKIP;
	}
	t_start(loop_thread, NULL); /* never joined either */
	WAIT_UNTIL(atomic_load(&loop_ready));
	main_idx7 = uintr_register_sender(fds[7], 0);
	CHECK(main_idx7 >= 0);
	t_start(sender, NULL);
	WAIT_UNTIL(atomic_load(&phase) != 0);
	if (atomic_load(&phase) < 0) {
		printf("skip: %s\n", skip_reason);
		return T_SKIP;
	}
	CHECK_EQ(probe_traps, 1);

	for (r = 0; r < ROUNDS; r++) {
		wait_asleep();
		w = atomic_load(&wakeups);
		advance(1 + 2 * r);
		CHECK_EQ(sigsys_count, r + 1);
		CHECK_EQ(sigsys_nr, __NR_write);
		CHECK_EQ(bad_nr, 0);
		/* The trapped write never reached the eventfd. */
		CHECK_EQ(atomic_load(&wakeups), w);
		CHECK_EQ(tl_total, 2 * r);
		CHECK(write(lfd, &one, sizeof(one)) == sizeof(one));
		WAIT_UNTIL(atomic_load(&tl_total) == 2ull * (r + 1));
		CHECK_EQ(tl_order[2 * r], 6);
		CHECK_EQ(tl_order[2 * r + 1], 5);
		CHECK_EQ(atomic_load(&wakeups), w + 1);
		atomic_store(&go, 2 + 2 * r);
	}

	/* Busy: polling. */
	atomic_store(&polling_off_req, 1);
	CHECK(write(lfd, &one, sizeof(one)) == sizeof(one)); /* wake it to see that */
	WAIT_UNTIL(atomic_load(&polling_on) == 1);
	advance(10);
	CHECK_EQ(sigsys_count, ROUNDS);
	atomic_store(&polling_off_req, 2);
	WAIT_UNTIL(atomic_load(&polling_on) == 2);
	CHECK_EQ(tl_total, 2 * ROUNDS + 3);
	CHECK_EQ(tl_count[5], ROUNDS + 1);
	CHECK_EQ(tl_count[6], ROUNDS + 1);
	CHECK_EQ(tl_count[7], 1);
	atomic_store(&polling_off_req, 0);

	/* Busy: in the handler of vector 7 (main's post wakes the loop). */
	wait_asleep();
	atomic_store(&hold, 1);
	uintr_senduipi((unsigned long long)main_idx7);
	WAIT_UNTIL(atomic_load(&in_handler));
	w = atomic_load(&wakeups);
	atomic_store(&go, 11);
	WAIT_UNTIL(atomic_load(&phase) == 12);
	CHECK_EQ(sigsys_count, ROUNDS);
	atomic_store(&hold, 0);
	atomic_store(&release, 1);
	WAIT_UNTIL(atomic_load(&tl_total) == 2 * ROUNDS + 6);
	CHECK_EQ(tl_count[7], 2);
	CHECK_EQ(tl_count[6], ROUNDS + 2);
	CHECK_EQ(tl_count[5], ROUNDS + 2);
	CHECK_EQ(tl_order[2 * ROUNDS + 4], 6);
	CHECK_EQ(tl_order[2 * ROUNDS + 5], 5);
	wait_asleep();
	CHECK_EQ(atomic_load(&wakeups), w);
	CHECK_EQ(sigsys_count, ROUNDS);
	return T_PASS;
}
