/*
 * Reference 2.3 (uintrfd release, on the last close: "for every sender
 * connected through this fd -> unregister that sender (2.5)", whatever
 * became of the receiver) and 2.7 ("if not coordinated ... shared objects
 * stay allocated until fds are released"): a sender's UITT entry made
 * through a uintr_fd is freed when that fd is released, also when the
 * receiver had already exited or unregistered.  So, in the sender thread:
 * SENDUIPI on the entry afterwards raises SIGILL (it was the only entry),
 * and the next registration gets index 0 again; repeated 300 times (more
 * than the 256 UITT entries) it never runs out (no ENOSPC).
 * Receivers alternate between returning from their thread and calling
 * uintr_unregister_handler.
 */
#include "helpers-lifetime.h"

#define V 6
#define ROUNDS 300

static int fd;
static _Atomic int registered, round_no;
static _Atomic int leave;

static void *receiver(void *arg)
{
	static const unsigned int vec[] = { V };

	lt_become_receiver(1, vec, &fd);
	uintr_stui();
	registered = 1;
	lt_wait_step(&leave, round_no);
	if (arg)
		CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	int round, idx, code = 0;
	pthread_t t;

	lt_counts_init();
	for (round = 0; round < ROUNDS; round++) {
		registered = 0;
		round_no = round + 1;
		t = t_start(receiver, (void *)(intptr_t)(round & 1));
		WAIT_UNTIL(registered);
		idx = uintr_register_sender(fd, 0);
		if (idx != 0) {
			fprintf(stderr, "round %d: register_sender returned %d (errno %d), "
					"expected index 0\n", round, idx, errno);
			return T_FAIL;
		}
		lt_send_wait(0, V);
		leave = round + 1;
		t_join(t);
		CHECK(close(fd) == 0); /* the last reference: released */
		lt_settle_releases();
		if (lt_send_fault(0, &code) != SIGILL) {
			fprintf(stderr, "round %d: SENDUIPI on the entry of a released fd "
					"did not raise SIGILL\n", round);
			return T_FAIL;
		}
		LT_CHECK_FAULT_CODE(code, ILL_ILLOPN);
	}
	CHECK_EQ(lt_count(V), ROUNDS);
	return T_PASS;
}
