/*
 * Delivery (reference 5.3) by rewriting the interrupted context, and the
 * bookkeeping after UIRET (5.4).
 *
 * The CPU delivers vector v like this: oldRSP = RSP; RSP -= UISTACKADJUST
 * (128, the red zone; or RSP = UISTACKADJUST if its bit 0 is set); RSP &=
 * ~15; push oldRSP, RFLAGS, RIP, v; UIF = 0; TF = RF = 0; RIP = UIHANDLER.
 *
 * We get there from a signal handler (the notification signal, or SIGILL
 * for STUI/UIRET, or SIGSYS for uintr_wait) whose ucontext holds the
 * interrupted registers.  The four pushes cannot be written from inside
 * the signal handler: the kernel put the signal frame (ucontext, FPU/AVX
 * state) right below the interrupted red zone, exactly where they go.  So
 * the rewritten context resumes, after sigreturn, at a trampoline with
 * RSP = the new stack top and RAX = a per-thread slot holding what to push:
 *
 *   push oldRSP; push RFLAGS; push RIP; push vector; push handler;
 *   RAX = the interrupted RAX; ret (to the handler)
 *
 * Neither PUSH, MOV nor RET changes a flag; the handler starts with
 * [RSP] = vector, [RSP+8] = RIP, [RSP+16] = RFLAGS, [RSP+24] = old RSP and
 * every register as it was interrupted.  The trampoline runs with UIF = 0,
 * so no other delivery can take its slot before it has read it, except
 * through a signal handler of the program that lands on the trampoline
 * and runs STUI: the slots are a ring of eight for that.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <string.h>

#include "compat.h"

UINTR__TLS struct uintr__compat_thread uintr__compat_self;

_Static_assert(offsetof(struct uintr__compat_slot, rax) == 0, "slot layout");
_Static_assert(offsetof(struct uintr__compat_slot, vector) == 8, "slot layout");
_Static_assert(offsetof(struct uintr__compat_slot, rip) == 16, "slot layout");
_Static_assert(offsetof(struct uintr__compat_slot, rflags) == 24, "slot layout");
_Static_assert(offsetof(struct uintr__compat_slot, rsp) == 32, "slot layout");
_Static_assert(offsetof(struct uintr__compat_slot, handler) == 40, "slot layout");

void uintr__compat_trampoline(void);

__asm__(".text\n"
	".p2align 4\n"
	".globl uintr__compat_trampoline\n"
	".hidden uintr__compat_trampoline\n"
	".type uintr__compat_trampoline, @function\n"
	"uintr__compat_trampoline:\n"
	"	pushq 32(%rax)\n" /* old RSP */
	"	pushq 24(%rax)\n" /* RFLAGS */
	"	pushq 16(%rax)\n" /* RIP */
	"	pushq 8(%rax)\n"  /* vector */
	"	pushq 40(%rax)\n" /* the handler, taken by ret */
	"	movq (%rax), %rax\n"
	"	ret\n"
	".size uintr__compat_trampoline, . - uintr__compat_trampoline\n");

/*
 * Call an interrupt handler from C, as the CPU would deliver to it here:
 * its UIRET (emulated) comes back to label 1 with RSP and flags restored.
 * For the engine's own delivery paths (uintr_stui(), uintr_poll() ... of
 * a program that also calls the library's functions).
 */
__asm__(".text\n"
	".p2align 4\n"
	".globl uintr__compat_call_handler\n"
	".hidden uintr__compat_call_handler\n"
	".type uintr__compat_call_handler, @function\n"
	"uintr__compat_call_handler:\n" /* rdi = handler, rsi = vector */
	"	pushq %rbp\n"
	"	movq %rsp, %rbp\n"
	"	andq $-16, %rsp\n"
	"	pushq %rbp\n"             /* old RSP */
	"	pushfq\n"                 /* RFLAGS */
	"	leaq 1f(%rip), %rax\n"
	"	pushq %rax\n"             /* RIP */
	"	pushq %rsi\n"             /* vector */
	"	jmp *%rdi\n"
	"1:	popq %rbp\n"
	"	ret\n"
	".size uintr__compat_call_handler, . - uintr__compat_call_handler\n");

/* The receiver's handler as the engine sees it (receiver.c, delivery.c). */
void uintr__compat_sync_handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	uintr__compat_call_handler(uintr__compat_self.handler, vector);
}

/*
 * Deliver the highest pending vector into uc if UIF = 1 (5.3).  Taking UIF
 * with an exchange first, as the engine does, keeps a nested notification
 * from delivering the same vector twice.  Returns 1 if uc now enters the
 * handler.
 */
int uintr__compat_deliver(ucontext_t *uc)
{
	struct uintr__receiver *r = uintr__self.receiver;
	struct uintr__compat_thread *self = &uintr__compat_self;
	struct uintr__compat_slot *slot;
	greg_t *g = uc->uc_mcontext.gregs;
	uint64_t uirr, sp;
	unsigned int vector;

	if (!r || r->deliver_context != uintr__compat_deliver_context)
		return 0;
	for (;;) {
		if (!atomic_exchange(&uintr__self.uif, 0))
			return 0;
		uirr = atomic_load(&r->info->uirr);
		if (uirr)
			break;
		atomic_store(&uintr__self.uif, 1);
		if (!atomic_load(&r->info->uirr))
			return 0;
	}
	vector = 63u - (unsigned int)__builtin_clzll(uirr);
	atomic_fetch_and(&r->info->uirr, ~(1ull << vector));
	uintr__count_delivery(&r->info->delivered);

	slot = &self->slot[self->slot_next++ % UINTR__COMPAT_SLOTS];
	slot->rax = (uint64_t)g[REG_RAX];
	slot->vector = vector;
	slot->rip = (uint64_t)g[REG_RIP];
	slot->rflags = (uint64_t)g[REG_EFL];
	slot->rsp = (uint64_t)g[REG_RSP];
	slot->handler = self->handler;

	if (r->stack_adjust & 1)
		sp = r->stack_adjust;
	else
		sp = slot->rsp - r->stack_adjust;
	sp &= ~15ull;
	g[REG_RAX] = (greg_t)(uintptr_t)slot;
	g[REG_RSP] = (greg_t)sp;
	g[REG_RIP] = (greg_t)(uintptr_t)uintr__compat_trampoline;
	g[REG_EFL] = (greg_t)((uint64_t)g[REG_EFL] & ~(UINTR__TF | UINTR__RF));
	return 1;
}

/*
 * After STUI or UIRET: recognized interrupts are delivered at once.  A
 * receiver registered through the library's own function (a C handler)
 * gets the engine's delivery, with the frame taken from uc.
 */
void uintr__compat_deliver_pending(ucontext_t *uc)
{
	struct uintr__receiver *r = uintr__self.receiver;
	struct uintr_frame frame;

	if (!r || !atomic_load(&uintr__self.uif) || !atomic_load(&r->info->uirr))
		return;
	if (r->deliver_context) {
		uintr__compat_deliver(uc);
		return;
	}
	uintr__arch_frame_read(uc, &frame);
	/* In the emulation's SIGILL handler (an emulated STUI or UIRET): a
	 * C handler's uintr_frame_call fails with EINVAL here; -muintr code
	 * switches stacks itself before its UIRET. */
	uintr__deliver(&frame, NULL);
	uintr__arch_frame_write(uc, &frame);
}

/* The engine's hook (delivery.c): a notification found UIF = 1, UIRR != 0. */
void uintr__compat_deliver_context(struct uintr__receiver *r, ucontext_t *uc)
{
	(void)r;
	uintr__compat_deliver(uc);
}

/*
 * A UIRET that delivers nothing more and returns to where uintr_wait
 * (delivering from its SIGSYS handler, syscall.c) returns: the wait is
 * over for the engine's event count (wait.c: "delivered since the last
 * uintr_wait returned"), as the engine marks it when it delivers itself.
 */
void uintr__compat_uiret_done(ucontext_t *uc)
{
	struct uintr__compat_thread *self = &uintr__compat_self;
	struct uintr__receiver *r = uintr__self.receiver;

	if (!self->wait_delivered || (uint64_t)uc->uc_mcontext.gregs[REG_RSP] < self->wait_rsp)
		return;
	self->wait_delivered = 0;
	if (r)
		r->wait_mark = atomic_load_explicit(&r->info->delivered, memory_order_relaxed);
}

/*
 * The notification signal, in front of the engine's handler.  All signals
 * stay blocked while it runs (signals.c installs it so): a delivery is one
 * step, as on the CPU, and a second notification arriving meanwhile is
 * taken after sigreturn, on the way to the handler (UIF = 0 then: it only
 * moves PIR to UIRR), never inside this signal handler.
 */
void uintr__compat_notification(int signo, siginfo_t *si, void *uc)
{
	uintr__signal_handler(signo, si, uc);
}
