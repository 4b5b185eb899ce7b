/*
 * Stress, exact accounting (reference 5.1-5.4, 10.2-3; issue items 6, 7):
 * 4 sender threads and 2 sender processes, 2 receiver threads sleeping in
 * uintr_wait, 200000 interrupts in all.  Sender k owns vector 10+k of
 * receiver 1 and vector 20+k of receiver 2, alternates between them and
 * waits for each delivery before the next send, so every interrupt must be
 * delivered exactly once, on the right thread.  Meanwhile a churn thread
 * keeps becoming a receiver (vectors 40-43), sending itself one interrupt,
 * and tearing everything down again (fds closed, handler unregistered).
 * At the end: 0 lost, 0 extra, per vector and in total.
 */
#include "helpers-lifetime.h"

#define TOTAL 200000
#define NTHREADS 4
#define NPROCS 2
#define NSEND (NTHREADS + NPROCS)
#define STOP1 1
#define STOP2 2

struct shared {
	_Atomic unsigned long long sent[UINTR_MAX_VECTORS];
	_Atomic int senders_done;
};

static struct shared *sh;
static struct lt_rx rx1, rx2;

static unsigned long long sends_of(int k)
{
	return TOTAL / NSEND + ((unsigned long long)k < TOTAL % NSEND);
}

static void run_sender(int k)
{
	unsigned int va = 10 + (unsigned int)k, vb = 20 + (unsigned int)k;
	unsigned long long i, n = sends_of(k);

	CHECK_EQ(uintr_register_sender(rx1.fd[k], 0), 0);
	CHECK_EQ(uintr_register_sender(rx2.fd[k], 0), 1);
	for (i = 0; i < n; i++) {
		if (i % 2 == 0) {
			lt_send_wait_sleeping(0, va);
			atomic_fetch_add(&sh->sent[va], 1);
		} else {
			lt_send_wait_sleeping(1, vb);
			atomic_fetch_add(&sh->sent[vb], 1);
		}
	}
	CHECK(uintr_unregister_sender(rx1.fd[k], 0) == 0);
	CHECK(uintr_unregister_sender(rx2.fd[k], 0) == 0);
	atomic_fetch_add(&sh->senders_done, 1);
}

static void *sender_thread(void *arg)
{
	run_sender((int)(intptr_t)arg);
	return NULL;
}

static _Atomic unsigned long long churn_rounds;

static void *churn(void *arg)
{
	static const unsigned int vec[] = { 40, 41, 42, 43 };
	int fds[4], i, idx;

	(void)arg;
	while (atomic_load(&sh->senders_done) < NSEND) {
		lt_become_receiver(4, vec, fds);
		uintr_stui();
		idx = uintr_register_sender(fds[0], 0);
		CHECK_EQ(idx, 0);
		lt_send_wait(idx, 40);
		CHECK(uintr_unregister_sender(fds[0], 0) == 0);
		for (i = 0; i < 4; i++)
			CHECK(close(fds[i]) == 0);
		CHECK(uintr_unregister_handler(0) == 0);
		atomic_fetch_add(&churn_rounds, 1);
	}
	return NULL;
}

int main(void)
{
	unsigned int v1[NSEND + 1], v2[NSEND + 1], v;
	pthread_t threads[NTHREADS], churner;
	pid_t pids[NPROCS];
	unsigned long long sum = 0;
	int k, idx;

	lt_counts_init();
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED);
	for (k = 0; k < NSEND; k++) {
		v1[k] = 10 + (unsigned int)k;
		v2[k] = 20 + (unsigned int)k;
	}
	v1[NSEND] = STOP1;
	v2[NSEND] = STOP2;
	lt_rx_start(&rx1, NSEND + 1, v1);
	lt_rx_start(&rx2, NSEND + 1, v2);

	for (k = 0; k < NPROCS; k++) {
		pids[k] = fork();
		CHECK(pids[k] >= 0);
		if (pids[k] == 0) {
			run_sender(NTHREADS + k);
			exit(T_PASS);
		}
	}
	for (k = 0; k < NTHREADS; k++)
		threads[k] = t_start(sender_thread, (void *)(intptr_t)k);
	churner = t_start(churn, NULL);

	for (k = 0; k < NTHREADS; k++)
		t_join(threads[k]);
	for (k = 0; k < NPROCS; k++)
		t_wait_child_ok(pids[k]);
	t_join(churner);

	for (k = 0; k < NSEND; k++) {
		unsigned long long n = sends_of(k);

		CHECK_EQ(atomic_load(&sh->sent[10 + k]), (n + 1) / 2);
		CHECK_EQ(atomic_load(&sh->sent[20 + k]), n / 2);
		CHECK_EQ(lt_count(10 + k), (n + 1) / 2);
		CHECK_EQ(lt_count(20 + k), n / 2);
		sum += lt_count(10 + k) + lt_count(20 + k);
	}
	CHECK_EQ(sum, TOTAL);
	CHECK(churn_rounds >= 1);
	CHECK_EQ(lt_count(40), churn_rounds);
	for (v = 0; v < UINTR_MAX_VECTORS; v++)
		if (!((v >= 10 && v < 10 + NSEND) || (v >= 20 && v < 20 + NSEND) || v == 40))
			CHECK_EQ(lt_count(v), 0);
	CHECK_EQ(atomic_load(&lt_c->wrong_thread), 0);
	CHECK_EQ(atomic_load(&lt_c->total), TOTAL + churn_rounds);
	printf("%d interrupts, %llu churn rounds\n", TOTAL, (unsigned long long)churn_rounds);

	idx = uintr_register_sender(rx1.fd[NSEND], 0);
	CHECK(idx >= 0);
	lt_rx_stop(&rx1, idx);
	idx = uintr_register_sender(rx2.fd[NSEND], 0);
	CHECK(idx >= 0);
	lt_rx_stop(&rx2, idx);
	return T_PASS;
}
