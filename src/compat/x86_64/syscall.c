/*
 * The UINTR syscalls (reference 2), however the program makes them: glibc's
 * syscall(), an inline `syscall` instruction, anything.  A seccomp filter
 * returns SECCOMP_RET_TRAP for exactly the six numbers (base .. base+5,
 * base 471 by default, 449 with UINTR_SYSCALL_BASE=449) of the x86-64
 * syscall ABI and lets every other syscall through untouched.
 *
 * Two ABIs share those numbers (reference 1, 3), so one is chosen per
 * process (UINTR_ABI, init.c): the RFC's six calls, or Intel's later
 * branch's nine (base .. base+8) plus ioctl(fd, UIPI_SET_TARGET_TABLE or
 * UIPI_CLEAR_TARGET_TABLE), each mapped onto its personality (the RFC's
 * calls, src/later.c's).  Those two ioctl numbers, _IO('u', 0) and
 * _IO('u', 1), belong to no other driver; on a fd that is no uipi fd they
 * fail with ENOTTY, as an unknown ioctl does.  The branch's uvec fd ioctls
 * (_IO('U', n), which uinput shares) are not trapped: the branch
 * implements none, and a uvec fd here answers them ENOTTY as its does.  The kernel
 * then skips the syscall and raises SIGSYS at the instruction after it;
 * the handler below runs the engine's call and puts its result in RAX as
 * the kernel would (a value, or -errno).
 *
 * The filter's return data tags the trap as ours and carries its base, so
 * a filter inherited across execve from a process with another base still
 * works here.
 *
 * The SIGSYS handler runs with every signal blocked: a syscall is one
 * step.  uintr_wait blocks inside it (with UIF held at 0 so that the
 * engine only waits, and the program's signals let in); the interrupt
 * that ends it is then delivered by rewriting the SIGSYS context: the
 * handler runs as if it interrupted the instruction after the syscall,
 * with RAX = -EINTR, and the program sees the syscall return -1/EINTR
 * after the handler ran, as in the RFC (2.6).
 */
#define _GNU_SOURCE
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "compat.h"

/* SIGSYS si_code from seccomp (not in every libc's headers). */
#define UINTR__SYS_SECCOMP 1
/* SECCOMP_RET_DATA of our trap: tag | base; the tag names the ABI. */
#define UINTR__TRAP_TAG 0xa800u       /* RFC */
#define UINTR__TRAP_TAG_LATER 0xb000u /* the later branch */
#define UINTR__TRAP_TAG_MASK 0xf800u
#define UINTR__TRAP_BASE_MASK 0x07ffu

volatile sig_atomic_t uintr__compat_probe_seen;
int uintr__compat_abi; /* UINTR__ABI_RFC or UINTR__ABI_LATER */

static unsigned int uintr__trap_tag(int abi)
{
	return abi == UINTR__ABI_LATER ? UINTR__TRAP_TAG_LATER : UINTR__TRAP_TAG;
}

static unsigned int uintr__nr_syscalls(int abi)
{
	return abi == UINTR__ABI_LATER ? UINTR__COMPAT_NR_SYSCALLS_LATER : UINTR__COMPAT_NR_SYSCALLS;
}

static long uintr__result(int ret)
{
	return ret < 0 ? -(long)errno : ret;
}

static int uintr__compat_register_handler(uint64_t handler, unsigned int flags)
{
	struct uintr__receiver *r;

	/* The engine checks flags (EINVAL), a NULL handler (EFAULT) and an
	 * existing registration (EBUSY) in the RFC's order. */
	if (!handler)
		return uintr_register_handler(NULL, flags);
	if (uintr_register_handler(uintr__compat_sync_handler, flags) != 0)
		return -1;
	r = uintr__self.receiver;
	/* No uintr_fd exists yet, so no notification can come before this. */
	uintr__compat_self.handler = handler;
	r->deliver_context = uintr__compat_deliver_context;
	return 0;
}

/* uintr_wait: wait with UIF = 0 (no delivery inside the engine), then
 * deliver into the SIGSYS context.  `later`: the later branch's
 * uintr_wait(usec, flags), which may also end with 0 at its timeout. */
static void uintr__compat_wait(int later, uint64_t usec, unsigned int flags, ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;
	uint64_t rsp = (uint64_t)g[REG_RSP];
	sigset_t waiting, saved;
	unsigned char uif;
	int ret;

	if (later && (flags != 0 || usec == 0 || usec > 1000000000ull || !uintr__self.receiver)) {
		g[REG_RAX] = uintr__result(uintr_later_wait(usec, flags));
		return;
	}
	if (!later && (flags != 0 || !uintr__self.receiver)) {
		g[REG_RAX] = uintr__result(uintr_wait(flags));
		return;
	}
	/* A previous wait whose handler never came back to it (a longjmp). */
	uintr__compat_self.wait_delivered = 0;
	/* The program's signals may interrupt the wait, as they interrupt a
	 * blocking syscall (their handlers run, then it goes on waiting);
	 * notifications stay blocked: the engine waits on the UPID itself. */
	waiting = uc->uc_sigmask;
	if (uintr__compat_notify_signo > 0)
		sigaddset(&waiting, uintr__compat_notify_signo);
	uintr__compat_keep_unblocked(&waiting);
	uintr__compat_real_sigmask(SIG_SETMASK, &waiting, &saved);
	uif = atomic_exchange(&uintr__self.uif, 0);
	ret = later ? uintr_later_wait(usec, 0) : uintr_wait(0);
	g[REG_RAX] = uintr__result(ret);
	atomic_store(&uintr__self.uif, uif);
	uintr__compat_real_sigmask(SIG_SETMASK, &saved, NULL);
	if (uif && uintr__compat_deliver(uc)) {
		uintr__compat_self.wait_delivered = 1;
		uintr__compat_self.wait_rsp = rsp;
	}
}

static void uintr__compat_syscall(unsigned int which, ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;
	uint64_t a0 = (uint64_t)g[REG_RDI], a1 = (uint64_t)g[REG_RSI];
	int ret = -1;

	switch (which) {
	case 0: /* uintr_register_handler(u64 handler, unsigned int flags) */
		ret = uintr__compat_register_handler(a0, (unsigned int)a1);
		break;
	case 1: /* uintr_unregister_handler(unsigned int flags) */
		ret = uintr_unregister_handler((unsigned int)a0);
		if (ret == 0)
			uintr__compat_self.handler = 0;
		break;
	case 2: /* uintr_create_fd(u64 vector, unsigned int flags) */
		ret = uintr_create_fd(a0, (unsigned int)a1);
		if (ret >= 0)
			uintr__compat_vector_fd_seen(ret); /* close.c */
		break;
	case 3: /* uintr_register_sender(int uintr_fd, unsigned int flags) */
		ret = uintr_register_sender((int)a0, (unsigned int)a1);
		if (ret >= 0)
			uintr__compat_vector_fd_seen((int)a0);
		break;
	case 4: /* uintr_unregister_sender(int uintr_fd, unsigned int flags) */
		ret = uintr_unregister_sender((int)a0, (unsigned int)a1);
		break;
	case 5: /* uintr_wait(unsigned int flags) */
		uintr__compat_wait(0, 0, (unsigned int)a0, uc);
		return;
	}
	g[REG_RAX] = uintr__result(ret);
}

/* The later branch's nine syscalls (reference 3) onto src/later.c. */
static void uintr__compat_syscall_later(unsigned int which, ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;
	uint64_t a0 = (uint64_t)g[REG_RDI], a1 = (uint64_t)g[REG_RSI], a2 = (uint64_t)g[REG_RDX];
	int ret = -1;

	switch (which) {
	case 0: /* uintr_register_handler(u64 handler, unsigned int flags) */
		if ((unsigned int)a1 & ~UINTR_HANDLER_FLAG_WAITING_ANY)
			ret = uintr_later_register_handler(NULL, (unsigned int)a1);
		else
			ret = uintr__compat_register_handler(a0, 0);
		break;
	case 1: /* uintr_unregister_handler(unsigned int flags) */
		ret = uintr_later_unregister_handler((unsigned int)a0);
		if (ret == 0)
			uintr__compat_self.handler = 0;
		break;
	case 2: /* uintr_vector_fd(u64 vector, unsigned int flags) */
		ret = uintr_later_vector_fd(a0, (unsigned int)a1);
		break;
	case 3: /* uintr_register_sender(int uvec_fd, unsigned int flags) */
		ret = uintr_later_register_sender((int)a0, (unsigned int)a1);
		break;
	case 4: /* uintr_unregister_sender(int uipi_index, unsigned int flags) */
		ret = uintr_later_unregister_sender((int)a0, (unsigned int)a1);
		break;
	case 5: /* uintr_wait(u64 usec, unsigned int flags) */
		uintr__compat_wait(1, a0, (unsigned int)a1, uc);
		return;
	case 6: /* uintr_register_self(u64 vector, unsigned int flags) */
		ret = uintr_later_register_self(a0, (unsigned int)a1);
		break;
	case 7: /* uintr_alt_stack(void *sp, size_t size, unsigned int flags) */
		ret = uintr_later_alt_stack((void *)(uintptr_t)a0, (size_t)a1, (unsigned int)a2);
		break;
	case 8: /* uintr_ipi_fd(unsigned int flags) */
		ret = uintr_later_ipi_fd((unsigned int)a0);
		break;
	}
	g[REG_RAX] = uintr__result(ret);
}

/* ioctl(fd, UIPI_SET/CLEAR_TARGET_TABLE): the filter traps only these. */
static void uintr__compat_ioctl(ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;

	g[REG_RAX] = uintr__result(uintr_later_ioctl((int)g[REG_RDI], (unsigned int)g[REG_RSI]));
}

void uintr__compat_sigsys(int signo, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	int saved_errno = errno;
	unsigned int data = (unsigned int)si->si_errno, base, nr, tag = data & UINTR__TRAP_TAG_MASK;
	int abi = tag == UINTR__TRAP_TAG_LATER ? UINTR__ABI_LATER : UINTR__ABI_RFC;

	if (si->si_code != UINTR__SYS_SECCOMP ||
	    (tag != UINTR__TRAP_TAG && tag != UINTR__TRAP_TAG_LATER) ||
	    si->si_arch != AUDIT_ARCH_X86_64) {
		uintr__compat_chain(signo, si, uc);
		errno = saved_errno;
		return;
	}
	if (abi == UINTR__ABI_LATER && si->si_syscall == SYS_ioctl) {
		uintr__compat_ioctl(uc);
		errno = saved_errno;
		return;
	}
	base = data & UINTR__TRAP_BASE_MASK;
	nr = (unsigned int)si->si_syscall - base;
	if (nr >= uintr__nr_syscalls(abi)) {
		uintr__compat_chain(signo, si, uc);
		errno = saved_errno;
		return;
	}
	uintr__compat_probe_seen = (sig_atomic_t)data;
	if (abi == UINTR__ABI_LATER)
		uintr__compat_syscall_later(nr, uc);
	else
		uintr__compat_syscall(nr, uc);
	errno = saved_errno;
}

/*
 * Is a filter with this base and ABI already in force (inherited across
 * execve)?  Only asked when the process is under some seccomp filter
 * already: the harmless call uintr_unregister_handler(1) fails with EINVAL
 * whether it is trapped or not (in both ABIs), and our SIGSYS handler
 * notes the trap.  A filter for the other ABI is overridden by ours: the
 * newest filter's trap data wins.
 */
int uintr__compat_filtered(unsigned int base)
{
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != SECCOMP_MODE_FILTER)
		return 0;
	uintr__compat_probe_seen = 0;
	syscall((long)base + 1, 1L, 0L, 0L, 0L, 0L, 0L);
	return uintr__compat_probe_seen == (sig_atomic_t)(uintr__trap_tag(uintr__compat_abi) | base);
}

int uintr__compat_install_filter(unsigned int base)
{
	unsigned int n = uintr__nr_syscalls(uintr__compat_abi);
	unsigned int trap = SECCOMP_RET_TRAP | uintr__trap_tag(uintr__compat_abi) | base;
	/* The later ABI's filter also traps ioctl(fd, 0x7500 or 0x7501). */
	int later = uintr__compat_abi == UINTR__ABI_LATER;
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 9),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, later ? SYS_ioctl : ~0u, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, UIPI_SET_TARGET_TABLE, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, UIPI_CLEAR_TARGET_TABLE, 3, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, base, 0, 2),
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, base + n - 1, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, trap),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = (unsigned short)(sizeof(insns) / sizeof(insns[0])),
		.filter = insns,
	};
	long ret;

	if (base > UINTR__TRAP_BASE_MASK - n) {
		errno = EINVAL;
		return -1;
	}
	/* Without CAP_SYS_ADMIN a filter needs no_new_privs: set it only then
	 * (it keeps set-user-ID programs from gaining privileges). */
	ret = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
	if (ret != 0 && errno == EACCES) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
			return -1;
		ret = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
	}
	if (ret > 0) /* another thread could not be synchronized: this one at least */
		ret = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
	return ret == 0 ? 0 : -1;
}
