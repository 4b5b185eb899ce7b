/*
 * Binary compatibility, the RFC syscalls by number (issue: "intercepted
 * however the program issues them (glibc's syscall() and a raw syscall
 * instruction), with RFC semantics and errnos ... every other syscall
 * passes through untouched"; reference 2).  The same sequence runs once
 * through syscall() (-1 and errno) and once through a `syscall`
 * instruction (-errno in RAX), each on a fresh thread: every errno of
 * section 2, return values (UITT indexes 0, 1; a close-on-exec fd), and
 * the kernel's argument types (flags are `unsigned int`, the fd an `int`:
 * the upper 32 bits of those registers are ignored).  Syscall 449
 * (futex_waitv on mainline) still reaches the kernel: EINVAL for
 * futex_waitv(NULL, 0), not the emulation's EFAULT.
 */
#include "helpers-compat.h"

#include <fcntl.h>

static int use_raw;

static void __attribute__((interrupt))
handler(struct __uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	(void)vector;
}

/* The result in the kernel's convention: a value or -errno. */
static long call(long nr, unsigned long long a0, unsigned long long a1)
{
	long r;

	if (use_raw)
		return t_raw_syscall(nr, (long)a0, (long)a1);
	errno = 0;
	r = syscall(nr, a0, a1);
	return r == -1 ? -errno : r;
}

#define EXPECT(nr, a0, a1, result)                                                            \
	do {                                                                                  \
		long got_ = call(nr, (unsigned long long)(a0), (unsigned long long)(a1));     \
		if (got_ != (long)(result)) {                                                 \
			fprintf(stderr, "%s:%d: %s(%s, %s) = %ld, expected %ld (%s)\n",       \
				__FILE__, __LINE__, #nr, #a0, #a1, got_, (long)(result),      \
				use_raw ? "raw syscall" : "syscall()");                       \
			exit(T_FAIL);                                                         \
		}                                                                             \
	} while (0)

static void *sequence(void *arg)
{
	unsigned long long h = (unsigned long long)(uintptr_t)handler;
	unsigned long long high = 1ull << 32;
	int p[2];
	long fd, fd2;

	(void)arg;
	CHECK(pipe(p) == 0);

	/* Not a receiver. */
	EXPECT(NR_uintr_wait, 0, 0, -EOPNOTSUPP);
	EXPECT(NR_uintr_wait, 1, 0, -EINVAL);
	EXPECT(NR_uintr_unregister_handler, 0, 0, -EINVAL);
	EXPECT(NR_uintr_unregister_handler, 1, 0, -EINVAL);
	EXPECT(NR_uintr_create_fd, 1, 0, -EINVAL);

	/* uintr_register_handler (2.1): flags first, then NULL, then busy. */
	EXPECT(NR_uintr_register_handler, h, 1, -EINVAL);
	EXPECT(NR_uintr_register_handler, 0, 1, -EINVAL);
	EXPECT(NR_uintr_register_handler, 0, 0, -EFAULT);
	EXPECT(NR_uintr_register_handler, h, high, 0);
	EXPECT(NR_uintr_register_handler, h, 0, -EBUSY);

	/* uintr_create_fd (2.3) */
	EXPECT(NR_uintr_create_fd, 64, 0, -ENOSPC);
	EXPECT(NR_uintr_create_fd, ~0ull, 0, -ENOSPC);
	EXPECT(NR_uintr_create_fd, 3, 1, -EINVAL);
	fd = call(NR_uintr_create_fd, 3, high);
	CHECK(fd >= 0);
	CHECK_EQ(fcntl((int)fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	EXPECT(NR_uintr_create_fd, 3, 0, -EBUSY);
	fd2 = call(NR_uintr_create_fd, 4, 0);
	CHECK(fd2 >= 0);

	/* uintr_register_sender (2.4) */
	EXPECT(NR_uintr_register_sender, -1, 0, -EBADF);
	EXPECT(NR_uintr_register_sender, p[0], 0, -EOPNOTSUPP);
	EXPECT(NR_uintr_register_sender, fd, 1, -EINVAL);
	EXPECT(NR_uintr_register_sender, (unsigned long long)fd | high, high, 0);
	EXPECT(NR_uintr_register_sender, fd, 0, -EISCONN);
	EXPECT(NR_uintr_register_sender, fd2, 0, 1);

	/* uintr_unregister_sender (2.5) */
	EXPECT(NR_uintr_unregister_sender, fd, 1, -EINVAL);
	EXPECT(NR_uintr_unregister_sender, -1, 0, -EBADF);
	EXPECT(NR_uintr_unregister_sender, p[1], 0, -EOPNOTSUPP);
	EXPECT(NR_uintr_unregister_sender, fd, 0, 0);
	EXPECT(NR_uintr_unregister_sender, fd, 0, -EINVAL);
	EXPECT(NR_uintr_unregister_sender, fd2, 0, 0);

	/* uintr_wait (2.6): flags checked for a receiver too. */
	EXPECT(NR_uintr_wait, 1, 0, -EINVAL);

	/* uintr_unregister_handler (2.2); then its fds are dead (ESHUTDOWN). */
	EXPECT(NR_uintr_unregister_handler, 1, 0, -EINVAL);
	EXPECT(NR_uintr_unregister_handler, high, 0, 0);
	EXPECT(NR_uintr_unregister_handler, 0, 0, -EINVAL);
	EXPECT(NR_uintr_register_sender, fd2, 0, -ESHUTDOWN);
	EXPECT(NR_uintr_wait, 0, 0, -EOPNOTSUPP);

	close((int)fd);
	close((int)fd2);
	close(p[0]);
	close(p[1]);
	return NULL;
}

int main(void)
{
	use_raw = 0;
	t_join(t_start(sequence, NULL));
	use_raw = 1;
	t_join(t_start(sequence, NULL));

	/* Other numbers go to the kernel. */
	if (!getenv("UINTR_SYSCALL_BASE")) {
		errno = 0;
		CHECK_EQ(syscall(449, NULL, 0, 0, NULL, 0), -1);
		CHECK_EQ(errno, EINVAL);
		CHECK_EQ(t_raw_syscall(449, 0, 0), -EINVAL);
	}
	CHECK_EQ(t_raw_syscall(SYS_getpid, 0, 0), getpid());
	return T_PASS;
}
