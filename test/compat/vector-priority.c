/*
 * Binary compatibility, vector priority (reference 5.3: "highest vector
 * first, one vector per delivery"; 2.3: 63 highest, 0 lowest).  With
 * UIF = 0 a sender posts vectors 3, 17, 63, 0, 40 (and 17 again, which
 * coalesces); the receiver then executes STUI: the handler runs for 63,
 * 40, 17, 3, 0 in that order, exactly once each, back to back: every
 * delivery reports the instruction right after the STUI as interrupted
 * RIP and the same RSP, since UIRET delivers the next one at once.
 */
#include "helpers-compat.h"

#define NV 5
static const unsigned long long vectors[NV] = { 3, 17, 63, 0, 40 };
static const unsigned long long expected[NV] = { 63, 40, 17, 3, 0 };

static int fds[NV];
static int handled, ready;
static unsigned long long order[16], rips[16], rsps[16];
static struct t_chan posted;

static void __attribute__((interrupt))
handler(struct __uintr_frame *frame, unsigned long long vector)
{
	int n = LOAD(handled);

	if (n < 16) {
		STORE(order[n], vector);
		STORE(rips[n], frame->rip);
		STORE(rsps[n], frame->rsp);
	}
	ADD(handled, 1);
}

static void *receiver(void *arg)
{
	unsigned long long after, rsp;
	int i;

	(void)arg;
	CHECK_EQ(u_register_handler(handler, 0), 0);
	for (i = 0; i < NV; i++) {
		long fd = u_create_fd(vectors[i], 0);

		CHECK(fd >= 0);
		fds[i] = (int)fd;
	}
	CHECK_EQ(_testui(), 0);
	STORE(ready, 1);
	/* Every post was made (and notified: the signal is handled before
	 * this read returns) before the byte arrives. */
	t_chan_wait(&posted);
	CHECK_EQ(LOAD(handled), 0);
	__asm__ volatile("movq %%rsp, %1\n\t"
			 "leaq 1f(%%rip), %0\n\t"
			 "stui\n"
			 "1:"
			 : "=&r"(after), "=&r"(rsp)
			 :
			 : "memory");
	CHECK_EQ(LOAD(handled), NV);
	for (i = 0; i < NV; i++) {
		CHECK_EQ(LOAD(order[i]), expected[i]);
		CHECK_EQ(LOAD(rips[i]), after);
		CHECK_EQ(LOAD(rsps[i]), rsp);
	}
	CHECK_EQ(u_unregister_handler(0), 0);
	return NULL;
}

int main(void)
{
	pthread_t t;
	long idx[NV];
	int i;

	t_chan_init(&posted);
	t = t_start(receiver, NULL);
	WAIT_UNTIL(LOAD(ready));
	for (i = 0; i < NV; i++) {
		idx[i] = u_register_sender(fds[i], 0);
		CHECK_EQ(idx[i], i);
	}
	for (i = 0; i < NV; i++)
		_senduipi((unsigned long long)idx[i]);
	_senduipi((unsigned long long)idx[1]); /* 17 again: coalesces */
	t_chan_post(&posted);
	t_join(t);
	CHECK_EQ(LOAD(handled), NV);
	return T_PASS;
}
