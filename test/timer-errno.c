/*
 * Timer vectors: every documented error of uintr_timer_create(3) and its
 * calls, and the ids a process is given (lowest free first, reused after
 * delete).  A child of fork() has no timers and cannot make one for its
 * parent's receiver (EXDEV).
 */
#include "helpers-timer.h"

int main(void)
{
	struct itimerspec its = tt_its(1000000, 0), bad;
	int p[2], fd, id, id2;
	pid_t pid;

	tt_init();
	CHECK(pipe(p) == 0);
	/* No receiver yet: an fd of nothing. */
	CHECK_ERR(uintr_timer_create(-1, CLOCK_MONOTONIC, 0), EBADF);
	CHECK_ERR(uintr_timer_create(p[0], CLOCK_MONOTONIC, 0), EOPNOTSUPP);
	CHECK(uintr_register_handler(tt_handler, 0) == 0);
	fd = uintr_create_fd(4, 0);
	CHECK(fd >= 0);
	CHECK_ERR(uintr_timer_create(fd, CLOCK_MONOTONIC, 1), EINVAL);
	CHECK_ERR(uintr_timer_create(fd, 12345, 0), EINVAL);
	id = uintr_timer_create(fd, CLOCK_MONOTONIC, 0);
	CHECK_EQ(id, 0);
	id2 = uintr_timer_create(fd, CLOCK_REALTIME, 0);
	CHECK_EQ(id2, 1);

	CHECK_ERR(uintr_timer_settime(-1, 0, &its, NULL), EINVAL);
	CHECK_ERR(uintr_timer_settime(2, 0, &its, NULL), EINVAL);
	CHECK_ERR(uintr_timer_settime(100000, 0, &its, NULL), EINVAL);
	CHECK_ERR(uintr_timer_settime(id, 2, &its, NULL), EINVAL);
	CHECK_ERR(uintr_timer_settime(id, 0, NULL, NULL), EFAULT);
	bad = tt_its(0, 0);
	bad.it_value.tv_nsec = 1000000000;
	CHECK_ERR(uintr_timer_settime(id, 0, &bad, NULL), EINVAL);
	bad = tt_its(0, 0);
	bad.it_value.tv_sec = -1;
	CHECK_ERR(uintr_timer_settime(id, 0, &bad, NULL), EINVAL);
	bad = tt_its(1000, 0);
	bad.it_interval.tv_nsec = -1;
	CHECK_ERR(uintr_timer_settime(id, 0, &bad, NULL), EINVAL);
	CHECK_ERR(uintr_timer_gettime(-1, &its), EINVAL);
	CHECK_ERR(uintr_timer_gettime(id, NULL), EFAULT);
	CHECK_ERR(uintr_timer_getoverrun(7), EINVAL);
	CHECK_ERR(uintr_timer_delete(7), EINVAL);

	/* Disarmed: gettime reads zeros; arming then reading back. */
	CHECK(uintr_timer_gettime(id, &its) == 0);
	CHECK(its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0 && its.it_interval.tv_nsec == 0);
	tt_arm(id, 0, 3600000000000ull, 5000000);
	CHECK(uintr_timer_gettime(id, &its) == 0);
	CHECK(its.it_value.tv_sec > 3500 && its.it_value.tv_sec <= 3600);
	CHECK(its.it_interval.tv_sec == 0 && its.it_interval.tv_nsec == 5000000);
	/* old_value gets the previous setting; 0 disarms. */
	{
		struct itimerspec zero = tt_its(0, 0), old;

		CHECK(uintr_timer_settime(id, 0, &zero, &old) == 0);
		CHECK(old.it_value.tv_sec > 3500 && old.it_interval.tv_nsec == 5000000);
		CHECK(uintr_timer_gettime(id, &its) == 0);
		CHECK(its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0);
	}
	CHECK_EQ(uintr_timer_getoverrun(id), 0);

	/* fork: the child has no timers, and the parent's receiver is not its own. */
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		CHECK_ERR(uintr_timer_gettime(id, &its), EINVAL);
		CHECK_ERR(uintr_timer_delete(id), EINVAL);
		CHECK_ERR(uintr_timer_create(fd, CLOCK_MONOTONIC, 0), EXDEV);
		_exit(0);
	}
	t_wait_child_ok(pid);
	CHECK(uintr_timer_gettime(id, &its) == 0);

	/* Delete frees the id, lowest free first. */
	CHECK(uintr_timer_delete(id) == 0);
	CHECK_ERR(uintr_timer_delete(id), EINVAL);
	CHECK_ERR(uintr_timer_settime(id, 0, &its, NULL), EINVAL);
	CHECK_EQ(uintr_timer_create(fd, CLOCK_MONOTONIC, 0), 0);

	/* The receiver gone: its timers stay until deleted but are dead, and
	 * its fds make no new ones (as for a sender, 2.4: ESHUTDOWN). */
	tt_arm(id2, 0, 3600000000000ull, 0);
	CHECK(uintr_unregister_handler(0) == 0);
	its = tt_its(1000, 0);
	CHECK_ERR(uintr_timer_settime(id2, 0, &its, NULL), ESHUTDOWN);
	CHECK(uintr_timer_gettime(id2, &its) == 0);
	CHECK(its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0);
	CHECK_ERR(uintr_timer_create(fd, CLOCK_MONOTONIC, 0), ESHUTDOWN);
	CHECK(uintr_timer_delete(id2) == 0);
	CHECK(uintr_timer_delete(0) == 0);
	close(fd);
	return T_PASS;
}
