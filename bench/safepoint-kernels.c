/*
 * The compute workloads of uintr-safepoint (bench/safepoint.c), compiled
 * twice: with the plugin (names as written) and without (-DPLAIN: every
 * name with a _plain suffix).  Also the receiver's spin loops.
 */
#include <stdatomic.h>
#include <stdint.h>

#include "safepoint-kernels.h"

#ifdef PLAIN
#define K(name) name##_plain
#else
#define K(name) name
#endif
#define NOINLINE __attribute__((noinline))

/* Tight loop: a sum with a data dependence (not vectorizable). */
NOINLINE uint64_t K(bk_tight)(uint64_t n)
{
	uint64_t x = 1;

	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + i;
	return x;
}

/* Recursion. */
NOINLINE uint64_t K(bk_fib)(unsigned n)
{
	return n < 2 ? n : K(bk_fib)(n - 1) + K(bk_fib)(n - 2);
}

/* Pointer chasing through a random cycle (cache misses). */
NOINLINE uint64_t K(bk_chase)(const uint32_t *next, uint64_t steps)
{
	uint32_t i = 0;
	uint64_t s = 0;

	while (steps--) {
		i = next[i];
		s += i;
	}
	return s;
}

/* Call-heavy: a small function (not inlined) per iteration. */
NOINLINE static uint64_t K(bk_mix)(uint64_t x, uint64_t i)
{
	x ^= x >> 31;
	return x * 0x9e3779b97f4a7c15ull + i;
}

NOINLINE uint64_t K(bk_calls)(uint64_t n)
{
	uint64_t x = 7;

	for (uint64_t i = 0; i < n; i++)
		x = K(bk_mix)(x, i);
	return x;
}

/* Loop nest: a 128x128 matrix product, repeated. */
NOINLINE uint64_t K(bk_matmul)(const uint32_t *a, const uint32_t *b, uint32_t *c, int reps)
{
	uint64_t s = 0;

	for (int r = 0; r < reps; r++) {
		for (int i = 0; i < BK_DIM; i++)
			for (int j = 0; j < BK_DIM; j++) {
				uint32_t acc = 0;

				for (int k = 0; k < BK_DIM; k++)
					acc += a[i * BK_DIM + k] * b[k * BK_DIM + j];
				c[i * BK_DIM + j] = acc + (uint32_t)r;
			}
		s += c[r % (BK_DIM * BK_DIM)];
	}
	return s;
}

/* Quicksort (recursion and short inner loops). */
NOINLINE static void K(bk_qsort)(uint32_t *a, long lo, long hi)
{
	while (lo < hi) {
		uint32_t p = a[(lo + hi) / 2];
		long i = lo, j = hi;

		while (i <= j) {
			while (a[i] < p)
				i++;
			while (a[j] > p)
				j--;
			if (i <= j) {
				uint32_t t = a[i];

				a[i++] = a[j];
				a[j--] = t;
			}
		}
		if (j - lo < hi - i) {
			K(bk_qsort)(a, lo, j);
			lo = i;
		} else {
			K(bk_qsort)(a, i, hi);
			hi = j;
		}
	}
}

NOINLINE uint64_t K(bk_sort)(uint32_t *a, long n, uint64_t seed)
{
	for (long i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		a[i] = (uint32_t)(seed >> 33);
	}
	K(bk_qsort)(a, 0, n - 1);
	return a[n / 2];
}

/* Byte loop: FNV-1a over a buffer, repeated. */
NOINLINE uint64_t K(bk_hash)(const unsigned char *p, long n, int reps)
{
	uint64_t h = 1469598103934665603ull;

	for (int r = 0; r < reps; r++)
		for (long i = 0; i < n; i++)
			h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

#ifndef PLAIN
/* The receiver's busy loops: with safepoints (this file has the plugin)
 * and without (the attribute). */
NOINLINE void bk_spin_until(const _Atomic uint64_t *p, uint64_t n)
{
	while (atomic_load_explicit(p, memory_order_relaxed) < n)
		;
}

NOINLINE __attribute__((uintr_no_safepoint)) void bk_spin_until_plain(const _Atomic uint64_t *p,
								      uint64_t n)
{
	while (atomic_load_explicit(p, memory_order_relaxed) < n)
		;
}
#endif
