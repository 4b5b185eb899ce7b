/*
 * UINTR_SIGNAL (uintr.h: the environment picks the notification signal
 * before the first registration; README: the library owns one real-time
 * signal): a value that is not a real-time signal number -- "abc", "0",
 * "40x", a standard signal, one past SIGRTMAX -- makes
 * uintr_register_handler fail with EINVAL, every time.  Each value is
 * tried in its own child process (the choice is made once per process);
 * the parent, without the variable, registers fine.
 */
#include "helpers-delivery.h"

static void noop(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	(void)vector;
}

static void try_value(const char *value)
{
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		CHECK(setenv("UINTR_SIGNAL", value, 1) == 0);
		CHECK_ERR(uintr_register_handler(noop, 0), EINVAL);
		CHECK_ERR(uintr_register_handler(noop, 0), EINVAL);
		CHECK_ERR(uintr_wait(0), EOPNOTSUPP); /* nothing was registered */
		_exit(T_PASS);
	}
	t_wait_child_ok(pid);
}

int main(void)
{
	char past_max[16];

	CHECK(unsetenv("UINTR_SIGNAL") == 0);
	snprintf(past_max, sizeof(past_max), "%d", SIGRTMAX + 1);
	try_value("abc");
	try_value("0");
	try_value("40x");
	try_value("10"); /* SIGUSR1: not a real-time signal */
	try_value(past_max);

	CHECK(uintr_register_handler(noop, 0) == 0);
	CHECK_EQ(uintr_notification_signal(), SIGRTMAX - 7);
	CHECK(uintr_unregister_handler(0) == 0);
	return T_PASS;
}
