/*
 * The SENDUIPI faults are forced like the kernel's force_sig() (reference
 * 2.4, 5.1; helper context "Faults"): a blocked or ignored SIGSEGV/SIGILL
 * does not let a faulting uintr_senduipi pass.  In forked children with the
 * signal blocked (sigprocmask), ignored (SIG_IGN), or both, a bad index
 * (SIGSEGV) or a send without sender table (SIGILL) still kills the child:
 * waitpid shows WTERMSIG == SIGSEGV / SIGILL.
 */
#include "helpers-errno-fault.h"

static void block_it(int sig)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, sig);
	CHECK(sigprocmask(SIG_BLOCK, &set, NULL) == 0);
}

static void ignore_it(int sig)
{
	CHECK(signal(sig, SIG_IGN) != SIG_ERR);
}

static void ignore_and_block_it(int sig)
{
	ignore_it(sig);
	block_it(sig);
}

/* Everything blocked (what sigprocmask allows). */
static void block_all(int sig)
{
	sigset_t set;

	(void)sig;
	sigfillset(&set);
	CHECK(sigprocmask(SIG_BLOCK, &set, NULL) == 0);
}

static void nothing(int sig)
{
	(void)sig;
}

int main(void)
{
	/* Default disposition, as a reference. */
	tf_expect_killed(SIGSEGV, nothing);
	tf_expect_killed(SIGILL, nothing);

	tf_expect_killed(SIGSEGV, block_it);
	tf_expect_killed(SIGILL, ignore_it);
	tf_expect_killed(SIGSEGV, ignore_it);
	tf_expect_killed(SIGILL, block_it);
	tf_expect_killed(SIGSEGV, ignore_and_block_it);
	tf_expect_killed(SIGILL, ignore_and_block_it);
	tf_expect_killed(SIGSEGV, block_all);
	tf_expect_killed(SIGILL, block_all);
	return T_PASS;
}
