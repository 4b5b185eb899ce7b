/*
 * Shared by the tests: each test is one program, exit 0 pass, 1 fail,
 * 77 skip.  Waits are for events that must happen; WAIT_UNTIL gives up
 * after 20 s only so that a broken library fails instead of hanging.
 */
#ifndef UINTR_TEST_HELPERS_H
#define UINTR_TEST_HELPERS_H

#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "uintr.h"

/*
 * ThreadSanitizer defers an asynchronous signal until the thread next
 * enters its runtime and runs the handler on a copy of the context: the
 * interrupted ip is then not the program's, and frame changes are lost.
 * Tests of the frame skip those checks when T_TSAN is 1.
 */
#if defined(__SANITIZE_THREAD__)
#define T_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define T_TSAN 1
#endif
#endif
#ifndef T_TSAN
#define T_TSAN 0
#endif

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
			fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n",  \
				__FILE__, __LINE__, #a, a_, #b, b_);                 \
			exit(T_FAIL);                                                \
		}                                                                    \
	} while (0)

/* A call that must fail with exactly this errno. */
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

static inline double t_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Spin (yielding) until cond holds; a hang guard, not a timing check. */
/*
 * WAIT_PROGRESS: wait for cond while `progress` (an expression whose value
 * grows as the awaited party works) keeps changing; give up only after 20 s
 * without any change.  For waits on work whose length depends on how fast
 * the machine or the emulator is (qemu-user runs some tests 10x slower).
 */
#define WAIT_PROGRESS(cond, progress)                                               \
	do {                                                                         \
		unsigned long long seen_ = (progress);                               \
		double until_ = t_now() + 20.0;                                      \
		while (!(cond)) {                                                    \
			unsigned long long now_ = (progress);                        \
			if (now_ != seen_) {                                         \
				seen_ = now_;                                        \
				until_ = t_now() + 20.0;                             \
			} else if (t_now() > until_) {                               \
				fprintf(stderr, "%s:%d: no progress (%s) for 20 s "  \
					"waiting for %s\n", __FILE__, __LINE__,     \
					#progress, #cond);                           \
				exit(T_FAIL);                                        \
			}                                                            \
			sched_yield();                                               \
		}                                                                    \
	} while (0)

#define WAIT_UNTIL(cond)                                                             \
	do {                                                                         \
		double until_ = t_now() + 20.0;                                      \
		while (!(cond)) {                                                    \
			if (t_now() > until_) {                                      \
				fprintf(stderr, "%s:%d: gave up waiting for %s\n",   \
					__FILE__, __LINE__, #cond);                  \
				exit(T_FAIL);                                        \
			}                                                            \
			sched_yield();                                               \
		}                                                                    \
	} while (0)

static inline pid_t t_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
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

/* Scheduler state of a thread of this process ('R', 'S', ...), from
 * /proc: lets a test act once a thread is really blocked in a syscall. */
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

/* Wait for a child process; it must exit with status 0. */
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

/* Send an fd over a UNIX socket (SCM_RIGHTS) and receive it. */
#include "helpers-scm.h"
static inline void t_send_fd(int sock, int fd)
{
	CHECK(t_sendmsg_fds(sock, "F", 1, &fd, 1) == 1);
}

static inline int t_recv_fd(int sock)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	int fd = -1;

	CHECK(recvmsg(sock, &msg, 0) == 1);
	c = CMSG_FIRSTHDR(&msg);
	CHECK(c && c->cmsg_type == SCM_RIGHTS);
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/*
 * Run fn() and report which fault it raised: 0 if none, else the signal
 * (SIGILL or SIGSEGV), with its si_code in *code.  The handler jumps out, as
 * a program that survives a faulting SENDUIPI must.
 */
static sigjmp_buf t_fault_jmp;
static volatile sig_atomic_t t_fault_code;

static void t_fault_handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	t_fault_code = si->si_code;
	siglongjmp(t_fault_jmp, sig);
}

static inline int t_catch_fault(void (*fn)(void *), void *arg, int *code)
{
	struct sigaction sa, old_ill, old_segv;
	int sig;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = t_fault_handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGILL, &sa, &old_ill) == 0);
	CHECK(sigaction(SIGSEGV, &sa, &old_segv) == 0);
	sig = sigsetjmp(t_fault_jmp, 1);
	if (sig == 0) {
		fn(arg);
	}
	CHECK(sigaction(SIGILL, &old_ill, NULL) == 0);
	CHECK(sigaction(SIGSEGV, &old_segv, NULL) == 0);
	if (code)
		*code = t_fault_code;
	return sig;
}

static inline void t_send_index(void *arg)
{
	uintr_senduipi((unsigned long long)(uintptr_t)arg);
}

#endif
