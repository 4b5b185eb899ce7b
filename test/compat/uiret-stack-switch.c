/*
 * Binary compatibility, a handler that switches threads before UIRET, as
 * user-level thread runtimes do on UINTR hardware (issue 13): an asm
 * handler pops the vector (5.3: [RSP] = vector, then the frame), pushes
 * all 15 GPRs on the interrupted stack, saves RSP, loads the RSP of the
 * other context, pops its 15 GPRs and runs UIRET there, which pops that
 * context's frame (5.4: from the current RSP, wherever it points).
 *   1. Context A (the receiver thread) loads a pattern into every GPR and
 *      its red zone, sets DF, and spins; the first interrupt switches to
 *      context B, which starts from a prepared stack: B checks that it got
 *      B's pattern in every GPR and spins.
 *   2. The second interrupt lands in B and switches back: A resumes with
 *      every GPR, its red zone and DF intact and leaves its loop.
 * Exactly two switches; B is left suspended (its stack is static).
 */
#include "helpers-compat.h"

#define A_PAT(i) (0xa5a5000000000000ull | ((unsigned long long)(i) << 8) | 0x11u)
#define B_PAT(i) (0xb6b6000000000000ull | ((unsigned long long)(i) << 8) | 0x22u)
#define NREGS 15

/* Switch state, read and written only by the handler: ss_sp[ss_cur] is
 * the running context's, the other the suspended one's saved RSP. */
unsigned long long ss_sp[2], ss_cur, ss_switches;
/* A's and B's observations, in push order (rax rbx rcx rdx rsi rdi rbp
 * r8-r15). */
unsigned long long a_after[NREGS], a_red[4], a_flags, a_saved[6], a_ready, a_go;
unsigned long long b_seen[NREGS], b_ran;

void switch_handler(void);
void probe_a(void);
void b_entry(void);

#define STORE_ALL(arr)                                                             \
	"movq %rax, " arr "+0(%rip)\n\tmovq %rbx, " arr "+8(%rip)\n\t"             \
	"movq %rcx, " arr "+16(%rip)\n\tmovq %rdx, " arr "+24(%rip)\n\t"           \
	"movq %rsi, " arr "+32(%rip)\n\tmovq %rdi, " arr "+40(%rip)\n\t"           \
	"movq %rbp, " arr "+48(%rip)\n\tmovq %r8, " arr "+56(%rip)\n\t"            \
	"movq %r9, " arr "+64(%rip)\n\tmovq %r10, " arr "+72(%rip)\n\t"            \
	"movq %r11, " arr "+80(%rip)\n\tmovq %r12, " arr "+88(%rip)\n\t"           \
	"movq %r13, " arr "+96(%rip)\n\tmovq %r14, " arr "+104(%rip)\n\t"          \
	"movq %r15, " arr "+112(%rip)\n\t"

#define A_LOAD(reg, i) "movabsq $(0xa5a5000000000000 | (" #i " << 8) | 0x11), %" reg "\n\t"

__asm__(".text\n"
	/* The handler: entered with [rsp] = vector, [rsp+8] = frame. */
	".globl switch_handler\n"
	".type switch_handler, @function\n"
	"switch_handler:\n\t"
	"addq $8, %rsp\n\t"
	"pushq %r15\n\tpushq %r14\n\tpushq %r13\n\tpushq %r12\n\tpushq %r11\n\t"
	"pushq %r10\n\tpushq %r9\n\tpushq %r8\n\tpushq %rbp\n\tpushq %rdi\n\t"
	"pushq %rsi\n\tpushq %rdx\n\tpushq %rcx\n\tpushq %rbx\n\tpushq %rax\n\t"
	"movq ss_cur(%rip), %rax\n\t"
	"leaq ss_sp(%rip), %rbx\n\t"
	"movq %rsp, (%rbx,%rax,8)\n\t"
	"xorq $1, %rax\n\t"
	"movq %rax, ss_cur(%rip)\n\t"
	"movq (%rbx,%rax,8), %rsp\n\t"
	"incq ss_switches(%rip)\n\t"
	"popq %rax\n\tpopq %rbx\n\tpopq %rcx\n\tpopq %rdx\n\tpopq %rsi\n\t"
	"popq %rdi\n\tpopq %rbp\n\tpopq %r8\n\tpopq %r9\n\tpopq %r10\n\t"
	"popq %r11\n\tpopq %r12\n\tpopq %r13\n\tpopq %r14\n\tpopq %r15\n\t"
	"uiret\n"
	".size switch_handler, . - switch_handler\n"

	/* Context A, called from C: every GPR and the red zone hold A's
	 * pattern while it spins. */
	".globl probe_a\n"
	".type probe_a, @function\n"
	"probe_a:\n\t"
	"movq %rbx, a_saved+0(%rip)\n\tmovq %rbp, a_saved+8(%rip)\n\t"
	"movq %r12, a_saved+16(%rip)\n\tmovq %r13, a_saved+24(%rip)\n\t"
	"movq %r14, a_saved+32(%rip)\n\tmovq %r15, a_saved+40(%rip)\n\t"
	A_LOAD("rax", 0) A_LOAD("rbx", 1) A_LOAD("rcx", 2) A_LOAD("rdx", 3)
	A_LOAD("rsi", 4) A_LOAD("rdi", 5) A_LOAD("rbp", 6) A_LOAD("r8", 7)
	A_LOAD("r9", 8) A_LOAD("r10", 9) A_LOAD("r11", 10) A_LOAD("r12", 11)
	A_LOAD("r13", 12) A_LOAD("r14", 13) A_LOAD("r15", 14)
	"movq %rax, -8(%rsp)\n\tmovq %rbx, -40(%rsp)\n\t"
	"movq %rcx, -80(%rsp)\n\tmovq %rdx, -128(%rsp)\n\t"
	"std\n\t"
	"movq $1, a_ready(%rip)\n"
	"1:\n\t"
	"cmpq $0, a_go(%rip)\n\t"
	"je 1b\n\t"
	STORE_ALL("a_after")
	"movq -8(%rsp), %rax\n\tmovq %rax, a_red+0(%rip)\n\t"
	"movq -40(%rsp), %rax\n\tmovq %rax, a_red+8(%rip)\n\t"
	"movq -80(%rsp), %rax\n\tmovq %rax, a_red+16(%rip)\n\t"
	"movq -128(%rsp), %rax\n\tmovq %rax, a_red+24(%rip)\n\t"
	"pushfq\n\tpopq %rax\n\tmovq %rax, a_flags(%rip)\n\t"
	"cld\n\t"
	"movq a_saved+0(%rip), %rbx\n\tmovq a_saved+8(%rip), %rbp\n\t"
	"movq a_saved+16(%rip), %r12\n\tmovq a_saved+24(%rip), %r13\n\t"
	"movq a_saved+32(%rip), %r14\n\tmovq a_saved+40(%rip), %r15\n\t"
	"ret\n"
	".size probe_a, . - probe_a\n"

	/* Context B: started by the first UIRET; records what it got. */
	".globl b_entry\n"
	".type b_entry, @function\n"
	"b_entry:\n\t"
	STORE_ALL("b_seen")
	"movq $1, b_ran(%rip)\n"
	"2:\n\t"
	"jmp 2b\n"
	".size b_entry, . - b_entry\n");

static unsigned long long b_stack[4096] __attribute__((aligned(16)));
static int uipi_fd = -1, ready;

/* B's first context: 15 GPRs in pop order, then the frame UIRET pops. */
static void prepare_b(void)
{
	unsigned long long *p = &b_stack[4096 - 64];
	int i;

	for (i = 0; i < NREGS; i++)
		p[i] = B_PAT(i);
	p[NREGS] = (unsigned long long)(uintptr_t)b_entry; /* RIP */
	p[NREGS + 1] = 0x202;                              /* RFLAGS */
	p[NREGS + 2] = (unsigned long long)(uintptr_t)&b_stack[2048]; /* RSP */
	ss_sp[1] = (unsigned long long)(uintptr_t)p;
	ss_cur = 0;
}

static void *receiver(void *arg)
{
	long fd;
	int i;

	(void)arg;
	prepare_b();
	CHECK_EQ(u_register_handler((t_uintr_handler)(uintptr_t)switch_handler, 0), 0);
	fd = u_create_fd(3, 0);
	CHECK(fd >= 0);
	STORE(uipi_fd, (int)fd);
	_stui();
	STORE(ready, 1);
	probe_a();
	/* Back in A after two switches, with everything it had. */
	CHECK_EQ(LOAD(ss_switches), 2);
	CHECK_EQ(ss_cur, 0);
	for (i = 0; i < NREGS; i++)
		CHECK_EQ(a_after[i], A_PAT(i));
	CHECK_EQ(a_red[0], A_PAT(0));
	CHECK_EQ(a_red[1], A_PAT(1));
	CHECK_EQ(a_red[2], A_PAT(2));
	CHECK_EQ(a_red[3], A_PAT(3));
	CHECK(a_flags & 0x400); /* DF */
	CHECK_EQ(_testui(), 1);
	CHECK_EQ(u_unregister_handler(0), 0);
	return NULL;
}

int main(void)
{
	pthread_t t;
	long idx;
	int i;

	t = t_start(receiver, NULL);
	WAIT_UNTIL(LOAD(ready));
	idx = u_register_sender(LOAD(uipi_fd), 0);
	CHECK_EQ(idx, 0);
	WAIT_UNTIL(LOAD(a_ready));
	_senduipi((unsigned long long)idx); /* A -> B */
	WAIT_UNTIL(LOAD(b_ran));
	for (i = 0; i < NREGS; i++)
		CHECK_EQ(b_seen[i], B_PAT(i));
	CHECK_EQ(LOAD(ss_switches), 1);
	STORE(a_go, 1);
	_senduipi((unsigned long long)idx); /* B -> A */
	t_join(t);
	CHECK_EQ(LOAD(ss_switches), 2);
	return T_PASS;
}
