/*
 * uintr_frame_call (issue 13): a preemption that switches user-level
 * threads, and resumes the preempted one, gives it back every register.
 *
 * The receiver runs fc_probe(), assembly that loads a known value into
 * every general register it can (all but the stack pointer and the two
 * registers its wait loop needs: none on x86-64, x16/x17 on arm64, t5/t6
 * on riscv64; gp and tp on riscv64 are the ABI's), into every FP/SIMD
 * register, a non-default rounding mode, flags (x86-64: DF = 1; arm64:
 * NZCV) and, on x86-64, the 128-byte red zone below the stack pointer, then
 * spins until it is told to stop and records what the registers hold.
 * Another thread sends vector 3.  The handler asks, with uintr_frame_call,
 * for switch_out(); switch_out() swapcontext()s to a second user-level
 * thread on its own stack, which overwrites the caller-saved and FP/SIMD
 * registers, sends itself vector 2 (delivered at once: the call runs with
 * UIF = 1 and the notification signal unblocked), and switches back.  When
 * switch_out() returns, the probe must find every value it loaded, and
 * errno (4242, set before the probe) must be what it was, in the call too.
 *
 * Also: a second uintr_frame_call for the same delivery is EBUSY, a NULL
 * fn and a copy of the frame are EINVAL (also in vector 2's handler, which
 * runs nested on the second thread's stack and asks for nothing).
 *
 * Skips (77) under ThreadSanitizer, which runs handlers on a copy of the
 * interrupted context at a later point (helpers.h, T_TSAN): the registers
 * of the interrupted code are not the handler's to keep there.
 */
#undef _FORTIFY_SOURCE /* swapcontext between stacks on purpose */
#include <ucontext.h>

#include "helpers-delivery.h"

#define NGPR 32
#define NSIMD 32
#define OTHER_STACK_SIZE (256 * 1024)

/* Values the probe loads, and what it found after the preemption. */
unsigned long long fc_gpat[NGPR], fc_gpr[NGPR];
unsigned char fc_vpat[NSIMD][16] __attribute__((aligned(16)));
unsigned char fc_vreg[NSIMD][16] __attribute__((aligned(16)));
unsigned long long fc_red[16], fc_flags, fc_fpctl;
_Atomic int fc_ready, fc_back;

void fc_probe(void);
void fc_clobber(void);

#if defined(__x86_64__)
#define GPR_CHECKED(i) ((i) < 16 && (i) != 4) /* rax..r15 but rsp */
#define NSIMD_CHECKED 16
#define FPCTL_SET 0x7f80ull /* MXCSR: all masked, round toward zero */
__asm__(".text\n"
	".globl fc_probe\n"
	".type fc_probe, @function\n"
	"fc_probe:\n\t"
	"pushq %rbx\n\tpushq %rbp\n\tpushq %r12\n\tpushq %r13\n\tpushq %r14\n\tpushq %r15\n\t"
	"subq $16, %rsp\n\t"
	"stmxcsr (%rsp)\n\t"
	"movl $0x7f80, 8(%rsp)\n\t"
	"ldmxcsr 8(%rsp)\n\t"
	/* the red zone: 16 distinct quadwords below %rsp */
	".irp i, 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16\n\t"
	"movq $(0x5eed0000 + \\i), -8*\\i(%rsp)\n\t"
	".endr\n\t"
	".irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n\t"
	"movdqa fc_vpat+16*\\i(%rip), %xmm\\i\n\t"
	".endr\n\t"
	"movq fc_gpat+8*0(%rip), %rax\n\t"
	"movq fc_gpat+8*1(%rip), %rcx\n\t"
	"movq fc_gpat+8*2(%rip), %rdx\n\t"
	"movq fc_gpat+8*3(%rip), %rbx\n\t"
	"movq fc_gpat+8*5(%rip), %rbp\n\t"
	"movq fc_gpat+8*6(%rip), %rsi\n\t"
	"movq fc_gpat+8*7(%rip), %rdi\n\t"
	".irp i, 8,9,10,11,12,13,14,15\n\t"
	"movq fc_gpat+8*\\i(%rip), %r\\i\n\t"
	".endr\n\t"
	"std\n\t"
	"movl $1, fc_ready(%rip)\n"
	"1:\n\t"
	"cmpl $0, fc_back(%rip)\n\t"
	"je 1b\n\t"
	"movq %rax, fc_gpr+8*0(%rip)\n\t"
	"movq %rcx, fc_gpr+8*1(%rip)\n\t"
	"movq %rdx, fc_gpr+8*2(%rip)\n\t"
	"movq %rbx, fc_gpr+8*3(%rip)\n\t"
	"movq %rbp, fc_gpr+8*5(%rip)\n\t"
	"movq %rsi, fc_gpr+8*6(%rip)\n\t"
	"movq %rdi, fc_gpr+8*7(%rip)\n\t"
	".irp i, 8,9,10,11,12,13,14,15\n\t"
	"movq %r\\i, fc_gpr+8*\\i(%rip)\n\t"
	".endr\n\t"
	".irp i, 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16\n\t"
	"movq -8*\\i(%rsp), %rax\n\t"
	"movq %rax, fc_red+8*(\\i-1)(%rip)\n\t"
	".endr\n\t"
	"pushfq\n\t"
	"popq fc_flags(%rip)\n\t"
	"cld\n\t"
	"stmxcsr -8(%rsp)\n\t"
	"movl -8(%rsp), %eax\n\t"
	"movq %rax, fc_fpctl(%rip)\n\t"
	".irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n\t"
	"movdqa %xmm\\i, fc_vreg+16*\\i(%rip)\n\t"
	".endr\n\t"
	"ldmxcsr (%rsp)\n\t"
	"addq $16, %rsp\n\t"
	"popq %r15\n\tpopq %r14\n\tpopq %r13\n\tpopq %r12\n\tpopq %rbp\n\tpopq %rbx\n\t"
	"ret\n\t"
	".size fc_probe, .-fc_probe\n"
	/* what a second thread's code may do to caller-saved state */
	".globl fc_clobber\n"
	".type fc_clobber, @function\n"
	"fc_clobber:\n\t"
	"pcmpeqd %xmm0, %xmm0\n\t"
	".irp i, 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n\t"
	"movdqa %xmm0, %xmm\\i\n\t"
	".endr\n\t"
	"movq $-1, %rax\n\tmovq $-1, %rcx\n\tmovq $-1, %rdx\n\tmovq $-1, %rsi\n\t"
	"movq $-1, %rdi\n\tmovq $-1, %r8\n\tmovq $-1, %r9\n\tmovq $-1, %r10\n\tmovq $-1, %r11\n\t"
	"movl $0x3f80, -4(%rsp)\n\t"
	"ldmxcsr -4(%rsp)\n\t"
	"ret\n\t"
	".size fc_clobber, .-fc_clobber\n");
#elif defined(__aarch64__)
#define GPR_CHECKED(i) ((i) <= 30 && (i) != 16 && (i) != 17)
#define NSIMD_CHECKED 32
#define FPCTL_SET (3ull << 22) /* FPCR.RMode = round toward zero */
__asm__(".text\n"
	".globl fc_probe\n"
	".type fc_probe, %function\n"
	"fc_probe:\n\t"
	"stp x29, x30, [sp, #-176]!\n\t"
	"stp x19, x20, [sp, #16]\n\tstp x21, x22, [sp, #32]\n\tstp x23, x24, [sp, #48]\n\t"
	"stp x25, x26, [sp, #64]\n\tstp x27, x28, [sp, #80]\n\t"
	"stp d8, d9, [sp, #96]\n\tstp d10, d11, [sp, #112]\n\t"
	"stp d12, d13, [sp, #128]\n\tstp d14, d15, [sp, #144]\n\t"
	"mrs x9, fpcr\n\tstr x9, [sp, #160]\n\t"
	"adrp x16, fc_vpat\n\tadd x16, x16, :lo12:fc_vpat\n\t"
	".irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n\t"
	"ldr q\\i, [x16, #16*\\i]\n\t"
	".endr\n\t"
	"mov x9, #(3 << 22)\n\tmsr fpcr, x9\n\t"
	"mov x9, #0xa0000000\n\tmsr nzcv, x9\n\t"
	"adrp x16, fc_gpat\n\tadd x16, x16, :lo12:fc_gpat\n\t"
	".irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,18,19,20,21,22,23,24,25,26,27,28,29,30\n\t"
	"ldr x\\i, [x16, #8*\\i]\n\t"
	".endr\n\t"
	"adrp x16, fc_ready\n\tadd x16, x16, :lo12:fc_ready\n\t"
	"mov w17, #1\n\tstr w17, [x16]\n\t"
	"adrp x16, fc_back\n\tadd x16, x16, :lo12:fc_back\n"
	"1:\n\t"
	"ldr w17, [x16]\n\t"
	"cbz w17, 1b\n\t"
	"adrp x16, fc_gpr\n\tadd x16, x16, :lo12:fc_gpr\n\t"
	".irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,18,19,20,21,22,23,24,25,26,27,28,29,30\n\t"
	"str x\\i, [x16, #8*\\i]\n\t"
	".endr\n\t"
	"mrs x17, nzcv\n\t"
	"adrp x16, fc_flags\n\tstr x17, [x16, :lo12:fc_flags]\n\t"
	"mrs x17, fpcr\n\t"
	"adrp x16, fc_fpctl\n\tstr x17, [x16, :lo12:fc_fpctl]\n\t"
	"adrp x16, fc_vreg\n\tadd x16, x16, :lo12:fc_vreg\n\t"
	".irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n\t"
	"str q\\i, [x16, #16*\\i]\n\t"
	".endr\n\t"
	"ldr x9, [sp, #160]\n\tmsr fpcr, x9\n\t"
	"ldp d8, d9, [sp, #96]\n\tldp d10, d11, [sp, #112]\n\t"
	"ldp d12, d13, [sp, #128]\n\tldp d14, d15, [sp, #144]\n\t"
	"ldp x19, x20, [sp, #16]\n\tldp x21, x22, [sp, #32]\n\tldp x23, x24, [sp, #48]\n\t"
	"ldp x25, x26, [sp, #64]\n\tldp x27, x28, [sp, #80]\n\t"
	"ldp x29, x30, [sp], #176\n\t"
	"ret\n\t"
	".size fc_probe, .-fc_probe\n"
	".globl fc_clobber\n"
	".type fc_clobber, %function\n"
	"fc_clobber:\n\t"
	".irp i, 0,1,2,3,4,5,6,7,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n\t"
	"movi v\\i\\().16b, #0xff\n\t"
	".endr\n\t"
	".irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17\n\t"
	"mov x\\i, #-1\n\t"
	".endr\n\t"
	"mov x9, #(2 << 22)\n\tmsr fpcr, x9\n\t"
	"msr nzcv, xzr\n\t"
	"ret\n\t"
	".size fc_clobber, .-fc_clobber\n");
#elif defined(__riscv) && __riscv_xlen == 64
/* ra t0-t2 s0-s1 a0-a7 s2-s11 t3-t4: x1, x5..x29 */
#define GPR_CHECKED(i) ((i) == 1 || ((i) >= 5 && (i) <= 29))
#define NSIMD_CHECKED 32
#define FPCTL_SET (1ull << 5) /* fcsr.frm = RTZ */
__asm__(".text\n"
	".globl fc_probe\n"
	".type fc_probe, @function\n"
	"fc_probe:\n\t"
	"addi sp, sp, -208\n\t"
	"sd ra, 0(sp)\n\t"
	".irp i, 0,1,2,3,4,5,6,7,8,9,10,11\n\t"
	"sd s\\i, 8+8*\\i(sp)\n\t"
	"fsd fs\\i, 104+8*\\i(sp)\n\t"
	".endr\n\t"
	"frcsr t0\n\tsd t0, 200(sp)\n\t"
	"la t6, fc_vpat\n\t"
	".irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n\t"
	"fld f\\i, 16*\\i(t6)\n\t"
	".endr\n\t"
	"li t0, 1\n\tfsrm t0\n\t"
	"la t6, fc_gpat\n\t"
	"ld x1, 8*1(t6)\n\t"
	".irp i, 5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29\n\t"
	"ld x\\i, 8*\\i(t6)\n\t"
	".endr\n\t"
	"la t6, fc_ready\n\tli t5, 1\n\tsw t5, 0(t6)\n\t"
	"la t6, fc_back\n"
	"1:\n\t"
	"lw t5, 0(t6)\n\t"
	"beqz t5, 1b\n\t"
	"la t6, fc_gpr\n\t"
	"sd x1, 8*1(t6)\n\t"
	".irp i, 5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29\n\t"
	"sd x\\i, 8*\\i(t6)\n\t"
	".endr\n\t"
	"frcsr t5\n\tla t6, fc_fpctl\n\tsd t5, 0(t6)\n\t"
	"la t6, fc_vreg\n\t"
	".irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n\t"
	"fsd f\\i, 16*\\i(t6)\n\t"
	".endr\n\t"
	"ld t0, 200(sp)\n\tfscsr t0\n\t"
	".irp i, 0,1,2,3,4,5,6,7,8,9,10,11\n\t"
	"ld s\\i, 8+8*\\i(sp)\n\t"
	"fld fs\\i, 104+8*\\i(sp)\n\t"
	".endr\n\t"
	"ld ra, 0(sp)\n\t"
	"addi sp, sp, 208\n\t"
	"ret\n\t"
	".size fc_probe, .-fc_probe\n"
	".globl fc_clobber\n"
	".type fc_clobber, @function\n"
	"fc_clobber:\n\t"
	"li t0, -1\n\t"
	".irp i, 0,1,2,3,4,5,6,7,10,11,12,13,14,15,16,17,28,29,30,31\n\t"
	"fmv.d.x f\\i, t0\n\t"
	".endr\n\t"
	".irp r, t1,t2,t3,t4,t5,t6,a0,a1,a2,a3,a4,a5,a6,a7\n\t"
	"li \\r, -1\n\t"
	".endr\n\t"
	"li t0, 2\n\tfsrm t0\n\t"
	"ret\n\t"
	".size fc_clobber, .-fc_clobber\n");
#endif

#if defined(GPR_CHECKED)
/* riscv64 FP registers are 8 bytes (D): only those are loaded, compared. */
#if defined(__riscv)
#define SIMD_BYTES 8
#else
#define SIMD_BYTES 16
#endif

static ucontext_t preempted_ctx, other_ctx;
static unsigned char other_stack[OTHER_STACK_SIZE] __attribute__((aligned(16)));
static _Atomic int ufd = -1, self_idx = -1;
static _Atomic int handled3, handled2, calls, returns, other_runs, nested_refused;
static _Atomic int uif_in_call = -1, handled2_after_send = -1;
static _Atomic int masked_in_call = -1, errno_in_call = -1, errno_after = -1;
static _Atomic int busy_err, copy_err, null_err;
static _Atomic pid_t receiver_tid, call_tid;
static _Atomic unsigned long long other_local;

static void switch_out(void *arg)
{
	CHECK(arg == &calls);
	atomic_fetch_add(&calls, 1);
	uif_in_call = uintr_testui();
	errno_in_call = errno;
	call_tid = t_gettid();
	{
		sigset_t now;

		CHECK(pthread_sigmask(SIG_BLOCK, NULL, &now) == 0);
		masked_in_call = sigismember(&now, uintr_notification_signal());
	}
	CHECK(swapcontext(&preempted_ctx, &other_ctx) == 0);
	atomic_fetch_add(&returns, 1);
	errno = 77; /* the interrupted code must not see it */
}

static void not_called(void *arg)
{
	(void)arg;
	atomic_fetch_add(&nested_refused, 1000); /* must never run */
}

static void other_main(void)
{
	volatile int local = 0;

	atomic_fetch_add(&other_runs, 1);
	other_local = (unsigned long long)(uintptr_t)&local;
	fc_clobber();
	/* Vector 2 to ourselves: the notification signal is not blocked
	 * here and UIF is 1, so it is delivered before the send returns. */
	uintr_senduipi((unsigned long long)self_idx);
	handled2_after_send = handled2;
	errno = 99;
	atomic_store(&fc_back, 1);
	CHECK(swapcontext(&other_ctx, &preempted_ctx) == 0);
	/* Never resumed. */
	exit(T_FAIL);
}

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	struct uintr_frame copy = *frame;

	if (vector == 2) {
		atomic_fetch_add(&handled2, 1);
		/* This delivery may ask for its own call: one that would run
		 * not_called() before the second thread resumes.  Check only
		 * that the rule for a copy holds here too, and ask nothing. */
		if (uintr_frame_call(&copy, not_called, NULL) == -1 && errno == EINVAL)
			atomic_fetch_add(&nested_refused, 1);
		return;
	}
	atomic_fetch_add(&handled3, 1);
	errno = 0;
	copy_err = uintr_frame_call(&copy, switch_out, &calls) == -1 ? errno : 0;
	errno = 0;
	null_err = uintr_frame_call(frame, NULL, NULL) == -1 ? errno : 0;
	CHECK_EQ(uintr_frame_call(frame, switch_out, &calls), 0);
	errno = 0;
	busy_err = uintr_frame_call(frame, switch_out, &calls) == -1 ? errno : 0;
}

static void *receiver(void *arg)
{
	(void)arg;
	receiver_tid = t_gettid();
	CHECK(uintr_register_handler(handler, 0) == 0);
	ufd = uintr_create_fd(3, 0);
	CHECK(ufd >= 0);
	{
		int fd2 = uintr_create_fd(2, 0);

		CHECK(fd2 >= 0);
		self_idx = uintr_register_sender(fd2, 0);
		CHECK(self_idx >= 0);
	}
	CHECK(getcontext(&other_ctx) == 0);
	other_ctx.uc_stack.ss_sp = other_stack;
	other_ctx.uc_stack.ss_size = sizeof(other_stack);
	other_ctx.uc_link = NULL;
	makecontext(&other_ctx, other_main, 0);
	uintr_stui();
	errno = 4242;
	fc_probe();
	errno_after = errno;
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	pthread_t t;
	int i, j, idx, bad = 0;

	if (T_TSAN) {
		printf("skip: ThreadSanitizer runs handlers on a copy of the context\n");
		return T_SKIP;
	}
	for (i = 0; i < NGPR; i++)
		fc_gpat[i] = 0x0123456789abcdefull ^ (0x1111111111111111ull * (unsigned)i);
	for (i = 0; i < NSIMD; i++)
		for (j = 0; j < 16; j++)
			fc_vpat[i][j] = (unsigned char)(0x40 + i * 7 + j);

	t = t_start(receiver, NULL);
	WAIT_UNTIL(fc_ready);
	idx = uintr_register_sender(ufd, 0);
	CHECK(idx >= 0);
	uintr_senduipi((unsigned long long)idx);
	t_join(t);

	CHECK_EQ(handled3, 1);
	CHECK_EQ(handled2, 1);
	CHECK_EQ(handled2_after_send, 1);
	CHECK_EQ(nested_refused, 1);
	CHECK_EQ(calls, 1);
	CHECK_EQ(returns, 1);
	CHECK_EQ(other_runs, 1);
	CHECK_EQ(uif_in_call, 1);
	CHECK_EQ(masked_in_call, 0);  /* the interrupted code's signal mask */
	CHECK_EQ(errno_in_call, 4242); /* and its errno, in the call */
	CHECK_EQ(errno_after, 4242);   /* and after it */
	CHECK_EQ(call_tid, receiver_tid);
	CHECK_EQ(copy_err, EINVAL);
	CHECK_EQ(null_err, EINVAL);
	CHECK_EQ(busy_err, EBUSY);
	CHECK(other_local >= (unsigned long long)(uintptr_t)other_stack &&
	      other_local < (unsigned long long)(uintptr_t)other_stack + OTHER_STACK_SIZE);

	for (i = 0; i < NGPR; i++)
		if (GPR_CHECKED(i) && fc_gpr[i] != fc_gpat[i]) {
			fprintf(stderr, "register %d: %#llx, expected %#llx\n", i, fc_gpr[i],
				fc_gpat[i]);
			bad = 1;
		}
	for (i = 0; i < NSIMD_CHECKED; i++)
		if (memcmp(fc_vreg[i], fc_vpat[i], SIMD_BYTES) != 0) {
			fprintf(stderr, "FP/SIMD register %d differs\n", i);
			bad = 1;
		}
#if defined(__x86_64__)
	for (i = 0; i < 16; i++)
		if (fc_red[i] != 0x5eed0000ull + (unsigned)i + 1) {
			fprintf(stderr, "red zone -%d: %#llx\n", 8 * (i + 1), fc_red[i]);
			bad = 1;
		}
	CHECK(fc_flags & 0x400); /* DF */
	CHECK_EQ(fc_fpctl, FPCTL_SET);
#elif defined(__aarch64__)
	CHECK_EQ(fc_flags, 0xa0000000ull);
	CHECK_EQ(fc_fpctl & (3ull << 22), FPCTL_SET);
#else
	CHECK_EQ(fc_fpctl & (7ull << 5), FPCTL_SET);
#endif
	CHECK_EQ(bad, 0);
	return T_PASS;
}
#else
int main(void)
{
	printf("skip: no register probe for this architecture\n");
	return T_SKIP;
}
#endif
