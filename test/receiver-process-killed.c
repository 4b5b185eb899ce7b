/*
 * Issue item 7, reference 2.7 (exit: the receiver's UPID gets SN, later
 * sends are silent; new senders get ESHUTDOWN) for a receiver that cannot
 * say goodbye: it is in a child process killed with SIGKILL, so the
 * library's exit hooks never run.  The parent (a sender through the fd it
 * got with SCM_RIGHTS) keeps sending afterwards: it survives, receives no
 * notification itself and nothing pending appears; a new sender
 * registration on the fd fails ESHUTDOWN.  Two rounds: the dead child
 * reaped at once; the dead child left a zombie for a while (the RFC's exit
 * path, exit_thread -> uintr_free, runs before the task becomes a zombie,
 * so ESHUTDOWN already holds then).
 */
#include "helpers-lifetime.h"

#define V 9

static int result;

static void *try_register(void *arg)
{
	result = uintr_register_sender(*(int *)arg, 0);
	if (result < 0)
		result = -errno;
	return NULL;
}

static int register_fresh(int fd)
{
	t_join(t_start(try_register, &fd));
	return result;
}

static void child(int sock)
{
	static const unsigned int vec[] = { V };
	int fd;

	lt_become_receiver(1, vec, &fd);
	uintr_stui();
	t_send_fd(sock, fd);
	for (;;)
		uintr_wait(0);
}

static void sends_are_harmless(void)
{
	struct uintr_stats before = lt_process_stats(), after;
	int i;

	for (i = 0; i < 100; i++)
		uintr_senduipi(0);
	getppid();
	after = lt_process_stats();
	CHECK_EQ(after.notifications, before.notifications);
	CHECK_EQ(after.spurious, before.spurious);
	CHECK(!lt_sig_pending(uintr_notification_signal()));
}

/* A child receiver, its fd here, one delivery through UITT index 0 of a
 * fresh sender thread; then SIGKILL.  Returns the fd. */
static int killed_receiver(pid_t *pid_out)
{
	int sv[2], fd;
	pid_t pid;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		child(sv[1]);
	close(sv[1]);
	fd = t_recv_fd(sv[0]);
	close(sv[0]);
	CHECK_EQ(uintr_register_sender(fd, 0), 0);
	lt_send_wait(0, V);
	CHECK_EQ(lt_count(V), 1);
	CHECK(kill(pid, SIGKILL) == 0);
	*pid_out = pid;
	return fd;
}

static void *round_reaped(void *arg)
{
	pid_t pid;
	int fd = killed_receiver(&pid);

	(void)arg;
	CHECK(waitpid(pid, NULL, 0) == pid);
	sends_are_harmless();
	CHECK_EQ(register_fresh(fd), -ESHUTDOWN);
	close(fd);
	return NULL;
}

static void *round_zombie(void *arg)
{
	siginfo_t si;
	pid_t pid;
	int fd = killed_receiver(&pid);

	(void)arg;
	memset(&si, 0, sizeof(si));
	CHECK(waitid(P_PID, pid, &si, WEXITED | WNOWAIT) == 0); /* dead, not reaped */
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_code, CLD_KILLED);
	sends_are_harmless();
	if (register_fresh(fd) != -ESHUTDOWN) {
		fprintf(stderr, "register_sender on the fd of a killed (zombie) receiver "
				"returned %d, expected -ESHUTDOWN\n", result);
		exit(T_FAIL);
	}
	CHECK(waitpid(pid, NULL, 0) == pid);
	sends_are_harmless();
	CHECK_EQ(register_fresh(fd), -ESHUTDOWN);
	close(fd);
	return NULL;
}

int main(void)
{
	/* Each round in its own sender thread, so each starts at index 0. */
	lt_counts_init();
	t_join(t_start(round_reaped, NULL));
	memset(lt_c, 0, sizeof(*lt_c));
	t_join(t_start(round_zombie, NULL));
	CHECK_EQ(atomic_load(&lt_c->total), 1);
	return T_PASS;
}
