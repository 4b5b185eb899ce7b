/*
 * Reference 2.3 + 2.5 (the release of a uintr_fd unregisters every sender
 * connected through it; task_work on the sender: "if the UITT becomes
 * empty -> clear MISC[31:0] and TT := 0") and 4.4 (uintr_state: UITTSZ,
 * UITTADDR bit 0 = SENDUIPI enabled): a sender thread whose only entry was
 * disconnected by the release of the fd has no sender state left, exactly
 * as after uintr_unregister_sender: uintr_read_state shows uitt_size 0 and
 * uitt_addr 0, consistent with SENDUIPI raising SIGILL (#UD, TT[0] = 0).
 */
#include "helpers-lifetime.h"

static int fd;
static struct t_chan go;
static _Atomic int done;

static void expect_no_uitt(const char *after)
{
	struct uintr_state st;
	int code = 0;

	CHECK_EQ(lt_send_fault(0, &code), SIGILL);
	LT_CHECK_FAULT_CODE(code, ILL_ILLOPN);
	CHECK(uintr_read_state(&st) == 0);
	if (st.uitt_size != 0 || st.uitt_addr != 0) {
		fprintf(stderr, "after %s: uitt_size %u uitt_addr %#llx, expected 0 0\n", after,
			st.uitt_size, st.uitt_addr);
		exit(T_FAIL);
	}
}

static void *sender(void *arg)
{
	struct uintr_state st;

	(void)arg;
	/* Reference behaviour: explicit unregister empties the UITT. */
	CHECK_EQ(uintr_register_sender(fd, 0), 0);
	CHECK(uintr_read_state(&st) == 0);
	CHECK_EQ(st.uitt_size, UINTR_UITT_ENTRIES);
	CHECK(st.uitt_addr & 1);
	lt_send_wait(0, 4);
	CHECK(uintr_unregister_sender(fd, 0) == 0);
	expect_no_uitt("uintr_unregister_sender");

	/* Same state reached through the release of the fd. */
	CHECK_EQ(uintr_register_sender(fd, 0), 0);
	lt_send_wait(0, 4);
	done = 1;
	t_chan_wait(&go); /* the receiver closed the only reference */
	expect_no_uitt("release of the fd");
	return NULL;
}

int main(void)
{
	static const unsigned int vec[] = { 4 };

	lt_counts_init();
	lt_become_receiver(1, vec, &fd);
	uintr_stui();
	t_chan_init(&go);
	pthread_t t = t_start(sender, NULL);

	lt_wait_step(&done, 1);
	CHECK(close(fd) == 0);
	lt_settle_releases(); /* the release is complete */
	t_chan_post(&go);
	t_join(t);
	CHECK_EQ(lt_count(4), 2);
	return T_PASS;
}
