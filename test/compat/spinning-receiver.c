/*
 * Binary compatibility, asynchronous delivery (issue: "Delivery is the
 * hardware's", reference 5.3): a receiver registered with
 * syscall(__NR_uintr_register_handler) whose handler is an
 * __attribute__((interrupt)) function, spinning in plain code, is
 * interrupted by a SENDUIPI from another thread.  The handler starts with
 * the CPU's frame: the vector as the compiler's second argument ([RSP]),
 * the frame at RSP+8 holding RIP inside the spin loop, RFLAGS and the old
 * RSP, placed right below the 128-byte red zone and 16-byte aligned; UIF is
 * 0 inside the handler, 1 after its UIRET; exactly one delivery.  The
 * handler runs outside any signal handler: its signal mask is the
 * interrupted thread's own (here exactly SIGUSR2), not a handler's.
 */
#include "helpers-compat.h"

static int uipi_fd = -1;
static int handled, ready, stop;
static unsigned long long seen_vector = 99, seen_rip, seen_flags, seen_rsp, seen_frame;
static unsigned long long seen_uif = 7, receiver_local, seen_mask = ~0ull;
static volatile unsigned long long spins;

#ifdef __cplusplus
extern "C" {
#endif
/* The spin loop sits alone in its section: the linker's __start_/__stop_
 * symbols bound the addresses an interrupted RIP may have. */
extern const char __start_compat_spin_text[], __stop_compat_spin_text[];
#ifdef __cplusplus
}
#endif

/* The thread's signal mask by rt_sigprocmask (no libc in a handler). */
static unsigned long long raw_sigmask(void)
{
	unsigned long long mask = 0;
	register long size __asm__("r10") = sizeof(mask);
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_rt_sigprocmask), "D"((long)SIG_BLOCK), "S"(0L), "d"(&mask),
			   "r"(size)
			 : "rcx", "r11", "memory");
	return ret == 0 ? mask : ~0ull;
}

static void __attribute__((interrupt))
handler(struct __uintr_frame *frame, unsigned long long vector)
{
	STORE(seen_vector, vector);
	STORE(seen_rip, frame->rip);
	STORE(seen_flags, frame->rflags);
	STORE(seen_rsp, frame->rsp);
	STORE(seen_frame, (unsigned long long)(uintptr_t)frame);
	STORE(seen_uif, (unsigned long long)_testui());
	STORE(seen_mask, raw_sigmask());
	ADD(handled, 1);
}

__attribute__((noinline, section("compat_spin_text"))) static void spin_until_handled(void)
{
	while (!__atomic_load_n(&handled, __ATOMIC_RELAXED))
		spins++;
}

static void *receiver(void *arg)
{
	int local = 0;
	long fd;

	sigset_t usr2;

	(void)arg;
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	CHECK(pthread_sigmask(SIG_SETMASK, &usr2, NULL) == 0);
	STORE(receiver_local, (unsigned long long)(uintptr_t)&local);
	CHECK_EQ(u_register_handler(handler, 0), 0);
	CHECK_EQ(_testui(), 0); /* UIF = 0 right after registration (2.1) */
	fd = u_create_fd(5, 0);
	CHECK(fd >= 0);
	STORE(uipi_fd, (int)fd);
	_stui();
	CHECK_EQ(_testui(), 1);
	STORE(ready, 1);
	spin_until_handled();
	CHECK_EQ(_testui(), 1); /* UIRET set it again */
	WAIT_UNTIL(LOAD(stop));
	CHECK_EQ(u_unregister_handler(0), 0);
	return NULL;
}

int main(void)
{
	pthread_t t = t_start(receiver, NULL);
	unsigned long long frame, rsp, local;
	long idx;

	WAIT_UNTIL(LOAD(ready));
	idx = u_register_sender(LOAD(uipi_fd), 0);
	CHECK_EQ(idx, 0);
	_senduipi((unsigned long long)idx);
	WAIT_UNTIL(LOAD(handled));

	CHECK_EQ(LOAD(seen_vector), 5);
	CHECK_EQ(LOAD(seen_uif), 0);
	CHECK_EQ(LOAD(seen_mask), 1ull << (SIGUSR2 - 1));
	CHECK(LOAD(seen_rip) >= (unsigned long long)(uintptr_t)__start_compat_spin_text &&
	      LOAD(seen_rip) < (unsigned long long)(uintptr_t)__stop_compat_spin_text);
	/* RFLAGS of user code: bit 1 and IF always set; TF clear. */
	CHECK_EQ(LOAD(seen_flags) & 0x302, 0x202);
	/* The interrupted RSP is the spin function's, below the caller's local. */
	rsp = LOAD(seen_rsp);
	local = LOAD(receiver_local);
	CHECK(rsp < local && rsp > local - 4096);
	/* 5.3: RSP' = (RSP - 128) & ~15; four pushes; frame = RSP'' + 8. */
	frame = LOAD(seen_frame);
	CHECK_EQ(frame + 24, (rsp - 128) & ~15ull);
	CHECK_EQ((frame - 8) % 16, 0);

	STORE(stop, 1);
	t_join(t);
	CHECK_EQ(LOAD(handled), 1);
	return T_PASS;
}
