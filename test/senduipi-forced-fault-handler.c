/*
 * A faulting SENDUIPI while SIGSEGV/SIGILL is blocked kills the thread's
 * process even if a handler is installed (reference 2.4, 5.1; helper
 * context "Faults": forced "unblocked, default" like the kernel's
 * force_sig(), which resets a blocked signal's action to SIG_DFL, so the
 * blocked handler never runs).  Forked children install a handler that
 * would exit(4), block the signal, and fault: each must be killed by the
 * signal.
 */
#include "helpers-errno-fault.h"

static void handle_and_block(int sig)
{
	struct sigaction sa;
	sigset_t set;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = tf_handler_exit;
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(sig, &sa, NULL) == 0);
	sigemptyset(&set);
	sigaddset(&set, sig);
	CHECK(sigprocmask(SIG_BLOCK, &set, NULL) == 0);
}

int main(void)
{
	tf_expect_killed(SIGSEGV, handle_and_block);
	tf_expect_killed(SIGILL, handle_and_block);
	return T_PASS;
}
