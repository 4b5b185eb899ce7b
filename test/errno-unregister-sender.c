/*
 * Errnos of uintr_unregister_sender (reference 2 "Common prologue", 2.5):
 * flags != 0 -> EINVAL (first), bad fd -> EBADF, not a uintr_fd ->
 * EOPNOTSUPP, and EINVAL when this thread has no connection through that
 * fd: never registered, already unregistered, or registered only in
 * another thread.  Failed calls change nothing: the connections that exist
 * (in this thread and in others) stay, with their indices.
 */
#include "helpers-errno.h"

#include <sys/eventfd.h>

static struct te_rx rx;

static void *other_thread(void *arg)
{
	(void)arg;
	/* Only this thread registers through fd[2]. */
	CHECK_EQ(uintr_register_sender(rx.fd[2], 0), 0);
	/* fd[0] is connected in main, not here. */
	CHECK_ERR(uintr_unregister_sender(rx.fd[0], 0), EINVAL);
	CHECK_EQ(te_state().uitt_size, 256);
	return NULL;
}

static void *other_thread_keeps(void *arg)
{
	struct t_chan *c = arg;

	CHECK_EQ(uintr_register_sender(rx.fd[3], 0), 0);
	t_chan_post(&c[0]);
	t_chan_wait(&c[1]);
	/* main's failed unregister did not touch our entry. */
	CHECK_EQ(uintr_unregister_sender(rx.fd[3], 0), 0);
	CHECK_ERR(uintr_unregister_sender(rx.fd[3], 0), EINVAL);
	return NULL;
}

int main(void)
{
	struct t_chan c[2];
	pthread_t t;
	int p[2], fd, dead, d;

	te_rx_start(&rx, 40, 5);

	/* flags first. */
	CHECK_ERR(uintr_unregister_sender(rx.fd[0], 1), EINVAL);
	CHECK_ERR(uintr_unregister_sender(-1, 1), EINVAL);
	CHECK_ERR(uintr_unregister_sender(0, ~0u), EINVAL);

	/* EBADF. */
	CHECK_ERR(uintr_unregister_sender(-1, 0), EBADF);
	dead = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHECK(dead >= 0);
	CHECK(close(dead) == 0);
	CHECK_ERR(uintr_unregister_sender(dead, 0), EBADF);
	CHECK_ERR(uintr_unregister_sender(100000, 0), EBADF);

	/* EOPNOTSUPP: not a uintr_fd. */
	CHECK(pipe2(p, O_CLOEXEC) == 0);
	CHECK_ERR(uintr_unregister_sender(p[0], 0), EOPNOTSUPP);
	CHECK_ERR(uintr_unregister_sender(p[1], 0), EOPNOTSUPP);
	fd = eventfd(0, EFD_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_ERR(uintr_unregister_sender(fd, 0), EOPNOTSUPP);
	CHECK(close(fd) == 0);
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_ERR(uintr_unregister_sender(fd, 0), EOPNOTSUPP);
	CHECK(close(fd) == 0);

	/* EINVAL: never registered (no UITT at all in this thread). */
	CHECK_ERR(uintr_unregister_sender(rx.fd[0], 0), EINVAL);
	te_check_state_zero();

	CHECK_EQ(uintr_register_sender(rx.fd[0], 0), 0);
	CHECK_EQ(uintr_register_sender(rx.fd[1], 0), 1);

	/* EBADF / EOPNOTSUPP with a table present. */
	CHECK_ERR(uintr_unregister_sender(-1, 0), EBADF);
	CHECK_ERR(uintr_unregister_sender(p[0], 0), EOPNOTSUPP);
	CHECK_ERR(uintr_unregister_sender(rx.fd[0], 2), EINVAL);
	/* EINVAL: never registered through fd[4] (UITT not empty). */
	CHECK_ERR(uintr_unregister_sender(rx.fd[4], 0), EINVAL);

	/* EINVAL: registered only in another thread (it has exited). */
	te_in_thread(other_thread, NULL);
	CHECK_ERR(uintr_unregister_sender(rx.fd[2], 0), EINVAL);

	/* ... and while that thread is alive and connected. */
	t_chan_init(&c[0]);
	t_chan_init(&c[1]);
	t = t_start(other_thread_keeps, c);
	t_chan_wait(&c[0]);
	CHECK_ERR(uintr_unregister_sender(rx.fd[3], 0), EINVAL);
	t_chan_post(&c[1]);
	t_join(t);

	/* None of that touched our entries: 0 and 1 in use, 2 is next. */
	CHECK_EQ(uintr_register_sender(rx.fd[4], 0), 2);
	CHECK_EQ(uintr_unregister_sender(rx.fd[4], 0), 0);

	/* EINVAL: already unregistered, also through a dup. */
	CHECK_EQ(uintr_unregister_sender(rx.fd[0], 0), 0);
	CHECK_ERR(uintr_unregister_sender(rx.fd[0], 0), EINVAL);
	d = dup(rx.fd[0]);
	CHECK(d >= 0);
	CHECK_ERR(uintr_unregister_sender(d, 0), EINVAL);
	/* Unregistering through a dup works like through the fd itself. */
	CHECK(close(d) == 0);
	d = dup(rx.fd[1]);
	CHECK(d >= 0);
	CHECK_EQ(uintr_unregister_sender(d, 0), 0);
	CHECK_ERR(uintr_unregister_sender(rx.fd[1], 0), EINVAL);
	CHECK(close(d) == 0);
	te_check_state_zero();

	/* Register, unregister, register: the index comes back. */
	CHECK_EQ(uintr_register_sender(rx.fd[1], 0), 0);
	CHECK_EQ(uintr_register_sender(rx.fd[0], 0), 1);
	CHECK_EQ(uintr_unregister_sender(rx.fd[1], 0), 0);
	CHECK_EQ(uintr_register_sender(rx.fd[1], 0), 0);
	CHECK_EQ(uintr_unregister_sender(rx.fd[0], 0), 0);
	CHECK_EQ(uintr_unregister_sender(rx.fd[1], 0), 0);
	te_check_state_zero();

	CHECK(close(p[0]) == 0);
	CHECK(close(p[1]) == 0);
	te_rx_stop(&rx);
	return T_PASS;
}
