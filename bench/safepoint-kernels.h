/* The workloads of bench/safepoint.c (bench/safepoint-kernels.c). */
#ifndef UINTR_BENCH_SAFEPOINT_KERNELS_H
#define UINTR_BENCH_SAFEPOINT_KERNELS_H

#include <stdatomic.h>
#include <stdint.h>

#define BK_DIM 128

#define BK_DECLS(S)                                                                  \
	uint64_t bk_tight##S(uint64_t n);                                            \
	uint64_t bk_fib##S(unsigned n);                                              \
	uint64_t bk_chase##S(const uint32_t *next, uint64_t steps);                  \
	uint64_t bk_calls##S(uint64_t n);                                            \
	uint64_t bk_matmul##S(const uint32_t *a, const uint32_t *b, uint32_t *c, int reps); \
	uint64_t bk_sort##S(uint32_t *a, long n, uint64_t seed);                     \
	uint64_t bk_hash##S(const unsigned char *p, long n, int reps);
BK_DECLS()
BK_DECLS(_plain)

void bk_spin_until(const _Atomic uint64_t *p, uint64_t n);       /* with safepoints */
void bk_spin_until_plain(const _Atomic uint64_t *p, uint64_t n); /* without */

#endif
