/*
 * Binary compatibility, SENDUIPI faults as the hardware raises them (issue:
 * "SIGILL and SIGSEGV for a bad SENDUIPI ... produced by the emulation as
 * the hardware would"; reference 2.4, 5.1):
 *   - no UITT: #UD, SIGILL with si_code ILL_ILLOPN, si_addr = the SENDUIPI;
 *     the context's RIP is the SENDUIPI; a handler that returns gets it
 *     again (the instruction re-executes); one that skips it goes on;
 *   - a bad index (never registered, >= 256): #GP, SIGSEGV with si_code
 *     SI_KERNEL, si_addr 0, RIP = the SENDUIPI; a good index next to them
 *     delivers; after the last entry is unregistered: SIGILL again;
 *   - any other SIGILL (ud2, a LOCK-prefixed STUI) reaches the program's
 *     handler untouched, also one installed with signal();
 *   - the program may block SIGILL/SIGSYS (and sees that mask): UINTR
 *     instructions and syscalls keep working;
 *   - default actions kill with the right signal, also when the program
 *     blocked (sigprocmask) or ignored the signal, as the kernel forces a
 *     fault.
 */
#include "helpers-compat.h"

#define SENDUIPI_RAX_LEN 4

static int faults, skip_from;
static int last_sig, last_code;
static unsigned long long last_addr, last_rip;
static unsigned char last_byte;

static int uipi_fd = -1, ready, stop, handled;
static unsigned long long seen_vector;

static void __attribute__((interrupt))
handler(struct __uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	STORE(seen_vector, vector);
	ADD(handled, 1);
}

static void *receiver(void *arg)
{
	long fd;

	(void)arg;
	CHECK_EQ(u_register_handler(handler, 0), 0);
	fd = u_create_fd(33, 0);
	CHECK(fd >= 0);
	STORE(uipi_fd, (int)fd);
	_stui();
	STORE(ready, 1);
	WAIT_UNTIL(LOAD(stop));
	CHECK_EQ(u_unregister_handler(0), 0);
	return NULL;
}

/* Counts faults; from the skip_from-th on, steps over the instruction. */
static void on_fault(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = (ucontext_t *)ucv;

	faults++;
	last_sig = sig;
	last_code = si->si_code;
	last_addr = (unsigned long long)(uintptr_t)si->si_addr;
	last_rip = (unsigned long long)uc->uc_mcontext.gregs[REG_RIP];
	last_byte = *(const unsigned char *)(uintptr_t)last_rip;
	if (faults >= skip_from)
		uc->uc_mcontext.gregs[REG_RIP] += SENDUIPI_RAX_LEN;
}

/* SENDUIPI %rax; returns its address. */
static unsigned long long senduipi_at(unsigned long long index)
{
	unsigned long long at;

	__asm__ volatile("leaq 1f(%%rip), %0\n"
			 "1:\tsenduipi %%rax"
			 : "=&r"(at)
			 : "a"(index)
			 : "memory");
	return at;
}

static void expect_fault(unsigned long long index, int sig, int code, int returns)
{
	unsigned long long at;

	faults = 0;
	skip_from = returns + 1;
	at = senduipi_at(index);
	CHECK_EQ(faults, returns + 1);
	CHECK_EQ(last_sig, sig);
	CHECK_EQ(last_code, code);
	CHECK_EQ(last_addr, sig == SIGILL ? at : 0);
	CHECK_EQ(last_rip, at);
	CHECK_EQ(last_byte, 0xf3);
}

static sigjmp_buf jump;

static void jump_out(int sig)
{
	siglongjmp(jump, sig);
}

/* Run one bad SENDUIPI in a child: it must die of `sig`. */
static void expect_death(int sig, long index, int block, int ignore)
{
	struct rlimit no_core = { 0, 0 };
	int status;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		struct sigaction sa;
		sigset_t set;

		setrlimit(RLIMIT_CORE, &no_core);
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = ignore ? SIG_IGN : SIG_DFL;
		sigaction(SIGILL, &sa, NULL);
		sigaction(SIGSEGV, &sa, NULL);
		if (block) {
			sa.sa_handler = jump_out; /* blocked: never runs */
			sigaction(sig, &sa, NULL);
			sigemptyset(&set);
			sigaddset(&set, sig);
			sigprocmask(SIG_BLOCK, &set, NULL);
		}
		if (index >= 0 && u_register_sender(LOAD(uipi_fd), 0) != 0)
			_exit(3);
		senduipi_at((unsigned long long)(index < 0 ? 0 : index));
		_exit(4);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != sig) {
		fprintf(stderr, "child: status %#x, expected death by %d\n", status, sig);
		exit(T_FAIL);
	}
}

int main(void)
{
	sigset_t set, old;
	pthread_t t;
	volatile int jumped = 0;
	long idx;

	t_catch_faults(on_fault);

	/* No UITT: #UD; returning re-executes it (twice), then skip. */
	expect_fault(0, SIGILL, ILL_ILLOPN, 2);

	/* Foreign #UD reach the program: ud2, and STUI with LOCK (#UD). */
	CHECK(signal(SIGILL, jump_out) == (sighandler_t)(uintptr_t)on_fault);
	if (sigsetjmp(jump, 1) == 0)
		__asm__ volatile("ud2");
	else
		jumped++;
	if (sigsetjmp(jump, 1) == 0)
		__asm__ volatile(".byte 0xf0, 0xf3, 0x0f, 0x01, 0xef");
	else
		jumped++;
	CHECK_EQ(jumped, 2);
	CHECK_EQ(_testui(), 0); /* the LOCKed STUI did nothing */
	t_catch_faults(on_fault);

	t = t_start(receiver, NULL);
	WAIT_UNTIL(LOAD(ready));
	idx = u_register_sender(LOAD(uipi_fd), 0);
	CHECK_EQ(idx, 0);

	/* Bad indexes: #GP. */
	expect_fault(1, SIGSEGV, SI_KERNEL, 0);
	expect_fault(300, SIGSEGV, SI_KERNEL, 1);
	expect_fault(~0ull, SIGSEGV, SI_KERNEL, 0);
	/* The good one. */
	faults = 0;
	senduipi_at((unsigned long long)idx);
	CHECK_EQ(faults, 0);
	WAIT_UNTIL(LOAD(handled) == 1);
	CHECK_EQ(LOAD(seen_vector), 33);
	/* Last entry gone: the table is disabled, #UD again. */
	CHECK_EQ(u_unregister_sender(LOAD(uipi_fd), 0), 0);
	expect_fault((unsigned long long)idx, SIGILL, ILL_ILLOPN, 0);

	/* The program may block SIGILL and SIGSYS: the instructions and the
	 * syscalls still work, and it sees the mask it asked for. */
	sigemptyset(&set);
	sigaddset(&set, SIGILL);
	sigaddset(&set, SIGSYS);
	CHECK(pthread_sigmask(SIG_BLOCK, &set, NULL) == 0);
	_stui();
	CHECK_EQ(_testui(), 1);
	_clui();
	CHECK_ERR(u_unregister_handler(0), EINVAL);
	CHECK(sigprocmask(SIG_BLOCK, NULL, &old) == 0);
	CHECK(sigismember(&old, SIGILL) == 1 && sigismember(&old, SIGSYS) == 1);
	CHECK(pthread_sigmask(SIG_UNBLOCK, &set, NULL) == 0);
	CHECK(pthread_sigmask(SIG_BLOCK, NULL, &old) == 0);
	CHECK(sigismember(&old, SIGILL) == 0 && sigismember(&old, SIGSYS) == 0);

	/* Default actions, also blocked or ignored. */
	expect_death(SIGILL, -1, 0, 0);
	expect_death(SIGSEGV, 7, 0, 0);
	expect_death(SIGSEGV, 7, 1, 0);
	expect_death(SIGSEGV, 7, 0, 1);
	expect_death(SIGILL, -1, 1, 0);
	expect_death(SIGILL, -1, 0, 1);

	STORE(stop, 1);
	t_join(t);
	CHECK_EQ(LOAD(handled), 1);
	return T_PASS;
}
