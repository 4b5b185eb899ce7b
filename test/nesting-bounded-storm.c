/*
 * Handler frames stay bounded under a steady send storm (issue 17, fault
 * 1; reference 5.4: UIRET pops the interrupted frame before the next
 * delivery).  One sender posts to random vectors of 8, as fast as it can,
 * to a receiver on a 64 KiB stack (arm64: 128 KiB, its least) that runs plain arithmetic with UIF = 1.
 * No handler sets UIF, so every handler runs at one depth above the
 * interrupted code: the lowest and highest handler frame addresses may
 * differ by less than one notification-signal frame, whatever the
 * sender does.  Fails if they differ by 16 KiB or more (the old library
 * stacked a new delivery loop on every notification that landed after a
 * delivery had set UIF back to 1: thousands of frames, then SIGSEGV).
 * Every delivery path in turn (issue 17): asynchronous (the receiver only
 * computes), poll points (uintr_poll), STUI (CLUI, compute, STUI: pending
 * vectors are delivered at the STUI) and uintr_wait_since_last (delivered
 * at the end of the wait).
 */
#include "helpers.h"

#define VECTORS 8
/* Asynchronous delivery, the path of fault 1, gets the most.  A mode
 * stops after DELIVERIES, or after MODE_SECONDS once it has MIN_DELIVERIES
 * (a slow or shared CPU, an emulator: the work scales to the runner; the
 * verdict is the spread alone). */
#define DELIVERIES(m) ((m) == ASYNC ? 400000ull : 150000ull)
#define MIN_DELIVERIES 5000ull
#define MODE_SECONDS 4.0
#define BOUND (16 * 1024)

static _Atomic int fds[VECTORS], ready, stop;
enum mode { ASYNC, POLL, STUI, WAIT };
static const char *const mode_name[] = { "async", "polling", "stui", "wait" };
static enum mode mode;
static _Atomic uint64_t delivered;
/* Per stack: [0] the thread's, [1] an alternate signal stack (the
 * sanitizers install one, and the notification signal is SA_ONSTACK). */
static _Atomic uintptr_t lowest[2] = { UINTPTR_MAX, UINTPTR_MAX }, highest[2];

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	stack_t ss;
	int k = sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK);

	(void)frame;
	(void)vector;
	if (here < atomic_load_explicit(&lowest[k], memory_order_relaxed))
		atomic_store_explicit(&lowest[k], here, memory_order_relaxed);
	if (here > atomic_load_explicit(&highest[k], memory_order_relaxed))
		atomic_store_explicit(&highest[k], here, memory_order_relaxed);
	atomic_fetch_add_explicit(&delivered, 1, memory_order_relaxed);
}

static uintptr_t spread(void)
{
	uintptr_t most = 0;
	int k;

	for (k = 0; k < 2; k++) {
		uintptr_t lo = atomic_load(&lowest[k]), hi = atomic_load(&highest[k]);

		if (lo != UINTPTR_MAX && hi - lo > most)
			most = hi - lo;
	}
	return most;
}

static void *receiver(void *arg)
{
	volatile uint64_t x = 1;
	unsigned int v;

	(void)arg;
	atomic_store(&stop, 0);
	CHECK(uintr_register_handler(handler, 0) == 0);
	for (v = 0; v < VECTORS; v++) {
		fds[v] = uintr_create_fd(v * 7 + 3, 0);
		CHECK(fds[v] >= 0);
	}
	uintr_stui();
	ready = 1;
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		{
		switch (mode) {
		case ASYNC:
			break;
		case POLL:
			uintr_poll();
			break;
		case STUI:
			uintr_clui();
			break;
		case WAIT:
			/* Returns -1/EINTR once something was delivered since
			 * the last return; the sender's last post ends it. */
			uintr_wait_since_last(0);
			break;
		}
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		if (mode == STUI)
			uintr_stui();
	}
	uintr_clui();
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

static int storm(enum mode m)
{
	pthread_attr_t attr;
	pthread_t t;
	int idx[VECTORS];
	uint64_t seed = 88172645463325252ull, last = 0;
	unsigned int v;

	mode = m;
	ready = 0;
	atomic_store(&delivered, 0);
	for (v = 0; v < 2; v++) {
		atomic_store(&lowest[v], UINTPTR_MAX);
		atomic_store(&highest[v], 0);
	}
	CHECK(pthread_attr_init(&attr) == 0);
	/* 64 KiB, or the least the platform allows (128 KiB on arm64). */
	CHECK(pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN > 64 * 1024 ?
						 PTHREAD_STACK_MIN : 64 * 1024) == 0);
	CHECK(pthread_create(&t, &attr, receiver, NULL) == 0);
	WAIT_UNTIL(ready);
	for (v = 0; v < VECTORS; v++) {
		idx[v] = uintr_register_sender(fds[v], 0);
		CHECK(idx[v] >= 0);
	}
	/* Bounded by progress: a library that stops delivering fails in
	 * WAIT_PROGRESS's way, one that nests fails on the spread. */
	{
		double since = t_now(), start = since;

		while (atomic_load(&delivered) < DELIVERIES(m) && spread() < BOUND &&
		       !(atomic_load(&delivered) >= MIN_DELIVERIES && t_now() - start > MODE_SECONDS)) {
			unsigned int k;

			for (k = 0; k < 64; k++) {
				seed ^= seed << 13;
				seed ^= seed >> 7;
				seed ^= seed << 17;
				uintr_senduipi((unsigned long long)idx[seed % VECTORS]);
			}
			if (atomic_load(&delivered) != last) {
				last = atomic_load(&delivered);
				since = t_now();
			}
			if (t_now() - since > 20.0) {
				fprintf(stderr, "no delivery for 20 s (%llu delivered)\n",
					(unsigned long long)last);
				return T_FAIL;
			}
		}
	}
	stop = 1;
	/* A receiver in uintr_wait_since_last sees stop only when woken. */
	uintr_senduipi((unsigned long long)idx[0]);
	t_join(t);
	for (v = 0; v < VECTORS; v++) {
		CHECK(uintr_unregister_sender(fds[v], 0) == 0);
		CHECK(close(fds[v]) == 0);
	}
	fprintf(stderr, "%s: %llu deliveries, handler frames spread over %lu bytes\n",
		mode_name[m], (unsigned long long)atomic_load(&delivered),
		(unsigned long)spread());
	CHECK(spread() < BOUND);
	return T_PASS;
}

int main(void)
{
	CHECK_EQ(storm(ASYNC), T_PASS);
	CHECK_EQ(storm(POLL), T_PASS);
	CHECK_EQ(storm(STUI), T_PASS);
	CHECK_EQ(storm(WAIT), T_PASS);
	return T_PASS;
}
