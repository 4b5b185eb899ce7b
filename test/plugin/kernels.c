/*
 * Kernels compiled with the plugin (and, with -DPLAIN, without it) for
 * the plugin tests; see kernels.h.
 */
#include "kernels.h"

#ifdef PLAIN
#define K(name) name##_plain
#define KTEXT __attribute__((noinline, section("uintr_plain_text")))
#else
#define K(name) name
#define KTEXT __attribute__((noinline, section("uintr_sp_text")))
#endif

KTEXT long K(k_sum)(const long *a, int n)
{
	long s = 0;

	for (int i = 0; i < n; i++)
		s += a[i];
	return s;
}

KTEXT int K(k_fib)(int n)
{
	return n < 2 ? n : K(k_fib)(n - 1) + K(k_fib)(n - 2);
}

KTEXT long K(k_chase)(const int *next, int start, long steps)
{
	long s = 0;
	int i = start;

	while (steps-- > 0) {
		i = next[i];
		s += i;
	}
	return s;
}

KTEXT static long K(k_step)(long x)
{
	return (x * 2862933555777941757l + 3037000493l) ^ (x >> 29);
}

KTEXT long K(k_calls)(int n)
{
	long x = 1;

	for (int i = 0; i < n; i++)
		x = K(k_step)(x) + i;
	return x;
}

KTEXT long K(k_nested)(int n)
{
	long c = 0;

	for (int i = 0; i < n; i++) {
		if (i % 7 == 3)
			continue;
		for (int j = 0; j < i; j++) {
			if ((i ^ j) == 0x55)
				break;
			c += (i * j) ^ (c >> 3);
		}
	}
	return c;
}

KTEXT uint32_t K(k_crc)(const unsigned char *p, long n)
{
	uint32_t c = 0xffffffffu;

	for (long i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & -(c & 1));
	}
	return ~c;
}

KTEXT void K(k_sort)(int *a, int n)
{
	for (int i = 1; i < n; i++) {
		int v = a[i], j = i - 1;

		while (j >= 0 && a[j] > v) {
			a[j + 1] = a[j];
			j--;
		}
		a[j + 1] = v;
	}
}

/* A small scanner: counts words and digits, a state machine with goto. */
KTEXT long K(k_state)(const unsigned char *p, long n)
{
	long words = 0, digits = 0, i = 0;

space:
	if (i >= n)
		goto done;
	switch (p[i++]) {
	case ' ': case '\n': case '\t':
		goto space;
	default:
		words++;
		goto word;
	}
word:
	if (i >= n)
		goto done;
	if (p[i] >= '0' && p[i] <= '9')
		digits++;
	if (p[i++] == ' ')
		goto space;
	goto word;
done:
	return words * 1000003 + digits;
}

KTEXT long K(k_leaf)(long x)
{
	return x * 3 + 1;
}

#ifndef PLAIN
__attribute__((noinline, section("uintr_spin_text"))) void k_spin_until(const _Atomic int *p, int n)
{
	while (atomic_load_explicit(p, memory_order_relaxed) < n)
		;
}

_Atomic int k_handled, k_bad_uif, k_hold, k_in_handler;
_Atomic unsigned long k_hold_iters;
_Atomic unsigned long long k_vectors[K_LOG], k_ips[K_LOG];

void k_handler(struct uintr_frame *frame, unsigned long long vector)
{
	int i = atomic_load_explicit(&k_handled, memory_order_relaxed);

	if (uintr_testui() != 0)
		atomic_store(&k_bad_uif, 1);
	if (i < K_LOG) {
		atomic_store_explicit(&k_vectors[i], vector, memory_order_relaxed);
		atomic_store_explicit(&k_ips[i], frame->ip, memory_order_relaxed);
	}
	atomic_fetch_add(&k_in_handler, 1); /* 2: a nested delivery */
	while (atomic_load_explicit(&k_hold, memory_order_relaxed))
		atomic_fetch_add_explicit(&k_hold_iters, 1, memory_order_relaxed);
	atomic_fetch_sub(&k_in_handler, 1);
	atomic_store(&k_handled, i + 1);
}

__attribute__((noinline, uintr_no_safepoint)) long k_loop_attr(long n)
{
	long s = 0;

	for (volatile long i = 0; i < n; i++)
		s += i ^ (s >> 1);
	return s;
}

__attribute__((noinline, no_instrument_function)) long k_loop_noinstr(long n)
{
	long s = 0;

	for (volatile long i = 0; i < n; i++)
		s += i ^ (s >> 2);
	return s;
}

__attribute__((noinline, uintr_no_safepoint)) void k_spin_until_excluded(const _Atomic int *p, int n)
{
	while (atomic_load_explicit(p, memory_order_relaxed) < n)
		;
}
#endif
