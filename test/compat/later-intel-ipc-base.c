/*
 * What selftests/uintr/ipc_base.c of Intel's later branch checks, under
 * uintr-run --abi=later, as that program does it (issue 12):
 *   1. uintr_supported(): registering a handler succeeds (or says EBUSY);
 *      then it is unregistered.
 *   2. Threads, with a fd: vector 0's uvec fd registered by a sender
 *      thread, which sends and unregisters its index; the main thread
 *      spins in user space until its handler ran; join, close, unregister.
 *   3. Threads, no fd: uintr_register_self(0) in the main thread; another
 *      thread sends through that index and unregisters it.
 *   4. uintr_wait(usec, 0), with WAITING_RECEIVER, then with
 *      WAITING_SENDER: a sender thread's interrupt ends it with -1/EINTR
 *      after the handler ran.
 *   5. nanosleep(10 s), with each flag: ended by the interrupt, -1/EINTR
 *      after the handler ran.
 *   6. Processes: a child sends through the inherited fd (the parent
 *      spins); then both ways: the child registers the parent's fd as a
 *      sender, becomes a receiver of vector 1, hands its fd back over a
 *      socketpair and spins until the parent's interrupt arrives, then
 *      sends back; the parent spins until it arrives.
 * Intel's sender threads sleep 100 us before sending so that the
 * receiver is waiting, and wait at most 100000 us; ours send once they
 * see it asleep (4, 5), and wait at most the maximum, 10^9 us.  Intel's
 * spins give up after a count; ours have the hang guard of WAIT_UNTIL.
 */
#include "helpers-compat.h"

#define NR_vector_fd 473
#define NR_register_self 477
#define WAITING_RECEIVER 0x1000
#define WAITING_SENDER 0x2000

static int received, client_received, server_received;
static int handled;
static int sleeping; /* the main thread is about to block */
static pid_t main_tid;

static void __attribute__((interrupt))
handler(struct __uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	(void)vector;
	ADD(handled, 1);
	STORE(received, 1);
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

static void spin_until(int *flag)
{
	WAIT_UNTIL(LOAD(*flag));
}

/* A sender thread: the fd's index, or with fd < 0 the index in *idx. */
struct job {
	long fd, idx;
	int when_asleep;
};

static void *sender(void *arg)
{
	struct job *j = arg;
	long idx = j->fd >= 0 ? syscall(NR_uintr_register_sender, j->fd, 0) : j->idx;

	CHECK(idx >= 0);
	if (j->when_asleep)
		WAIT_UNTIL(LOAD(sleeping) && t_thread_state(main_tid) == 'S');
	_senduipi((unsigned long long)idx);
	CHECK_EQ(syscall(NR_uintr_unregister_sender, idx, 0), 0);
	return NULL;
}

static long receiver(t_uintr_handler h, unsigned int flags, long vector)
{
	long fd;

	CHECK_EQ(syscall(NR_uintr_register_handler, (uintptr_t)h, flags), 0);
	fd = vector >= 0 ? syscall(NR_vector_fd, vector, 0) : -1;
	CHECK(vector < 0 || fd >= 0);
	STORE(received, 0);
	_stui();
	return fd;
}

static void supported(void)
{
	long r = syscall(NR_uintr_register_handler, (uintptr_t)handler, 0);

	CHECK(r == 0 || errno == EBUSY);
	CHECK_EQ(syscall(NR_uintr_unregister_handler, 0), 0);
}

static void thread_ipi(void)
{
	struct job j = { .fd = receiver(handler, 0, 0) };
	pthread_t t = t_start(sender, &j);

	spin_until(&received);
	t_join(t);
	CHECK_EQ(close((int)j.fd), 0);
	CHECK_EQ(syscall(NR_uintr_unregister_handler, 0), 0);
}

static void thread_ipi_no_fd(void)
{
	struct job j = { .fd = -1 };
	pthread_t t;

	receiver(handler, 0, -1);
	j.idx = syscall(NR_register_self, 0, 0);
	CHECK(j.idx >= 0);
	t = t_start(sender, &j);
	spin_until(&received);
	t_join(t);
	CHECK_EQ(syscall(NR_uintr_unregister_handler, 0), 0);
}

static void blocking(unsigned int flags, int use_nanosleep)
{
	struct job j = { .fd = receiver(handler, flags, 0), .when_asleep = 1 };
	struct timespec req = { .tv_sec = 10 }, rem;
	int before = LOAD(handled);
	pthread_t t = t_start(sender, &j);
	long r;

	STORE(sleeping, 1);
	errno = 0;
	r = use_nanosleep ? nanosleep(&req, &rem) : syscall(NR_uintr_wait, 1000000000L, 0L);
	STORE(sleeping, 0);
	CHECK_EQ(r, -1);
	CHECK_EQ(errno, EINTR);
	CHECK_EQ(LOAD(received), 1);
	CHECK_EQ(LOAD(handled), before + 1);
	t_join(t);
	CHECK_EQ(close((int)j.fd), 0);
	CHECK_EQ(syscall(NR_uintr_unregister_handler, 0), 0);
}

static void process_uni(void)
{
	long fd = receiver(handler, 0, 0), idx;
	pid_t pid = fork();

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
	spin_until(&received);
	CHECK_EQ(close((int)fd), 0);
	CHECK_EQ(syscall(NR_uintr_unregister_handler, 0), 0);
	t_wait_child_ok(pid);
}

static void process_bi(void)
{
	long server_fd, client_fd, idx;
	int sv[2];
	pid_t pid;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	server_fd = receiver(server_handler, 0, 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(sv[0]);
		idx = syscall(NR_uintr_register_sender, server_fd, 0);
		CHECK(idx >= 0);
		client_fd = receiver(client_handler, 0, 1);
		t_send_fd(sv[1], (int)client_fd);
		spin_until(&client_received);
		_senduipi((unsigned long long)idx);
		_exit(T_PASS);
	}
	close(sv[1]);
	client_fd = t_recv_fd(sv[0]);
	CHECK(client_fd >= 0);
	idx = syscall(NR_uintr_register_sender, client_fd, 0);
	CHECK(idx >= 0);
	_senduipi((unsigned long long)idx);
	spin_until(&server_received);
	CHECK_EQ(syscall(NR_uintr_unregister_handler, 0), 0);
	t_wait_child_ok(pid);
}

int main(void)
{
	main_tid = t_gettid();
	supported();
	thread_ipi();
	thread_ipi_no_fd();
	blocking(WAITING_RECEIVER, 0);
	blocking(WAITING_RECEIVER, 1);
	blocking(WAITING_SENDER, 0);
	blocking(WAITING_SENDER, 1);
	process_uni();
	process_bi();
	return T_PASS;
}
