/*
 * UITT indices (reference 2.4, 2.5, 4.2): uintr_register_sender returns
 * the lowest free index of the calling thread's table: 0, 1, 2 for three
 * fds; after index 1 is unregistered the next registration gets 1, then 3;
 * freed indices are reused lowest first.  Tables are per thread: another
 * thread starts at 0 whatever this one holds, and each index posts the
 * vector of the fd it was registered through.
 */
#include "helpers-errno.h"

static struct te_rx rx;

static void *other_thread(void *arg)
{
	(void)arg;
	CHECK_EQ(uintr_register_sender(rx.fd[6], 0), 0);
	/* Our index 0 is fd[6] (vector 16), not main's index 0 (fd[0]). */
	uintr_senduipi(0);
	te_rx_command(&rx, 's');
	CHECK_EQ(rx.uirr, 1ull << 16);
	CHECK_EQ(uintr_register_sender(rx.fd[0], 0), 1);
	CHECK_EQ(uintr_unregister_sender(rx.fd[6], 0), 0);
	CHECK_EQ(uintr_register_sender(rx.fd[5], 0), 0);
	CHECK_EQ(uintr_register_sender(rx.fd[6], 0), 2);
	return NULL;
}

int main(void)
{
	int i;

	te_rx_start(&rx, 10, 7); /* vectors 10..16 */

	CHECK_EQ(uintr_register_sender(rx.fd[0], 0), 0);
	CHECK_EQ(uintr_register_sender(rx.fd[1], 0), 1);
	CHECK_EQ(uintr_register_sender(rx.fd[2], 0), 2);

	/* Another thread, while this one holds 0..2: starts at 0. */
	te_in_thread(other_thread, NULL);

	CHECK_EQ(uintr_unregister_sender(rx.fd[1], 0), 0);
	CHECK_EQ(uintr_register_sender(rx.fd[3], 0), 1);
	CHECK_EQ(uintr_register_sender(rx.fd[1], 0), 3);
	CHECK_EQ(uintr_register_sender(rx.fd[4], 0), 4);

	/* Free 0, 2 and 3 (in the order 3, 0, 2): reused 0, 2, 3, then 5. */
	CHECK_EQ(uintr_unregister_sender(rx.fd[1], 0), 0); /* index 3 */
	CHECK_EQ(uintr_unregister_sender(rx.fd[0], 0), 0); /* index 0 */
	CHECK_EQ(uintr_unregister_sender(rx.fd[2], 0), 0); /* index 2 */
	CHECK_EQ(uintr_register_sender(rx.fd[2], 0), 0);
	CHECK_EQ(uintr_register_sender(rx.fd[1], 0), 2);
	CHECK_EQ(uintr_register_sender(rx.fd[0], 0), 3);
	CHECK_EQ(uintr_register_sender(rx.fd[5], 0), 5);

	/* Table now: 0->fd2(v12) 1->fd3(v13) 2->fd1(v11) 3->fd0(v10)
	 * 4->fd4(v14) 5->fd5(v15).  Each index posts its own vector: post
	 * them one at a time; the receiver (UIF = 0) reports its UIRR. */
	{
		static const int expect[6] = { 12, 13, 11, 10, 14, 15 };
		unsigned long long want = 1ull << 16; /* from other_thread */

		for (i = 0; i < 6; i++) {
			uintr_senduipi((unsigned long long)i);
			want |= 1ull << expect[i];
			te_rx_command(&rx, 's');
			CHECK_EQ(rx.uirr, want);
		}
	}
	te_rx_stop(&rx);
	CHECK_EQ(te_total, 0);
	return T_PASS;
}
