/*
 * Binary compatibility, the release at the last close() (reference 2.3,
 * 2.5; Intel's senduipi_instr selftest, test_after_closefd): when close()
 * of a uintr_fd returns, its senders are unregistered already.
 *   - close(fd), then SENDUIPI on the only index registered through it:
 *     #UD (SIGILL, ILL_ILLOPN), the table being empty; 200 rounds, each
 *     with a new vector fd (one round that posted fails);
 *   - two fds, two indexes: after close(fd_a), SENDUIPI on a's index is
 *     #GP (SIGSEGV, SI_KERNEL) while b's still delivers vector b, exactly
 *     once; after close(fd_b), b's index is #UD;
 *   - a dup keeps the fd alive: close() of the original releases nothing,
 *     SENDUIPI still delivers;
 *   - the vector can be created again right after the close (no EBUSY).
 * The receiver is the main thread with UIF = 1, so a post that is not
 * refused is delivered before SENDUIPI's next instruction.
 */
#include "helpers-compat.h"

#define ROUNDS 200

static volatile unsigned long long handled, last_vector;

static void __attribute__((interrupt))
handler(struct __uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	handled = handled + 1;
	last_vector = vector;
}

static sigjmp_buf jump;
static volatile int fault_sig, fault_code;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	fault_sig = sig;
	fault_code = si->si_code;
	siglongjmp(jump, 1);
}

/* SENDUIPI index: 0 if it completed, else the signal it raised. */
static int send_result(unsigned long long index)
{
	fault_sig = 0;
	if (sigsetjmp(jump, 1) == 0)
		_senduipi(index);
	return fault_sig;
}

int main(void)
{
	long fd, fd_a, fd_b, idx, idx_a, idx_b;
	int dup_fd, round;
	unsigned long long before;

	t_catch_faults(on_fault);
	CHECK_EQ(u_register_handler(handler, 0), 0);
	_stui();

	/* The selftest's case, many times: no round may post. */
	for (round = 0; round < ROUNDS; round++) {
		fd = u_create_fd(0, 0);
		CHECK(fd >= 0);
		idx = u_register_sender((int)fd, 0);
		CHECK_EQ(idx, 0);
		CHECK_EQ(close((int)fd), 0);
		before = handled;
		CHECK_EQ(send_result((unsigned long long)idx), SIGILL);
		CHECK_EQ(fault_code, ILL_ILLOPN);
		CHECK_EQ(handled, before);
	}

	/* Two connections: the closed one's entry is invalid, the table is
	 * not empty, the other one still delivers. */
	fd_a = u_create_fd(5, 0);
	fd_b = u_create_fd(9, 0);
	CHECK(fd_a >= 0 && fd_b >= 0);
	idx_a = u_register_sender((int)fd_a, 0);
	idx_b = u_register_sender((int)fd_b, 0);
	CHECK_EQ(idx_a, 0);
	CHECK_EQ(idx_b, 1);
	CHECK_EQ(close((int)fd_a), 0);
	before = handled;
	CHECK_EQ(send_result((unsigned long long)idx_a), SIGSEGV);
	CHECK_EQ(fault_code, SI_KERNEL);
	CHECK_EQ(handled, before);
	CHECK_EQ(send_result((unsigned long long)idx_b), 0);
	CHECK_EQ(handled, before + 1);
	CHECK_EQ(last_vector, 9);
	/* Vector 5 is free again at once. */
	fd_a = u_create_fd(5, 0);
	CHECK(fd_a >= 0);
	CHECK_EQ(close((int)fd_a), 0);
	CHECK_EQ(close((int)fd_b), 0);
	CHECK_EQ(send_result((unsigned long long)idx_b), SIGILL);
	CHECK_EQ(handled, before + 1);

	/* A dup holds the fd: closing the original releases nothing. */
	fd = u_create_fd(12, 0);
	CHECK(fd >= 0);
	dup_fd = dup((int)fd);
	CHECK(dup_fd >= 0);
	idx = u_register_sender((int)fd, 0);
	CHECK_EQ(idx, 0);
	CHECK_EQ(close((int)fd), 0);
	before = handled;
	CHECK_EQ(send_result((unsigned long long)idx), 0);
	CHECK_EQ(handled, before + 1);
	CHECK_EQ(last_vector, 12);
	/* The vector is still in use. */
	CHECK_ERR(u_create_fd(12, 0), EBUSY);
	CHECK_EQ(close(dup_fd), 0);

	CHECK_EQ(syscall(NR_uintr_unregister_handler, 0), 0);
	printf("ok: %d closes released at once, #GP/#UD as in the RFC, a dup holds the fd\n",
	       ROUNDS + 2);
	return T_PASS;
}
