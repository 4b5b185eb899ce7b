/*
 * Senders killed in the middle of SENDUIPI (issue: hostile peers;
 * reference 8).  A forked child floods vector 20 of a receiver thread in
 * the parent through an inherited fd, 40 times, and dies in one of two
 * ways, alternately:
 *   - at its first notification syscall (signal or futex wake): a seccomp
 *     filter kills it there, the worst moment, with the post in PIR and
 *     the notification decided but not made (before the fix of
 *     sender.c the receiver then had ON set for good and was never
 *     notified again); where seccomp filters are unavailable (qemu-user)
 *     the other way is used;
 *   - SIGKILL from the parent after a varying number of posts: anywhere.
 * After each death the parent posts vector 20 (the dead child may have
 * left its bit set without a notification: the post must not coalesce
 * into nothing) and then vector 21, and waits for each delivery: a dead
 * sender must never leave the receiver unable to be notified.  Run with the receiver in both states:
 *   - running plain code with UIF = 1 and never polling (only an
 *     asynchronous notification can deliver the probe);
 *   - sleeping in uintr_wait.
 * Exact checks: each probe delivered exactly once, in order; vector 20
 * delivered no more often than posted; every delivery on the receiver
 * thread; no spurious notification anywhere in the process; the receiver
 * thread's own loop kept running; no crash.
 */
#include "helpers-lifetime.h"

#include "helpers-seccomp.h"

#define ROUNDS 40
#define FLOOD_VECTOR 20
#define PROBE_VECTOR 21

struct flood {
	_Atomic unsigned long long posts; /* made by the children, in all */
	_Atomic int child_ready;
	_Atomic int no_seccomp;           /* filters unavailable: SIGKILL only */
	_Atomic int died_at_notification; /* children the filter killed */
};

static struct flood *fl;
static _Atomic int stop, mode_wait, rx_ready;
static _Atomic unsigned long long rx_loops;
static int fd_flood, fd_probe;

static void *receiver(void *arg)
{
	static const unsigned int vecs[] = { FLOOD_VECTOR, PROBE_VECTOR };
	int fds[2];

	(void)arg;
	lt_become_receiver(2, vecs, fds);
	fd_flood = fds[0];
	fd_probe = fds[1];
	uintr_stui();
	rx_ready = 1;
	while (!atomic_load(&stop)) {
		if (atomic_load(&mode_wait)) {
			errno = 0;
			/* race-free: the last probe may be handled before the call */
			CHECK(uintr_wait_since_last(0) == -1 && errno == EINTR);
		}
		atomic_fetch_add(&rx_loops, 1);
	}
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

/* Die (SIGSYS, kill the process) at any notification syscall. */
static int die_at_notification(void)
{
#ifdef T_AUDIT_ARCH
	struct sock_filter code[] = {
		T_SECCOMP_PROLOGUE(SECCOMP_RET_ALLOW),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pidfd_send_signal, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_tgsigqueueinfo, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_futex, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	return t_seccomp_install(code, (unsigned short)(sizeof(code) / sizeof(code[0])));
#else
	return -1;
#endif
}

static void child_flood(unsigned long long limit, int at_notification, pid_t parent)
{
	int idx;

	/* Never outlive a failed test: the flood would go on for ever. */
	CHECK(prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 && getppid() == parent);
	idx = uintr_register_sender(fd_flood, 0);
	CHECK(idx >= 0);
	if (at_notification && die_at_notification() != 0)
		atomic_store(&fl->no_seccomp, 1);
	fl->child_ready = 1;
	for (;;) {
		atomic_fetch_add(&fl->posts, 1);
		uintr_senduipi((unsigned long long)idx);
		if (limit && atomic_load(&fl->posts) >= limit)
			atomic_store(&fl->child_ready, 2);
	}
}

static unsigned long long marker = 1000;

static void rounds(int probe_idx, int flood_idx, unsigned int *seed)
{
	int r;

	for (r = 0; r < ROUNDS; r++) {
		unsigned long long start = atomic_load(&fl->posts);
		unsigned long long want = start + 1 + (unsigned long long)(rand_r(seed) % 3000);
		unsigned long long probes = lt_count(PROBE_VECTOR), loops;
		pid_t pid, parent = getpid();
		int status;

		fl->child_ready = 0;
		pid = fork();
		CHECK(pid >= 0);
		if (pid == 0)
			child_flood(want, r & 1, parent);
		/* Flooding long enough, or already dead at a notification. */
		WAIT_UNTIL(atomic_load(&fl->child_ready) == 2 ||
			   waitpid(pid, &status, WNOHANG) == pid);
		if (kill(pid, SIGKILL) == 0)
			CHECK(waitpid(pid, &status, 0) == pid);
		CHECK(WIFSIGNALED(status));
		if (WTERMSIG(status) == SIGSYS)
			atomic_fetch_add(&fl->died_at_notification, 1);
		else
			CHECK_EQ(WTERMSIG(status), SIGKILL);

		/* The flooded vector itself, posted again, is delivered: the
		 * dead child may have left its bit set with no notification on
		 * its way (that post must not coalesce into nothing). */
		atomic_store(&lt_c->seq[FLOOD_VECTOR], ++marker);
		atomic_fetch_add(&fl->posts, 1);
		uintr_senduipi((unsigned long long)flood_idx);
		WAIT_UNTIL(atomic_load(&lt_c->seen[FLOOD_VECTOR]) == marker);

		/* The receiver can still be notified, and still runs. */
		loops = atomic_load(&rx_loops);
		atomic_store(&lt_c->seq[PROBE_VECTOR], probes + 1);
		uintr_senduipi((unsigned long long)probe_idx);
		/* seen[] is the handler's last write (helpers-lifetime.h). */
		WAIT_UNTIL(atomic_load(&lt_c->seen[PROBE_VECTOR]) == probes + 1);
		CHECK_EQ(lt_count(PROBE_VECTOR), probes + 1);
		WAIT_UNTIL(atomic_load(&rx_loops) != loops);
	}
}

int main(void)
{
	struct uintr_stats ps;
	unsigned int seed = 12345;
	pthread_t t;
	int probe_idx, flood_idx;

	lt_counts_init();
	fl = mmap(NULL, sizeof(*fl), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(fl != MAP_FAILED);
	t = t_start(receiver, NULL);
	WAIT_UNTIL(rx_ready);
	probe_idx = uintr_register_sender(fd_probe, 0);
	CHECK(probe_idx >= 0);
	flood_idx = uintr_register_sender(fd_flood, 0);
	CHECK(flood_idx >= 0);

	rounds(probe_idx, flood_idx, &seed); /* receiver running, UIF = 1, never polling */
	atomic_store(&mode_wait, 1);
	rounds(probe_idx, flood_idx, &seed); /* receiver in uintr_wait */

	atomic_store(&stop, 1);
	uintr_senduipi((unsigned long long)probe_idx);
	t_join(t);

	CHECK_EQ(lt_count(PROBE_VECTOR), 2 * ROUNDS + 1);
	CHECK(lt_count(FLOOD_VECTOR) >= 1);
	CHECK(lt_count(FLOOD_VECTOR) <= atomic_load(&fl->posts));
	CHECK_EQ(atomic_load(&lt_c->wrong_thread), 0);
	CHECK_EQ(atomic_load(&lt_c->bad_vector), 0);
	CHECK(uintr_get_stats(&ps, UINTR_STATS_PROCESS) == 0);
	CHECK_EQ(ps.spurious, 0);
	/* Half the children were to die at a notification, where filters
	 * exist: in running mode every flood notifies at once. */
	if (!atomic_load(&fl->no_seccomp))
		CHECK(atomic_load(&fl->died_at_notification) >= ROUNDS / 2);
	printf("%d senders killed mid-flood after %llu posts in all (%d at their notification "
	       "syscall%s); %llu deliveries of the flooded vector, %llu notifications\n",
	       2 * ROUNDS, (unsigned long long)atomic_load(&fl->posts),
	       atomic_load(&fl->died_at_notification),
	       atomic_load(&fl->no_seccomp) ? ", seccomp unavailable" : "",
	       lt_count(FLOOD_VECTOR), (unsigned long long)ps.notifications);
	return T_PASS;
}
