/*
 * What selftests/uintr/senduipi_instr.c of Intel's later branch checks,
 * under uintr-run --abi=later, as that program does it: SIGILL and
 * SIGSEGV handlers (SA_SIGINFO) that step over the faulting SENDUIPI by
 * moving RIP in the signal context (issue 12).
 *   1. SENDUIPI before the process has any sender table: SIGILL.
 *   2. SENDUIPI on the index one past the only registered one: SIGSEGV.
 *   3. SENDUIPI on an index after uintr_unregister_sender(index):
 *      SIGSEGV or SIGILL (the branch allows either; the table stays, so
 *      ours is SIGSEGV, as test/compat/later-abi.c checks exactly).
 *   4. SENDUIPI on a valid index from another thread: no SIGILL (the
 *      table is the process's).
 *   5. The same from a forked child: no SIGILL (the child shares the
 *      table).
 * Each case registers an empty handler and vector 0 and unregisters them
 * after, as the selftest does.  Intel's handlers skip 4 bytes; ours skip
 * the instruction's length (5 with a REX prefix), since the compiler
 * picks the register.
 */
#include "helpers-compat.h"

#define NR_vector_fd 473

static volatile sig_atomic_t expect_sigill, expect_sigsegv;
static volatile sig_atomic_t got_sigill, got_sigsegv;

static void __attribute__((interrupt))
empty_handler(struct __uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	(void)vector;
}

/* F3 [REX] 0F C7 /6 */
static void skip_senduipi(ucontext_t *uc)
{
	const unsigned char *ip = (const unsigned char *)uc->uc_mcontext.gregs[REG_RIP];

	uc->uc_mcontext.gregs[REG_RIP] += (ip[1] & 0xf0) == 0x40 ? 5 : 4;
}

static void on_sigill(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	got_sigill++;
	if (expect_sigill)
		skip_senduipi(uc);
	else
		signal(SIGILL, SIG_DFL);
}

static void on_sigsegv(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	got_sigsegv++;
	if (expect_sigsegv)
		skip_senduipi(uc);
	else
		signal(SIGSEGV, SIG_DFL);
}

static void catch(int sig, void (*fn)(int, siginfo_t *, void *))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(sig, &sa, NULL) == 0);
}

static void release(int sig)
{
	CHECK(signal(sig, SIG_DFL) != SIG_ERR);
}

static long fd = -1;

static long setup(void)
{
	long idx;

	CHECK_EQ(syscall(NR_uintr_register_handler, (uintptr_t)empty_handler, 0), 0);
	fd = syscall(NR_vector_fd, 0, 0);
	CHECK(fd >= 0);
	idx = syscall(NR_uintr_register_sender, fd, 0);
	CHECK(idx >= 0);
	return idx;
}

static void teardown(void)
{
	CHECK_EQ(close((int)fd), 0);
	CHECK_EQ(syscall(NR_uintr_unregister_handler, 0), 0);
}

/* SENDUIPI idx with SIGILL caught; how many SIGILLs it took. */
static void *send_expecting_no_sigill(void *arg)
{
	long idx = (long)(intptr_t)arg;

	got_sigill = 0;
	expect_sigill = 1;
	catch(SIGILL, on_sigill);
	_senduipi((unsigned long long)idx);
	release(SIGILL);
	expect_sigill = 0;
	return (void *)(intptr_t)got_sigill;
}

int main(void)
{
	long idx;
	pthread_t t;
	pid_t pid;
	int status;

	/* 1 */
	catch(SIGILL, on_sigill);
	expect_sigill = 1;
	_senduipi(0);
	release(SIGILL);
	expect_sigill = 0;
	CHECK_EQ(got_sigill, 1);

	/* 2 */
	idx = setup();
	catch(SIGSEGV, on_sigsegv);
	expect_sigsegv = 1;
	_senduipi((unsigned long long)idx + 1);
	release(SIGSEGV);
	expect_sigsegv = 0;
	CHECK_EQ(got_sigsegv, 1);
	teardown();

	/* 3 */
	idx = setup();
	got_sigill = got_sigsegv = 0;
	catch(SIGILL, on_sigill);
	catch(SIGSEGV, on_sigsegv);
	expect_sigill = expect_sigsegv = 1;
	CHECK_EQ(syscall(NR_uintr_unregister_sender, idx, 0), 0);
	_senduipi((unsigned long long)idx);
	release(SIGILL);
	release(SIGSEGV);
	expect_sigill = expect_sigsegv = 0;
	CHECK_EQ(got_sigill + got_sigsegv, 1);
	CHECK_EQ(got_sigsegv, 1);
	teardown();

	/* 4 */
	idx = setup();
	t = t_start(send_expecting_no_sigill, (void *)(intptr_t)idx);
	CHECK(t_join(t) == (void *)0);
	teardown();

	/* 5 */
	idx = setup();
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(send_expecting_no_sigill((void *)(intptr_t)idx) == (void *)0 ? T_PASS : T_FAIL);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == T_PASS);
	teardown();
	return T_PASS;
}
