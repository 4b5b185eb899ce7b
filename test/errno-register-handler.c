/*
 * Errnos of uintr_register_handler / uintr_unregister_handler (reference 2,
 * "Common prologue", 2.1, 2.2): flags != 0 -> EINVAL (checked before anything
 * else), NULL handler -> EFAULT, second registration -> EBUSY (the first
 * stays in force), unregister when not registered -> EINVAL, unregister
 * with flags -> EINVAL (the registration stays); a failed call leaves no
 * state; register / unregister / register again works, and registration is
 * per thread.
 */
#include "helpers-errno.h"

static void *other_thread(void *arg)
{
	(void)arg;
	/* The main thread's registration does not make this one a receiver. */
	te_check_state_zero();
	CHECK_ERR(uintr_unregister_handler(0), EINVAL);
	CHECK_ERR(uintr_create_fd(0, 0), EINVAL);
	/* ... and it may register its own. */
	CHECK_EQ(uintr_register_handler(te_other_handler, 0), 0);
	CHECK_EQ(te_state().handler, (uintptr_t)te_other_handler);
	CHECK_EQ(uintr_unregister_handler(0), 0);
	return NULL;
}

int main(void)
{
	struct uintr_state s;
	int fd, i;

	/* Nothing registered yet. */
	te_check_state_zero();
	CHECK_ERR(uintr_unregister_handler(0), EINVAL);
	CHECK_ERR(uintr_unregister_handler(1), EINVAL);

	/* flags first: EINVAL even with a NULL handler. */
	CHECK_ERR(uintr_register_handler(te_handler, 1), EINVAL);
	CHECK_ERR(uintr_register_handler(te_handler, 0x80000000u), EINVAL);
	CHECK_ERR(uintr_register_handler(te_handler, ~0u), EINVAL);
	CHECK_ERR(uintr_register_handler(NULL, 1), EINVAL);
	CHECK_ERR(uintr_register_handler(NULL, 0), EFAULT);
	/* None of these left anything behind. */
	te_check_state_zero();
	CHECK_ERR(uintr_create_fd(0, 0), EINVAL);
	CHECK_ERR(uintr_wait(0), EOPNOTSUPP);
	CHECK_ERR(uintr_unregister_handler(0), EINVAL);

	/* Register, then every second registration is EBUSY. */
	CHECK_EQ(uintr_register_handler(te_handler, 0), 0);
	s = te_state();
	CHECK_EQ(s.handler, (uintptr_t)te_handler);
	CHECK_ERR(uintr_register_handler(te_handler, 0), EBUSY);
	CHECK_ERR(uintr_register_handler(te_other_handler, 0), EBUSY);
	/* Prologue order holds for a registered thread too. */
	CHECK_ERR(uintr_register_handler(te_other_handler, 2), EINVAL);
	CHECK_ERR(uintr_register_handler(NULL, 0), EFAULT);
	/* The first registration is untouched. */
	s = te_state();
	CHECK_EQ(s.handler, (uintptr_t)te_handler);
	CHECK(s.upid_addr != 0);

	/* Unregister with flags: EINVAL, and still registered. */
	CHECK_ERR(uintr_unregister_handler(1), EINVAL);
	CHECK_ERR(uintr_unregister_handler(~0u), EINVAL);
	CHECK_EQ(te_state().handler, (uintptr_t)te_handler);
	fd = uintr_create_fd(3, 0);
	CHECK(fd >= 0);
	CHECK(close(fd) == 0);

	/* Per thread: another thread is not a receiver. */
	te_in_thread(other_thread, NULL);
	CHECK_EQ(te_state().handler, (uintptr_t)te_handler);

	/* Unregister: state gone, a second unregister is EINVAL. */
	CHECK_EQ(uintr_unregister_handler(0), 0);
	te_check_state_zero();
	CHECK_ERR(uintr_unregister_handler(0), EINVAL);
	CHECK_ERR(uintr_create_fd(3, 0), EINVAL);

	/* The cycle works repeatedly, with either handler. */
	for (i = 0; i < 5; i++) {
		uintr_handler_t h = (i & 1) ? te_other_handler : te_handler;

		CHECK_EQ(uintr_register_handler(h, 0), 0);
		CHECK_EQ(te_state().handler, (uintptr_t)h);
		CHECK_ERR(uintr_register_handler(h, 0), EBUSY);
		fd = uintr_create_fd((unsigned long long)i, 0);
		CHECK(fd >= 0);
		CHECK(close(fd) == 0);
		CHECK_EQ(uintr_unregister_handler(0), 0);
		te_check_state_zero();
		CHECK_ERR(uintr_unregister_handler(0), EINVAL);
	}
	CHECK_EQ(te_total, 0);
	return T_PASS;
}
