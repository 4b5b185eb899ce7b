/*
 * struct uintr_state is the RFC's XSAVE component 14 (reference 4.4): 48
 * bytes at the offsets of the table, and its fields follow the thread's
 * UINTR state (2.1, 2.2, 2.4, 2.5, 5.2, 5.5): all zero before
 * registration; handler, UISTACKADJUST 128, UINV 0xEC, UPIDADDR while a
 * receiver, UIF in bit 7 of byte 23; UITTSZ 256 and UITTADDR bit 0 while
 * the thread has a sender entry, both 0 after the last is unregistered;
 * UIRR shows recognized vectors while UIF = 0 and is 0 once delivered; the
 * receiver fields and UIRR are 0 again after unregister_handler.
 */
#include "helpers-errno.h"

#include <stddef.h>

_Static_assert(sizeof(struct uintr_state) == 48, "struct uintr_state is 48 bytes");
_Static_assert(offsetof(struct uintr_state, handler) == 0, "UIHANDLER at 0");
_Static_assert(offsetof(struct uintr_state, stack_adjust) == 8, "UISTACKADJUST at 8");
_Static_assert(offsetof(struct uintr_state, uitt_size) == 16, "UITTSZ at 16");
_Static_assert(offsetof(struct uintr_state, uinv) == 20, "UINV at 20");
_Static_assert(offsetof(struct uintr_state, blocked) == 21, "libuintr's blocked byte at 21");
_Static_assert(offsetof(struct uintr_state, reserved) == 22, "reserved at 22");
_Static_assert(offsetof(struct uintr_state, uif_byte) == 23, "UIF byte at 23");
_Static_assert(offsetof(struct uintr_state, upid_addr) == 24, "UPIDADDR at 24");
_Static_assert(offsetof(struct uintr_state, uirr) == 32, "UIRR at 32");
_Static_assert(offsetof(struct uintr_state, uitt_addr) == 40, "UITTADDR at 40");

static _Atomic unsigned int order[8], norder;

static void order_handler(struct uintr_frame *frame, unsigned long long vector)
{
	unsigned int i = atomic_fetch_add(&norder, 1);

	(void)frame;
	if (i < 8)
		order[i] = (unsigned int)vector;
}

struct poster {
	int fd[2];
	unsigned long long idx[2];
	int n;
	struct t_chan go, done;
};

/* Another thread posts vectors through its own UITT on command. */
static void *poster_main(void *arg)
{
	struct poster *p = arg;
	int i;

	for (i = 0; i < p->n; i++)
		CHECK_EQ(uintr_register_sender(p->fd[i], 0), i);
	t_chan_post(&p->done);
	t_chan_wait(&p->go);
	for (i = 0; i < p->n; i++)
		uintr_senduipi((unsigned long long)i);
	t_chan_post(&p->done);
	t_chan_wait(&p->go);
	return NULL;
}

/* Field sizes, in the bytes themselves: a value written through the
 * struct lands at the table's offsets. */
static void check_byte_layout(void)
{
	struct uintr_state s;
	unsigned char b[48];

	memset(&s, 0, sizeof(s));
	s.handler = 0x0102030405060708ull;
	s.stack_adjust = 0x1112131415161718ull;
	s.uitt_size = 0x21222324u;
	s.uinv = 0x31;
	s.uif_byte = 0x80;
	s.upid_addr = 0x4142434445464748ull;
	s.uirr = 0x5152535455565758ull;
	s.uitt_addr = 0x6162636465666768ull;
	memcpy(b, &s, sizeof(b));
	CHECK_EQ(b[0] | (b[7] << 8), 0x0108); /* little-endian 8 bytes */
	CHECK_EQ(b[8], 0x18);
	CHECK_EQ(b[16], 0x24);
	CHECK_EQ(b[19], 0x21);
	CHECK_EQ(b[20], 0x31);
	CHECK_EQ(b[21], 0);
	CHECK_EQ(b[22], 0);
	CHECK_EQ(b[23], 0x80);
	CHECK_EQ(b[24], 0x48);
	CHECK_EQ(b[32], 0x58);
	CHECK_EQ(b[40], 0x68);
	CHECK_EQ(b[47], 0x61);
}

int main(void)
{
	struct uintr_state s;
	struct poster p;
	pthread_t t;
	int fd3, fd40, fdself;

	if (*(const unsigned char *)&(const unsigned short){ 1 } != 1) {
		printf("skip: byte checks assume little-endian\n");
		return T_SKIP;
	}
	check_byte_layout();

	/* Before registration: all zero, and read_state overwrites every byte. */
	te_check_state_zero();

	CHECK_EQ(uintr_register_handler(order_handler, 0), 0);
	s = te_state();
	CHECK_EQ(s.handler, (uintptr_t)order_handler);
	CHECK_EQ(s.stack_adjust, 128);
	CHECK_EQ(s.uitt_size, 0);
	CHECK_EQ(s.uinv, 0xEC);
	CHECK_EQ(s.blocked, 0); /* nothing keeps this receiver from interrupts */
	CHECK_EQ(s.reserved[0], 0);
	CHECK_EQ(s.uif_byte, 0);
	CHECK(s.upid_addr != 0);
	CHECK_EQ(s.upid_addr % 64, 0); /* UPID is 64-byte aligned (4.1) */
	CHECK_EQ(s.uirr, 0);
	CHECK_EQ(s.uitt_addr, 0);

	/* STUI / CLUI: bit 7 of byte 23, nothing else. */
	uintr_stui();
	s = te_state();
	CHECK_EQ(s.uif_byte, UINTR_STATE_UIF);
	CHECK_EQ(((const unsigned char *)&s)[23], 0x80);
	uintr_clui();
	CHECK_EQ(te_state().uif_byte, 0);

	/* Sender entries: UITTSZ 256 and UITTADDR | 1 while any exists. */
	fd3 = uintr_create_fd(3, 0);
	fd40 = uintr_create_fd(40, 0);
	fdself = uintr_create_fd(1, 0);
	CHECK(fd3 >= 0 && fd40 >= 0 && fdself >= 0);
	CHECK_EQ(te_state().uitt_size, 0);
	CHECK_EQ(uintr_register_sender(fdself, 0), 0);
	s = te_state();
	CHECK_EQ(s.uitt_size, 256);
	CHECK_EQ(s.uitt_addr & 1, 1);
	CHECK(s.uitt_addr & ~0xfull);
	CHECK_EQ(s.uinv, 0xEC);
	CHECK_EQ(s.stack_adjust, 128);
	CHECK_EQ(s.handler, (uintptr_t)order_handler);
	CHECK_EQ(uintr_register_sender(fd3, 0), 1);
	CHECK_EQ(te_state().uitt_size, 256);
	CHECK_EQ(te_state().uitt_addr, s.uitt_addr);
	CHECK_EQ(uintr_unregister_sender(fdself, 0), 0);
	CHECK_EQ(te_state().uitt_size, 256); /* one entry left */
	CHECK_EQ(te_state().uitt_addr & 1, 1);
	CHECK_EQ(uintr_unregister_sender(fd3, 0), 0);
	s = te_state();
	CHECK_EQ(s.uitt_size, 0);
	CHECK_EQ(s.uitt_addr, 0);
	CHECK_EQ(s.uinv, 0xEC); /* the receiver half is untouched */
	CHECK(s.upid_addr != 0);

	/* UIRR: with UIF = 0, vectors posted by another thread show up as
	 * recognized (asynchronously) and stay there. */
	memset(&p, 0, sizeof(p));
	p.fd[0] = fd3;
	p.fd[1] = fd40;
	p.n = 2;
	t_chan_init(&p.go);
	t_chan_init(&p.done);
	t = t_start(poster_main, &p);
	t_chan_wait(&p.done);
	t_chan_post(&p.go);
	t_chan_wait(&p.done);
	WAIT_UNTIL(te_state().uirr == ((1ull << 3) | (1ull << 40)));
	s = te_state();
	CHECK_EQ(s.uif_byte, 0);
	CHECK_EQ(s.uitt_size, 0); /* this thread is no sender */
	CHECK_EQ(norder, 0);
	/* STUI delivers both, highest first; UIRR is 0 again. */
	uintr_stui();
	CHECK_EQ(norder, 2);
	CHECK_EQ(order[0], 40);
	CHECK_EQ(order[1], 3);
	s = te_state();
	CHECK_EQ(s.uirr, 0);
	CHECK_EQ(s.uif_byte, UINTR_STATE_UIF);

	/* Pending when unregistering: UIRR discarded with the rest. */
	uintr_clui();
	CHECK_EQ(uintr_register_sender(fdself, 0), 0);
	uintr_senduipi(0);
	WAIT_UNTIL(te_state().uirr == (1ull << 1));
	CHECK_EQ(uintr_unregister_handler(0), 0);
	s = te_state();
	CHECK_EQ(s.handler, 0);
	CHECK_EQ(s.stack_adjust, 0);
	CHECK_EQ(s.uinv, 0);
	CHECK_EQ(s.upid_addr, 0);
	CHECK_EQ(s.uirr, 0);
	CHECK_EQ(s.uif_byte, 0);
	/* Still a sender: the UITT half stays. */
	CHECK_EQ(s.uitt_size, 256);
	CHECK_EQ(s.uitt_addr & 1, 1);
	CHECK_EQ(uintr_unregister_sender(fdself, 0), 0);
	te_check_state_zero();
	uintr_stui();
	CHECK_EQ(norder, 2);

	t_chan_post(&p.go);
	t_join(t);
	CHECK(close(fd3) == 0);
	CHECK(close(fd40) == 0);
	CHECK(close(fdself) == 0);
	return T_PASS;
}
