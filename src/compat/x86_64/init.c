/*
 * Starting the emulation: a constructor, run when the shared library is
 * preloaded (uintr-run, LD_PRELOAD) or when the static archive/object is
 * linked into the program.
 *
 * On UINTR hardware with a kernel that supports it, the emulation steps
 * aside entirely (no handler, no filter, no interposition): the program's
 * instructions and syscalls then reach the CPU and the kernel.  Detection,
 * as the RFC's uintr(7) recommends (reference 1):
 *   1. The CPU must report UINTR (CPUID.(EAX=7,ECX=0):EDX[5]); without it
 *      no syscall is tried at all (so a kernel where these numbers mean
 *      something else is never called with them): emulate.
 *   2. The real uintr_register_handler(base), with a handler that can never
 *      run (UIF stays 0, no uintr_fd exists).  Success (or EBUSY: already
 *      registered) means the kernel supports UINTR: the registration is
 *      undone at once with uintr_unregister_handler (base + 1), so none is
 *      left behind; hardware.
 *   3. It failed (ENOSYS, EOPNOTSUPP, or anything else): the instructions
 *      decide.  TESTUI (harmless: it only reads UIF) raising #UD means the
 *      kernel left UINTR off (CR4.UINTR = 0): emulate.  If it executes, the
 *      kernel runs UINTR under other syscall numbers; the instructions
 *      would never trap, so emulating is impossible: step aside, with a
 *      message (try the other UINTR_SYSCALL_BASE).
 * None of this can be exercised on a CPU without UINTR.
 *
 * Environment:
 *   UINTR_SYSCALL_BASE  the number of uintr_register_handler: 471 (default,
 *                       Intel's later kernels) or 449 (the RFC's numbers,
 *                       which mainline uses for other syscalls: those six
 *                       then become UINTR syscalls in this process)
 *   UINTR_SIGNAL        the engine's notification signal (uintr(7))
 *   UINTR_ABI           rfc (default) or later: the syscalls' meaning
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "compat.h"

int uintr__compat_active;
int uintr__compat_notify_signo;

static unsigned int uintr__compat_base(void)
{
	const char *env = getenv("UINTR_SYSCALL_BASE");
	unsigned long v;
	char *end;

	if (!env || !*env)
		return UINTR__COMPAT_DEFAULT_BASE;
	v = strtoul(env, &end, 10);
	if (*end != '\0' || v == 0 || v > 2000) {
		fprintf(stderr, "libuintr-compat: UINTR_SYSCALL_BASE=%s: not a syscall number from 1 "
			"to 2000 (471: Intel's later kernels, 449: the RFC's); using %u (see "
			"uintr(7), ENVIRONMENT)\n", env, UINTR__COMPAT_DEFAULT_BASE);
		return UINTR__COMPAT_DEFAULT_BASE;
	}
	return (unsigned int)v;
}

/*
 * UINTR_ABI: which syscalls the numbers mean (reference 1, 3): "rfc" (the
 * default: the RFC's six, as Intel's mainline-tracking copies renumber
 * them) or "later" (Intel's uintr-linux-kernel branch: nine).  Anything
 * else stops the program before it starts: running it under the wrong ABI
 * would give its syscalls other meanings.
 */
static int uintr__compat_choose_abi(void)
{
	const char *env = getenv("UINTR_ABI");

	if (!env || !*env || strcmp(env, "rfc") == 0)
		return UINTR__ABI_RFC;
	if (strcmp(env, "later") == 0)
		return UINTR__ABI_LATER;
	fprintf(stderr, "libuintr-compat: UINTR_ABI=%s: not an ABI; use rfc (the 2021 RFC, the "
		"default) or later (Intel's uintr-linux-kernel branch); see uintr-run(1)\n", env);
	_exit(2);
}

static int uintr__cpu_has_uintr(void)
{
	unsigned int a, b, c, d;

	if (__get_cpuid_max(0, NULL) < 7)
		return 0;
	__cpuid_count(7, 0, a, b, c, d);
	(void)a;
	(void)b;
	(void)c;
	return (d >> 5) & 1;
}

/* Never called: only its address is registered, while UIF = 0. */
static void uintr__probe_handler(void)
{
}

static sigjmp_buf uintr__probe_jump;

static void uintr__probe_sigill(int signo)
{
	siglongjmp(uintr__probe_jump, signo);
}

/* Does TESTUI execute (CR4.UINTR set by the kernel) rather than #UD? */
static int uintr__testui_executes(void)
{
	struct sigaction sa, old;
	volatile int executes = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = uintr__probe_sigill;
	sa.sa_flags = SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (uintr__compat_real_sigaction(SIGILL, &sa, &old) != 0)
		return 0;
	if (sigsetjmp(uintr__probe_jump, 1) == 0) {
		__asm__ volatile(".byte 0xf3, 0x0f, 0x01, 0xed" ::: "cc"); /* TESTUI */
		executes = 1;
	}
	uintr__compat_real_sigaction(SIGILL, &old, NULL);
	return executes;
}

/* A SIGSYS during the probe: a seccomp filter trapped it, most likely
 * ours, inherited across execve from an emulating parent. */
static volatile sig_atomic_t uintr__probe_trapped;

static void uintr__probe_sigsys(int signo, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	(void)signo;
	(void)si;
	uintr__probe_trapped = 1;
	uc->uc_mcontext.gregs[REG_RAX] = -ENOSYS;
}

static long uintr__probe_register(unsigned int base)
{
	struct sigaction sa, old;
	long ret;
	int err;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = uintr__probe_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (uintr__compat_real_sigaction(SIGSYS, &sa, &old) != 0)
		return -1;
	uintr__probe_trapped = 0;
	ret = syscall((long)base, (long)(uintptr_t)uintr__probe_handler, 0L);
	err = errno;
	if (ret == 0)
		syscall((long)base + 1, 0L);
	uintr__compat_real_sigaction(SIGSYS, &old, NULL);
	errno = uintr__probe_trapped ? ENOSYS : err;
	return uintr__probe_trapped ? -1 : ret;
}

static int uintr__hardware(unsigned int base)
{
	int err;

	if (!uintr__cpu_has_uintr())
		return 0;
	if (uintr__probe_register(base) == 0)
		return 1;
	if (errno == EBUSY)
		return 1;
	err = errno;
	if (err == ENOSYS && uintr__probe_trapped)
		return 0;
	if (uintr__testui_executes()) {
		fprintf(stderr, "libuintr-compat: the CPU runs UINTR instructions but syscall %u "
			"failed (%s): not emulating\n", base, strerror(err));
		return 1;
	}
	return 0;
}

__attribute__((constructor)) static void uintr__compat_init(void)
{
	unsigned int base = uintr__compat_base();
	int saved_errno = errno;

	uintr__compat_abi = uintr__compat_choose_abi();

	uintr__compat_resolve();
	if (uintr__hardware(base))
		goto out;
	/* The engine's process setup (notification signal, fork handling).
	 * An invalid UINTR_SIGNAL makes it fail; registration then fails
	 * with EINVAL, as without the compatibility layer. */
	if (uintr_notification_signal() > 0)
		uintr__compat_notify_signo = uintr__signo;
	if (uintr__compat_take_signals() != 0) {
		perror("libuintr-compat: signal handlers");
		goto out;
	}
	uintr__compat_active = 1;
	uintr__compat_patch_code();
	if (!uintr__compat_filtered(base) && uintr__compat_install_filter(base) != 0)
		perror("libuintr-compat: seccomp filter (UINTR syscalls will fail)");
out:
	errno = saved_errno;
}
