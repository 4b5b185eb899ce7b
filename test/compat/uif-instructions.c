/*
 * Binary compatibility, the UIF instructions (reference 5.5; issue: "TESTUI
 * sets CF from UIF and clears ZF AF OF PF SF"):
 *   - UIF is per thread and 0 at start, on a receiver (after registration)
 *     and on a thread that is none; STUI sets it, CLUI clears it;
 *   - TESTUI: CF = UIF, ZF AF OF PF SF = 0, every other flag (DF, bit 1,
 *     IF, TF) unchanged, from all-ones and all-zeros status flags;
 *   - with UIF = 0 a posted interrupt is recognized but not delivered, not
 *     across syscalls nor plain code; STUI delivers it before the next
 *     instruction (frame RIP = the instruction after STUI); UIF = 0 inside
 *     the handler, 1 after; STUI with nothing pending delivers nothing.
 */
#include "helpers-compat.h"

#define STATUS_FLAGS 0x8d5ull /* CF PF AF ZF SF OF */
#define DF 0x400ull

static int uipi_fd = -1;
static int handled, ready;
static unsigned long long seen_rip, seen_uif = 7, seen_vector;
static struct t_chan posted;

static void __attribute__((interrupt))
handler(struct __uintr_frame *frame, unsigned long long vector)
{
	STORE(seen_rip, frame->rip);
	STORE(seen_vector, vector);
	STORE(seen_uif, (unsigned long long)_testui());
	ADD(handled, 1);
}

/* RFLAGS after TESTUI executed with RFLAGS = in (red zone left alone). */
static unsigned long long testui_flags(unsigned long long in)
{
	unsigned long long out;

	__asm__ volatile("leaq -128(%%rsp), %%rsp\n\t"
			 "pushq %1\n\t"
			 "popfq\n\t"
			 "testui\n\t"
			 "pushfq\n\t"
			 "popq %0\n\t"
			 "leaq 128(%%rsp), %%rsp"
			 : "=r"(out)
			 : "r"(in)
			 : "cc", "memory");
	return out;
}

static void check_testui(unsigned long long uif)
{
	unsigned long long ones = 0x202ull | STATUS_FLAGS | DF, zeros = 0x202ull;

	CHECK_EQ(testui_flags(ones) & 0xfd7, 0x202 | DF | uif);
	CHECK_EQ(testui_flags(zeros) & 0xfd7, 0x202 | uif);
}

static void *receiver(void *arg)
{
	unsigned long long after;
	volatile int spin;
	long fd;
	int i;

	(void)arg;
	CHECK_EQ(_testui(), 0);
	CHECK_EQ(u_register_handler(handler, 0), 0);
	CHECK_EQ(_testui(), 0);
	check_testui(0);
	_stui();
	CHECK_EQ(_testui(), 1);
	check_testui(1);
	_clui();
	CHECK_EQ(_testui(), 0);
	check_testui(0);

	fd = u_create_fd(21, 0);
	CHECK(fd >= 0);
	STORE(uipi_fd, (int)fd);
	STORE(ready, 1);
	t_chan_wait(&posted); /* the notification was processed by now */
	for (i = 0; i < 100; i++)
		CHECK(getppid() > 0);
	for (spin = 0; spin < 100000; spin++)
		;
	CHECK_EQ(LOAD(handled), 0);
	CHECK_EQ(_testui(), 0);

	__asm__ volatile("leaq 1f(%%rip), %0\n\t"
			 "stui\n"
			 "1:"
			 : "=r"(after)
			 :
			 : "memory");
	CHECK_EQ(LOAD(handled), 1);
	CHECK_EQ(LOAD(seen_rip), after);
	CHECK_EQ(LOAD(seen_vector), 21);
	CHECK_EQ(LOAD(seen_uif), 0);
	CHECK_EQ(_testui(), 1);

	/* Nothing pending: STUI, CLUI, STUI deliver nothing. */
	_stui();
	_clui();
	_stui();
	CHECK_EQ(LOAD(handled), 1);
	CHECK_EQ(u_unregister_handler(0), 0);
	CHECK_EQ(_testui(), 1); /* unregistering leaves UIF alone */
	return NULL;
}

int main(void)
{
	pthread_t t;
	long idx;

	/* A thread that is no receiver has a UIF too. */
	CHECK_EQ(_testui(), 0);
	check_testui(0);
	_stui();
	CHECK_EQ(_testui(), 1);
	check_testui(1);

	t_chan_init(&posted);
	t = t_start(receiver, NULL);
	WAIT_UNTIL(LOAD(ready));
	CHECK_EQ(_testui(), 1); /* the receiver's CLUI was its own */
	_clui();
	CHECK_EQ(_testui(), 0);
	idx = u_register_sender(LOAD(uipi_fd), 0);
	CHECK_EQ(idx, 0);
	_senduipi((unsigned long long)idx);
	t_chan_post(&posted);
	t_join(t);
	CHECK_EQ(LOAD(handled), 1);
	return T_PASS;
}
