/*
 * processes.c - user interrupts between two processes.
 *
 * The parent is the receiver.  It makes vector 3 a file descriptor and
 * hands it to a forked child over a UNIX socket with SCM_RIGHTS, the way an
 * unrelated process would get it.  (The child also inherits a copy through
 * fork; it closes that copy first, to show that the one it receives over
 * the socket is enough: holding a uintr_fd is the only credential a sender
 * needs.)  The child registers as a sender and posts N interrupts, waiting
 * for an acknowledgement byte on the socket after each, since posts of a
 * vector that is still pending coalesce.
 *
 *   cc -O2 -Wall -Wextra processes.c -o processes $(pkg-config --cflags --libs uintr)
 *   ./processes
 *
 * Exit status 0 when every interrupt arrived, 1 otherwise.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <uintr.h>

#define VECTOR 3
#define N 1000

static _Atomic unsigned int received; /* handler calls for VECTOR */
static _Atomic unsigned int unexpected;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	if (vector == VECTOR)
		atomic_fetch_add(&received, 1);
	else
		atomic_fetch_add(&unexpected, 1);
}

/* Send one file descriptor (and one byte of data) over a UNIX socket. */
static void send_fd(int sock, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	char byte = 'F';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof(control.buf),
	};
	struct cmsghdr *c;

	memset(&control, 0, sizeof(control));
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (sendmsg(sock, &msg, 0) != 1)
		die("sendmsg");
}

static int recv_fd(int sock)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof(control.buf),
	};
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		die("recvmsg");
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
		fprintf(stderr, "no file descriptor received\n");
		exit(1);
	}
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

static int child(int sock, int inherited_fd)
{
	unsigned int i;
	char ack;
	int fd, idx;

	close(inherited_fd); /* not needed: the parent sends us the fd */
	fd = recv_fd(sock);
	idx = uintr_register_sender(fd, 0);
	if (idx < 0)
		die("child: uintr_register_sender");
	for (i = 0; i < N; i++) {
		uintr_senduipi((unsigned long long)idx);
		if (read(sock, &ack, 1) != 1)
			die("child: read");
	}
	printf("child %d: %u interrupts sent through UITT index %d\n", (int)getpid(), i, idx);
	uintr_unregister_sender(fd, 0);
	close(fd);
	return 0;
}

int main(void)
{
	unsigned int i;
	int sv[2], fd, status;
	pid_t pid;

	if (uintr_register_handler(handler, 0) != 0)
		die("uintr_register_handler");
	fd = uintr_create_fd(VECTOR, 0);
	if (fd < 0)
		die("uintr_create_fd");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		die("socketpair");

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		/* The child is not a receiver: fork does not copy UINTR state. */
		close(sv[0]);
		exit(child(sv[1], fd));
	}
	close(sv[1]);
	send_fd(sv[0], fd);

	/*
	 * Wait for each interrupt; uintr_wait_since_last() returns after the
	 * handler ran, or at once if it ran since the previous wait returned
	 * (the RFC's uintr_wait() would sleep then).  The ack lets the child
	 * go on.
	 */
	uintr_stui();
	for (i = 0; i < N; i++) {
		while (atomic_load(&received) == i)
			uintr_wait_since_last(0);
		if (write(sv[0], "A", 1) != 1)
			die("write");
	}

	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	close(sv[0]);
	close(fd);
	uintr_unregister_handler(0);

	printf("parent %d: %u interrupts received on vector %d\n", (int)getpid(),
	       atomic_load(&received), VECTOR);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || atomic_load(&received) != N ||
	    atomic_load(&unexpected) != 0) {
		fprintf(stderr, "failed: child status %#x, %u unexpected\n", status,
			atomic_load(&unexpected));
		return 1;
	}
	return 0;
}
