/*
 * uintr_wait sleeps TASK_INTERRUPTIBLE (reference 2.6): when the handler
 * of another signal runs during the wait, uintr_wait returns -1/EINTR,
 * with nothing delivered (issue 17).  The receiver waits with no spin
 * phase; once it sleeps, the main thread sends SIGUSR1, whose handler
 * counts.  Done twice: a handler without SA_RESTART, and one with it
 * (the kernel does not restart a timed futex sleep after any handler;
 * qemu-user does after an SA_RESTART one, so that case is skipped under
 * a runner).  Then an interrupt still ends a wait exactly as before.
 */
#include "helpers.h"

static _Atomic int usr1_runs, waiting, returned, interrupts;
static _Atomic pid_t rx_tid;
static int fd = -1, result, result_errno;

static void on_usr1(int signo)
{
	(void)signo;
	atomic_fetch_add(&usr1_runs, 1);
}

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	(void)vector;
	atomic_fetch_add(&interrupts, 1);
}

static _Atomic int round_go;

static void *receiver(void *arg)
{
	int round, rounds = (int)(intptr_t)arg;

	CHECK(uintr_register_handler(handler, 0) == 0);
	CHECK(uintr_set_wait_spin(0) == 0);
	fd = uintr_create_fd(5, 0);
	CHECK(fd >= 0);
	uintr_stui();
	rx_tid = t_gettid();
	for (round = 0; round < rounds; round++) {
		WAIT_UNTIL(atomic_load(&round_go) == round + 1);
		atomic_store(&waiting, round + 1);
		result = uintr_wait(0);
		result_errno = errno;
		atomic_store(&returned, round + 1);
	}
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

/* One wait ended by SIGUSR1 installed with `flags`. */
static void interrupt_by_usr1(int round, int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
	atomic_store(&round_go, round);
	WAIT_UNTIL(atomic_load(&waiting) == round && t_thread_state(rx_tid) == 'S');
	CHECK_EQ(atomic_load(&returned), round - 1);
	CHECK(syscall(SYS_tgkill, getpid(), rx_tid, SIGUSR1) == 0);
	WAIT_UNTIL(atomic_load(&returned) == round);
	CHECK_EQ(result, -1);
	CHECK_EQ(result_errno, EINTR);
	CHECK_EQ(atomic_load(&usr1_runs), round);
	CHECK_EQ(atomic_load(&interrupts), 0);
}

int main(void)
{
	const char *runner = getenv("UINTR_TEST_RUNNER");
	int emulated = runner && *runner;
	int rounds = emulated ? 2 : 3, round = 1, idx;
	pthread_t rx = t_start(receiver, (void *)(intptr_t)rounds);

	interrupt_by_usr1(round++, 0);
	if (!emulated)
		interrupt_by_usr1(round++, SA_RESTART);
	/* An interrupt still ends a wait, after its handler. */
	atomic_store(&round_go, round);
	WAIT_UNTIL(atomic_load(&waiting) == round && t_thread_state(rx_tid) == 'S');
	CHECK((idx = uintr_register_sender(fd, 0)) >= 0);
	uintr_senduipi((unsigned long long)idx);
	WAIT_UNTIL(atomic_load(&returned) == round);
	CHECK_EQ(result, -1);
	CHECK_EQ(result_errno, EINTR);
	CHECK_EQ(atomic_load(&interrupts), 1);
	CHECK_EQ(atomic_load(&usr1_runs), round - 1);
	t_join(rx);
	return T_PASS;
}
