/*
 * What selftests/uintr/syscall_alt_stack.c of Intel's later branch
 * checks, under uintr-run --abi=later, as that program does it (issue 12):
 *   1. uintr_alt_stack(p, 4096, 0) with p from malloc, before the vector
 *      is registered; a self-sent interrupt (the process's own uvec fd,
 *      registered as a sender) runs the handler with RSP inside
 *      (p, p + 4096).
 *   2. After uintr_alt_stack(NULL, 0, 0) the handler runs on the
 *      interrupted stack again: below the RSP the program read just
 *      before sending and within 4096 bytes of it.
 * The selftest spins on the handler's flag after SENDUIPI ("self IPI is
 * also a posted delivery"); so do we.
 */
#include "helpers-compat.h"

#define NR_vector_fd 473
#define NR_alt_stack 478
#define STACK_SIZE 4096

static unsigned long long expected_top, handler_sp;
static int received, on_expected_stack;

static inline unsigned long long read_sp(void)
{
	unsigned long long sp;

	__asm__ volatile("mov %%rsp, %0" : "=r"(sp));
	return sp;
}

static void __attribute__((interrupt))
handler(struct __uintr_frame *frame, unsigned long long vector)
{
	unsigned long long sp = read_sp();

	(void)frame;
	(void)vector;
	STORE(handler_sp, sp);
	STORE(on_expected_stack, sp < expected_top && sp > expected_top - STACK_SIZE);
	STORE(received, 1);
}

static void round_trip(int clear)
{
	void *stack = malloc(STACK_SIZE);
	long fd, idx;

	CHECK(stack != NULL);
	CHECK_EQ(syscall(NR_uintr_register_handler, (uintptr_t)handler, 0), 0);
	CHECK_EQ(syscall(NR_alt_stack, stack, STACK_SIZE, 0), 0);
	fd = syscall(NR_vector_fd, 0, 0);
	CHECK(fd >= 0);
	_stui();
	idx = syscall(NR_uintr_register_sender, fd, 0);
	CHECK(idx >= 0);
	STORE(received, 0);
	STORE(on_expected_stack, 0);
	if (clear) {
		CHECK_EQ(syscall(NR_alt_stack, NULL, 0, 0), 0);
		expected_top = read_sp();
	} else {
		expected_top = (unsigned long long)(uintptr_t)stack + STACK_SIZE;
	}
	_senduipi((unsigned long long)idx);
	WAIT_UNTIL(LOAD(received));
	if (!LOAD(on_expected_stack)) {
		fprintf(stderr, "round %d: handler RSP %#llx, expected below %#llx\n", clear,
			LOAD(handler_sp), expected_top);
		exit(T_FAIL);
	}
	CHECK_EQ(syscall(NR_uintr_unregister_sender, idx, 0), 0);
	CHECK_EQ(close((int)fd), 0);
	CHECK_EQ(syscall(NR_uintr_unregister_handler, 0), 0);
	free(stack);
}

int main(void)
{
	round_trip(0);
	round_trip(1);
	return T_PASS;
}
