/*
 * Shared by the compat tests in test/compat: programs as `gcc -muintr`
 * builds them for UINTR hardware, using no libuintr header or library: the
 * RFC syscalls by number (syscall() or a raw `syscall` instruction), the
 * instructions from <x86gprintrin.h> or inline asm, interrupt handlers
 * with __attribute__((interrupt)).  make check runs them through
 * tools/uintr-run.  They are built with -mgeneral-regs-only (reference
 * 5.6), so nothing here uses floating point, and they also compile as C++
 * (the cxx- variants): GCC __atomic builtins rather than _Atomic.
 * Exit status 0 pass, 1 fail, 77 skip.  Handlers call no libc function
 * (libc may use vector registers, which a handler does not save).
 */
#ifndef UINTR_TEST_HELPERS_COMPAT_H
#define UINTR_TEST_HELPERS_COMPAT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <x86gprintrin.h>

/* Intel's later kernels' numbers (reference 1), as a program hard-codes them. */
#define NR_uintr_register_handler 471
#define NR_uintr_unregister_handler 472
#define NR_uintr_create_fd 473
#define NR_uintr_register_sender 474
#define NR_uintr_unregister_sender 475
#define NR_uintr_wait 476

typedef void (*t_uintr_handler)(struct __uintr_frame *, unsigned long long);

#define T_PASS 0
#define T_FAIL 1
#define T_SKIP 77

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "%s:%d: check failed: %s (errno %d %s)\n",  \
				__FILE__, __LINE__, #cond, errno, strerror(errno)); \
			exit(T_FAIL);                                                \
		}                                                                    \
	} while (0)

#define CHECK_EQ(a, b)                                                               \
	do {                                                                         \
		long long a_ = (long long)(a), b_ = (long long)(b);                  \
		if (a_ != b_) {                                                      \
			fprintf(stderr, "%s:%d: %s == %lld (%#llx), expected %s == " \
				"%lld (%#llx)\n", __FILE__, __LINE__, #a, a_,        \
				(unsigned long long)a_, #b, b_,                      \
				(unsigned long long)b_);                             \
			exit(T_FAIL);                                                \
		}                                                                    \
	} while (0)

/* A call that must fail with exactly this errno (-1, errno). */
#define CHECK_ERR(call, err)                                                         \
	do {                                                                         \
		errno = 0;                                                           \
		long r_ = (long)(call);                                              \
		if (r_ != -1 || errno != (err)) {                                    \
			fprintf(stderr, "%s:%d: %s returned %ld errno %d (%s), "     \
				"expected -1 errno %d (%s)\n", __FILE__, __LINE__,   \
				#call, r_, errno, strerror(errno), (err),            \
				strerror(err));                                      \
			exit(T_FAIL);                                                \
		}                                                                    \
	} while (0)

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)
#define ADD(x, v) __atomic_add_fetch(&(x), (v), __ATOMIC_SEQ_CST)

static inline uint64_t t_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Spin (yielding) until cond holds; a hang guard, not a timing check. */
#define WAIT_UNTIL(cond)                                                             \
	do {                                                                         \
		uint64_t until_ = t_now_ns() + 20000000000ull;                       \
		while (!(cond)) {                                                    \
			if (t_now_ns() > until_) {                                   \
				fprintf(stderr, "%s:%d: gave up waiting for %s\n",   \
					__FILE__, __LINE__, #cond);                  \
				exit(T_FAIL);                                        \
			}                                                            \
			sched_yield();                                               \
		}                                                                    \
	} while (0)

static inline void t_pause(void)
{
	__asm__ volatile("pause" ::: "memory");
}

static inline pid_t t_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Catch SIGILL and SIGSEGV (a faulting SENDUIPI) with one SA_SIGINFO
 * handler. */
static inline void t_catch_faults(void (*fn)(int, siginfo_t *, void *))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGILL, &sa, NULL) == 0);
	CHECK(sigaction(SIGSEGV, &sa, NULL) == 0);
}

static inline pthread_t t_start(void *(*fn)(void *), void *arg)
{
	pthread_t t;

	CHECK(pthread_create(&t, NULL, fn, arg) == 0);
	return t;
}

static inline void *t_join(pthread_t t)
{
	void *ret;

	CHECK(pthread_join(t, &ret) == 0);
	return ret;
}

/* Scheduler state of a thread of this process ('R', 'S', ...). */
static inline char t_thread_state(pid_t tid)
{
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!p || !(p = strrchr(buf, ')')))
		return '?';
	return p[2];
}

static inline void t_wait_child_ok(pid_t pid)
{
	int status;

	CHECK(waitpid(pid, &status, 0) == pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "child %d: status 0x%x\n", (int)pid, status);
		exit(T_FAIL);
	}
}

/* Pipes as one-byte semaphores between threads or processes. */
struct t_chan {
	int rd, wr;
};

static inline void t_chan_init(struct t_chan *c)
{
	int p[2];

	CHECK(pipe(p) == 0);
	c->rd = p[0];
	c->wr = p[1];
}

static inline void t_chan_post(struct t_chan *c)
{
	char b = 1;

	CHECK(write(c->wr, &b, 1) == 1);
}

static inline void t_chan_wait(struct t_chan *c)
{
	char b;
	ssize_t n;

	do
		n = read(c->rd, &b, 1);
	while (n < 0 && errno == EINTR);
	CHECK(n == 1);
}

/* SCM_RIGHTS. */
static inline void t_send_fd(int sock, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	char byte = 'F';
	struct iovec iov;
	struct msghdr msg;
	struct cmsghdr *c;

	memset(&u, 0, sizeof(u));
	memset(&msg, 0, sizeof(msg));
	iov.iov_base = &byte;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = u.buf;
	msg.msg_controllen = sizeof(u.buf);
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	CHECK(sendmsg(sock, &msg, 0) == 1);
}

static inline int t_recv_fd(int sock)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	char byte;
	struct iovec iov;
	struct msghdr msg;
	struct cmsghdr *c;
	int fd = -1;

	memset(&msg, 0, sizeof(msg));
	iov.iov_base = &byte;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = u.buf;
	msg.msg_controllen = sizeof(u.buf);
	CHECK(recvmsg(sock, &msg, 0) == 1);
	c = CMSG_FIRSTHDR(&msg);
	CHECK(c && c->cmsg_type == SCM_RIGHTS);
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* The RFC syscalls through glibc's syscall(): -1 and errno on failure. */
static inline long u_register_handler(t_uintr_handler handler, unsigned int flags)
{
	return syscall(NR_uintr_register_handler, (uintptr_t)handler, flags);
}

static inline long u_unregister_handler(unsigned int flags)
{
	return syscall(NR_uintr_unregister_handler, flags);
}

static inline long u_create_fd(unsigned long long vector, unsigned int flags)
{
	return syscall(NR_uintr_create_fd, vector, flags);
}

static inline long u_register_sender(int fd, unsigned int flags)
{
	return syscall(NR_uintr_register_sender, fd, flags);
}

static inline long u_unregister_sender(int fd, unsigned int flags)
{
	return syscall(NR_uintr_unregister_sender, fd, flags);
}

static inline long u_wait(unsigned int flags)
{
	return syscall(NR_uintr_wait, flags);
}

/* A raw `syscall` instruction: the kernel's result, -errno on failure. */
static inline long t_raw_syscall(long nr, long a0, long a1)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a0), "S"(a1)
			 : "rcx", "r11", "memory");
	return ret;
}

#endif
