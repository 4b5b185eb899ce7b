/*
 * The later ABI's errnos (reference 3; Intel's uintr.c of the
 * uintr-linux-kernel branch), call by call, in the branch's order:
 *   register_handler  flags other than WAITING_* -> EINVAL, NULL -> EFAULT,
 *                     twice -> EBUSY; WAITING_RECEIVER/SENDER/ANY accepted
 *   vector_fd         flags -> EINVAL, no handler -> EINVAL, vector >= 64
 *                     (and -1) -> ENOSPC; the same vector twice is allowed
 *   register_sender   flags -> EINVAL, bad fd -> EBADF, not a uvec fd ->
 *                     EOPNOTSUPP; the same fd twice gives two indexes
 *   unregister_sender flags -> EINVAL, no table / no entry / negative /
 *                     >= 256 / twice -> EINVAL
 *   wait              flags or usec > 10^9 -> EINVAL, usec 0 -> 0 (even
 *                     for a non-receiver), no handler -> EOPNOTSUPP, a
 *                     timeout with nothing posted -> 0
 *   register_self     flags -> EINVAL, no handler -> EINVAL, vector >= 64
 *                     -> ENOSPC
 *   alt_stack         flags -> EINVAL, no handler -> EOPNOTSUPP
 *   ipi_fd            flags -> EINVAL
 *   ioctl             ENOTTY on a uvec fd and on other fds, EBADF on a
 *                     bad fd, EINVAL for another request on a uipi fd,
 *                     EBUSY for UIPI_SET_TARGET_TABLE in a process that
 *                     has a table; UINTR_IS_ACTIVE on a uvec fd -> ENOTTY
 * and an RFC uintr_register_sender in a process whose sender table is the
 * process's -> EINVAL.
 */
#include "helpers-delivery.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	(void)vector;
}

int main(void)
{
	static const unsigned int good[] = { 0, UINTR_HANDLER_FLAG_WAITING_RECEIVER,
					     UINTR_HANDLER_FLAG_WAITING_SENDER,
					     UINTR_HANDLER_FLAG_WAITING_ANY };
	unsigned int i, bit;
	int fd, fd2, efd, a, b, ipi;

	/* Before any handler. */
	CHECK_ERR(uintr_later_vector_fd(0, 0), EINVAL);
	CHECK_ERR(uintr_later_register_self(0, 0), EINVAL);
	CHECK_ERR(uintr_later_alt_stack(NULL, 0, 0), EOPNOTSUPP);
	CHECK_EQ(uintr_later_wait(0, 0), 0);
	CHECK_ERR(uintr_later_wait(1, 0), EOPNOTSUPP);
	CHECK_ERR(uintr_later_unregister_sender(0, 0), EINVAL); /* no table */
	CHECK_ERR(uintr_later_unregister_handler(0), EINVAL);

	/* register_handler */
	for (bit = 0; bit < 32; bit++) {
		unsigned int f = 1u << bit;

		if (f & UINTR_HANDLER_FLAG_WAITING_ANY)
			continue;
		CHECK_ERR(uintr_later_register_handler(handler, f), EINVAL);
	}
	CHECK_ERR(uintr_later_register_handler(NULL, 0), EFAULT);
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		CHECK_EQ(uintr_later_register_handler(handler, good[i]), 0);
		CHECK_ERR(uintr_later_register_handler(handler, good[i]), EBUSY);
		CHECK_ERR(uintr_later_unregister_handler(1), EINVAL);
		CHECK_EQ(uintr_later_unregister_handler(0), 0);
	}
	CHECK_EQ(uintr_later_register_handler(handler, 0), 0);

	/* vector_fd */
	CHECK_ERR(uintr_later_vector_fd(0, 1), EINVAL);
	CHECK_ERR(uintr_later_vector_fd(64, 0), ENOSPC);
	CHECK_ERR(uintr_later_vector_fd(100, 0), ENOSPC);
	CHECK_ERR(uintr_later_vector_fd(~0ull, 0), ENOSPC);
	fd = uintr_later_vector_fd(3, 0);
	CHECK(fd >= 0);
	fd2 = uintr_later_vector_fd(3, 0);
	CHECK(fd2 >= 0 && fd2 != fd);
	CHECK((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);

	/* register_sender */
	CHECK_ERR(uintr_later_register_sender(fd, 1), EINVAL);
	CHECK_ERR(uintr_later_register_sender(-1, 0), EBADF);
	efd = eventfd(0, EFD_CLOEXEC);
	CHECK(efd >= 0);
	CHECK_ERR(uintr_later_register_sender(efd, 0), EOPNOTSUPP);
	a = uintr_later_register_sender(fd, 0);
	b = uintr_later_register_sender(fd, 0);
	CHECK_EQ(a, 0);
	CHECK_EQ(b, 1);
	CHECK_ERR(uintr_register_sender(fd2, 0), EINVAL); /* the process's table decides */

	/* unregister_sender */
	CHECK_ERR(uintr_later_unregister_sender(a, 1), EINVAL);
	CHECK_ERR(uintr_later_unregister_sender(2, 0), EINVAL);
	CHECK_ERR(uintr_later_unregister_sender(-1, 0), EINVAL);
	CHECK_ERR(uintr_later_unregister_sender(256, 0), EINVAL);
	CHECK_EQ(uintr_later_unregister_sender(b, 0), 0);
	CHECK_ERR(uintr_later_unregister_sender(b, 0), EINVAL);

	/* wait */
	CHECK_ERR(uintr_later_wait(10, 1), EINVAL);
	CHECK_ERR(uintr_later_wait(1000000001ull, 0), EINVAL);
	CHECK_EQ(uintr_later_wait(0, 0), 0);
	CHECK_EQ(uintr_later_wait(1000, 0), 0); /* nothing posted: the timeout */

	/* register_self */
	CHECK_ERR(uintr_later_register_self(5, 1), EINVAL);
	CHECK_ERR(uintr_later_register_self(64, 0), ENOSPC);
	CHECK_EQ(uintr_later_register_self(5, 0), 1); /* the lowest free index */

	/* alt_stack */
	CHECK_ERR(uintr_later_alt_stack(NULL, 0, 1), EINVAL);
	CHECK_EQ(uintr_later_alt_stack(NULL, 0, 0), 0);

	/* ipi_fd and the ioctls */
	CHECK_ERR(uintr_later_ipi_fd(1), EINVAL);
	ipi = uintr_later_ipi_fd(0);
	CHECK(ipi >= 0);
	CHECK((fcntl(ipi, F_GETFD) & FD_CLOEXEC) != 0);
	CHECK_ERR(uintr_later_ioctl(ipi, UIPI_SET_TARGET_TABLE), EBUSY);
	CHECK_ERR(uintr_later_ioctl(ipi, UIPI_CLEAR_TARGET_TABLE), EINVAL);
	CHECK_ERR(uintr_later_ioctl(ipi, 0x1234), EINVAL);
	CHECK_ERR(uintr_later_ioctl(fd, UIPI_SET_TARGET_TABLE), ENOTTY);
	CHECK_ERR(uintr_later_ioctl(fd, UINTR_IS_ACTIVE), ENOTTY);
	CHECK_ERR(uintr_later_ioctl(efd, UIPI_SET_TARGET_TABLE), ENOTTY);
	CHECK_ERR(uintr_later_ioctl(-1, UIPI_SET_TARGET_TABLE), EBADF);
	/* A real ioctl on a uvec fd (a socket here) fails as on the branch,
	 * whose uvec fd has no ioctl.  The errno is the kernel's; an emulator
	 * that does not know the request (qemu-user: ENOSYS) answers for it,
	 * so the check runs natively only. */
	if (!getenv("UINTR_TEST_RUNNER") || !*getenv("UINTR_TEST_RUNNER"))
		CHECK_ERR(ioctl(fd, UINTR_IS_ACTIVE), ENOTTY);

	close(ipi);
	close(efd);
	close(fd);
	close(fd2);
	CHECK_EQ(uintr_later_unregister_handler(0), 0);
	return T_PASS;
}
