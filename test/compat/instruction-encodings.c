/*
 * Binary compatibility, decoding as the CPU does (issue: SENDUIPI
 * `F3 [REX] 0F C7 /6` with a 64-bit register operand, mod = 11, reg = 6,
 * rm = the register, REX.B extending it, 66h ignored; STUI/CLUI/TESTUI/
 * UIRET `F3 0F 01 EF/EE/ED/EC`; reference 5).
 *   - SENDUIPI with its index in R9 (REX.B), RBX with a 66h prefix, RSI with
 *     REX.W, RDX behind a CS override, R15 with REX.WB: each sends its own
 *     vector, exactly once (length decoded right: execution goes on);
 *   - STUI behind segment overrides up to the 15-byte limit, and behind a
 *     REX that a later prefix cancels, is still STUI;
 *   - `F2 0F 01 EF` (F2 instead of F3) is no UINTR instruction: the
 *     program's SIGILL handler gets it, at its address, UIF untouched.
 */
#include "helpers-compat.h"

#define NV 5
static int fds[NV];
static int handled, ready, stop;
static unsigned long long seen_vector[8];
static int ill_count, ill_len;
static unsigned long long ill_addr;

static void __attribute__((interrupt))
handler(struct __uintr_frame *frame, unsigned long long vector)
{
	int n = LOAD(handled);

	(void)frame;
	if (n < 8)
		STORE(seen_vector[n], vector);
	ADD(handled, 1);
}

static void *receiver(void *arg)
{
	int i;

	(void)arg;
	CHECK_EQ(u_register_handler(handler, 0), 0);
	for (i = 0; i < NV; i++) {
		long fd = u_create_fd((unsigned long long)i + 1, 0);

		CHECK(fd >= 0);
		fds[i] = (int)fd;
	}
	_stui();
	STORE(ready, 1);
	WAIT_UNTIL(LOAD(stop));
	CHECK_EQ(u_unregister_handler(0), 0);
	return NULL;
}

static void on_sigill(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = (ucontext_t *)ucv;

	(void)sig;
	ill_count++;
	ill_addr = (unsigned long long)(uintptr_t)si->si_addr;
	uc->uc_mcontext.gregs[REG_RIP] += ill_len;
}

static void expect_delivery(int n, unsigned long long vector)
{
	WAIT_UNTIL(LOAD(handled) == n);
	CHECK_EQ(LOAD(seen_vector[n - 1]), vector);
}

int main(void)
{
	struct sigaction sa;
	unsigned long long at;
	pthread_t t;
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigill;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGILL, &sa, NULL) == 0);

	t = t_start(receiver, NULL);
	WAIT_UNTIL(LOAD(ready));
	for (i = 0; i < NV; i++)
		CHECK_EQ(u_register_sender(fds[i], 0), i);

	/* senduipi %r9: F3 41 0F C7 F1 */
	__asm__ volatile("movq $0, %%r9\n\t.byte 0xf3, 0x41, 0x0f, 0xc7, 0xf1" ::: "r9", "memory");
	expect_delivery(1, 1);
	/* 66h, senduipi %rbx: 66 F3 0F C7 F3 */
	__asm__ volatile(".byte 0x66, 0xf3, 0x0f, 0xc7, 0xf3" ::"b"(1ull) : "memory");
	expect_delivery(2, 2);
	/* REX.W, senduipi %rsi: F3 48 0F C7 F6 */
	__asm__ volatile(".byte 0xf3, 0x48, 0x0f, 0xc7, 0xf6" ::"S"(2ull) : "memory");
	expect_delivery(3, 3);
	/* CS override, senduipi %rdx: 2E F3 0F C7 F2 */
	__asm__ volatile(".byte 0x2e, 0xf3, 0x0f, 0xc7, 0xf2" ::"d"(3ull) : "memory");
	expect_delivery(4, 4);
	/* REX.WB, senduipi %r15: F3 49 0F C7 F7 */
	__asm__ volatile("movq $4, %%r15\n\t.byte 0xf3, 0x49, 0x0f, 0xc7, 0xf7" ::: "r15", "memory");
	expect_delivery(5, 5);

	/* STUI, 15 bytes: eleven segment overrides first. */
	CHECK_EQ(_testui(), 0);
	__asm__ volatile(".byte 0x2e, 0x3e, 0x26, 0x36, 0x64, 0x65, 0x2e, 0x3e, 0x26, 0x36, 0x2e\n\t"
			 ".byte 0xf3, 0x0f, 0x01, 0xef" ::: "memory");
	CHECK_EQ(_testui(), 1);
	_clui();
	/* A REX followed by a prefix does not count: still STUI. */
	__asm__ volatile(".byte 0x41, 0xf3, 0x0f, 0x01, 0xef" ::: "memory");
	CHECK_EQ(_testui(), 1);
	_clui();

	/* F2 instead of F3: not STUI. */
	ill_len = 4;
	__asm__ volatile("leaq 1f(%%rip), %0\n"
			 "1:\t.byte 0xf2, 0x0f, 0x01, 0xef"
			 : "=r"(at)
			 :
			 : "memory");
	CHECK_EQ(ill_count, 1);
	CHECK_EQ(ill_addr, at);
	CHECK_EQ(_testui(), 0);

	STORE(stop, 1);
	t_join(t);
	CHECK_EQ(LOAD(handled), NV);
	return T_PASS;
}
