/*
 * Binary compatibility, every register preserved (issue: "a handler and an
 * interrupted loop that each keep values in every general register and
 * check them afterwards"; "Every register, flag and the red zone of the
 * interrupted code are preserved exactly ... and so are the handler's
 * own"; reference 5.3, 5.4).
 *   - The interrupted code (assembly) sets RFLAGS to CF PF AF ZF SF OF,
 *     fills its 128-byte red zone and loads a known value into each of the
 *     15 general registers, then spins on `jmp .`.  The handler moves the
 *     stacked RIP to a resume label (a UIRET to a changed frame); there
 *     every register, the flags, the red zone and RSP are as they were.
 *   - The handler runs the same kind of code: known values in all 15
 *     registers and its red zone, then SENDUIPI (index in R12) to its own
 *     vector 30, CLUI, STUI (vector 30 is delivered right there, nested,
 *     below the red zone), TESTUI; afterwards every register and the red
 *     zone are unchanged and the flags are the set ones with CF = 1 and
 *     ZF AF OF PF SF = 0 (TESTUI with UIF = 1).
 */
#include "helpers-compat.h"

/* Values for RAX RBX RCX RDX RSI RDI RBP R8..R15: loop, handler. */
#define L0 0x1101010101010101
#define L1 0x1202020202020202
#define L2 0x1303030303030303
#define L3 0x1404040404040404
#define L4 0x1505050505050505
#define L5 0x1606060606060606
#define L6 0x1707070707070707
#define L7 0x1808080808080808
#define L8 0x1909090909090909
#define L9 0x1a0a0a0a0a0a0a0a
#define L10 0x1b0b0b0b0b0b0b0b
#define L11 0x1c0c0c0c0c0c0c0c
#define L12 0x1d0d0d0d0d0d0d0d
#define L13 0x1e0e0e0e0e0e0e0e
#define L14 0x1f0f0f0f0f0f0f0f
#define H0 0x2101010101010101
#define H1 0x2202020202020202
#define H2 0x2303030303030303
#define H3 0x2404040404040404
#define H4 0x2505050505050505
#define H5 0x2606060606060606
#define H6 0x2707070707070707
#define H7 0x2808080808080808
#define H8 0x2909090909090909
#define H9 0x2a0a0a0a0a0a0a0a
#define H10 0x2b0b0b0b0b0b0b0b
#define H11 0 /* R12: the UITT index of the handler's SENDUIPI */
#define H12 0x2d0d0d0d0d0d0d0d
#define H13 0x2e0e0e0e0e0e0e0e
#define H14 0x2f0f0f0f0f0f0f0f
/* Red zone qword k (at -8*(k+1)(%rsp)): base + k. */
#define LRED 0x3300000000000000
#define HRED 0x4400000000000000
#define FLAGS_SET 0x8d7 /* CF PF AF ZF SF OF, bit 1 */

#define STR(x) #x
#define XSTR(x) STR(x)
#define LOAD_ALL(p)                                                                           \
	"movabs $" XSTR(p##0) ", %rax\n\tmovabs $" XSTR(p##1) ", %rbx\n\t"                     \
	"movabs $" XSTR(p##2) ", %rcx\n\tmovabs $" XSTR(p##3) ", %rdx\n\t"                     \
	"movabs $" XSTR(p##4) ", %rsi\n\tmovabs $" XSTR(p##5) ", %rdi\n\t"                     \
	"movabs $" XSTR(p##6) ", %rbp\n\tmovabs $" XSTR(p##7) ", %r8\n\t"                      \
	"movabs $" XSTR(p##8) ", %r9\n\tmovabs $" XSTR(p##9) ", %r10\n\t"                      \
	"movabs $" XSTR(p##10) ", %r11\n\tmovabs $" XSTR(p##11) ", %r12\n\t"                   \
	"movabs $" XSTR(p##12) ", %r13\n\tmovabs $" XSTR(p##13) ", %r14\n\t"                   \
	"movabs $" XSTR(p##14) ", %r15\n\t"
#define STORE_ALL(a)                                                                          \
	"movq %rax, " a "+0(%rip)\n\tmovq %rbx, " a "+8(%rip)\n\t"                             \
	"movq %rcx, " a "+16(%rip)\n\tmovq %rdx, " a "+24(%rip)\n\t"                           \
	"movq %rsi, " a "+32(%rip)\n\tmovq %rdi, " a "+40(%rip)\n\t"                           \
	"movq %rbp, " a "+48(%rip)\n\tmovq %r8, " a "+56(%rip)\n\t"                            \
	"movq %r9, " a "+64(%rip)\n\tmovq %r10, " a "+72(%rip)\n\t"                            \
	"movq %r11, " a "+80(%rip)\n\tmovq %r12, " a "+88(%rip)\n\t"                           \
	"movq %r13, " a "+96(%rip)\n\tmovq %r14, " a "+104(%rip)\n\t"                          \
	"movq %r15, " a "+112(%rip)\n\t"
/* Fill / copy the red zone with RAX as scratch (MOV leaves the flags). */
#define RED1(base, k) "movabs $" XSTR(base) "+" #k ", %rax\n\tmovq %rax, -8-8*" #k "(%rsp)\n\t"
#define FILL_RED(base)                                                                        \
	RED1(base, 0) RED1(base, 1) RED1(base, 2) RED1(base, 3) RED1(base, 4) RED1(base, 5)    \
	RED1(base, 6) RED1(base, 7) RED1(base, 8) RED1(base, 9) RED1(base, 10)                 \
	RED1(base, 11) RED1(base, 12) RED1(base, 13) RED1(base, 14) RED1(base, 15)
#define COPY1(a, k) "movq -8-8*" #k "(%rsp), %rax\n\tmovq %rax, " a "+8*" #k "(%rip)\n\t"
#define COPY_RED(a)                                                                           \
	COPY1(a, 0) COPY1(a, 1) COPY1(a, 2) COPY1(a, 3) COPY1(a, 4) COPY1(a, 5) COPY1(a, 6)    \
	COPY1(a, 7) COPY1(a, 8) COPY1(a, 9) COPY1(a, 10) COPY1(a, 11) COPY1(a, 12)             \
	COPY1(a, 13) COPY1(a, 14) COPY1(a, 15)
#define SAVE_CALLEE "pushq %rbx\n\tpushq %rbp\n\tpushq %r12\n\tpushq %r13\n\tpushq %r14\n\tpushq %r15\n\t"
#define RESTORE_CALLEE "popq %r15\n\tpopq %r14\n\tpopq %r13\n\tpopq %r12\n\tpopq %rbp\n\tpopq %rbx\n\t"

unsigned long long loop_regs[15], loop_red[16], loop_flags_before, loop_flags_after;
unsigned long long loop_rsp, loop_rsp_after, loop_spinning;
unsigned long long hand_regs[15], hand_red[16], hand_flags_before, hand_flags_after;

void loop_probe(void);
void handler_probe(void);
extern const char loop_spin[], loop_resume[], handler_after_stui[];

__asm__(".text\n"
	".globl loop_probe\n"
	".type loop_probe, @function\n"
	"loop_probe:\n\t"
	SAVE_CALLEE
	"movq %rsp, loop_rsp(%rip)\n\t"
	"pushq $" XSTR(FLAGS_SET) "\n\t"
	"popfq\n\t"
	"pushfq\n\t"
	"popq loop_flags_before(%rip)\n\t"
	FILL_RED(LRED)
	"movq $1, loop_spinning(%rip)\n\t"
	LOAD_ALL(L)
	"\n.globl loop_spin\n"
	"loop_spin:\n\t"
	"jmp loop_spin\n"
	".globl loop_resume\n"
	"loop_resume:\n\t"
	STORE_ALL("loop_regs")
	COPY_RED("loop_red")
	"pushfq\n\t"
	"popq loop_flags_after(%rip)\n\t"
	"movq %rsp, loop_rsp_after(%rip)\n\t"
	RESTORE_CALLEE
	"ret\n"
	".size loop_probe, . - loop_probe\n"

	".globl handler_probe\n"
	".type handler_probe, @function\n"
	"handler_probe:\n\t"
	SAVE_CALLEE
	"pushq $" XSTR(FLAGS_SET) "\n\t"
	"popfq\n\t"
	"pushfq\n\t"
	"popq hand_flags_before(%rip)\n\t"
	FILL_RED(HRED)
	LOAD_ALL(H)
	"senduipi %r12\n\t"
	"clui\n\t"
	"stui\n"
	".globl handler_after_stui\n"
	"handler_after_stui:\n\t"
	"testui\n\t"
	STORE_ALL("hand_regs")
	COPY_RED("hand_red")
	"pushfq\n\t"
	"popq hand_flags_after(%rip)\n\t"
	RESTORE_CALLEE
	"ret\n"
	".size handler_probe, . - handler_probe\n");

static const unsigned long long loop_expect[15] = {
	L0, L1, L2, L3, L4, L5, L6, L7, L8, L9, L10, L11, L12, L13, L14,
};
static const unsigned long long hand_expect[15] = {
	H0, H1, H2, H3, H4, H5, H6, H7, H8, H9, H10, H11, H12, H13, H14,
};

static int uipi_fd = -1, ready, done;
static int events;
static unsigned long long event_log[8], frame_rsp, nested_rip;

static void log_event(unsigned long long what)
{
	int n = ADD(events, 1) - 1;

	if (n < 8)
		STORE(event_log[n], what);
}

static void __attribute__((interrupt))
handler(struct __uintr_frame *frame, unsigned long long vector)
{
	if (vector == 7) {
		log_event(7);
		STORE(frame_rsp, frame->rsp);
		handler_probe();
		if (frame->rip == (unsigned long long)(uintptr_t)loop_spin)
			frame->rip = (unsigned long long)(uintptr_t)loop_resume;
		log_event(107);
		STORE(done, 1);
	} else {
		log_event(vector);
		STORE(nested_rip, frame->rip);
	}
}

static void *receiver(void *arg)
{
	long fd7, fd30;

	(void)arg;
	CHECK_EQ(u_register_handler(handler, 0), 0);
	fd7 = u_create_fd(7, 0);
	fd30 = u_create_fd(30, 0);
	CHECK(fd7 >= 0 && fd30 >= 0);
	CHECK_EQ(u_register_sender((int)fd30, 0), H11);
	STORE(uipi_fd, (int)fd7);
	_stui();
	STORE(ready, 1);
	loop_probe();
	CHECK_EQ(u_unregister_handler(0), 0);
	return NULL;
}

int main(void)
{
	pthread_t t = t_start(receiver, NULL);
	long idx;
	int k;

	WAIT_UNTIL(LOAD(ready));
	idx = u_register_sender(LOAD(uipi_fd), 0);
	CHECK_EQ(idx, 0);
	WAIT_UNTIL(LOAD(loop_spinning));
	_senduipi((unsigned long long)idx);
	WAIT_UNTIL(LOAD(done));
	t_join(t);

	/* The interrupted loop. */
	for (k = 0; k < 15; k++)
		CHECK_EQ(loop_regs[k], loop_expect[k]);
	for (k = 0; k < 16; k++)
		CHECK_EQ(loop_red[k], LRED + (unsigned long long)k);
	CHECK_EQ(loop_flags_before & 0xfd7, FLAGS_SET | 0x200);
	CHECK_EQ(loop_flags_after, loop_flags_before);
	CHECK_EQ(loop_rsp_after, loop_rsp);
	CHECK_EQ(frame_rsp, loop_rsp);

	/* The handler's own code, across SENDUIPI, CLUI, a nested delivery. */
	for (k = 0; k < 15; k++)
		CHECK_EQ(hand_regs[k], hand_expect[k]);
	for (k = 0; k < 16; k++)
		CHECK_EQ(hand_red[k], HRED + (unsigned long long)k);
	CHECK_EQ(hand_flags_before & 0xfd7, FLAGS_SET | 0x200);
	CHECK_EQ(hand_flags_after, (hand_flags_before & ~0x8d5ull) | 1);
	CHECK_EQ(nested_rip, (unsigned long long)(uintptr_t)handler_after_stui);

	CHECK_EQ(LOAD(events), 3);
	CHECK_EQ(event_log[0], 7);
	CHECK_EQ(event_log[1], 30);
	CHECK_EQ(event_log[2], 107);
	return T_PASS;
}
