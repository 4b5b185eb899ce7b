/*
 * What selftests/uintr/syscall_blocking.c of Intel's later branch checks,
 * under uintr-run --abi=later, as that program does it: receivers that
 * block in the kernel in usleep(1) (nanosleep) between checks of a flag,
 * and senders in other processes (issue 12).  Each case runs with
 * UINTR_HANDLER_FLAG_WAITING_RECEIVER, then with _WAITING_SENDER:
 *   uni: the parent registers a handler (the flag) and vector 0, STUI,
 *        forks; the child registers the inherited uvec fd as a sender,
 *        sends, unregisters its index and closes the fd; the parent's
 *        usleep(1) loop sees the handler's flag.  close, unregister.
 *   bi:  the parent registers another handler and vector 0 again, STUI,
 *        forks; the child registers the parent's fd as a sender first,
 *        then a handler of its own and vector 1, STUI, and passes that fd
 *        back over a socketpair (SCM_RIGHTS); the parent registers it and
 *        sends; the child's usleep(1) loop sees its flag and sends back;
 *        the parent's loop sees its flag.
 * Intel's program gives up after 10000 sleeps and kills the child after;
 * here the child exits when done and is waited for.  The loops end only
 * when the flag is set (WAIT_UNTIL's guard is a hang guard).
 */
#include "helpers-compat.h"

#define NR_vector_fd 473
#define WAITING_RECEIVER 0x1000
#define WAITING_SENDER 0x2000

static int uintr_received, client_received, server_received;

static void __attribute__((interrupt))
uintr_handler(struct __uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	(void)vector;
	STORE(uintr_received, 1);
}

static void __attribute__((interrupt))
client_handler(struct __uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	if (vector == 1)
		STORE(client_received, 1);
}

static void __attribute__((interrupt))
server_handler(struct __uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	if (vector == 0)
		STORE(server_received, 1);
}

/* Sleep in the kernel until *flag is set, as the selftest's loops do. */
static void sleep_until(int *flag)
{
	WAIT_UNTIL((usleep(1), LOAD(*flag)));
}

static void uni(unsigned int flags)
{
	long fd, idx;
	pid_t pid;

	CHECK_EQ(syscall(NR_uintr_register_handler, (uintptr_t)uintr_handler, flags), 0);
	fd = syscall(NR_vector_fd, 0, 0);
	CHECK(fd >= 0);
	STORE(uintr_received, 0);
	_stui();
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		idx = syscall(NR_uintr_register_sender, fd, 0);
		if (idx < 0)
			_exit(T_FAIL);
		_senduipi((unsigned long long)idx);
		if (syscall(NR_uintr_unregister_sender, idx, 0) != 0 || close((int)fd) != 0)
			_exit(T_FAIL);
		_exit(T_PASS);
	}
	sleep_until(&uintr_received);
	CHECK_EQ(close((int)fd), 0);
	CHECK_EQ(syscall(NR_uintr_unregister_handler, 0), 0);
	t_wait_child_ok(pid);
}

static void bi(unsigned int flags)
{
	long server_fd, client_fd, idx;
	int sv[2];
	pid_t pid;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	CHECK_EQ(syscall(NR_uintr_register_handler, (uintptr_t)server_handler, flags), 0);
	server_fd = syscall(NR_vector_fd, 0, 0);
	CHECK(server_fd >= 0);
	STORE(server_received, 0);
	_stui();
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(sv[0]);
		idx = syscall(NR_uintr_register_sender, server_fd, 0);
		CHECK(idx >= 0);
		CHECK_EQ(syscall(NR_uintr_register_handler, (uintptr_t)client_handler, flags), 0);
		client_fd = syscall(NR_vector_fd, 1, 0);
		CHECK(client_fd >= 0);
		_stui();
		t_send_fd(sv[1], (int)client_fd);
		sleep_until(&client_received);
		_senduipi((unsigned long long)idx);
		_exit(T_PASS);
	}
	close(sv[1]);
	client_fd = t_recv_fd(sv[0]);
	CHECK(client_fd >= 0);
	idx = syscall(NR_uintr_register_sender, client_fd, 0);
	CHECK(idx >= 0);
	_senduipi((unsigned long long)idx);
	sleep_until(&server_received);
	CHECK_EQ(syscall(NR_uintr_unregister_handler, 0), 0);
	t_wait_child_ok(pid);
	close(sv[0]);
	close((int)client_fd);
	close((int)server_fd);
}

int main(void)
{
	uni(WAITING_RECEIVER);
	bi(WAITING_RECEIVER);
	uni(WAITING_SENDER);
	bi(WAITING_SENDER);
	return T_PASS;
}
