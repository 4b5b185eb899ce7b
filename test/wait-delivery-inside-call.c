/*
 * uintr_wait_since_last (the race-free extension, issue 12) must return
 * once a handler has run after the previous wait returned, even if it ran
 * before the wait could look (wait.c).  This places a notification
 * deterministically at the start of the call, before it blocks:
 * the receiver calls uintr_wait_since_last(0) on a stack whose next page is missing
 * and watched by userfaultfd, so uintr_wait's first pushes fault and the
 * receiver stops in the kernel.  The sender thread, told of the fault,
 * posts (a notification signal: the receiver is not blocked in the wait
 * yet), waits until the handler has run (on the sigaltstack), then maps
 * the page.  uintr_wait must then return -1/EINTR with the handler run
 * exactly once; sleeping in the futex instead is the lost wake-up the
 * ping-pong loop `while (!flag) uintr_wait(0);` can hit by chance, and
 * that the extension exists to close.
 * x86-64 only (the stack switch is inline asm); skips (77) where
 * userfaultfd is unavailable or the wait did not touch the page.
 */
#include "helpers-delivery.h"

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

#define PAGE 4096
#define STACK_PAGES 16 /* [0, 8): ordinary, [8]: watched, [9, 16): ordinary */
#define WATCHED 8

static _Atomic int ufd = -1, ready, handled, faulted, mapped, returned;
static _Atomic int wait_ret = -2, wait_errno, handled_at_return = -1;
static _Atomic pid_t receiver_tid;
static int uffd = -1;
static char *stack_area;
static char skip_reason[160];

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	td_record((int)vector);
	atomic_fetch_add(&handled, 1);
}

#if defined(__x86_64__)
/* Call uintr_wait(0) with the stack pointer at sp (16-aligned). */
static int wait_on_stack(void *sp)
{
	long ret;

	__asm__ volatile("mov %%rsp, %%rbx\n\t"
			 "mov %[sp], %%rsp\n\t"
			 "xor %%edi, %%edi\n\t"
			 "call *%[fn]\n\t"
			 "mov %%rbx, %%rsp\n\t"
			 : "=a"(ret)
			 : [sp] "r"(sp), [fn] "r"(uintr_wait_since_last)
			 : "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "memory",
			   "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
			   "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
	return (int)ret;
}
#endif

/* The system call a thread is blocked in, from /proc (-1: none). */
static long blocked_syscall(pid_t tid)
{
	char path[64], buf[256];
	FILE *f;
	long nr = -1;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		nr = strtol(buf, NULL, 10);
	fclose(f);
	return nr;
}

static void *receiver(void *arg)
{
	static char altstack[64 * 1024];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack), .ss_flags = 0 };
	int r;

	(void)arg;
	receiver_tid = t_gettid();
	/* The notification's signal frame must not touch the watched page. */
	CHECK(sigaltstack(&ss, NULL) == 0);
	CHECK(uintr_register_handler(handler, 0) == 0);
	ufd = uintr_create_fd(13, 0);
	CHECK(ufd >= 0);
	CHECK(uintr_set_wait_spin(0) == 0); /* straight to the blocking path */
	uintr_stui();
	ready = 1;
#if defined(__x86_64__)
	/* The call pushes its return address at the top of page WATCHED+1's
	 * lowest slot pair; uintr_wait's own pushes go below, into WATCHED. */
	errno = 0;
	r = wait_on_stack(stack_area + (WATCHED + 1) * PAGE + 16);
	wait_errno = errno;
	handled_at_return = handled;
	wait_ret = r;
#else
	(void)r;
#endif
	/* Our altstack is static memory: take it back from the thread. */
	ss.ss_flags = SS_DISABLE;
	CHECK(sigaltstack(&ss, NULL) == 0);
	returned = 1;
	return NULL;
}

static void *sender(void *arg)
{
	struct uffd_msg msg;
	struct uffdio_zeropage zp;
	int idx;

	(void)arg;
	idx = uintr_register_sender(ufd, 0);
	CHECK(idx >= 0);
	for (;;) {
		ssize_t n = read(uffd, &msg, sizeof(msg));

		if (n < 0 && errno == EINTR)
			continue;
		CHECK(n == (ssize_t)sizeof(msg));
		if (msg.event == UFFD_EVENT_PAGEFAULT)
			break;
	}
	faulted = 1;
	/* The receiver is inside uintr_wait, stopped on the missing page. */
	uintr_senduipi((unsigned long long)idx);
	WAIT_UNTIL(handled >= 1);
	memset(&zp, 0, sizeof(zp));
	zp.range.start = (unsigned long long)(uintptr_t)(stack_area + WATCHED * PAGE);
	zp.range.len = PAGE;
	CHECK(ioctl(uffd, UFFDIO_ZEROPAGE, &zp) == 0 || errno == EEXIST);
	mapped = 1;
	return NULL;
}

static int setup_uffd(void)
{
	struct uffdio_api api;
	struct uffdio_register reg;

#if !defined(__x86_64__)
	snprintf(skip_reason, sizeof(skip_reason), "x86-64 only");
	return -1;
#endif
	if (T_TSAN) {
		snprintf(skip_reason, sizeof(skip_reason), "ThreadSanitizer defers signals");
		return -1;
	}
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
	if (uffd < 0)
		uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0) {
		snprintf(skip_reason, sizeof(skip_reason), "userfaultfd: %s", strerror(errno));
		return -1;
	}
	memset(&api, 0, sizeof(api));
	api.api = UFFD_API;
	if (ioctl(uffd, UFFDIO_API, &api) != 0) {
		snprintf(skip_reason, sizeof(skip_reason), "UFFDIO_API: %s", strerror(errno));
		return -1;
	}
	stack_area = mmap(NULL, STACK_PAGES * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(stack_area != MAP_FAILED);
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (unsigned long long)(uintptr_t)(stack_area + WATCHED * PAGE);
	reg.range.len = PAGE;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg) != 0) {
		snprintf(skip_reason, sizeof(skip_reason), "UFFDIO_REGISTER: %s", strerror(errno));
		return -1;
	}
	/* Touch every other page now: only the watched one is missing. */
	memset(stack_area, 0, WATCHED * PAGE);
	memset(stack_area + (WATCHED + 1) * PAGE, 0, (STACK_PAGES - WATCHED - 1) * PAGE);
	return 0;
}

int main(void)
{
	pthread_t r;
	double until;

	if (setup_uffd() != 0) {
		printf("skip: %s\n", skip_reason);
		return T_SKIP;
	}
	r = t_start(receiver, NULL);
	WAIT_UNTIL(ready);
	t_start(sender, NULL); /* not joined: it may stay in read() */

	until = t_now() + 20.0;
	for (;;) {
		if (returned)
			break;
		if (t_thread_state(receiver_tid) == 'S' && blocked_syscall(receiver_tid) == SYS_futex) {
			if (!faulted) {
				printf("skip: uintr_wait blocked without touching the watched page\n");
				return T_SKIP;
			}
			if (mapped && handled == 1) {
				fprintf(stderr, "uintr_wait_since_last sleeps although the handler ran during "
						"the call (lost wake-up)\n");
				return T_FAIL;
			}
		}
		if (t_now() > until) {
			fprintf(stderr, "gave up: faulted %d handled %d mapped %d\n", (int)faulted,
				(int)handled, (int)mapped);
			return T_FAIL;
		}
		sched_yield();
	}
	t_join(r);
	CHECK_EQ(faulted, 1);
	CHECK_EQ(wait_ret, -1);
	CHECK_EQ(wait_errno, EINTR);
	CHECK_EQ(handled_at_return, 1);
	CHECK_EQ(handled, 1);
	TD_CHECK_EVENTS(13);
	return T_PASS;
}
