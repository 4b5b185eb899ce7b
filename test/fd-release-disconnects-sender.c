/*
 * Reference 2.3 (release of the last reference: every sender connected
 * through the fd is unregistered, the vector's PIR bit is cleared, a vector
 * already in UIRR is left to be delivered) and 2.5 (an invalid entry
 * -> #GP/SIGSEGV; an empty UITT -> #UD/SIGILL).
 *
 * The main thread is the receiver (vectors 1 through fd A, 2 through fd B);
 * a sender thread registers through a dup of A (index 0) and through B
 * (index 1).  Checked, in order:
 *  1. both deliver;
 *  2. vector 1 posted while UIF = 0 and seen in UIRR, then every reference
 *     to A closed (the dup by the sender, A by the receiver): once the
 *     release is complete (lt_settle_releases), sending through index 0
 *     raises SIGSEGV, index 1 still
 *     delivers, and at STUI the vector 1 that was already in UIRR IS
 *     delivered;
 *  3. vector 1 created again (fd A2); the sender's new registration gets
 *     index 0 again (the old entry was freed); vector 1 posted while the
 *     receiver blocks the notification signal (so it stays in PIR), then A2
 *     released and vector 1 created again while still blocked: that post is
 *     NOT delivered after unblocking (its PIR bit was cleared), as a later
 *     vector 2 send shows;
 *  4. B released too: no valid entry is left, so SENDUIPI on either index
 *     raises SIGILL.
 */
#include "helpers-lifetime.h"

/* The sender thread runs the jobs main gives it, one at a time. */
static void (*job)(void);
static struct t_chan job_go;
static _Atomic int jobs_done;

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		t_chan_wait(&job_go);
		if (!job)
			return NULL;
		job();
		atomic_fetch_add(&jobs_done, 1);
	}
}

/* The receiver (main) waits spinning, so it takes interrupts meanwhile. */
static void run(void (*fn)(void))
{
	int n = atomic_load(&jobs_done) + 1;

	job = fn;
	t_chan_post(&job_go);
	lt_wait_step(&jobs_done, n);
}

static int fd_a, fd_b, dup_a;
static int fault_sig, fault_code;

static void reg_both(void)
{
	dup_a = dup(fd_a);
	CHECK(dup_a >= 0);
	CHECK_EQ(uintr_register_sender(dup_a, 0), 0);
	CHECK_EQ(uintr_register_sender(fd_b, 0), 1);
}

static void reg_a(void)
{
	CHECK_EQ(uintr_register_sender(fd_a, 0), 0);
}

static void send0(void)
{
	uintr_senduipi(0);
}

static void send1(void)
{
	uintr_senduipi(1);
}

static void send0_wait(void)
{
	lt_send_wait(0, 1);
}

static void send1_wait(void)
{
	lt_send_wait(1, 2);
}

static void close_dup(void)
{
	CHECK(close(dup_a) == 0);
}

static void fault0(void)
{
	fault_sig = lt_send_fault(0, &fault_code);
}

static void fault1(void)
{
	fault_sig = lt_send_fault(1, &fault_code);
}

int main(void)
{
	static const unsigned int vec[] = { 1, 2 };
	int fds[2];
	struct uintr_state st;
	pthread_t t;

	lt_counts_init();
	lt_become_receiver(2, vec, fds);
	fd_a = fds[0];
	fd_b = fds[1];
	uintr_stui();
	t_chan_init(&job_go);
	t = t_start(worker, NULL);

	/* 1 */
	run(reg_both);
	run(send0_wait);
	run(send1_wait);

	/* 2: vector 1 recognized (UIRR) but not delivered, then A released. */
	uintr_clui();
	run(send0);
	WAIT_UNTIL((uintr_read_state(&st), st.uirr & (1ull << 1)));
	CHECK_EQ(lt_count(1), 1);
	run(close_dup);
	CHECK(close(fd_a) == 0);
	lt_settle_releases(); /* the release is complete */
	run(fault0);
	CHECK_EQ(fault_sig, SIGSEGV);
	LT_CHECK_FAULT_CODE(fault_code, SI_KERNEL);
	CHECK(uintr_read_state(&st) == 0);
	CHECK_EQ(st.uirr, 1ull << 1); /* still pending */
	run(send1);
	WAIT_UNTIL((uintr_read_state(&st), st.uirr == ((1ull << 1) | (1ull << 2))));
	uintr_stui(); /* both delivered now */
	CHECK_EQ(lt_count(1), 2);
	CHECK_EQ(lt_count(2), 2);

	/* 3: vector 1 again; a post left in PIR is dropped at release. */
	fd_a = uintr_create_fd(1, 0);
	CHECK(fd_a >= 0);
	run(reg_a);
	run(send0_wait);
	CHECK_EQ(lt_count(1), 3);
	lt_block(uintr_notification_signal(), 1);
	run(send0);
	CHECK(lt_sig_pending(uintr_notification_signal())); /* posted, not processed */
	CHECK(close(fd_a) == 0);
	fd_a = uintr_create_fd(1, 0); /* sees the release at once */
	CHECK(fd_a >= 0);
	lt_block(uintr_notification_signal(), 0);
	run(send1_wait);
	CHECK_EQ(lt_count(1), 3); /* the post made through A2 was not delivered */
	CHECK_EQ(lt_count(2), 3);
	run(fault0); /* index 0 (A2) is gone */
	CHECK_EQ(fault_sig, SIGSEGV);
	LT_CHECK_FAULT_CODE(fault_code, SI_KERNEL);

	/* 4: B released: no valid entry at all. */
	CHECK(close(fd_b) == 0);
	lt_settle_releases();
	run(fault1);
	CHECK_EQ(fault_sig, SIGILL);
	LT_CHECK_FAULT_CODE(fault_code, ILL_ILLOPN);
	run(fault0);
	CHECK_EQ(fault_sig, SIGILL);
	LT_CHECK_FAULT_CODE(fault_code, ILL_ILLOPN);

	CHECK_EQ(lt_count(1), 3);
	CHECK_EQ(lt_count(2), 3);
	CHECK_EQ(atomic_load(&lt_c->wrong_thread), 0);
	job = NULL;
	t_chan_post(&job_go);
	t_join(t);
	return T_PASS;
}
