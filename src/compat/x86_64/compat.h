/*
 * libuintr binary compatibility, x86-64: programs built with gcc -muintr
 * (SENDUIPI, STUI, CLUI, TESTUI, UIRET, __attribute__((interrupt))
 * handlers, syscall(__NR_uintr_...)) run unmodified on the software
 * engine, on CPUs without UINTR, where those instructions raise #UD.
 *
 * Where each part lives:
 *   init.c     the constructor: hardware detection, configuration, setup
 *   decode.c   the five instructions decoded as the CPU decodes them (5)
 *   length.c   the length of any instruction (for patch.c)
 *   patch.c    STUI and CLUI rewritten to trap where the CPU would run them
 *              as WRPKRU and RDPKRU (AMD with protection keys)
 *   emulate.c  the SIGILL handler: STUI CLUI TESTUI SENDUIPI UIRET, faults
 *   deliver.c  delivery by rewriting the interrupted context (5.3)
 *   syscall.c  the seccomp filter and the SIGSYS handler: the RFC syscalls (2),
 *              or the later branch's (3, src/later.c), per UINTR_ABI
 *   signals.c  keeping SIGILL and SIGSYS usable: sigaction and signal-mask
 *              interposition, the program's own handlers (chaining)
 *
 * The program's interrupt handler never runs inside a signal handler: a
 * signal handler (SIGILL for an instruction, SIGSYS for uintr_wait, the
 * engine's notification signal for an asynchronous interrupt) rewrites the
 * interrupted context as the CPU would and returns; the kernel's sigreturn
 * then restores every register, and only RIP, RSP, RFLAGS (and, for a few
 * instructions of a trampoline, RAX) differ.
 */
#ifndef UINTR_COMPAT_X86_64_H
#define UINTR_COMPAT_X86_64_H

#include <signal.h>
#include <stdint.h>
#include <ucontext.h>

#include "uintr-int.h"

/* Default syscall numbers: uintr_register_handler .. uintr_wait (ref. 1). */
#define UINTR__COMPAT_DEFAULT_BASE 471
#define UINTR__COMPAT_NR_SYSCALLS 6
/* The later branch's: .. uintr_register_self, uintr_alt_stack, uintr_ipi_fd (3). */
#define UINTR__COMPAT_NR_SYSCALLS_LATER 9

/* The ABI the program is run under (UINTR_ABI, init.c). */
#define UINTR__ABI_RFC 0
#define UINTR__ABI_LATER 1
extern int uintr__compat_abi;

/* RFLAGS bits. */
#define UINTR__CF 0x1ull
#define UINTR__PF 0x4ull
#define UINTR__AF 0x10ull
#define UINTR__ZF 0x40ull
#define UINTR__SF 0x80ull
#define UINTR__TF 0x100ull
#define UINTR__OF 0x800ull
#define UINTR__RF 0x10000ull

enum uintr__compat_op {
	UINTR__OP_NONE,
	UINTR__OP_SENDUIPI,
	UINTR__OP_UIRET,
	UINTR__OP_TESTUI,
	UINTR__OP_CLUI,
	UINTR__OP_STUI,
};

struct uintr__compat_insn {
	enum uintr__compat_op op;
	unsigned int len;  /* bytes, prefixes included */
	unsigned int reg;  /* SENDUIPI: register operand, 0 (RAX) .. 15 (R15) */
};

/*
 * One delivery between the context rewrite and the handler's first
 * instruction.  The trampoline (deliver.c) reads it through RAX; the
 * offsets are fixed there.
 */
struct uintr__compat_slot {
	uint64_t rax;     /*  0: the interrupted RAX, restored by the trampoline */
	uint64_t vector;  /*  8 */
	uint64_t rip;     /* 16 */
	uint64_t rflags;  /* 24 */
	uint64_t rsp;     /* 32 */
	uint64_t handler; /* 40 */
};

#define UINTR__COMPAT_SLOTS 8

/* Per thread. */
struct uintr__compat_thread {
	uint64_t handler;         /* the program's handler (UIHANDLER) */
	unsigned int slot_next;
	int wait_delivered;       /* uintr_wait delivered: its return is pending */
	uint64_t wait_rsp;        /* the RSP uintr_wait returns with */
	struct uintr__compat_slot slot[UINTR__COMPAT_SLOTS];
};

extern UINTR__TLS struct uintr__compat_thread uintr__compat_self;
extern int uintr__compat_active;  /* emulating (not on UINTR hardware) */
extern int uintr__compat_notify_signo; /* the engine's notification signal, or 0 */

/* decode.c */
int uintr__compat_decode(uint64_t ip, struct uintr__compat_insn *insn);

/* length.c: the length of the instruction at p (at most n bytes), 0 if it
 * is invalid; *opcode_at (if not NULL): where its prefixes end. */
unsigned int uintr__compat_insn_length(const unsigned char *p, size_t n,
				       unsigned int *opcode_at);

/* patch.c */
void uintr__compat_patch_code(void);
int uintr__compat_patched(uint64_t ip, struct uintr__compat_insn *insn);

/* emulate.c */
void uintr__compat_sigill(int signo, siginfo_t *si, void *uc);
void uintr__compat_raise(ucontext_t *uc, int signo, const siginfo_t *si);
void uintr__compat_raise_gp(ucontext_t *uc);

/* deliver.c */
int uintr__compat_deliver(ucontext_t *uc);
void uintr__compat_deliver_pending(ucontext_t *uc);
void uintr__compat_deliver_context(struct uintr__receiver *r, ucontext_t *uc);
void uintr__compat_call_handler(uint64_t handler, uint64_t vector);
void uintr__compat_sync_handler(struct uintr_frame *frame, unsigned long long vector);
void uintr__compat_uiret_done(ucontext_t *uc);
void uintr__compat_notification(int signo, siginfo_t *si, void *uc);

/* syscall.c */
void uintr__compat_sigsys(int signo, siginfo_t *si, void *uc);
int uintr__compat_install_filter(unsigned int base);
int uintr__compat_filtered(unsigned int base);
extern volatile sig_atomic_t uintr__compat_probe_seen;

/* signals.c */
int uintr__compat_real_sigaction(int signo, const struct sigaction *act, struct sigaction *old);
int uintr__compat_real_sigmask(int how, const sigset_t *set, sigset_t *old);
void uintr__compat_resolve(void);
int uintr__compat_take_signals(void);
void uintr__compat_chain(int signo, siginfo_t *si, ucontext_t *uc);
void uintr__compat_keep_unblocked(sigset_t *set);
void uintr__compat_all_signals(sigset_t *set);

/* close.c: a descriptor this process made or registered through (RFC ABI). */
void uintr__compat_vector_fd_seen(int fd);

#endif
