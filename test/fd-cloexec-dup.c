/*
 * A uintr_fd is an ordinary close-on-exec fd (reference 2.3: "The
 * close-on-exec flag (FD_CLOEXEC) is set"; 2.7 "Execv: Nothing is
 * inherited"): FD_CLOEXEC is set on it; a dup() of it (which has no
 * FD_CLOEXEC) names the same vector, and another thread registers as a
 * sender through the dup and reaches the receiver; a program started with
 * posix_spawn does not have the uintr_fd, nor any other fd the library
 * opened.  The new program (this executable run with --list-fds) reports
 * its open fds through a pipe.  The dup, not close-on-exec, does cross:
 * that shows the listing works.
 */
#include "helpers-lifetime.h"

/* The spawned program: write each open fd number (except the pipe). */
static int list_fds(int out)
{
	int fds[256], n, i;

	n = lt_open_fds(fds, 256);
	for (i = 0; i < n; i++) {
		if (fds[i] == out)
			continue;
		if (write(out, &fds[i], sizeof(int)) != sizeof(int))
			return T_FAIL;
	}
	return T_PASS;
}

static int dup_fd;
static _Atomic int sender_index = -2;

static void *sender(void *arg)
{
	(void)arg;
	sender_index = uintr_register_sender(dup_fd, 0);
	if (sender_index >= 0)
		lt_send_wait(sender_index, 12);
	return NULL;
}

int main(int argc, char **argv)
{
	static const unsigned int vec[] = { 12 };
	int before[256], nbefore, child[256], nchild = 0, p[2], fd, flags, status, i;
	char *args[] = { NULL, "--list-fds", NULL, NULL };
	char num[16];
	pid_t pid;
	ssize_t r;

	if (argc == 3 && strcmp(argv[1], "--list-fds") == 0)
		return list_fds(atoi(argv[2]));

	/* Whatever this process had before the library was used. */
	nbefore = lt_open_fds(before, 256);

	lt_counts_init();
	lt_become_receiver(1, vec, &fd);
	uintr_stui();

	flags = fcntl(fd, F_GETFD);
	CHECK(flags >= 0);
	CHECK(flags & FD_CLOEXEC);

	dup_fd = dup(fd);
	CHECK(dup_fd >= 0);
	CHECK_EQ(fcntl(dup_fd, F_GETFD) & FD_CLOEXEC, 0);
	t_join(t_start(sender, NULL));
	CHECK_EQ(sender_index, 0);
	CHECK_EQ(lt_count(12), 1);
	CHECK_EQ(atomic_load(&lt_c->wrong_thread), 0);

	/* The pipe's write end is the only fd meant to cross the exec. */
	CHECK(pipe2(p, O_CLOEXEC) == 0);
	CHECK(fcntl(p[1], F_SETFD, 0) == 0);
	snprintf(num, sizeof(num), "%d", p[1]);
	args[2] = num;
	r = lt_spawn_self(args, &pid);
	if (r == ENOEXEC || r == ENOENT) {
		printf("skip: cannot start a new program image here\n");
		return T_SKIP;
	}
	CHECK_EQ(r, 0);
	CHECK(close(p[1]) == 0);
	while ((r = read(p[0], &child[nchild], sizeof(int))) == sizeof(int))
		nchild++;
	CHECK_EQ(r, 0);
	CHECK(waitpid(pid, &status, 0) == pid);
	lt_skip_if_not_executed(status);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* The listing works: the dup, without FD_CLOEXEC, crossed as any fd
	 * does; the uintr_fd itself did not. */
	CHECK(lt_fd_in(dup_fd, child, nchild));
	CHECK(!lt_fd_in(fd, child, nchild));
	for (i = 0; i < nchild; i++) {
		if (child[i] != dup_fd && !lt_fd_in(child[i], before, nbefore)) {
			fprintf(stderr, "fd %d crossed exec\n", child[i]);
			return T_FAIL;
		}
	}
	/* The receiver is unaffected: the fd still works here. */
	CHECK_EQ(uintr_register_sender(fd, 0), 0);
	lt_send_wait(0, 12);
	CHECK_EQ(lt_count(12), 2);
	return T_PASS;
}
