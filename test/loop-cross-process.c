/*
 * The event-loop state reached from other processes (uintr_loop_fd(3):
 * every uintr_fd carries the receiver's eventfd, so a sender process that
 * registered through one notifies the loop): two forked sender processes,
 * one that registered before the receiver entered the event-loop state and
 * one after, each post their own vector ROUNDS times, each post after the
 * loop delivered the previous one (shared counters), while the loop sleeps
 * in epoll_wait on the loop fd.  Every post is delivered exactly once
 * (deliveries never exceed posts; all arrive); at the end the fd is not
 * readable.  A lost notification leaves the loop asleep: epoll_wait's 20 s
 * hang guard fails the test.
 */
#include "helpers-loop.h"

#include <sys/mman.h>
#include <sys/prctl.h>

#define ROUNDS 2000

struct shared {
	_Atomic unsigned long long sent[2], delivered[2];
	_Atomic int registered[2], go;
	_Atomic int duplicate;
};
static struct shared *sh;
static int fds[2];
static const unsigned int vec[2] = { 4, 8 };

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	int i = vector == vec[0] ? 0 : vector == vec[1] ? 1 : -1;

	(void)frame;
	if (i < 0 || atomic_load(&sh->delivered[i]) + 1 > atomic_load(&sh->sent[i]))
		atomic_store(&sh->duplicate, 1);
	else
		atomic_fetch_add(&sh->delivered[i], 1);
}

static void child(int i)
{
	int idx, k;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	idx = uintr_register_sender(fds[i], 0);
	CHECK(idx >= 0);
	atomic_store(&sh->registered[i], 1);
	WAIT_UNTIL(atomic_load(&sh->go));
	for (k = 0; k < ROUNDS; k++) {
		WAIT_PROGRESS(atomic_load(&sh->delivered[i]) == (unsigned long long)k ||
				      atomic_load(&sh->duplicate),
			      atomic_load(&sh->delivered[0]) + atomic_load(&sh->delivered[1]));
		if (atomic_load(&sh->duplicate))
			_exit(T_FAIL);
		atomic_fetch_add(&sh->sent[i], 1);
		uintr_senduipi((unsigned long long)idx);
	}
	_exit(T_PASS);
}

static pid_t start_child(int i)
{
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0)
		child(i);
	WAIT_UNTIL(atomic_load(&sh->registered[i]));
	return pid;
}

int main(void)
{
	struct epoll_event ev;
	pid_t early, late;
	int lfd, ep, i;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED);
	CHECK(uintr_register_handler(handler, 0) == 0);
	for (i = 0; i < 2; i++) {
		fds[i] = uintr_create_fd(vec[i], 0);
		CHECK(fds[i] >= 0);
	}
	early = start_child(0); /* registered before the event-loop state */
	lfd = uintr_loop_fd(0);
	CHECK(lfd >= 0);
	late = start_child(1);
	ep = tl_epoll_with(lfd);
	uintr_stui();
	atomic_store(&sh->go, 1);

	while (atomic_load(&sh->delivered[0]) + atomic_load(&sh->delivered[1]) < 2 * ROUNDS &&
	       !atomic_load(&sh->duplicate)) {
		if (tl_epoll_wait(ep, &ev, 1, 20000) == 0) {
			fprintf(stderr, "lost wake-up: asleep 20 s, %llu + %llu of %d delivered\n",
				atomic_load(&sh->delivered[0]), atomic_load(&sh->delivered[1]),
				2 * ROUNDS);
			return T_FAIL;
		}
		CHECK_EQ(ev.data.fd, lfd);
		CHECK(uintr_loop_drain(0) >= 0);
	}
	CHECK_EQ(atomic_load(&sh->duplicate), 0);
	t_wait_child_ok(early);
	t_wait_child_ok(late);
	for (i = 0; i < 2; i++) {
		CHECK_EQ(sh->sent[i], ROUNDS);
		CHECK_EQ(sh->delivered[i], ROUNDS);
	}
	/* At most a stale readiness (a sender slower than the drain's read). */
	if (tl_readable(lfd, 0))
		CHECK_EQ(uintr_loop_drain(0), 0);
	CHECK(!tl_readable(lfd, 0));
	CHECK(uintr_unregister_handler(0) == 0);
	return T_PASS;
}
