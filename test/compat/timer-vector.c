/*
 * A timer vector for a program built with gcc -muintr (issue 13): under
 * uintr-run, the program gets uintr_timer_create and the other timer calls
 * from the preloaded library by dlsym(RTLD_DEFAULT, ...) (uintr-run(1),
 * "Timer vectors"), and arms them on the fd its raw uintr_create_fd
 * syscall returned.  Each expiry reaches its __attribute__((interrupt))
 * handler exactly as a SENDUIPI would: the fd's vector, UIF 0 inside.
 *   1. One-shot, 1 ms: exactly one interrupt; then the timer is disarmed.
 *   2. Periodic, 200 us: at least 5 interrupts; disarmed, no more come
 *      (a signal pending for this thread is taken before a syscall
 *      returns, so the count is final once the disarming call returns).
 *   3. Delete: 0, then EINVAL for the dead id.
 */
#include <dlfcn.h>

#include "helpers-compat.h"

typedef int (*create_fn)(int, int, unsigned int);
typedef int (*settime_fn)(int, int, const struct itimerspec *, struct itimerspec *);
typedef int (*gettime_fn)(int, struct itimerspec *);
typedef int (*delete_fn)(int);

static int handled, uif_inside = 7;
static unsigned long long seen_vector = 99;

static void __attribute__((interrupt))
handler(struct __uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	STORE(seen_vector, vector);
	STORE(uif_inside, (int)_testui());
	ADD(handled, 1);
}

int main(void)
{
	create_fn t_create = (create_fn)dlsym(RTLD_DEFAULT, "uintr_timer_create");
	settime_fn t_settime = (settime_fn)dlsym(RTLD_DEFAULT, "uintr_timer_settime");
	gettime_fn t_gettime = (gettime_fn)dlsym(RTLD_DEFAULT, "uintr_timer_gettime");
	delete_fn t_delete = (delete_fn)dlsym(RTLD_DEFAULT, "uintr_timer_delete");
	struct itimerspec once = { { 0, 0 }, { 0, 1000000 } };
	struct itimerspec every = { { 0, 200000 }, { 0, 200000 } };
	struct itimerspec off = { { 0, 0 }, { 0, 0 } }, now;
	long fd;
	int id, final;

	CHECK(t_create && t_settime && t_gettime && t_delete);
	CHECK_EQ(syscall(NR_uintr_register_handler, (uintptr_t)handler, 0L), 0);
	fd = syscall(NR_uintr_create_fd, 9L, 0L);
	CHECK(fd >= 0);
	id = t_create((int)fd, CLOCK_MONOTONIC, 0);
	CHECK(id >= 0);
	_stui();

	/* 1 */
	CHECK_EQ(t_settime(id, 0, &once, NULL), 0);
	WAIT_UNTIL(LOAD(handled) == 1);
	CHECK_EQ(t_gettime(id, &now), 0);
	CHECK(now.it_value.tv_sec == 0 && now.it_value.tv_nsec == 0);
	syscall(SYS_getppid);
	CHECK_EQ(LOAD(handled), 1);
	CHECK_EQ(LOAD(seen_vector), 9);
	CHECK_EQ(LOAD(uif_inside), 0);
	CHECK_EQ(_testui(), 1);

	/* 2 */
	CHECK_EQ(t_settime(id, 0, &every, NULL), 0);
	WAIT_UNTIL(LOAD(handled) >= 6);
	CHECK_EQ(t_settime(id, 0, &off, NULL), 0);
	final = LOAD(handled);
	syscall(SYS_getppid);
	CHECK_EQ(LOAD(handled), final);

	/* 3 */
	CHECK_EQ(t_delete(id), 0);
	errno = 0;
	CHECK_EQ(t_delete(id), -1);
	CHECK_EQ(errno, EINVAL);
	CHECK_EQ(close((int)fd), 0);
	CHECK_EQ(syscall(NR_uintr_unregister_handler, 0L), 0);
	return T_PASS;
}
