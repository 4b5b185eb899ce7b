/*
 * Close and exit while the event loop waits (uintr_loop_fd(3); reference
 * 2.3 release, 2.7 lifetimes).  A loop thread (the receiver) sleeps in
 * epoll_wait on its loop fd; the main thread holds the uintr_fds.
 *   - Close: main closes the last reference to vector 1's fd while the loop
 *     sleeps (the release notice interrupts epoll_wait; the loop goes on);
 *     a post of vector 2 still wakes it, and the loop can create vector 1
 *     again at once and be reached through the new fd.
 *   - A sender process killed while the loop sleeps: one that is idle
 *     (its post delivered) wakes nobody: the next wake-up is main's post,
 *     exactly one; one killed at a random point of a flood of vector 3
 *     leaves no notification stuck (ON): a later post of vector 3 is
 *     delivered.
 *   - Exit: the loop thread exits (its receiver goes with it); posts from
 *     main afterwards are silent (2.2) and never make the fd readable.
 */
#include "helpers-loop.h"

#include <sys/mman.h>
#include <sys/prctl.h>

static int fds[4], lfd;
static _Atomic int ready, asleep, stop, recreate, recreated_fd = -1;
static _Atomic unsigned long long wakeups;
static pid_t loop_tid;

static void *loop_thread(void *arg)
{
	struct epoll_event ev;
	int ep, v;

	(void)arg;
	loop_tid = t_gettid();
	CHECK(uintr_register_handler(tl_handler, 0) == 0);
	for (v = 1; v <= 3; v++) {
		fds[v] = uintr_create_fd((unsigned long long)v, 0);
		CHECK(fds[v] >= 0);
	}
	lfd = uintr_loop_fd(0);
	CHECK(lfd >= 0);
	ep = tl_epoll_with(lfd);
	uintr_stui();
	atomic_store(&ready, 1);
	while (!atomic_load(&stop)) {
		atomic_store(&asleep, 1);
		CHECK_EQ(tl_epoll_wait(ep, &ev, 1, 20000), 1);
		atomic_store(&asleep, 0);
		atomic_fetch_add(&wakeups, 1);
		CHECK(uintr_loop_drain(0) >= 0);
		if (atomic_load(&recreate) == 1) {
			/* Released while we slept: the vector is free again. */
			atomic_store(&recreated_fd, uintr_create_fd(1, 0));
			atomic_store(&recreate, 2);
		}
	}
	CHECK(close(ep) == 0);
	return NULL; /* thread exit: the receiver goes */
}

/* Wait until the loop thread sleeps in epoll_wait. */
static void wait_asleep(void)
{
	WAIT_UNTIL(atomic_load(&asleep) && t_thread_state(loop_tid) == 'S');
}

static void post_and_wait(int idx, int v, unsigned long long expect)
{
	uintr_senduipi((unsigned long long)idx);
	WAIT_UNTIL(atomic_load(&tl_count[v]) == expect);
}

static pid_t flood_child(int fd)
{
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		int idx = uintr_register_sender(fd, 0); /* the UITT is not inherited */

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		CHECK(idx >= 0);
		for (;;)
			uintr_senduipi((unsigned long long)idx);
	}
	return pid;
}

int main(void)
{
	pthread_t lt;
	int i1, i2, i3, i1b, st;
	pid_t pid;
	unsigned long long w;

	lt = t_start(loop_thread, NULL);
	WAIT_UNTIL(atomic_load(&ready));
	i1 = uintr_register_sender(fds[1], 0);
	i2 = uintr_register_sender(fds[2], 0);
	i3 = uintr_register_sender(fds[3], 0);
	CHECK(i1 >= 0 && i2 >= 0 && i3 >= 0);

	/* Close while the loop waits. */
	post_and_wait(i1, 1, 1);
	wait_asleep();
	atomic_store(&recreate, 1);
	CHECK(close(fds[1]) == 0);
	post_and_wait(i2, 2, 1);
	WAIT_UNTIL(atomic_load(&recreate) == 2);
	CHECK(atomic_load(&recreated_fd) >= 0);
	i1b = uintr_register_sender(atomic_load(&recreated_fd), 0);
	CHECK(i1b >= 0);
	post_and_wait(i1b, 1, 2);

	/* An idle sender process killed while the loop waits wakes nobody. */
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		int idx = uintr_register_sender(fds[2], 0);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		CHECK(idx >= 0);
		uintr_senduipi((unsigned long long)idx);
		for (;;)
			pause();
	}
	WAIT_UNTIL(atomic_load(&tl_count[2]) == 2);
	wait_asleep();
	w = atomic_load(&wakeups);
	CHECK(kill(pid, SIGKILL) == 0);
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	post_and_wait(i2, 2, 3);
	WAIT_UNTIL(atomic_load(&asleep));
	CHECK_EQ(atomic_load(&wakeups), w + 1);

	/* A flooding sender process killed at any point. */
	pid = flood_child(fds[3]);
	WAIT_PROGRESS(atomic_load(&tl_count[3]) >= 100, atomic_load(&tl_count[3]));
	CHECK(kill(pid, SIGKILL) == 0);
	CHECK(waitpid(pid, &st, 0) == pid);
	w = atomic_load(&tl_count[3]);
	/* Whatever it left, our own post is delivered. */
	uintr_senduipi((unsigned long long)i3);
	WAIT_UNTIL(atomic_load(&tl_count[3]) > w);

	/* The loop thread exits; posts to the receiver that is gone are
	 * silent and the fd (ours is a copy) stays unreadable. */
	atomic_store(&stop, 1);
	uintr_senduipi((unsigned long long)i2); /* wakes it to see `stop` */
	t_join(lt);
	/* A post made while the loop was alive may have written the eventfd
	 * after the loop's last drain read it: the wake-up post above, when
	 * the loop was already awake for the spurious wake-up a killed
	 * flooder's late write can leave (loop.c, after step 3), or that
	 * write itself.  That readiness was made before the exit; clear it,
	 * so that what follows sees only the posts made after. */
	{
		uint64_t count;

		if (read(lfd, &count, sizeof(count)) < 0)
			CHECK(errno == EAGAIN);
	}
	CHECK(!tl_readable(lfd, 0));
	w = atomic_load(&tl_total);
	uintr_senduipi((unsigned long long)i2);
	uintr_senduipi((unsigned long long)i1b);
	uintr_senduipi((unsigned long long)i3);
	CHECK(!tl_readable(lfd, 0));
	CHECK_EQ(atomic_load(&tl_total), w);
	CHECK(close(lfd) == 0);
	return T_PASS;
}
