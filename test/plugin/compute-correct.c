/* variants: built once per optimization level (plugin/Makefile.inc).
 *
 * The kernels compiled with the plugin give the answers of the same file
 * compiled without it (leaf loops, recursion, pointer chasing, a call per
 * iteration, a loop nest with break/continue, a bitwise loop, a sort in
 * place, a goto state machine, a leaf with no loop): first with the
 * checks never taken (not an instrumented receiver), then in a receiver
 * in the instrumented state while another thread sends 100 interrupts,
 * each delivered exactly once at a safepoint inside a kernel (frame ip in
 * uintr_sp_text) and never by the signal (notifications 0), with every
 * answer still right.
 */
#include "plugin.h"

#define N 4096
#define K 100

static long a[N];
static int next_[N], sorted_plain[N];
static unsigned char text[N];
static _Atomic int fds[1] = { -1 }, ready;

static void setup(void)
{
	unsigned x = 12345;

	for (int i = 0; i < N; i++) {
		x = x * 1103515245u + 12345u;
		a[i] = (long)(x >> 8) - (1 << 22);
		next_[i] = (int)((i * 2654435761u + 7) % N);
		text[i] = (x >> 16) % 5 == 0 ? ' ' : (unsigned char)('0' + (x >> 20) % 40);
	}
	for (int i = 0; i < N / 4; i++)
		sorted_plain[i] = (int)a[i];
	k_sort_plain(sorted_plain, N / 4);
}

/* One round of every kernel; 0 if all agree with the plain build. */
static int round_ok(int quiet)
{
	static int b[N];
	int bad = 0;

#define SAME(call)                                                                   \
	do {                                                                         \
		long long x_ = (long long)k_##call, y_ = (long long)k_plain_##call;  \
		if (x_ != y_) {                                                      \
			if (!quiet)                                                  \
				fprintf(stderr, "%s: %lld, plain %lld (%s)\n", #call, x_, y_, VARIANT); \
			bad = 1;                                                     \
		}                                                                    \
	} while (0)
#define k_plain_sum(...) k_sum_plain(__VA_ARGS__)
#define k_plain_fib(...) k_fib_plain(__VA_ARGS__)
#define k_plain_chase(...) k_chase_plain(__VA_ARGS__)
#define k_plain_calls(...) k_calls_plain(__VA_ARGS__)
#define k_plain_nested(...) k_nested_plain(__VA_ARGS__)
#define k_plain_crc(...) k_crc_plain(__VA_ARGS__)
#define k_plain_state(...) k_state_plain(__VA_ARGS__)
#define k_plain_leaf(...) k_leaf_plain(__VA_ARGS__)
	SAME(sum(a, N));
	SAME(fib(20));
	SAME(chase(next_, 1, 20000));
	SAME(calls(20000));
	SAME(nested(300));
	SAME(crc(text, N));
	SAME(state(text, N));
	SAME(leaf(41));
	for (int i = 0; i < N / 4; i++)
		b[i] = (int)a[i];
	k_sort(b, N / 4);
	if (memcmp(b, sorted_plain, sizeof(int) * (N / 4)) != 0) {
		if (!quiet)
			fprintf(stderr, "sort: not the plain build's order (%s)\n", VARIANT);
		bad = 1;
	}
	return !bad;
}

static void *receiver(void *arg)
{
	struct uintr_stats s;
	long rounds = 0;

	(void)arg;
	tp_receiver_setup(fds, (const int[]){ 4, -1 });
	ready = 1;
	while (atomic_load(&k_handled) < K) {
		CHECK(round_ok(0));
		rounds++;
	}
	td_syscall();
	s = ts_stats();
	CHECK_EQ(s.notifications, 0);
	CHECK_EQ(s.delivered, K);
	CHECK(uintr_unregister_handler(0) == 0);
	printf("%ld rounds of the kernels while %d interrupts came in (%s)\n", rounds, K, VARIANT);
	return NULL;
}

int main(void)
{
	pthread_t t;
	int idx;

	setup();
	CHECK(round_ok(0)); /* outside the instrumented state */
	t = t_start(receiver, NULL);
	WAIT_UNTIL(ready);
	idx = uintr_register_sender(fds[0], 0);
	CHECK(idx >= 0);
	for (int i = 1; i <= K; i++) {
		uintr_senduipi((unsigned long long)idx);
		WAIT_PROGRESS(k_handled >= i, (unsigned long long)k_handled);
	}
	t_join(t);
	CHECK_EQ(k_handled, K);
	CHECK_EQ(k_bad_uif, 0);
	for (int i = 0; i < K; i++) {
		CHECK_EQ(k_vectors[i], 4);
		if (!tp_in(k_ips[i], __start_uintr_sp_text, __stop_uintr_sp_text)) {
			fprintf(stderr, "delivery %d: frame ip %#llx not in a kernel (%s)\n", i,
				k_ips[i], VARIANT);
			return T_FAIL;
		}
	}
	return T_PASS;
}
