/*
 * Reference 2.3 (the release of a uintr_fd, on its last close in any
 * process, unregisters every sender connected through it) across
 * processes: the receiver is a child process that passes its fds for
 * vectors 1 (A) and 2 (B) to the parent with SCM_RIGHTS and closes its own
 * copies, so the parent, a sender through both (indexes 0 and 1), holds
 * the last references.
 *  1. The parent closes A; once the receiver process has settled its
 *     releases (lt_settle_releases: the watcher may have done it already),
 *     SENDUIPI through index 0 raises SIGSEGV; index 1 still delivers.
 *  2. The receiver unregisters its handler (the fds stay, deactivated:
 *     2.2), then the parent closes B: once the receiver process has settled
 *     again, index 1 is gone too and no valid entry is left: SIGILL.
 * The parent learns that the child has settled from the child's
 * answer on the socket; the child waits for the parent's word spinning on
 * shared memory (lt_wait_step), so signals reach it in plain code.
 */
#include "helpers-lifetime.h"

static int sock;
static _Atomic int *word; /* MAP_SHARED: the parent's steps */

/* Wait for the parent's word (step n), act, answer on the socket. */
static void child_step(int n, void (*act)(void))
{
	char c = (char)n;

	lt_wait_step(word, n);
	if (act)
		act();
	CHECK(write(sock, &c, 1) == 1);
}

static void unregister(void)
{
	CHECK(uintr_unregister_handler(0) == 0);
}

static void child(void)
{
	static const unsigned int vec[] = { 1, 2 };
	int fds[2];

	lt_become_receiver(2, vec, fds);
	uintr_stui();
	t_send_fd(sock, fds[0]);
	t_send_fd(sock, fds[1]);
	CHECK(close(fds[0]) == 0);
	CHECK(close(fds[1]) == 0);
	child_step(1, lt_settle_releases); /* parent closed A */
	child_step(2, unregister);
	child_step(3, lt_settle_releases); /* parent closed B */
	child_step(4, NULL);
	exit(T_PASS);
}

/* Tell the child to take step n; wait for its answer. */
static void step(int n)
{
	char r;

	atomic_store(word, n);
	CHECK(read(sock, &r, 1) == 1);
	CHECK_EQ(r, n);
}

int main(void)
{
	int sv[2], a, b, code = 0;
	pid_t pid;

	lt_counts_init();
	word = mmap(NULL, sizeof(*word), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(word != MAP_FAILED);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		sock = sv[1];
		close(sv[0]);
		child();
	}
	sock = sv[0];
	close(sv[1]);
	a = t_recv_fd(sock);
	b = t_recv_fd(sock);
	CHECK_EQ(uintr_register_sender(a, 0), 0);
	CHECK_EQ(uintr_register_sender(b, 0), 1);
	lt_send_wait(0, 1);
	lt_send_wait(1, 2);

	/* 1 */
	CHECK(close(a) == 0);
	step(1);
	CHECK_EQ(lt_send_fault(0, &code), SIGSEGV);
	LT_CHECK_FAULT_CODE(code, SI_KERNEL);
	lt_send_wait(1, 2);

	/* 2 */
	step(2);
	CHECK(close(b) == 0);
	step(3);
	CHECK_EQ(lt_send_fault(1, &code), SIGILL);
	LT_CHECK_FAULT_CODE(code, ILL_ILLOPN);
	CHECK_EQ(lt_send_fault(0, &code), SIGILL);

	step(4);
	t_wait_child_ok(pid);
	CHECK_EQ(lt_count(1), 1);
	CHECK_EQ(lt_count(2), 2);
	CHECK_EQ(atomic_load(&lt_c->total), 3);
	return T_PASS;
}
