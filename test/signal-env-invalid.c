/*
 * The environment the library reads is validated, and a bad value is
 * named where the user sees it (uintr(7) ENVIRONMENT; issue 18):
 *   - UINTR_SIGNAL: a value that is not a real-time signal number -- "abc",
 *     "0", "40x", "", a standard signal, one past SIGRTMAX -- makes
 *     uintr_register_handler fail with EINVAL, every time, and one line on
 *     stderr names the variable, the value and why, however many calls
 *     fail;
 *   - UINTR_WAIT_SPIN_NS: not a number, negative, beyond 10 s or out of
 *     range: registration works (with the default), and one line names it;
 *     "0" and "30000" are fine and silent;
 *   - UINTR_DEBUG: anything but 0 or 1 is named in one line;
 *   - uintrstat shows the bad variables a process started with, and what
 *     they do.
 * Each value is tried in its own child process (the choice is made once
 * per process); the parent, without the variables, registers fine.
 */
#include "helpers-stderr.h"

static void noop(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	(void)vector;
}

static int bad_signal(void)
{
	CHECK_ERR(uintr_register_handler(noop, 0), EINVAL);
	CHECK_ERR(uintr_register_handler(noop, 0), EINVAL);
	CHECK_ERR(uintr_notification_signal(), EINVAL);
	CHECK_ERR(uintr_wait(0), EOPNOTSUPP); /* nothing was registered */
	return T_PASS;
}

static int registers(void)
{
	CHECK(uintr_register_handler(noop, 0) == 0);
	CHECK(uintr_unregister_handler(0) == 0);
	CHECK(uintr_register_handler(noop, 0) == 0);
	CHECK(uintr_unregister_handler(0) == 0);
	return T_PASS;
}

static void try_signal(const char *value, const char *why)
{
	char out[4096], want[256];

	ts_run_child(bad_signal, "UINTR_SIGNAL", value, out, sizeof(out));
	snprintf(want, sizeof(want), "libuintr: UINTR_SIGNAL=%s: %s; uintr_register_handler, "
		 "uintr_register_sender and uintr_notification_signal fail with EINVAL", value, why);
	CHECK_EQ(ts_count(out, want), 1);
	CHECK_EQ(ts_count(out, "libuintr"), 1);
}

static void try_spin(const char *value, const char *why)
{
	char out[4096], want[256];

	ts_run_child(registers, "UINTR_WAIT_SPIN_NS", value, out, sizeof(out));
	if (!why) {
		CHECK_EQ(ts_count(out, "libuintr"), 0);
		return;
	}
	snprintf(want, sizeof(want), "libuintr: UINTR_WAIT_SPIN_NS=%s: %s; uintr_wait polls for "
		 "the default 30000 ns", value, why);
	CHECK_EQ(ts_count(out, want), 1);
	CHECK_EQ(ts_count(out, "libuintr"), 1);
}

/* Re-executed with bad variables: uintrstat on itself names them. */
static int uintrstat_child(const char *argv0)
{
	char out[8192], want[256];

	CHECK_ERR(uintr_register_handler(noop, 0), EINVAL);
	CHECK(ts_uintrstat(argv0, out, sizeof(out)) == 0);
	fputs(out, stderr);
	snprintf(want, sizeof(want), "pid %d (", (int)getpid());
	CHECK(strstr(out, want) != NULL);
	CHECK(strstr(out, "  environment: UINTR_SIGNAL=abc: not a decimal signal number; "
			  "registration fails with EINVAL\n") != NULL);
	CHECK(strstr(out, "  environment: UINTR_WAIT_SPIN_NS=5us: not a decimal number of "
			  "nanoseconds; ignored: uintr_wait polls 30000 ns\n") != NULL);
	CHECK(strstr(out, "  environment: UINTR_DEBUG=yes: not 0 or 1; ignored: debug messages "
			  "off\n") != NULL);
	CHECK(strstr(out, "(no receivers)") != NULL);
	return T_PASS;
}

int main(int argc, char **argv)
{
	char past_max[16], out[4096], range[128];
	pid_t pid;

	if (argc == 2 && !strcmp(argv[1], "uintrstat-child"))
		return uintrstat_child(argv[0]);
	CHECK(unsetenv("UINTR_SIGNAL") == 0);
	CHECK(unsetenv("UINTR_WAIT_SPIN_NS") == 0);
	snprintf(past_max, sizeof(past_max), "%d", SIGRTMAX + 1);
	snprintf(range, sizeof(range), "not a real-time signal: the range is %d (SIGRTMIN) to %d "
		 "(SIGRTMAX)", SIGRTMIN, SIGRTMAX);
	try_signal("abc", "not a decimal signal number");
	try_signal("40x", "not a decimal signal number");
	try_signal("0", range);
	try_signal("10", range); /* SIGUSR1: not a real-time signal */
	try_signal(past_max, range);

	try_spin("abc", "not a decimal number of nanoseconds");
	try_spin("-5", "not a decimal number of nanoseconds");
	try_spin("30us", "not a decimal number of nanoseconds");
	try_spin("20000000000", "more than 10000000000 ns (10 s)");
	try_spin("99999999999999999999", "more than 10000000000 ns (10 s)");
	try_spin("0", NULL);
	try_spin("30000", NULL);

	ts_run_child(registers, "UINTR_DEBUG", "yes", out, sizeof(out));
	CHECK_EQ(ts_count(out, "libuintr: UINTR_DEBUG=yes: not 0 or 1; debug messages stay off"), 1);
	CHECK_EQ(ts_count(out, "libuintr"), 1);

	/* /proc/PID/environ holds what a process was started with: exec. */
	if (ts_native()) {
		pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			setenv("UINTR_SIGNAL", "abc", 1);
			setenv("UINTR_WAIT_SPIN_NS", "5us", 1);
			setenv("UINTR_DEBUG", "yes", 1);
			execl(argv[0], argv[0], "uintrstat-child", (char *)NULL);
			_exit(T_FAIL);
		}
		t_wait_child_ok(pid);
	}

	CHECK(uintr_register_handler(noop, 0) == 0);
	CHECK_EQ(uintr_notification_signal(), SIGRTMAX - 7);
	CHECK(uintr_unregister_handler(0) == 0);
	return T_PASS;
}
