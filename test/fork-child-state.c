/*
 * Issue item 7, reference 2.7 (fork: "UINTR state is not expected to be
 * inherited") and 2.4 ("fd inherited, uipi_index not"): the parent thread
 * is a receiver with UIF = 1 and a sender with a UITT entry; in the forked
 * child the same thread has nothing: uintr_read_state all zero, UIF 0, no
 * handler to unregister (EINVAL), uintr_wait EOPNOTSUPP, SENDUIPI raises
 * SIGILL (no UITT), uintr_create_fd EINVAL; but the child inherited the
 * uintr_fd and registers as a sender through it, and its one send reaches
 * the parent's receiver thread exactly once.  The parent keeps its state.
 */
#include "helpers-lifetime.h"

static void child(int fd)
{
	struct uintr_state st, zero;
	struct uintr_stats stats;
	int sig, code = 0, idx;

	memset(&zero, 0, sizeof(zero));
	memset(&st, 0xa5, sizeof(st));
	CHECK(uintr_read_state(&st) == 0);
	CHECK(memcmp(&st, &zero, sizeof(st)) == 0);
	CHECK_EQ(uintr_testui(), 0);
	CHECK_ERR(uintr_unregister_handler(0), EINVAL);
	CHECK_ERR(uintr_wait(0), EOPNOTSUPP);
	CHECK_ERR(uintr_get_stats(&stats, 0), EOPNOTSUPP);
	sig = lt_send_fault(0, &code);
	CHECK_EQ(sig, SIGILL);
	LT_CHECK_FAULT_CODE(code, ILL_ILLOPN);
	CHECK_ERR(uintr_create_fd(3, 0), EINVAL);

	idx = uintr_register_sender(fd, 0);
	CHECK_EQ(idx, 0); /* a fresh UITT: the parent's entry 0 is not here */
	uintr_senduipi((unsigned long long)idx);
	exit(T_PASS);
}

int main(void)
{
	static const unsigned int vec[] = { 3 };
	struct uintr_state st;
	int fd, idx;
	pid_t pid;

	lt_counts_init();
	lt_become_receiver(1, vec, &fd);
	uintr_stui();
	idx = uintr_register_sender(fd, 0);
	CHECK_EQ(idx, 0);
	lt_send_wait(idx, 3); /* to itself */
	CHECK(uintr_read_state(&st) == 0);
	CHECK(st.handler != 0 && st.upid_addr != 0 && (st.uif_byte & UINTR_STATE_UIF));
	CHECK(st.uitt_size == UINTR_UITT_ENTRIES && (st.uitt_addr & 1));

	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		child(fd);

	t_wait_child_ok(pid);
	WAIT_UNTIL(lt_count(3) >= 2);
	CHECK_EQ(lt_count(3), 2);
	CHECK_EQ(atomic_load(&lt_c->wrong_thread), 0);

	/* The parent's own state is untouched by the fork. */
	CHECK_EQ(uintr_testui(), 1);
	CHECK(uintr_read_state(&st) == 0);
	CHECK(st.handler != 0 && st.uinv == 0xec && (st.uitt_addr & 1));
	lt_send_wait(idx, 3);
	CHECK_EQ(lt_count(3), 3);
	return T_PASS;
}
