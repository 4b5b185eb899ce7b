/*
 * Binary compatibility where STUI and CLUI share their opcode with the
 * protection-key instructions (STUI F3 0F 01 EF / WRPKRU 0F 01 EF, CLUI
 * F3 0F 01 EE / RDPKRU 0F 01 EE; src/compat/x86_64/patch.c).  AMD CPUs
 * with protection keys ignore the F3 and run them as WRPKRU/RDPKRU: with
 * ECX = EDX = 0 silently, otherwise #GP.  Under uintr-run they must be
 * STUI and CLUI whatever ECX, EDX and EAX hold:
 *   - CLUI with ECX = EDX = 0 clears UIF and leaves EAX, EDX alone (as
 *     RDPKRU it would load PKRU into EAX and zero EDX);
 *   - STUI with ECX = EDX = 0 and EAX = ~3 sets UIF, delivers the pending
 *     interrupt right after itself, and leaves PKRU alone (as WRPKRU it
 *     would deny writes to every key but 0);
 *   - STUI and CLUI with ECX = EDX = 1 do not fault (as WRPKRU/RDPKRU: #GP);
 *   - the real RDPKRU/WRPKRU (no prefix), where the CPU has them, still
 *     read and write PKRU;
 *   - F2 0F 01 EF (F2 in place of F3: no UINTR instruction, and WRPKRU
 *     does not allow it) is #UD: the program's SIGILL handler gets it.
 */
#include <cpuid.h>

#include "helpers-compat.h"

static int uipi_fd = -1;
static int handled, ready, ill_count;
static unsigned long long seen_rip;
static struct t_chan posted;

static void __attribute__((interrupt))
handler(struct __uintr_frame *frame, unsigned long long vector)
{
	(void)vector;
	STORE(seen_rip, frame->rip);
	ADD(handled, 1);
}

static int cpu_has_ospke(void)
{
	unsigned int a, b, c, d;

	if (__get_cpuid_max(0, NULL) < 7)
		return 0;
	__cpuid_count(7, 0, a, b, c, d);
	(void)a;
	(void)b;
	(void)d;
	return (c >> 4) & 1; /* OSPKE */
}

static unsigned int rdpkru(void)
{
	unsigned int eax, edx;

	__asm__ volatile(".byte 0x0f, 0x01, 0xee" : "=a"(eax), "=d"(edx) : "c"(0));
	return eax;
}

static void on_sigill(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = (ucontext_t *)ucv;

	(void)sig;
	(void)si;
	ill_count++;
	uc->uc_mcontext.gregs[REG_RIP] += 4;
}

static void *receiver(void *arg)
{
	unsigned long long eax = 0x12345678, edx = 0, after;
	unsigned int pkru = 0;
	int pkeys = cpu_has_ospke();
	long fd;

	(void)arg;
	CHECK_EQ(u_register_handler(handler, 0), 0);
	if (pkeys)
		pkru = rdpkru();

	/* CLUI, ECX = EDX = 0: UIF 1 -> 0, EAX and EDX kept. */
	_stui();
	CHECK_EQ(_testui(), 1);
	__asm__ volatile("clui" : "+a"(eax), "+d"(edx) : "c"(0ull) : "memory");
	CHECK_EQ(_testui(), 0);
	CHECK_EQ(eax, 0x12345678);
	CHECK_EQ(edx, 0);

	fd = u_create_fd(7, 0);
	CHECK(fd >= 0);
	STORE(uipi_fd, (int)fd);
	STORE(ready, 1);
	t_chan_wait(&posted);
	CHECK_EQ(LOAD(handled), 0);

	/* STUI, ECX = EDX = 0, EAX = ~3: delivers at once, PKRU untouched. */
	eax = 0xfffffffcull;
	edx = 0;
	__asm__ volatile("leaq 1f(%%rip), %0\n\t"
			 "stui\n"
			 "1:"
			 : "=&r"(after), "+a"(eax), "+d"(edx)
			 : "c"(0ull)
			 : "memory");
	CHECK_EQ(LOAD(handled), 1);
	CHECK_EQ(LOAD(seen_rip), after);
	CHECK_EQ(_testui(), 1);
	CHECK_EQ(eax, 0xfffffffc);
	if (pkeys)
		CHECK_EQ(rdpkru(), pkru);

	/* ECX = EDX = 1: no #GP. */
	__asm__ volatile("clui" ::"c"(1ull), "d"(1ull) : "memory");
	CHECK_EQ(_testui(), 0);
	__asm__ volatile("stui" ::"c"(1ull), "d"(1ull) : "memory");
	CHECK_EQ(_testui(), 1);

	/* The real protection-key instructions still work. */
	if (pkeys) {
		unsigned int other = pkru ^ 0x30u; /* key 2's bits */

		__asm__ volatile(".byte 0x0f, 0x01, 0xef" ::"a"(other), "c"(0), "d"(0) : "memory");
		CHECK_EQ(rdpkru(), other);
		__asm__ volatile(".byte 0x0f, 0x01, 0xef" ::"a"(pkru), "c"(0), "d"(0) : "memory");
		CHECK_EQ(rdpkru(), pkru);
	}

	/* F2 0F 01 EF: #UD, to the program's SIGILL handler; UIF untouched. */
	__asm__ volatile(".byte 0xf2, 0x0f, 0x01, 0xef" ::"a"(0), "c"(0), "d"(0) : "memory");
	CHECK_EQ(ill_count, 1);
	CHECK_EQ(_testui(), 1);
	if (pkeys)
		CHECK_EQ(rdpkru(), pkru);
	CHECK_EQ(u_unregister_handler(0), 0);
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	pthread_t t;
	long idx;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigill;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGILL, &sa, NULL), 0);

	t_chan_init(&posted);
	t = t_start(receiver, NULL);
	WAIT_UNTIL(LOAD(ready));
	idx = u_register_sender(LOAD(uipi_fd), 0);
	CHECK_EQ(idx, 0);
	_senduipi((unsigned long long)idx);
	t_chan_post(&posted);
	t_join(t);
	CHECK_EQ(LOAD(handled), 1);
	return T_PASS;
}
