/*
 * What selftests/uintr/syscall_handler.c checks (Intel's mainline-tracking
 * and later branches alike), as a -muintr program that makes the same
 * calls by number, 471-474 meaning the same in both ABIs here; run under
 * each ABI by intel-syscall-handler.c and later-intel-syscall-handler.c
 * (issue 12):
 *   1. uintr_unregister_handler(0) without a handler fails (EINVAL).
 *   2. A second uintr_register_handler fails (EBUSY); unregister.
 *   3. In a forked child: an ordinary function (no interrupt attribute)
 *      registered as the handler, vector 0 sent to itself after STUI.
 *      The function runs once, and its plain RET pops the vector (0) as
 *      the return address: SIGSEGV, whose handler ends the child with
 *      status 0.  The selftest does not check the child's status; we do,
 *      and that the function ran exactly once first.
 * (The selftest's invalid-address cases are compiled out there: "kernel
 * checks are not implemented yet".)
 */
#ifndef UINTR_TEST_HELPERS_INTEL_HANDLER_H
#define UINTR_TEST_HELPERS_INTEL_HANDLER_H

#include "helpers-compat.h"

static int received;

static void __attribute__((interrupt))
empty_handler(struct __uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	(void)vector;
}

static void __attribute__((noinline, used))
usual_function(struct __uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	(void)vector;
	ADD(received, 1);
}

static void on_sigsegv(int sig)
{
	(void)sig;
	_exit(LOAD(received) == 1 ? T_PASS : T_FAIL);
}

static void regular_function_as_handler(void)
{
	long fd, idx;

	CHECK_EQ(syscall(NR_uintr_register_handler, (uintptr_t)usual_function, 0), 0);
	fd = syscall(NR_uintr_create_fd, 0, 0);
	CHECK(fd >= 0);
	_stui();
	idx = syscall(NR_uintr_register_sender, fd, 0);
	CHECK(idx >= 0);
	CHECK(signal(SIGSEGV, on_sigsegv) != SIG_ERR);
	_senduipi((unsigned long long)idx);
	WAIT_UNTIL((usleep(1), LOAD(received) > 1));
	fprintf(stderr, "no SIGSEGV after the ordinary function returned\n");
	_exit(T_FAIL);
}

static int intel_syscall_handler(void)
{
	pid_t pid;

	CHECK_ERR(syscall(NR_uintr_unregister_handler, 0), EINVAL);
	CHECK_EQ(syscall(NR_uintr_register_handler, (uintptr_t)empty_handler, 0), 0);
	CHECK_ERR(syscall(NR_uintr_register_handler, (uintptr_t)empty_handler, 0), EBUSY);
	CHECK_EQ(syscall(NR_uintr_unregister_handler, 0), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		regular_function_as_handler();
	t_wait_child_ok(pid);
	return T_PASS;
}

#endif
