/*
 * UIF masks delivery (reference 5.5, 2.1 "UIF is not touched: default
 * UIF=0", 4.4 uif_byte bit 7): TESTUI and uintr_read_state report UIF
 * after registration (0), STUI (1) and CLUI (0); a vector posted while
 * UIF = 0 is recognized (UIRR bit set) but not delivered; STUI delivers
 * it exactly once, with UIF = 0 inside the handler and 1 after; after a
 * CLUI in ordinary code the next post again waits for STUI.
 */
#include "helpers-delivery.h"

static _Atomic int ufd = -1, handled, uif_in_handler = 7;
static _Atomic unsigned char state_uif_in_handler = 0xff;
static struct t_chan to_main, to_receiver;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	struct uintr_state s;

	(void)frame;
	uif_in_handler = uintr_testui();
	if (uintr_read_state(&s) == 0)
		state_uif_in_handler = s.uif_byte;
	td_record((int)vector);
	atomic_fetch_add(&handled, 1);
}

static unsigned char state_uif(void)
{
	struct uintr_state s;

	CHECK(uintr_read_state(&s) == 0);
	return s.uif_byte & UINTR_STATE_UIF;
}

/* Ask the main thread to post once and wait until it has. */
static void post_once(void)
{
	t_chan_post(&to_main);
	t_chan_wait(&to_receiver);
}

static void *receiver(void *arg)
{
	(void)arg;
	CHECK(uintr_register_handler(handler, 0) == 0);
	CHECK_EQ(uintr_testui(), 0);
	CHECK_EQ(state_uif(), 0);
	uintr_stui();
	CHECK_EQ(uintr_testui(), 1);
	CHECK_EQ(state_uif(), UINTR_STATE_UIF);
	uintr_clui();
	CHECK_EQ(uintr_testui(), 0);
	CHECK_EQ(state_uif(), 0);
	uintr_stui();
	uintr_stui(); /* nothing pending: no delivery, UIF stays 1 */
	CHECK_EQ(handled, 0);
	CHECK_EQ(uintr_testui(), 1);
	uintr_clui();

	ufd = uintr_create_fd(5, 0);
	CHECK(ufd >= 0);

	/* UIF = 0: the post is recognized, not delivered. */
	post_once();
	WAIT_UNTIL(td_uirr() == 1ull << 5);
	td_syscall();
	CHECK_EQ(handled, 0);
	CHECK_EQ(uintr_testui(), 0);
	uintr_stui();
	CHECK_EQ(handled, 1);
	CHECK_EQ(uif_in_handler, 0);
	CHECK_EQ(state_uif_in_handler & UINTR_STATE_UIF, 0);
	CHECK_EQ(uintr_testui(), 1);
	CHECK_EQ(td_uirr(), 0);

	/* CLUI in ordinary code masks the next one the same way. */
	uintr_clui();
	post_once();
	WAIT_UNTIL(td_uirr() == 1ull << 5);
	td_syscall();
	CHECK_EQ(handled, 1);
	uintr_stui();
	CHECK_EQ(handled, 2);
	TD_CHECK_EVENTS(5, 5);
	td_syscall();
	CHECK_EQ(handled, 2);
	t_chan_post(&to_main); /* done */
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	pthread_t t;
	int idx = -1, i;

	t_chan_init(&to_main);
	t_chan_init(&to_receiver);
	t = t_start(receiver, NULL);
	for (i = 0; i < 2; i++) {
		t_chan_wait(&to_main);
		if (idx < 0)
			idx = uintr_register_sender(ufd, 0);
		CHECK(idx >= 0);
		uintr_senduipi((unsigned long long)idx);
		t_chan_post(&to_receiver);
	}
	t_chan_wait(&to_main);
	t_join(t);
	CHECK_EQ(handled, 2);
	return T_PASS;
}
