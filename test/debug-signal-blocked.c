/*
 * A receiver that blocks every signal gets no interrupt while it runs
 * (uintr(7): a notification is a signal), and the library says so where a
 * user looks (issue 18):
 *   - uintr_read_state: UINTR_STATE_SIGNAL_BLOCKED in `blocked` exactly
 *     while the thread blocks the notification signal; UINTR_STATE_SIGNAL_LOST
 *     once the program sets that signal to SIG_IGN;
 *   - uintrstat: "active,signal-blocked" / "active,signal-lost" and a line
 *     that explains it;
 *   - UINTR_DEBUG=1: one line on stderr per reason, however many calls
 *     notice it (uintr_register_handler, uintr_stui), naming the signal;
 *     nothing without UINTR_DEBUG.
 * The posts made while blocked are delivered exactly once on unblocking.
 */
#include "helpers-stderr.h"

static _Atomic int handled;
static const char *g_argv0;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	(void)vector;
	atomic_fetch_add(&handled, 1);
}

static int state_blocked(void)
{
	struct uintr_state st;

	CHECK(uintr_read_state(&st) == 0);
	return st.blocked;
}

/* Blocks all signals, registers, posts to itself three times while running. */
static int blocked_receiver(void)
{
	char out[8192], want[128];
	sigset_t all;
	int fd, idx, i;

	sigfillset(&all);
	CHECK(pthread_sigmask(SIG_BLOCK, &all, NULL) == 0);
	CHECK(uintr_register_handler(handler, 0) == 0);
	CHECK_EQ(state_blocked(), UINTR_STATE_SIGNAL_BLOCKED);
	fd = uintr_create_fd(3, 0);
	CHECK(fd >= 0);
	idx = uintr_register_sender(fd, 0);
	CHECK(idx >= 0);
	uintr_stui();
	uintr_stui();
	for (i = 0; i < 3; i++) {
		uintr_senduipi((unsigned long long)idx);
		getppid(); /* a pending unblocked signal would be taken here */
	}
	CHECK_EQ(handled, 0);
	CHECK_EQ(state_blocked(), UINTR_STATE_SIGNAL_BLOCKED);
	if (ts_native()) {
		CHECK(ts_uintrstat(g_argv0, out, sizeof(out)) == 0);
		fputs(out, stdout);
		snprintf(want, sizeof(want), "  %-8d %-20s %-20s %12d %13d %9d active,signal-blocked\n",
			 (int)t_gettid(), "3", "3", 0, 0, 0);
		CHECK(strstr(out, want) != NULL);
		snprintf(want, sizeof(want), "signal-blocked: the thread blocks signal %d,",
			 uintr_notification_signal());
		CHECK(strstr(out, want) != NULL);
	}
	CHECK(pthread_sigmask(SIG_UNBLOCK, &all, NULL) == 0);
	CHECK_EQ(handled, 1);
	CHECK_EQ(state_blocked(), 0);
	return T_PASS;
}

/* The program takes the notification signal away: SIG_IGN. */
static int lost_receiver(void)
{
	char out[8192], want[128];

	CHECK(uintr_register_handler(handler, 0) == 0);
	CHECK_EQ(state_blocked(), 0);
	CHECK(signal(uintr_notification_signal(), SIG_IGN) != SIG_ERR);
	CHECK_EQ(state_blocked(), UINTR_STATE_SIGNAL_LOST);
	uintr_stui();
	uintr_stui();
	if (ts_native()) {
		CHECK(ts_uintrstat(g_argv0, out, sizeof(out)) == 0);
		fputs(out, stdout);
		snprintf(want, sizeof(want), " active,signal-lost\n");
		CHECK(strstr(out, want) != NULL);
		CHECK(strstr(out, "signal-lost: signal ") != NULL);
	}
	return T_PASS;
}

int main(int argc, char **argv)
{
	char out[8192], want[160];
	int signo;

	(void)argc;
	g_argv0 = argv[0];
	/* Not uintr_notification_signal(): the library would set up here,
	 * and read UINTR_DEBUG, before the children set it. */
	CHECK(getenv("UINTR_SIGNAL") == NULL);
	signo = SIGRTMAX - 7;
	snprintf(want, sizeof(want), "blocks signal %d (SIGRTMAX-7), the notification signal: "
		 "while it runs it gets no interrupt", signo);

	ts_run_child(blocked_receiver, "UINTR_DEBUG", "1", out, sizeof(out));
	CHECK_EQ(ts_count(out, "libuintr: "), 1);
	CHECK_EQ(ts_count(out, want), 1);
	CHECK(strstr(out, "(at uintr_register_handler)") != NULL);

	ts_run_child(blocked_receiver, "UINTR_DEBUG", NULL, out, sizeof(out));
	CHECK_EQ(ts_count(out, "libuintr"), 0);
	ts_run_child(blocked_receiver, "UINTR_DEBUG", "0", out, sizeof(out));
	CHECK_EQ(ts_count(out, "libuintr"), 0);

	ts_run_child(lost_receiver, "UINTR_DEBUG", "1", out, sizeof(out));
	CHECK_EQ(ts_count(out, "libuintr: "), 1);
	snprintf(want, sizeof(want), "libuintr: signal %d (SIGRTMAX-7), the notification signal, "
		 "no longer runs libuintr's handler", signo);
	CHECK_EQ(ts_count(out, want), 1);
	ts_run_child(lost_receiver, "UINTR_DEBUG", NULL, out, sizeof(out));
	CHECK_EQ(ts_count(out, "libuintr"), 0);
	return T_PASS;
}
