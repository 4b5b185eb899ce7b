/*
 * Resource faults (issue item "EMFILE and ENOMEM injected at every point
 * where the library opens fds or allocates give clean errors and leak
 * nothing"; reference section 2 for the errnos).
 *
 * Linked with -Wl,--wrap=... (see the Makefile): every call the library
 * makes that allocates memory, maps memory, opens an fd or makes the
 * kernel allocate goes through a wrapper below.  A global countdown makes
 * the Nth such call fail as the kernel or libc would when out of memory or
 * fds: calloc/malloc NULL+ENOMEM, mmap ENOMEM, memfd_create, socketpair,
 * open and pidfd_open (a syscall() wrapper) EMFILE, pthread_key_create
 * EAGAIN, pthread_setspecific and pthread_atfork ENOMEM, fcntl(F_SETFL,
 * O_ASYNC) ENOMEM (the kernel allocates the fasync entry), sendmsg ENOBUFS,
 * and recvmsg of SCM_RIGHTS with no fd slot (the kernel then drops the fds
 * and sets MSG_CTRUNC).  A second pass makes the notification signal fail
 * instead (pidfd_send_signal / rt_tgsigqueueinfo EAGAIN: the kernel could
 * not allocate the queued signal).
 *
 * The scenario, in a fresh child process for each N = 1, 2, 3, ... until a
 * run injects nothing: a receiver thread registers a handler (then a forked
 * child must see no handler: fork hooks), sets UIF, creates fds for vectors
 * 5, 6, 7; a sender thread registers on each (indices 0, 1, 2), sends each
 * once, waits for the three deliveries, unregisters; the receiver closes
 * its fds and unregisters; both threads exit.  At each N:
 *   - an API call that fails must have had a fault injected during it and
 *     fail with a documented errno for it (ENOMEM, EMFILE, ENFILE; EAGAIN
 *     from pthread_key_create), and the same call made again at once (no
 *     more faults) must succeed, with the index it would have had;
 *   - nothing crashes; every interrupt sent through a successfully
 *     registered entry is delivered exactly once;
 *   - after teardown the open fds are exactly those before, and the
 *     library's allocations and mappings made through the wrappers are all
 *     freed and unmapped (LeakSanitizer checks the rest under
 *     make check-sanitize).
 * Every problem found is printed with N, the failing call and where the
 * library made it (offset for addr2line -e this program); exit 1 if any.
 */
#include "helpers.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>

/* ------------------------------------------------------------- wrappers */

/*
 * The real functions.  Weak: built without the --wrap options (the
 * Makefile gives them to this test only), __real_calloc stays NULL and the
 * test skips instead of failing to link.
 */
#define REAL __attribute__((weak))
REAL void *__real_calloc(size_t n, size_t size);
REAL void *__real_malloc(size_t size);
REAL void __real_free(void *p);
REAL void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
REAL int __real_munmap(void *addr, size_t len);
REAL int __real_memfd_create(const char *name, unsigned int flags);
REAL int __real_socketpair(int domain, int type, int protocol, int sv[2]);
REAL int __real_open(const char *path, int flags, ...);
REAL long __real_syscall(long nr, ...);
REAL int __real_pthread_key_create(pthread_key_t *key, void (*destructor)(void *));
REAL int __real_pthread_setspecific(pthread_key_t key, const void *value);
REAL int __real_pthread_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void));
REAL int __real_fcntl(int fd, int cmd, ...);
REAL ssize_t __real_sendmsg(int fd, const struct msghdr *msg, int flags);
REAL ssize_t __real_recvmsg(int fd, struct msghdr *msg, int flags);

void *__wrap_calloc(size_t n, size_t size);
void *__wrap_malloc(size_t size);
void __wrap_free(void *p);
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int __wrap_munmap(void *addr, size_t len);
int __wrap_memfd_create(const char *name, unsigned int flags);
int __wrap_socketpair(int domain, int type, int protocol, int sv[2]);
int __wrap_open(const char *path, int flags, ...);
long __wrap_syscall(long nr, ...);
int __wrap_pthread_key_create(pthread_key_t *key, void (*destructor)(void *));
int __wrap_pthread_setspecific(pthread_key_t key, const void *value);
int __wrap_pthread_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void));
int __wrap_fcntl(int fd, int cmd, ...);
ssize_t __wrap_sendmsg(int fd, const struct msghdr *msg, int flags);
ssize_t __wrap_recvmsg(int fd, struct msghdr *msg, int flags);

enum { MODE_RESOURCES, MODE_SIGNALS };

/* What the child reports to the parent (shared memory). */
struct report {
	int n;               /* the countdown this run started with */
	int injected;        /* the countdown reached 0 */
	char what[48];       /* the failed call */
	char during[48];     /* the API call in progress */
	unsigned long where; /* the library's call site, as an offset */
	long points;         /* fallible calls made in the whole run */
	int problems;
};

static struct report *rep;
static int mode;
static _Atomic long countdown; /* fail when it goes from 1 to 0 */
static _Atomic long points;
static _Atomic int hit;        /* a fault was injected since it was cleared */
static const char *_Atomic during = "setup";
extern char __executable_start;

/*
 * Only calls made while this thread is inside a libuintr call count: a
 * sanitizer runtime is linked statically too, and its own calls (its
 * thread setup calls pthread_setspecific, for one) go through the
 * wrappers as well.  The library allocates only inside its calls.
 */
static __thread int in_api;

/* What the library allocated and mapped, until freed and unmapped (it
 * frees some at thread exit, outside any call). */
#define MAXLIVE 256
static void *live_alloc[MAXLIVE], *live_map[MAXLIVE];
static _Atomic int live_any; /* something was tracked */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;

static void live_add(void **set, void *p)
{
	int i;

	pthread_mutex_lock(&live_lock);
	for (i = 0; i < MAXLIVE && set[i]; i++)
		;
	if (i < MAXLIVE)
		set[i] = p;
	atomic_store(&live_any, 1);
	pthread_mutex_unlock(&live_lock);
}

static void live_remove(void **set, void *p)
{
	int i;

	pthread_mutex_lock(&live_lock);
	for (i = 0; i < MAXLIVE; i++)
		if (set[i] == p) {
			set[i] = NULL;
			break;
		}
	pthread_mutex_unlock(&live_lock);
}

static int live_count(void **set)
{
	int i, n = 0;

	for (i = 0; i < MAXLIVE; i++)
		n += set[i] != NULL;
	return n;
}

/* One fallible call: true if it must fail now. */
static int fault_point(const char *what, void *ret_addr)
{
	long left;

	atomic_fetch_add(&points, 1);
	left = atomic_load(&countdown);
	while (left > 0 && !atomic_compare_exchange_weak(&countdown, &left, left - 1))
		;
	if (left != 1)
		return 0;
	rep->injected = 1;
	snprintf(rep->what, sizeof(rep->what), "%s", what);
	snprintf(rep->during, sizeof(rep->during), "%s", during);
	rep->where = (unsigned long)((char *)ret_addr - &__executable_start);
	atomic_store(&hit, 1);
	return 1;
}

#define FAULT(what) (in_api && fault_point(what, __builtin_return_address(0)))

/*
 * A sanitizer runtime calls some of the wrapped functions (pthread_atfork,
 * pthread_key_create, free) while it starts, before its instrumentation
 * may run: the wrappers themselves are not instrumented, and call
 * instrumented code only from inside a libuintr call.
 */
#if defined(__has_attribute)
#if __has_attribute(disable_sanitizer_instrumentation)
#define WRAPPER __attribute__((disable_sanitizer_instrumentation))
#endif
#endif
#ifndef WRAPPER
#define WRAPPER
#endif

WRAPPER void *__wrap_calloc(size_t n, size_t size)
{
	void *p;

	if (mode == MODE_RESOURCES && FAULT("calloc")) {
		errno = ENOMEM;
		return NULL;
	}
	p = __real_calloc(n, size);
	if (p && in_api)
		live_add(live_alloc, p);
	return p;
}

WRAPPER void *__wrap_malloc(size_t size)
{
	void *p;

	if (mode == MODE_RESOURCES && FAULT("malloc")) {
		errno = ENOMEM;
		return NULL;
	}
	p = __real_malloc(size);
	if (p && in_api)
		live_add(live_alloc, p);
	return p;
}

WRAPPER void __wrap_free(void *p)
{
	if (p && atomic_load(&live_any))
		live_remove(live_alloc, p);
	__real_free(p);
}

WRAPPER void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p;

	if (mode == MODE_RESOURCES && FAULT("mmap")) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	p = __real_mmap(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED && in_api)
		live_add(live_map, p);
	return p;
}

WRAPPER int __wrap_munmap(void *addr, size_t len)
{
	int r = __real_munmap(addr, len);

	if (r == 0 && atomic_load(&live_any))
		live_remove(live_map, addr);
	return r;
}

WRAPPER int __wrap_memfd_create(const char *name, unsigned int flags)
{
	if (mode == MODE_RESOURCES && FAULT("memfd_create")) {
		errno = EMFILE;
		return -1;
	}
	return __real_memfd_create(name, flags);
}

WRAPPER int __wrap_socketpair(int domain, int type, int protocol, int sv[2])
{
	if (mode == MODE_RESOURCES && FAULT("socketpair")) {
		errno = EMFILE;
		return -1;
	}
	return __real_socketpair(domain, type, protocol, sv);
}

WRAPPER int __wrap_open(const char *path, int flags, ...)
{
	unsigned int m = 0;

	if (flags & (O_CREAT | __O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		m = va_arg(ap, unsigned int);
		va_end(ap);
	}
	if (mode == MODE_RESOURCES && FAULT("open")) {
		errno = EMFILE;
		return -1;
	}
	return __real_open(path, flags, m);
}

/* How many arguments the syscalls made through syscall() take. */
WRAPPER static int syscall_nargs(long nr)
{
	switch (nr) {
	case SYS_gettid:
		return 0;
	case SYS_pidfd_open:
		return 2;
	case SYS_pidfd_send_signal:
	case SYS_rt_tgsigqueueinfo:
		return 4;
	default:
		return 6; /* futex, and anything else */
	}
}

/* syscall() is an ordinary libc function: the library's raw syscalls
 * (pidfd_open, pidfd_send_signal, rt_tgsigqueueinfo, futex, gettid) come
 * through here; the arguments are passed on as they are. */
WRAPPER long __wrap_syscall(long nr, ...)
{
	long a[6] = { 0, 0, 0, 0, 0, 0 };
	va_list ap;
	int i, n = syscall_nargs(nr);

	va_start(ap, nr);
	for (i = 0; i < n; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_pidfd_open && mode == MODE_RESOURCES && FAULT("pidfd_open")) {
		errno = EMFILE;
		return -1;
	}
	if (((nr == SYS_pidfd_send_signal && a[1] != 0) || nr == SYS_rt_tgsigqueueinfo) &&
	    mode == MODE_SIGNALS && FAULT(nr == SYS_rt_tgsigqueueinfo ? "rt_tgsigqueueinfo"
								   : "pidfd_send_signal")) {
		errno = EAGAIN;
		return -1;
	}
	return __real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

WRAPPER int __wrap_pthread_key_create(pthread_key_t *key, void (*destructor)(void *))
{
	if (mode == MODE_RESOURCES && FAULT("pthread_key_create"))
		return EAGAIN;
	return __real_pthread_key_create(key, destructor);
}

WRAPPER int __wrap_pthread_setspecific(pthread_key_t key, const void *value)
{
	if (mode == MODE_RESOURCES && FAULT("pthread_setspecific"))
		return ENOMEM;
	return __real_pthread_setspecific(key, value);
}

WRAPPER int __wrap_pthread_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
	if (mode == MODE_RESOURCES && FAULT("pthread_atfork"))
		return ENOMEM;
	return __real_pthread_atfork(prepare, parent, child);
}

/* F_SETFL with O_ASYNC makes the kernel allocate a fasync entry.  The
 * third argument: none, an int, or a pointer, as cmd says. */
WRAPPER int __wrap_fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *ptr = NULL;
	int arg = 0;

	va_start(ap, cmd);
	switch (cmd) {
	case F_GETFD:
	case F_GETFL:
	case F_GETOWN:
	case F_GETSIG:
	case F_GET_SEALS:
		break;
	case F_SETOWN_EX:
	case F_GETOWN_EX:
	case F_GETLK:
	case F_SETLK:
	case F_SETLKW:
		ptr = va_arg(ap, void *);
		break;
	default:
		arg = va_arg(ap, int);
		break;
	}
	va_end(ap);
	if (cmd == F_SETFL && (arg & O_ASYNC) && mode == MODE_RESOURCES &&
	    FAULT("fcntl(F_SETFL, O_ASYNC)")) {
		errno = ENOMEM;
		return -1;
	}
	return ptr ? __real_fcntl(fd, cmd, ptr) : __real_fcntl(fd, cmd, arg);
}

WRAPPER ssize_t __wrap_sendmsg(int fd, const struct msghdr *msg, int flags)
{
	if (mode == MODE_RESOURCES && FAULT("sendmsg")) {
		errno = ENOBUFS;
		return -1;
	}
	return __real_sendmsg(fd, msg, flags);
}

/* No free fd slot: the kernel delivers the data, drops the fds and sets
 * MSG_CTRUNC (scm_detach_fds). */
WRAPPER ssize_t __wrap_recvmsg(int fd, struct msghdr *msg, int flags)
{
	ssize_t n = __real_recvmsg(fd, msg, flags);
	struct cmsghdr *c;

	if (n < 0 || mode != MODE_RESOURCES || !FAULT("recvmsg(SCM_RIGHTS)"))
		return n;
	for (c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int)), i, f;

			for (i = 0; i < k; i++) {
				memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				close(f);
			}
		}
	}
	msg->msg_controllen = 0;
	msg->msg_flags |= MSG_CTRUNC;
	return n;
}

/* ------------------------------------------------------------- scenario */

#define NV 3
static const unsigned int vecs[NV] = { 5, 6, 7 };
static _Atomic int step;
static _Atomic unsigned long long delivered[UINTR_MAX_VECTORS];
static _Atomic pid_t rx_tid;
static int fds[NV];
static int registered_ok[NV]; /* the sender's entry k is valid */

static void problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void problem(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "  PROBLEM (N=%d, fault: %s in %s at +%#lx): ", rep->n,
		rep->injected ? rep->what : "none", rep->injected ? rep->during : "-", rep->where);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	rep->problems++;
}

static void handler(struct uintr_frame *f, unsigned long long v)
{
	(void)f;
	if (v < UINTR_MAX_VECTORS)
		atomic_fetch_add(&delivered[v], 1);
}

static int err_ok(int err, int pthread_key)
{
	return err == ENOMEM || err == EMFILE || err == ENFILE || (pthread_key && err == EAGAIN);
}

/*
 * Make an API call; if it fails, the failure must come from an injected
 * fault with a documented errno, and the call made again must succeed.
 * Returns the result (negative only if the retry failed too).
 */
#define API(name, call, keyerr)                                                      \
	({                                                                           \
		long r_;                                                             \
		during = name;                                                       \
		atomic_store(&hit, 0);                                               \
		errno = 0;                                                           \
		in_api = 1;                                                          \
		r_ = (long)(call);                                                   \
		in_api = 0;                                                          \
		if (r_ < 0) {                                                        \
			int e_ = errno;                                              \
			if (!atomic_load(&hit))                                      \
				problem("%s failed with %s, no fault injected in it", \
					name, strerror(e_));                         \
			else if (!err_ok(e_, keyerr))                                \
				problem("%s failed with %s (%d): not ENOMEM/EMFILE/" \
					"ENFILE", name, strerror(e_), e_);           \
			atomic_store(&hit, 0);                                       \
			errno = 0;                                                   \
			in_api = 1;                                                  \
			r_ = (long)(call);                                           \
			in_api = 0;                                                  \
			if (r_ < 0)                                                  \
				problem("%s made again after the fault failed: %s", \
					name, strerror(errno));                      \
		}                                                                    \
		during = "-";                                                        \
		r_;                                                                  \
	})

/* The steps of the scenario. */
#define S_FDS 1                  /* the receiver made its fds */
#define S_SENT(k) (2 + 2 * (k))    /* the sender sent through entry k */
#define S_CHECKED(k) (3 + 2 * (k)) /* the receiver counted that delivery */
#define S_DONE (2 + 2 * NV)        /* the sender unregistered */
#define S_NO_RX 100                /* the receiver could not register */

/* Wait for a step, with a 20 s hang guard. */
static int wait_step(int n, double secs)
{
	double until = t_now() + secs;

	while (atomic_load(&step) < n) {
		if (t_now() > until)
			return 0;
		sched_yield();
	}
	return 1;
}

static void *receiver(void *arg)
{
	struct uintr_state st;
	pid_t pid;
	int k, status;

	(void)arg;
	rx_tid = t_gettid();
	if (API("uintr_register_handler", uintr_register_handler(handler, 0), 1) != 0) {
		step = S_NO_RX;
		return NULL;
	}
	/* fork: the child has no handler, no UITT, UIF 0. */
	pid = fork();
	if (pid == 0) {
		if (uintr_read_state(&st) != 0 || st.handler || st.upid_addr || st.uif_byte)
			_exit(3);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		problem("fork failed");
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		problem("after fork the child still saw this thread's handler (status %#x)", status);
	uintr_stui();
	for (k = 0; k < NV; k++)
		fds[k] = (int)API("uintr_create_fd", uintr_create_fd(vecs[k], 0), 0);
	step = S_FDS;
	/* The interrupts arrive while this thread runs (notification
	 * signals), one at a time.  A signal queued before the sender said
	 * it had sent is handled on the way back from the getppid() syscall:
	 * after it, an interrupt sent through a valid entry was delivered. */
	for (k = 0; k < NV; k++) {
		unsigned long long n;

		if (!wait_step(S_SENT(k), 20.0))
			problem("the sender did not send");
		getppid();
		n = atomic_load(&delivered[vecs[k]]);
		if (n != (registered_ok[k] ? 1u : 0u))
			problem("vector %u delivered %llu times, expected %d", vecs[k], n,
				registered_ok[k]);
		step = S_CHECKED(k);
	}
	if (!wait_step(S_DONE, 20.0))
		problem("the sender did not finish");
	for (k = 0; k < NV; k++)
		if (fds[k] >= 0 && close(fds[k]) != 0)
			problem("close(uintr fd): %s", strerror(errno));
	in_api = 1;
	if (uintr_unregister_handler(0) != 0)
		problem("uintr_unregister_handler: %s", strerror(errno));
	in_api = 0;
	return NULL;
}

static void *sender(void *arg)
{
	int k, idx;

	(void)arg;
	if (!wait_step(S_FDS, 20.0) || atomic_load(&step) == S_NO_RX)
		return NULL;
	for (k = 0; k < NV; k++) {
		if (fds[k] < 0)
			continue;
		idx = (int)API("uintr_register_sender", uintr_register_sender(fds[k], 0), 0);
		if (idx >= 0 && idx != k)
			problem("uintr_register_sender gave index %d, expected %d", idx, k);
		registered_ok[k] = idx == k;
	}
	for (k = 0; k < NV; k++) {
		if (registered_ok[k]) {
			during = "uintr_senduipi";
			in_api = 1;
			uintr_senduipi((unsigned long long)k);
			in_api = 0;
			during = "-";
		}
		step = S_SENT(k);
		if (!wait_step(S_CHECKED(k), 20.0))
			problem("the receiver did not check");
	}
	for (k = 0; k < NV; k++)
		if (registered_ok[k])
			API("uintr_unregister_sender", uintr_unregister_sender(fds[k], 0), 0);
	step = S_DONE;
	return NULL;
}

/* Open fds, not counting the opendir's own nor the library's one epoll
 * for its release watcher (one per process, kept for the process's life:
 * src/vector_fd.c). */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	CHECK(d != NULL);
	while ((e = readdir(d)) != NULL) {
		char path[300], target[64];
		ssize_t len;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len > 0) {
			target[len] = '\0';
			if (strcmp(target, "anon_inode:[eventpoll]") == 0)
				continue;
		}
		n++;
	}
	closedir(d);
	return n - 1;
}

void uintr__vector_ends_settle(void);

static void run_child(void)
{
	pthread_t r, s;
	int fds_before = count_fds(), fds_after, k;

	for (k = 0; k < NV; k++)
		fds[k] = -1;
	r = t_start(receiver, NULL);
	s = t_start(sender, NULL);
	t_join(s);
	t_join(r);
	uintr__vector_ends_settle(); /* the closes' releases are complete */
	fds_after = count_fds();
	rep->points = atomic_load(&points);
	if (fds_after != fds_before)
		problem("%d fds open after teardown, %d before", fds_after, fds_before);
	if (live_count(live_alloc) != 0)
		problem("%d allocations not freed after teardown", live_count(live_alloc));
	if (live_count(live_map) != 0)
		problem("%d mappings not unmapped after teardown", live_count(live_map));
}

/* One run with the countdown at n; returns the report (points, problems). */
static int run_one(int n, int *injected, long *npoints)
{
	pid_t pid;
	int status;

	memset(rep, 0, sizeof(*rep));
	rep->n = n;
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		atomic_store(&countdown, n);
		run_child();
		fflush(NULL);
		exit(rep->problems ? 1 : 0);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	*injected = rep->injected;
	*npoints = rep->points;
	if (!WIFEXITED(status)) {
		fprintf(stderr, "  PROBLEM: the run crashed: status %#x (signal %d)\n", status,
			WIFSIGNALED(status) ? WTERMSIG(status) : 0);
		return 1;
	}
	if (WEXITSTATUS(status) != 0 && rep->problems == 0) {
		/* LeakSanitizer reports and exits non-zero. */
		fprintf(stderr, "  PROBLEM: the run exited %d (leak report above?)\n",
			WEXITSTATUS(status));
		return 1;
	}
	return rep->problems;
}

static int sweep(int m, const char *name)
{
	int n, injected = 1, failed_runs = 0, points_hit = 0;
	long npoints = 0;

	mode = m;
	printf("== %s\n", name);
	for (n = 1; injected && n < 1000; n++) {
		int problems = run_one(n, &injected, &npoints);

		if (injected) {
			points_hit++;
			printf("N=%-3d %-26s in %-26s at +%#lx: %s\n", n, rep->what, rep->during,
			       rep->where, problems ? "PROBLEMS (above)" : "ok");
		} else if (problems) {
			printf("N=%-3d no fault injected: PROBLEMS (above)\n", n);
		}
		failed_runs += problems != 0;
	}
	printf("%s: %d injection points exercised (%ld fallible calls in a clean run), "
	       "%d runs with problems\n", name, points_hit, npoints, failed_runs);
	return failed_runs;
}

int main(void)
{
	int failed;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!__real_calloc || !__real_mmap || !__real_syscall) {
		printf("skip: not linked with the -Wl,--wrap=... options of this test\n");
		return T_SKIP;
	}
	rep = __real_mmap(NULL, sizeof(*rep), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			  -1, 0);
	CHECK(rep != MAP_FAILED);
	failed = sweep(MODE_RESOURCES, "ENOMEM/EMFILE at every allocation and fd");
	failed += sweep(MODE_SIGNALS, "EAGAIN at every notification signal");
	if (failed) {
		printf("FAIL: %d runs with problems\n", failed);
		return T_FAIL;
	}
	return T_PASS;
}
