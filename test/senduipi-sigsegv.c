/*
 * SENDUIPI with a bad index is #GP (reference 2.4, 2.5, 5.1 -> SIGSEGV):
 * with one valid entry, uintr_senduipi on an index never registered (1,
 * 255), beyond the table (256, 1 << 40, ~0) or unregistered raises SIGSEGV
 * with si_code SI_KERNEL on the calling thread and posts nothing; the
 * valid index still works afterwards and its interrupt is delivered
 * exactly once.  Checked on a thread that is also the receiver and on a
 * plain sender thread.
 */
#include "helpers-errno.h"

static int fd7, fd8, fd1;

static void expect_sigsegv(unsigned long long idx)
{
	int code = -1;

	CHECK_EQ(t_catch_fault(t_send_index, (void *)(uintptr_t)idx, &code), SIGSEGV);
#if defined(__x86_64__)
	CHECK_EQ(code, SI_KERNEL); /* #GP; elsewhere the platform's bad-access code */
#else
	(void)code;
#endif
}

/*
 * Entry 0 valid (vector 7); every bad index faults.  Entry 2 (vector 1,
 * the lowest in use, so delivered after anything posted before it) is a
 * barrier: once it is delivered, every earlier post has been too.
 */
static void faults_then_valid(void)
{
	CHECK_EQ(uintr_register_sender(fd7, 0), 0);
	expect_sigsegv(1);
	expect_sigsegv(255);
	expect_sigsegv(256);
	expect_sigsegv(257);
	expect_sigsegv(1ull << 40);
	expect_sigsegv(~0ull);
	/* An unregistered index. */
	CHECK_EQ(uintr_register_sender(fd8, 0), 1);
	CHECK_EQ(uintr_unregister_sender(fd8, 0), 0);
	expect_sigsegv(1);
	/* ... twice in a row, and while a valid entry above it exists. */
	CHECK_EQ(uintr_register_sender(fd8, 0), 1);
	CHECK_EQ(uintr_register_sender(fd1, 0), 2);
	CHECK_EQ(uintr_unregister_sender(fd8, 0), 0);
	expect_sigsegv(1);
	expect_sigsegv(1);
	expect_sigsegv(3);

	/* The faults posted nothing. */
	uintr_senduipi(2);
	WAIT_UNTIL(te_count[1] == 1);
	CHECK_EQ(te_total, 1);

	/* The valid index still works, once. */
	uintr_senduipi(0);
	WAIT_UNTIL(te_count[7] == 1);
	uintr_senduipi(2);
	WAIT_UNTIL(te_count[1] == 2);
	CHECK_EQ(te_count[7], 1);
	CHECK_EQ(te_count[8], 0);
	CHECK_EQ(te_total, 3);
	CHECK_EQ(uintr_unregister_sender(fd7, 0), 0);
	CHECK_EQ(uintr_unregister_sender(fd1, 0), 0);
}

static void *sender_thread(void *arg)
{
	(void)arg;
	faults_then_valid();
	return NULL;
}

int main(void)
{
	struct uintr_stats st;

	CHECK_EQ(uintr_register_handler(te_handler, 0), 0);
	fd7 = uintr_create_fd(7, 0);
	fd8 = uintr_create_fd(8, 0);
	fd1 = uintr_create_fd(1, 0);
	CHECK(fd7 >= 0 && fd8 >= 0 && fd1 >= 0);
	uintr_stui();

	/* This thread sends to itself. */
	faults_then_valid();
	CHECK_EQ(uintr_get_stats(&st, 0), 0);
	CHECK_EQ(st.delivered, 3);

	/* A plain thread sends to this one. */
	memset(te_count, 0, sizeof(te_count));
	te_total = 0;
	te_in_thread(sender_thread, NULL);
	CHECK_EQ(uintr_get_stats(&st, 0), 0);
	CHECK_EQ(st.delivered, 6);
	CHECK_EQ(te_total, 3);

	CHECK(close(fd7) == 0);
	CHECK(close(fd8) == 0);
	CHECK(close(fd1) == 0);
	CHECK_EQ(uintr_unregister_handler(0), 0);
	return T_PASS;
}
