/*
 * ping-pong.c - a program written for UINTR hardware, as gcc -muintr
 * builds it: no libuintr header, only the compiler's intrinsics
 * (<x86gprintrin.h>: _stui, _senduipi, _testui) and the UINTR system calls
 * made with syscall(2).  Two threads of one process each register an
 * __attribute__((interrupt)) handler, make a vector a file descriptor, and
 * register as a sender to the other's; then they bounce N interrupts.
 *
 * On a CPU and kernel with UINTR it runs as it is.  Anywhere else (any
 * x86-64 CPU) run it under libuintr's emulation:
 *
 *   gcc -O2 -Wall -muintr -mgeneral-regs-only ping-pong.c -pthread -o ping-pong
 *   uintr-run ./ping-pong
 *
 * -mgeneral-regs-only: an interrupt handler may not touch SSE registers
 * (gcc: "SSE instructions aren't allowed in an exception service
 * routine"); the whole file is built so, which also keeps memcpy/memset
 * inline.  A statically linked build links the emulation in instead:
 *
 *   gcc -O2 -muintr -mgeneral-regs-only -static ping-pong.c -pthread \
 *       -Wl,--whole-archive libuintr-compat.a -Wl,--no-whole-archive -o ping-pong
 *
 * Exit status 0 when every interrupt arrived, 1 otherwise.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <x86gprintrin.h>

/* Intel's later kernels (the emulation's default); the 2021 RFC used
 * 449..454 (uintr-run: UINTR_SYSCALL_BASE=449). */
#define NR_uintr_register_handler 471
#define NR_uintr_unregister_handler 472
#define NR_uintr_create_fd 473
#define NR_uintr_register_sender 474
#define NR_uintr_unregister_sender 475

#define N 10000

/* Per side: the vector its handler got, how many, and its uintr fd. */
struct side {
	unsigned long long vector;
	volatile unsigned int count;
	int fd;
	int index; /* UITT index for sending to the other side */
};

static struct side sides[2];
static volatile int ready;

/* Runs with UIF = 0 on the interrupted thread; returns with UIRET.  It may
 * interrupt any code, so it only writes to memory. */
static void __attribute__((interrupt))
handler(struct __uintr_frame *frame, unsigned long long vector)
{
	struct side *s = &sides[vector & 1]; /* vector 0: side 0, vector 1: side 1 */

	(void)frame;
	s->vector = vector;
	__atomic_add_fetch(&s->count, 1, __ATOMIC_RELEASE);
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void wait_for(volatile unsigned int *count, unsigned int value)
{
	while (__atomic_load_n(count, __ATOMIC_ACQUIRE) < value)
		__builtin_ia32_pause();
}

/* Side `me`: receiver of vector `me`, sender to the other side. */
static void *run(void *arg)
{
	int me = (int)(long)arg, other = !me;
	unsigned int i;

	if (syscall(NR_uintr_register_handler, handler, 0) != 0)
		die("uintr_register_handler");
	sides[me].fd = (int)syscall(NR_uintr_create_fd, (unsigned long long)me, 0);
	if (sides[me].fd < 0)
		die("uintr_create_fd");
	_stui(); /* UIF = 1: interrupts may arrive */
	__atomic_add_fetch(&ready, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) < 2)
		__builtin_ia32_pause();
	sides[me].index = (int)syscall(NR_uintr_register_sender, sides[other].fd, 0);
	if (sides[me].index < 0)
		die("uintr_register_sender");
	__atomic_add_fetch(&ready, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) < 4)
		__builtin_ia32_pause();

	for (i = 1; i <= N; i++) {
		if (me == 0) {
			_senduipi((unsigned long long)sides[me].index); /* ping */
			wait_for(&sides[me].count, i);                 /* pong */
		} else {
			wait_for(&sides[me].count, i);
			_senduipi((unsigned long long)sides[me].index);
		}
	}
	if (syscall(NR_uintr_unregister_sender, sides[other].fd, 0) != 0)
		die("uintr_unregister_sender");
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	int i;

	for (i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, run, (void *)(long)i) != 0)
			die("pthread_create");
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("%u pings, %u pongs; vectors %llu and %llu\n", sides[1].count, sides[0].count,
	       sides[1].vector, sides[0].vector);
	return sides[0].count == N && sides[1].count == N && sides[0].vector == 0 &&
			       sides[1].vector == 1
		       ? 0
		       : 1;
}
