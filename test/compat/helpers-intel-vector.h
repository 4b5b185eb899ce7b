/*
 * What selftests/uintr/syscall_vector.c checks (Intel's mainline-tracking
 * and later branches alike), with the calls by number, 471-473 meaning
 * the same in both ABIs here; run under each ABI by
 * intel-syscall-vector.c and later-intel-syscall-vector.c (issue 12):
 *   1. After uintr_unregister_handler(0) (which fails: none registered),
 *      registering vector 0 fails: EINVAL, no handler.
 *   2. With a handler, vectors -1, 64 and 100 fail: ENOSPC.
 * (The selftest's same-vector and dup-then-close cases are compiled out
 * there; the ABIs differ on them, see test/compat/later-abi.c.)
 */
#ifndef UINTR_TEST_HELPERS_INTEL_VECTOR_H
#define UINTR_TEST_HELPERS_INTEL_VECTOR_H

#include "helpers-compat.h"

static void __attribute__((interrupt))
empty_handler(struct __uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	(void)vector;
}

static int intel_syscall_vector(void)
{
	static const long bad[] = { -1, 64, 100 };
	unsigned int i;

	CHECK_ERR(syscall(NR_uintr_unregister_handler, 0), EINVAL);
	CHECK_ERR(syscall(NR_uintr_create_fd, 0, 0), EINVAL);
	CHECK_EQ(syscall(NR_uintr_register_handler, (uintptr_t)empty_handler, 0), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_ERR(syscall(NR_uintr_create_fd, bad[i], 0), ENOSPC);
	CHECK_EQ(syscall(NR_uintr_unregister_handler, 0), 0);
	return T_PASS;
}

#endif
