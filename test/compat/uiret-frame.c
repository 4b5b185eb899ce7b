/*
 * Binary compatibility, UIRET pops what the handler left in the frame
 * (reference 5.4; issue: "UIRET pops RIP, RFLAGS, RSP ... restores only
 * the flags in mask 0x254DD5").
 *   1. The handler changes the stacked RIP (to a resume label), RSP (256
 *      bytes lower) and RFLAGS (CF PF AF ZF SF OF DF flipped; IOPL, VIF and
 *      VIP set): the interrupted code resumes there, with that RSP, the
 *      flipped flags, and IOPL/VIF/VIP unchanged (not in the mask).
 *   2. A non-canonical stacked RIP: UIRET raises #GP, SIGSEGV (SI_KERNEL)
 *      at the UIRET itself with UIF still 0; the program's SIGSEGV handler
 *      puts a good RIP in the frame and returns, UIRET runs again and
 *      resumes there.
 */
#include "helpers-compat.h"

#define NONCANONICAL 0x8000000000000000ull

unsigned long long fp_rsp, fp_rsp_after, fp_flags_after, fp_spinning, fp_spinning2;

void frame_probe(void);
void frame_probe2(void);
extern const char fp_spin[], fp_resume[], fp_spin2[], fp_resume2[];

__asm__(".text\n"
	".globl frame_probe\n"
	".type frame_probe, @function\n"
	"frame_probe:\n\t"
	"movq %rsp, fp_rsp(%rip)\n\t"
	"pushq $0x202\n\t"
	"popfq\n\t"
	"movq $1, fp_spinning(%rip)\n"
	".globl fp_spin\n"
	"fp_spin:\n\t"
	"jmp fp_spin\n"
	".globl fp_resume\n"
	"fp_resume:\n\t"
	"movq %rsp, fp_rsp_after(%rip)\n\t"
	"pushfq\n\t"
	"popq fp_flags_after(%rip)\n\t"
	"cld\n\t"
	"movq fp_rsp(%rip), %rsp\n\t"
	"ret\n"
	".size frame_probe, . - frame_probe\n"
	".globl frame_probe2\n"
	".type frame_probe2, @function\n"
	"frame_probe2:\n\t"
	"movq $1, fp_spinning2(%rip)\n"
	".globl fp_spin2\n"
	"fp_spin2:\n\t"
	"jmp fp_spin2\n"
	".globl fp_resume2\n"
	"fp_resume2:\n\t"
	"ret\n"
	".size frame_probe2, . - frame_probe2\n");

static int uipi_fd = -1, ready, handled;
static int segv_count, segv_code, segv_uif = 7;
static unsigned long long segv_stacked_rip;
static unsigned char segv_insn[4];

static void __attribute__((interrupt))
handler(struct __uintr_frame *frame, unsigned long long vector)
{
	(void)vector;
	if (frame->rip == (unsigned long long)(uintptr_t)fp_spin) {
		frame->rip = (unsigned long long)(uintptr_t)fp_resume;
		frame->rsp -= 256;
		frame->rflags ^= 0x8d5 | 0x400;
		frame->rflags |= 0x3000 | 0x80000 | 0x100000;
	} else if (frame->rip == (unsigned long long)(uintptr_t)fp_spin2) {
		frame->rip = NONCANONICAL;
	}
	ADD(handled, 1);
}

static void on_segv(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = (ucontext_t *)ucv;
	unsigned long long *sp = (unsigned long long *)(uintptr_t)uc->uc_mcontext.gregs[REG_RSP];

	(void)sig;
	segv_count++;
	segv_code = si->si_code;
	memcpy(segv_insn, (const void *)(uintptr_t)uc->uc_mcontext.gregs[REG_RIP], 4);
	segv_stacked_rip = sp[0];
	segv_uif = _testui();
	sp[0] = (unsigned long long)(uintptr_t)fp_resume2;
}

static void *receiver(void *arg)
{
	long fd;

	(void)arg;
	CHECK_EQ(u_register_handler(handler, 0), 0);
	fd = u_create_fd(40, 0);
	CHECK(fd >= 0);
	STORE(uipi_fd, (int)fd);
	_stui();
	STORE(ready, 1);
	frame_probe();
	CHECK_EQ(LOAD(handled), 1);
	CHECK_EQ(_testui(), 1);
	frame_probe2();
	CHECK_EQ(LOAD(handled), 2);
	CHECK_EQ(_testui(), 1);
	CHECK_EQ(u_unregister_handler(0), 0);
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	unsigned char uiret[4] = { 0xf3, 0x0f, 0x01, 0xec };
	pthread_t t;
	long idx;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGSEGV, &sa, NULL) == 0);

	t = t_start(receiver, NULL);
	WAIT_UNTIL(LOAD(ready));
	idx = u_register_sender(LOAD(uipi_fd), 0);
	CHECK_EQ(idx, 0);
	WAIT_UNTIL(LOAD(fp_spinning));
	_senduipi((unsigned long long)idx);
	WAIT_UNTIL(LOAD(fp_spinning2));
	_senduipi((unsigned long long)idx);
	WAIT_UNTIL(LOAD(handled) == 2);
	t_join(t);

	CHECK_EQ(fp_rsp_after, fp_rsp - 256);
	CHECK_EQ(fp_flags_after & 0x3fffff, 0x202 | 0x8d5 | 0x400);

	CHECK_EQ(segv_count, 1);
	CHECK_EQ(segv_code, SI_KERNEL);
	CHECK_EQ(segv_stacked_rip, NONCANONICAL);
	CHECK_EQ(segv_uif, 0);
	CHECK(memcmp(segv_insn, uiret, 4) == 0);
	return T_PASS;
}
