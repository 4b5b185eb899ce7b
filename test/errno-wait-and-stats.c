/*
 * Errnos of uintr_wait (reference 2 "Common prologue", 2.6), of
 * uintr_read_state (4.4) and of uintr_get_stats (6.2 counters; helper
 * context "Errnos"): uintr_wait with flags -> EINVAL (also on a receiver,
 * without blocking and without consuming a pending interrupt), on a
 * non-receiver -> EOPNOTSUPP; uintr_read_state(NULL) -> EFAULT;
 * uintr_get_stats(NULL) -> EFAULT, unknown flags -> EINVAL, thread scope on
 * a non-receiver -> EOPNOTSUPP, process scope on a non-receiver works and
 * shows the process totals.
 */
#include "helpers-errno.h"

static void check_common_errors(void)
{
	struct uintr_stats st;

	CHECK_ERR(uintr_read_state(NULL), EFAULT);
	CHECK_ERR(uintr_get_stats(NULL, 0), EFAULT);
	CHECK_ERR(uintr_get_stats(NULL, UINTR_STATS_PROCESS), EFAULT);
	CHECK_ERR(uintr_get_stats(&st, 2), EINVAL);
	CHECK_ERR(uintr_get_stats(&st, UINTR_STATS_PROCESS | 2), EINVAL);
	CHECK_ERR(uintr_get_stats(&st, 0x80000000u), EINVAL);
	CHECK_ERR(uintr_get_stats(&st, ~0u), EINVAL);
	CHECK_ERR(uintr_wait(1), EINVAL);
	CHECK_ERR(uintr_wait(~0u), EINVAL);
}

static void check_non_receiver(unsigned long long delivered, unsigned long long notifications)
{
	struct uintr_stats st;

	check_common_errors();
	CHECK_ERR(uintr_wait(0), EOPNOTSUPP);
	CHECK_ERR(uintr_get_stats(&st, 0), EOPNOTSUPP);
	memset(&st, 0xff, sizeof(st));
	CHECK_EQ(uintr_get_stats(&st, UINTR_STATS_PROCESS), 0);
	CHECK_EQ(st.delivered, delivered);
	CHECK_EQ(st.notifications, notifications);
	CHECK_EQ(st.spurious, 0);
}

static void *non_receiver_after_one(void *arg)
{
	(void)arg;
	check_non_receiver(1, 1);
	te_check_state_zero();
	return NULL;
}

int main(void)
{
	struct uintr_stats st;
	struct uintr_state s;
	int fd;

	/* A fresh process: nothing counted yet. */
	check_non_receiver(0, 0);
	te_check_state_zero();

	CHECK_EQ(uintr_register_handler(te_handler, 0), 0);
	check_common_errors();
	memset(&st, 0xff, sizeof(st));
	CHECK_EQ(uintr_get_stats(&st, 0), 0);
	CHECK_EQ(st.delivered, 0);
	CHECK_EQ(st.notifications, 0);
	CHECK_EQ(st.spurious, 0);

	/* A pending interrupt (UIF = 0): uintr_wait(1) neither consumes nor
	 * delivers it. */
	fd = uintr_create_fd(9, 0);
	CHECK(fd >= 0);
	CHECK_EQ(uintr_register_sender(fd, 0), 0);
	uintr_senduipi(0);
	WAIT_UNTIL(te_state().uirr == (1ull << 9));
	CHECK_ERR(uintr_wait(1), EINVAL);
	CHECK_ERR(uintr_wait(0x100), EINVAL);
	CHECK_EQ(te_total, 0);
	s = te_state();
	CHECK_EQ(s.uirr, 1ull << 9);
	CHECK_EQ(s.uif_byte, 0);
	uintr_stui();
	CHECK_EQ(te_count[9], 1);
	CHECK_EQ(te_total, 1);
	CHECK_EQ(te_state().uirr, 0);

	CHECK_EQ(uintr_get_stats(&st, 0), 0);
	CHECK_EQ(st.delivered, 1);
	CHECK_EQ(st.notifications, 1);
	CHECK_EQ(st.spurious, 0);

	/* Another thread is no receiver: thread scope EOPNOTSUPP, process
	 * scope shows the one delivery. */
	te_in_thread(non_receiver_after_one, NULL);

	CHECK_EQ(uintr_unregister_sender(fd, 0), 0);
	CHECK(close(fd) == 0);
	CHECK_EQ(uintr_unregister_handler(0), 0);
	/* No longer a receiver: the thread errnos are back, process totals
	 * stay. */
	uintr_clui();
	check_non_receiver(1, 1);
	CHECK_EQ(te_total, 1);
	return T_PASS;
}
