/*
 * Binary compatibility, handler frames stay bounded under a send storm
 * (issue 17, fault 1, for uintr-run's emulated delivery; reference 5.4:
 * UIRET pops the interrupted frame before the next delivery).  The main
 * thread fires SENDUIPI at random vectors of 8, as fast as it can, at a
 * receiver thread on a 64 KiB stack that computes with UIF = 1.  No
 * handler runs STUI, so every handler frame is one level above the
 * interrupted code: the lowest and highest handler frame addresses differ
 * by less than one signal frame.  Fails if they differ by 16 KiB or more,
 * or if deliveries stop for 20 s (progress, not a total time).
 */
#include "helpers-compat.h"

#define VECTORS 8
#define DELIVERIES 30000ull
#define BOUND (16 * 1024)

static int fds[VECTORS], ready, stop;
static unsigned long long delivered, lowest = ~0ull, highest;

static void __attribute__((interrupt))
handler(struct __uintr_frame *frame, unsigned long long vector)
{
	unsigned long long here = (unsigned long long)(uintptr_t)__builtin_frame_address(0);

	(void)frame;
	(void)vector;
	if (here < LOAD(lowest))
		STORE(lowest, here);
	if (here > LOAD(highest))
		STORE(highest, here);
	ADD(delivered, 1);
}

static unsigned long long spread(void)
{
	return LOAD(lowest) == ~0ull ? 0 : LOAD(highest) - LOAD(lowest);
}

static void *receiver(void *arg)
{
	volatile unsigned long long x = 1;
	int v;

	(void)arg;
	CHECK_EQ(u_register_handler(handler, 0), 0);
	for (v = 0; v < VECTORS; v++) {
		long fd = u_create_fd((unsigned long long)(v * 7 + 3), 0);

		CHECK(fd >= 0);
		STORE(fds[v], (int)fd);
	}
	_stui();
	STORE(ready, 1);
	while (!LOAD(stop))
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	_clui();
	CHECK_EQ(u_unregister_handler(0), 0);
	return NULL;
}

int main(void)
{
	pthread_attr_t attr;
	pthread_t t;
	long idx[VECTORS];
	unsigned long long seed = 88172645463325252ull, last = 0;
	uint64_t since;
	int v;

	CHECK(pthread_attr_init(&attr) == 0);
	CHECK(pthread_attr_setstacksize(&attr, 64 * 1024) == 0);
	CHECK(pthread_create(&t, &attr, receiver, NULL) == 0);
	WAIT_UNTIL(LOAD(ready));
	for (v = 0; v < VECTORS; v++) {
		idx[v] = u_register_sender(LOAD(fds[v]), 0);
		CHECK(idx[v] >= 0);
	}
	since = t_now_ns();
	while (LOAD(delivered) < DELIVERIES && spread() < BOUND) {
		int k;

		for (k = 0; k < 64; k++) {
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			_senduipi((unsigned long long)idx[seed % VECTORS]);
		}
		if (LOAD(delivered) != last) {
			last = LOAD(delivered);
			since = t_now_ns();
		}
		if (t_now_ns() - since > 20000000000ull) {
			fprintf(stderr, "no delivery for 20 s (%llu delivered)\n", last);
			return T_FAIL;
		}
	}
	STORE(stop, 1);
	t_join(t);
	fprintf(stderr, "%llu deliveries, handler frames spread over %llu bytes\n",
		LOAD(delivered), spread());
	CHECK(spread() < BOUND);
	for (v = 0; v < VECTORS; v++)
		CHECK_EQ(close(LOAD(fds[v])), 0);
	return T_PASS;
}
