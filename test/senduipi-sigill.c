/*
 * SENDUIPI without a sender table is #UD (reference 2.4, 2.5, 5.1: TT[0] =
 * 0 -> SIGILL): uintr_senduipi raises SIGILL with si_code ILL_ILLOPN on the
 * calling thread, whatever the index, when the thread never registered a
 * sender (also after failed registrations, in a receiver thread, and while
 * another thread has entries) and again after its last entry was
 * unregistered.
 */
#include "helpers-errno.h"

#include <sys/eventfd.h>

static struct te_rx rx;

static void expect_sigill(unsigned long long idx)
{
	int code = -1;

	CHECK_EQ(t_catch_fault(t_send_index, (void *)(uintptr_t)idx, &code), SIGILL);
#if defined(__x86_64__)
	CHECK_EQ(code, ILL_ILLOPN); /* #UD; elsewhere the platform's code */
#else
	(void)code;
#endif
}

static void expect_sigill_any_index(void)
{
	expect_sigill(0);
	expect_sigill(1);
	expect_sigill(255);
	expect_sigill(256);
	expect_sigill(1ull << 40);
	expect_sigill(~0ull);
}

static void *plain_thread(void *arg)
{
	(void)arg;
	/* main holds entries; this thread has none. */
	expect_sigill_any_index();
	return NULL;
}

static void *receiver_thread(void *arg)
{
	int fd;

	(void)arg;
	CHECK_EQ(uintr_register_handler(te_handler, 0), 0);
	fd = uintr_create_fd(2, 0);
	CHECK(fd >= 0);
	uintr_stui();
	/* A receiver is no sender. */
	expect_sigill_any_index();
	CHECK(close(fd) == 0);
	CHECK_EQ(uintr_unregister_handler(0), 0);
	return NULL;
}

int main(void)
{
	int efd, dead_fd;
	struct te_rx dead;

	/* Never registered. */
	expect_sigill_any_index();
	te_in_thread(receiver_thread, NULL);

	/* Failed registrations leave no table behind. */
	te_rx_start(&rx, 20, 3);
	te_rx_start(&dead, 30, 1);
	dead_fd = dead.fd[0];
	te_rx_unregister(&dead);
	efd = eventfd(0, EFD_CLOEXEC);
	CHECK(efd >= 0);
	CHECK_ERR(uintr_register_sender(efd, 0), EOPNOTSUPP);
	CHECK_ERR(uintr_register_sender(-1, 0), EBADF);
	CHECK_ERR(uintr_register_sender(rx.fd[0], 1), EINVAL);
	CHECK_ERR(uintr_register_sender(dead_fd, 0), ESHUTDOWN);
	CHECK_ERR(uintr_unregister_sender(rx.fd[0], 0), EINVAL);
	expect_sigill_any_index();

	/* With entries: another thread still has no table. */
	CHECK_EQ(uintr_register_sender(rx.fd[0], 0), 0);
	CHECK_EQ(uintr_register_sender(rx.fd[1], 0), 1);
	te_in_thread(plain_thread, NULL);

	/* Unregister the last entry (in two steps): #UD again. */
	CHECK_EQ(uintr_unregister_sender(rx.fd[0], 0), 0);
	CHECK_EQ(uintr_unregister_sender(rx.fd[1], 0), 0);
	expect_sigill_any_index();

	/* And once more after a single register / unregister. */
	CHECK_EQ(uintr_register_sender(rx.fd[2], 0), 0);
	uintr_senduipi(0); /* valid: no fault */
	CHECK_EQ(uintr_unregister_sender(rx.fd[2], 0), 0);
	expect_sigill_any_index();

	/* Nothing reached the receiver but the one valid post. */
	te_rx_command(&rx, 's');
	CHECK_EQ(rx.uirr, 1ull << 22);
	CHECK(close(efd) == 0);
	te_rx_stop(&dead);
	te_rx_stop(&rx);
	CHECK_EQ(te_total, 0);
	return T_PASS;
}
