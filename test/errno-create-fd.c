/*
 * Errnos of uintr_create_fd (reference 2 "Common prologue", 2.3): flags != 0
 * -> EINVAL, no handler -> EINVAL, vector >= 64 (u64: 64, 1000, -1) ->
 * ENOSPC, vector already created -> EBUSY, no fd left -> EMFILE.  All 64
 * vectors 0..63 can be created; each fd is distinct, FD_CLOEXEC and
 * O_NONBLOCK.  Failed calls leave no state: after EMFILE the vector is
 * free (not EBUSY), after EBUSY the existing fd still works.
 */
#include "helpers-errno.h"

static void *not_receiver_thread(void *arg)
{
	(void)arg;
	/* The handler is per thread: this thread has none. */
	CHECK_ERR(uintr_create_fd(0, 0), EINVAL);
	CHECK_ERR(uintr_create_fd(5, 0), EINVAL);
	return NULL;
}

static void check_fd_flags(int fd)
{
	int fdfl = fcntl(fd, F_GETFD), fl = fcntl(fd, F_GETFL);

	CHECK(fdfl >= 0 && fl >= 0);
	CHECK(fdfl & FD_CLOEXEC);
	CHECK(fl & O_NONBLOCK);
}

static void emfile_case(void)
{
	struct rlimit old, rl;
	int *dups, ndup = 0, fd, i, idx;
	int limit = 64; /* a low soft limit: the table fills quickly */

	CHECK(getrlimit(RLIMIT_NOFILE, &old) == 0);
	rl = old;
	rl.rlim_cur = (rlim_t)limit;
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	dups = calloc((size_t)limit, sizeof(int));
	CHECK(dups);
	/* Fill every free slot below the limit. */
	for (;;) {
		int d = dup(0);

		if (d < 0) {
			CHECK_EQ(errno, EMFILE);
			break;
		}
		CHECK(ndup < limit);
		dups[ndup++] = d;
	}
	CHECK(ndup > 0);
	CHECK_ERR(uintr_create_fd(7, 0), EMFILE);
	CHECK_ERR(uintr_create_fd(7, 0), EMFILE);
	/* Other errnos still take precedence over EMFILE. */
	CHECK_ERR(uintr_create_fd(64, 0), ENOSPC);
	CHECK_ERR(uintr_create_fd(7, 1), EINVAL);

	for (i = 0; i < ndup; i++)
		CHECK(close(dups[i]) == 0);
	free(dups);
	CHECK(setrlimit(RLIMIT_NOFILE, &old) == 0);

	/* Nothing was left behind: vector 7 is free and works. */
	fd = uintr_create_fd(7, 0);
	CHECK(fd >= 0);
	check_fd_flags(fd);
	CHECK_ERR(uintr_create_fd(7, 0), EBUSY);
	idx = uintr_register_sender(fd, 0);
	CHECK_EQ(idx, 0);
	uintr_stui();
	uintr_senduipi(0);
	WAIT_UNTIL(te_count[7] == 1);
	CHECK_EQ(uintr_unregister_sender(fd, 0), 0);
	CHECK(close(fd) == 0);
	CHECK_EQ(te_count[7], 1);
	CHECK_EQ(te_total, 1);
	uintr_clui();
}

int main(void)
{
	int fds[UINTR_MAX_VECTORS], i, j;

	te_need_fds(256);

	/* No handler registered. */
	CHECK_ERR(uintr_create_fd(0, 0), EINVAL);
	CHECK_ERR(uintr_create_fd(63, 0), EINVAL);
	CHECK_ERR(uintr_create_fd(64, 0), EINVAL); /* no handler is checked first */
	CHECK_ERR(uintr_create_fd(0, 1), EINVAL);

	CHECK_EQ(uintr_register_handler(te_handler, 0), 0);

	/* flags != 0: EINVAL before anything else. */
	CHECK_ERR(uintr_create_fd(0, 1), EINVAL);
	CHECK_ERR(uintr_create_fd(0, 0x100), EINVAL);
	CHECK_ERR(uintr_create_fd(0, ~0u), EINVAL);
	CHECK_ERR(uintr_create_fd(64, 1), EINVAL);

	/* Vector out of range: ENOSPC, for any u64 >= 64. */
	CHECK_ERR(uintr_create_fd(64, 0), ENOSPC);
	CHECK_ERR(uintr_create_fd(65, 0), ENOSPC);
	CHECK_ERR(uintr_create_fd(1000, 0), ENOSPC);
	CHECK_ERR(uintr_create_fd(1ull << 32, 0), ENOSPC);
	CHECK_ERR(uintr_create_fd((1ull << 32) + 3, 0), ENOSPC); /* not truncated to 3 */
	CHECK_ERR(uintr_create_fd(1ull << 63, 0), ENOSPC);
	CHECK_ERR(uintr_create_fd((unsigned long long)-1, 0), ENOSPC);

	/* Another thread has no handler. */
	te_in_thread(not_receiver_thread, NULL);

	/* EMFILE first, while no uintr_fd was ever closed (the library may
	 * keep a closed fd's other end open until its next call). */
	emfile_case();

	/* All 64 vectors, in a scrambled order; each fd distinct. */
	for (i = 0; i < UINTR_MAX_VECTORS; i++)
		fds[i] = -1;
	for (i = 0; i < UINTR_MAX_VECTORS; i++) {
		int v = (i * 37) % UINTR_MAX_VECTORS; /* 37 is coprime to 64 */

		CHECK_EQ(fds[v], -1);
		fds[v] = uintr_create_fd((unsigned long long)v, 0);
		CHECK(fds[v] >= 0);
		check_fd_flags(fds[v]);
		for (j = 0; j < UINTR_MAX_VECTORS; j++)
			CHECK(j == v || fds[j] != fds[v]);
	}
	/* Every one is busy now, and EBUSY changed nothing. */
	for (i = 0; i < UINTR_MAX_VECTORS; i++)
		CHECK_ERR(uintr_create_fd((unsigned long long)i, 0), EBUSY);
	CHECK_ERR(uintr_create_fd(64, 0), ENOSPC);
	for (i = 0; i < UINTR_MAX_VECTORS; i++)
		check_fd_flags(fds[i]);
	/* The fds still work after EBUSY: vectors 0 and 63 deliver. */
	CHECK_EQ(uintr_register_sender(fds[0], 0), 0);
	CHECK_EQ(uintr_register_sender(fds[63], 0), 1);
	uintr_senduipi(1);
	uintr_senduipi(0);
	uintr_stui();
	WAIT_UNTIL(te_total == 3);
	uintr_clui();
	CHECK_EQ(te_count[0], 1);
	CHECK_EQ(te_count[63], 1);
	CHECK_EQ(uintr_unregister_sender(fds[0], 0), 0);
	CHECK_EQ(uintr_unregister_sender(fds[63], 0), 0);
	for (i = 0; i < UINTR_MAX_VECTORS; i++)
		CHECK(close(fds[i]) == 0);
	CHECK_EQ(te_total, 3);

	CHECK_EQ(uintr_unregister_handler(0), 0);
	CHECK_ERR(uintr_create_fd(0, 0), EINVAL);
	CHECK_ERR(uintr_create_fd(64, 0), EINVAL);
	return T_PASS;
}
