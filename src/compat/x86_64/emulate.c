/*
 * The SIGILL handler: the UINTR instructions (reference 5.1, 5.4, 5.5)
 * executed on the engine, one instruction per #UD, as the CPU would.
 *
 *   STUI      UIF = 1; a recognized interrupt is delivered right after it
 *   CLUI      UIF = 0
 *   TESTUI    CF = UIF; ZF AF OF PF SF = 0
 *   SENDUIPI  the engine's checks and post; #UD (no UITT) and #GP (bad
 *             index or entry) are raised at the instruction, as SIGILL
 *             (ILL_ILLOPN, si_addr = RIP) and SIGSEGV (SI_KERNEL, si_addr 0)
 *   UIRET     pop RIP, RFLAGS, RSP; only the flags of mask 0x254DD5 come
 *             from the stack; UIF = 1; the next pending vector, if any, is
 *             delivered at once
 *
 * Only a #UD the kernel reports (si_code ILL_ILLOPN, si_addr = RIP) at one
 * of these encodings, or at a STUI/CLUI that patch.c rewrote to start with
 * UD2 (looked up by address), is emulated; every other SIGILL goes to the
 * program's own SIGILL action (signals.c).  All signals are blocked while
 * this runs (signals.c), so an instruction is atomic as on the CPU.
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "compat.h"

/* UIRET restores these flags from the stack (5.4). */
#define UINTR__UIRET_FLAGS 0x254dd5ull

/* ModRM register numbers to ucontext registers. */
static const int uintr__gpr[16] = {
	REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
	REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
};

/*
 * Raise signo at the context uc as the kernel's force_sig does for a
 * fault: a blocked or ignored signal is reset to its default action and
 * unblocked.  It is queued now, blocked until our sigreturn, so that it
 * arrives exactly at uc (the faulting instruction): if the program's
 * handler returns, the instruction runs again and faults again.
 */
void uintr__compat_raise(ucontext_t *uc, int signo, const siginfo_t *si)
{
	struct sigaction sa;
	sigset_t set;

	if (uintr__compat_real_sigaction(signo, NULL, &sa) == 0 &&
	    (sa.sa_handler == SIG_IGN || sigismember(&uc->uc_sigmask, signo))) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		sigemptyset(&sa.sa_mask);
		uintr__compat_real_sigaction(signo, &sa, NULL);
	}
	sigdelset(&uc->uc_sigmask, signo);
	sigemptyset(&set);
	sigaddset(&set, signo);
	uintr__compat_real_sigmask(SIG_BLOCK, &set, NULL);
	syscall(SYS_rt_tgsigqueueinfo, getpid(), uintr__gettid(), signo, si);
}

/* #GP(0): SIGSEGV, si_code SI_KERNEL, si_addr 0. */
void uintr__compat_raise_gp(ucontext_t *uc)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = SIGSEGV;
	si.si_code = SI_KERNEL;
	si.si_addr = NULL;
	uintr__compat_raise(uc, SIGSEGV, &si);
}

static int uintr__canonical(uint64_t a)
{
	return (uint64_t)((int64_t)(a << 16) >> 16) == a;
}

static void uintr__compat_uiret(ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;
	const uint64_t *sp = (const uint64_t *)(uintptr_t)g[REG_RSP];
	uint64_t rip = sp[0], flags = sp[1], rsp = sp[2];

	if (!uintr__canonical(rip)) {
		uintr__compat_raise_gp(uc);
		return;
	}
	g[REG_RIP] = (greg_t)rip;
	g[REG_EFL] = (greg_t)(((uint64_t)g[REG_EFL] & ~UINTR__UIRET_FLAGS) |
			      (flags & UINTR__UIRET_FLAGS));
	g[REG_RSP] = (greg_t)rsp;
	atomic_store(&uintr__self.uif, 1);
	if (!uintr__compat_deliver(uc)) {
		uintr__compat_deliver_pending(uc); /* a receiver with a C handler */
		uintr__compat_uiret_done(uc);
	}
}

static void uintr__compat_execute(const struct uintr__compat_insn *insn, siginfo_t *si,
				  ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;
	uint64_t flags;
	int fault;

	switch (insn->op) {
	case UINTR__OP_STUI:
		g[REG_RIP] += insn->len;
		atomic_store(&uintr__self.uif, 1);
		uintr__compat_deliver_pending(uc);
		break;
	case UINTR__OP_CLUI:
		g[REG_RIP] += insn->len;
		atomic_store(&uintr__self.uif, 0);
		break;
	case UINTR__OP_TESTUI:
		g[REG_RIP] += insn->len;
		flags = (uint64_t)g[REG_EFL] &
			~(UINTR__CF | UINTR__PF | UINTR__AF | UINTR__ZF | UINTR__SF | UINTR__OF);
		if (atomic_load(&uintr__self.uif))
			flags |= UINTR__CF;
		g[REG_EFL] = (greg_t)flags;
		break;
	case UINTR__OP_SENDUIPI:
		fault = uintr__senduipi_try((unsigned long long)g[uintr__gpr[insn->reg]]);
		if (fault == 0)
			g[REG_RIP] += insn->len;
		else if (fault == SIGSEGV)
			uintr__compat_raise_gp(uc);
		else /* #UD: the SIGILL the kernel just gave us is the CPU's */
			uintr__compat_chain(SIGILL, si, uc);
		break;
	case UINTR__OP_UIRET:
		uintr__compat_uiret(uc);
		break;
	case UINTR__OP_NONE:
		uintr__compat_chain(SIGILL, si, uc);
		break;
	}
}

void uintr__compat_sigill(int signo, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	struct uintr__compat_insn insn;
	int saved_errno = errno;
	uint64_t rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];

	/* A patched STUI/CLUI (patch.c: UD2 in its first bytes) first. */
	if (si->si_code == ILL_ILLOPN && (uint64_t)(uintptr_t)si->si_addr == rip &&
	    (uintr__compat_patched(rip, &insn) || uintr__compat_decode(rip, &insn)))
		uintr__compat_execute(&insn, si, uc);
	else
		uintr__compat_chain(signo, si, uc);
	errno = saved_errno;
}
