/*
 * Issue item 6, reference 2.3 (close: the vector is unregistered on the
 * *last* reference; "vector already registered -> EBUSY"): a vector whose
 * only uintr_fd was closed can be created again at once; while a forked
 * child still holds a copy, closing the parent's copy is not a release and
 * uintr_create_fd says EBUSY; once the child has closed its copy (first
 * round) or exited with it open (second round), the vector is free again.
 */
#include "helpers-lifetime.h"

#define V 7

static void child(struct t_chan *cmd, struct t_chan *ack, int fd, int close_first)
{
	t_chan_wait(cmd);
	if (close_first) {
		CHECK(close(fd) == 0);
		t_chan_post(ack);
		t_chan_wait(cmd);
	}
	exit(T_PASS);
}

/* A child holds fd; the parent closes its copy; the child lets go. */
static int round_with_child(int fd, int close_first)
{
	struct t_chan cmd, ack;
	pid_t pid;
	int nfd;

	t_chan_init(&cmd);
	t_chan_init(&ack);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		child(&cmd, &ack, fd, close_first);

	CHECK(close(fd) == 0);
	CHECK_ERR(uintr_create_fd(V, 0), EBUSY); /* the child's copy keeps it */
	CHECK_ERR(uintr_create_fd(V, 0), EBUSY);
	t_chan_post(&cmd);
	if (close_first) {
		t_chan_wait(&ack); /* closed, child still alive */
		nfd = uintr_create_fd(V, 0);
		CHECK(nfd >= 0);
		t_chan_post(&cmd);
		t_wait_child_ok(pid);
	} else {
		t_wait_child_ok(pid); /* exited holding it */
		nfd = uintr_create_fd(V, 0);
		CHECK(nfd >= 0);
	}
	close(cmd.rd);
	close(cmd.wr);
	close(ack.rd);
	close(ack.wr);
	return nfd;
}

int main(void)
{
	int fd, i;

	lt_counts_init();
	lt_tid = t_gettid();
	CHECK(uintr_register_handler(lt_handler, 0) == 0);

	/* No other reference: close, create again, immediately, many times. */
	for (i = 0; i < 100; i++) {
		fd = uintr_create_fd(V, 0);
		CHECK(fd >= 0);
		CHECK_ERR(uintr_create_fd(V, 0), EBUSY);
		CHECK(close(fd) == 0);
	}
	fd = uintr_create_fd(V, 0);
	CHECK(fd >= 0);

	fd = round_with_child(fd, 1);
	fd = round_with_child(fd, 0);
	CHECK_ERR(uintr_create_fd(V, 0), EBUSY);

	/* The recreated vector works. */
	atomic_store(&lt_c->owner[V], lt_tid);
	CHECK_EQ(uintr_register_sender(fd, 0), 0);
	uintr_stui();
	lt_send_wait(0, V);
	CHECK_EQ(lt_count(V), 1);
	CHECK_EQ(uintr_unregister_handler(0), 0);
	return T_PASS;
}
