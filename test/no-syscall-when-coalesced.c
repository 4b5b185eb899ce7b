/*
 * Issue item 9 (reference 5.1, checklist 10.2: a notification only on ON
 * 0 -> 1 with SN = 0; README: "no syscall when no notification is due"):
 * the receiver blocks the notification signal, so ON stays set after the
 * first post.  The sender thread posts once (a notification is due), then
 * puts itself under a seccomp filter that traps every system call but
 * exit and rt_sigreturn, and posts 1000 more times each to the vector
 * already posted (PIR bit set), to a second vector of the same receiver
 * (new PIR bit, ON set) and to a receiver that has unregistered (SN set):
 * no SIGSYS.  A probe system call under the filter shows the trap works.
 * Afterwards the receiver unblocks: one notification, vectors 6 then 5.
 * Skips (77) where seccomp filters are unavailable, and under
 * ThreadSanitizer, whose runtime makes system calls of its own.
 */
#include "helpers-delivery.h"

#include "helpers-seccomp.h"

#define SENDS 1000

enum { RUNNING, SENT, SKIPPED };

static _Atomic int fd5 = -1, fd6 = -1, fd7 = -1, ready1, ready2, sender_registered;
static _Atomic int r2_unregistered, sender_status, handled, r2_handled;
static _Atomic int sigsys_count, sigsys_nr = -1, probe_traps = -1;
static char skip_reason[128];

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	sigsys_nr = si->si_syscall;
	atomic_fetch_add(&sigsys_count, 1);
}

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	td_record((int)vector);
	atomic_fetch_add(&handled, 1);
}

static void r2_handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	(void)vector;
	atomic_fetch_add(&r2_handled, 1);
}

static void *receiver1(void *arg)
{
	struct uintr_stats st;

	(void)arg;
	CHECK(uintr_register_handler(handler, 0) == 0);
	fd5 = uintr_create_fd(5, 0);
	fd6 = uintr_create_fd(6, 0);
	CHECK(fd5 >= 0 && fd6 >= 0);
	td_mask_notifications(SIG_BLOCK);
	uintr_stui();
	ready1 = 1;
	WAIT_UNTIL(sender_status != RUNNING);
	td_syscall();
	CHECK_EQ(handled, 0);
	td_mask_notifications(SIG_UNBLOCK);
	if (sender_status == SENT) {
		CHECK_EQ(handled, 2);
		TD_CHECK_EVENTS(6, 5);
		CHECK(uintr_get_stats(&st, 0) == 0);
		CHECK_EQ(st.notifications, 1);
		CHECK_EQ(st.spurious, 0);
	}
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

static void *receiver2(void *arg)
{
	(void)arg;
	CHECK(uintr_register_handler(r2_handler, 0) == 0);
	fd7 = uintr_create_fd(7, 0);
	CHECK(fd7 >= 0);
	uintr_stui();
	ready2 = 1;
	WAIT_UNTIL(sender_registered);
	CHECK(uintr_unregister_handler(0) == 0);
	r2_unregistered = 1;
	return NULL;
}

static int install_filter(void)
{
#ifdef T_AUDIT_ARCH
	struct sock_filter code[] = {
		T_SECCOMP_PROLOGUE(SECCOMP_RET_TRAP),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit_group, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigreturn, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	if (t_seccomp_install(code, (unsigned short)(sizeof(code) / sizeof(code[0]))) != 0) {
		snprintf(skip_reason, sizeof(skip_reason), "seccomp filter: %s",
			 strerror(errno));
		return -1;
	}
	return 0;
#else
	snprintf(skip_reason, sizeof(skip_reason), "no seccomp arch constant here");
	return -1;
#endif
}

static void *sender(void *arg)
{
	struct sigaction sa;
	int i5, i6, i7, i;

	(void)arg;
	i5 = uintr_register_sender(fd5, 0);
	i6 = uintr_register_sender(fd6, 0);
	i7 = uintr_register_sender(fd7, 0);
	CHECK(i5 >= 0 && i6 >= 0 && i7 >= 0);
	sender_registered = 1;
	WAIT_UNTIL(r2_unregistered);
	uintr_senduipi((unsigned long long)i5); /* ON 0 -> 1: notifies */

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGSYS, &sa, NULL) == 0);
	if (install_filter() != 0) {
		sender_status = SKIPPED;
		return NULL;
	}
	/* From here on: no system calls at all. */
	syscall(SYS_getppid); /* probe: must trap */
	probe_traps = sigsys_count;
	sigsys_count = 0;
	for (i = 0; i < SENDS; i++) {
		uintr_senduipi((unsigned long long)i5);
		uintr_senduipi((unsigned long long)i6);
		uintr_senduipi((unsigned long long)i7);
	}
	sender_status = SENT;
	/* Thread exit would make system calls: stay, without any, until the
	 * process exits. */
	for (;;)
		atomic_signal_fence(memory_order_seq_cst);
	return NULL;
}

int main(void)
{
	pthread_t r1, r2;

	if (T_TSAN) {
		printf("skip: ThreadSanitizer makes system calls in the sender\n");
		return T_SKIP;
	}
	r1 = t_start(receiver1, NULL);
	r2 = t_start(receiver2, NULL);
	WAIT_UNTIL(ready1 && ready2);
	t_start(sender, NULL); /* never joined: it ends with the process */
	t_join(r2);
	t_join(r1);
	if (sender_status == SKIPPED) {
		printf("skip: %s\n", skip_reason);
		return T_SKIP;
	}
	CHECK_EQ(probe_traps, 1);
	if (sigsys_count != 0)
		fprintf(stderr, "system call %d made while posting\n", (int)sigsys_nr);
	CHECK_EQ(sigsys_count, 0);
	CHECK_EQ(handled, 2);
	CHECK_EQ(r2_handled, 0);
	return T_PASS;
}
