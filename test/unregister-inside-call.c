/*
 * A receiver unregistered by a handler that runs inside a library call on
 * its own thread (reference 2.2, 8: lifetime).  The call below the handler
 * still holds the receiver; it must neither touch freed memory (ASan
 * checks this in make check-sanitize) nor wait for a receiver that is gone.
 *
 *  1. uintr_wait delivers vector 3 itself; the user's handler unregisters.
 *     uintr_wait returns -1/EINTR, the handler ran exactly once, the
 *     receiver is gone, and once the sender unregisters no mapping of the
 *     receiver's UPID is left in the process (the retired receiver was
 *     freed when uintr_wait returned, not leaked).
 *  2. uintr_wait is asleep in its futex (no sender at all); a SIGUSR1
 *     handler of the program unregisters the receiver.  uintr_wait returns
 *     -1/EINTR instead of sleeping for ever on a dead receiver, and the
 *     UPID mapping is gone.
 *  3. As 2, but the SIGUSR1 handler registers a new receiver right after
 *     unregistering: uintr_wait still returns (its receiver is gone), and
 *     the new receiver is the thread's, usable at once.
 */
#include <sys/mman.h>

#include "helpers-delivery.h"

static _Atomic int fd3 = -1, waiting, handled;
static _Atomic int wait_ret = 99, wait_errno, reregister;
static _Atomic pid_t receiver_tid;

/* Mappings of receivers' UPID pages in this process (/proc/self/maps). */
static int upid_mappings(void)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	CHECK(f != NULL);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "memfd:uintr-upid"))
			n++;
	fclose(f);
	return n;
}

static void handler_unregisters(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	td_record((int)vector);
	atomic_fetch_add(&handled, 1);
	if (uintr_unregister_handler(0) != 0)
		td_fail_async("unregister from the handler failed\n");
}

static void handler_never(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	(void)vector;
	td_fail_async("no interrupt was sent to this receiver\n");
}

static void on_sigusr1(int signo)
{
	(void)signo;
	if (uintr_unregister_handler(0) != 0)
		td_fail_async("unregister from SIGUSR1 failed\n");
	if (reregister && uintr_register_handler(handler_never, 0) != 0)
		td_fail_async("register from SIGUSR1 failed\n");
}

static void run_wait(void)
{
	errno = 0;
	waiting = 1;
	wait_ret = uintr_wait(0);
	wait_errno = errno;
	waiting = 0;
}

/* Case 1: the receiver thread. */
static void *receiver_delivers(void *arg)
{
	struct uintr_state s;

	(void)arg;
	CHECK(uintr_register_handler(handler_unregisters, 0) == 0);
	CHECK_EQ(upid_mappings(), 1);
	fd3 = uintr_create_fd(3, 0);
	CHECK(fd3 >= 0);
	uintr_stui();
	run_wait();
	CHECK_EQ(wait_ret, -1);
	CHECK_EQ(wait_errno, EINTR);
	CHECK_EQ(handled, 1);
	TD_CHECK_EVENTS(3);
	CHECK(uintr_read_state(&s) == 0);
	CHECK_EQ(s.handler, 0);
	CHECK_ERR(uintr_wait(0), EOPNOTSUPP);
	CHECK_ERR(uintr_unregister_handler(0), EINVAL);
	return NULL;
}

static void case_handler_unregisters(void)
{
	pthread_t t = t_start(receiver_delivers, NULL);
	int idx;

	WAIT_UNTIL(fd3 >= 0);
	idx = uintr_register_sender(fd3, 0);
	CHECK(idx >= 0);
	WAIT_UNTIL(waiting);
	uintr_senduipi((unsigned long long)idx);
	t_join(t);
	CHECK_EQ(handled, 1);
	/* Still mapped by our sender entry only; then by nobody. */
	CHECK_EQ(upid_mappings(), 1);
	CHECK(uintr_unregister_sender(fd3, 0) == 0);
	CHECK_ERR(uintr_register_sender(fd3, 0), ESHUTDOWN);
	CHECK_EQ(upid_mappings(), 0);
	CHECK(close(fd3) == 0);
}

/* Cases 2 and 3: the receiver thread. */
static void *receiver_sleeps(void *arg)
{
	struct uintr_state s;

	(void)arg;
	receiver_tid = t_gettid();
	CHECK(uintr_register_handler(handler_never, 0) == 0);
	CHECK(uintr_set_wait_spin(0) == 0);
	uintr_stui();
	run_wait();
	CHECK_EQ(wait_ret, -1);
	CHECK_EQ(wait_errno, EINTR);
	CHECK(uintr_read_state(&s) == 0);
	if (reregister) {
		/* The receiver SIGUSR1 made: ours, working, nothing pending. */
		CHECK(s.handler == (unsigned long long)(uintptr_t)handler_never);
		CHECK_EQ(upid_mappings(), 1);
		CHECK_EQ(uintr_poll(), 0);
		CHECK(uintr_unregister_handler(0) == 0);
	} else {
		CHECK_EQ(s.handler, 0);
		CHECK_ERR(uintr_unregister_handler(0), EINVAL);
	}
	CHECK_EQ(upid_mappings(), 0);
	return NULL;
}

static void case_signal_unregisters(int and_register)
{
	pthread_t t;

	reregister = and_register;
	receiver_tid = 0;
	t = t_start(receiver_sleeps, NULL);
	WAIT_UNTIL(waiting && receiver_tid);
	/* Asleep in the futex, most likely; anywhere in uintr_wait must do. */
	WAIT_UNTIL(t_thread_state(receiver_tid) == 'S');
	CHECK(pthread_kill(t, SIGUSR1) == 0);
	t_join(t);
}

int main(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigusr1;
	sa.sa_flags = SA_RESTART;
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);

	case_handler_unregisters();
	if (T_TSAN) {
		/* TSan holds the program's signal handler back until the thread
		 * enters its runtime: never, inside a raw futex syscall. */
		fprintf(stderr, "cases 2-3 skipped under TSan\n");
		return T_PASS;
	}
	case_signal_unregisters(0);
	case_signal_unregisters(1);
	return T_PASS;
}
