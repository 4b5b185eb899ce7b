/*
 * Senders: the UITT, uintr_register_sender, uintr_unregister_sender and
 * SENDUIPI (reference 2.4, 2.5, 4.2, 5.1).
 *
 * As in the RFC, the UITT is per thread: 256 entries, lowest free index
 * first, an index is valid only on the thread that registered it.  An entry
 * names a target (a receiver's UPID and info pages mapped into this process,
 * and a pidfd for exactly the receiver thread); entries to one receiver
 * share a target.  The UITT is touched only by its own thread, so it needs
 * no lock; SENDUIPI only reads it.
 *
 * Where a vector is posted: uintr__post() below.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "uintr-int.h"

#define UINTR__PAGE 4096

/*
 * The signal to a running receiver.  True if it is on its way, or can
 * never be (the receiver thread is gone: ON may then be set for good, and
 * later posts coalesce without a syscall).  False if the kernel's queue of
 * signals stays full (RLIMIT_SIGPENDING) after a few tries: ON must stay
 * clear then, so that the next post notifies again.
 */
static int uintr__notify_running(const struct uintr__target *t)
{
	int tries;

	for (tries = 0; tries < 64; tries++) {
		if (uintr__send_notification(t) == 0 || errno != EAGAIN)
			return 1;
		sched_yield();
	}
	return 0;
}

/*
 * SENDUIPI's locked read-modify-write of the UPID (5.1): set PIR[vector];
 * if ON and SN are both clear, set ON and notify.  Lock-free, no
 * allocation, and a syscall only when a notification is due: a signal to a
 * running receiver (NV 0xEC), a futex wake to one blocked in uintr_wait
 * (NV 0xEB), an eventfd write to one in the event-loop state (NV 0xEA).
 *
 * The hardware does this in one instruction; we cannot, and a sender may
 * be killed (SIGKILL) between any two steps.  So ON, which makes every
 * later post coalesce, is never left set without a notification on its
 * way (reference 8: a receiver exposed to its senders):
 *   - running receiver: signal first, then set ON with a CAS that fails
 *     if the receiver's signal handler processed a notification since we
 *     read the status (it bumps the EPOCH field), so a sender killed
 *     between the two leaves ON clear, and ON is never set after the
 *     signal it stands for was consumed.  Senders racing here may each
 *     send a signal (one per sender at most); the extra ones find little
 *     or nothing to do.
 *   - receiver blocked in uintr_wait: set ON, then wake (the futex must
 *     see the word change); a sender killed between the two costs the
 *     waiter at most its periodic recheck (wait.c).
 */
static inline int uintr__post_rmw(struct uintr__upid *upid, unsigned int vector, uint32_t *statusp)
{
	uint64_t bit = 1ull << vector;
	uint32_t status;

	/*
	 * Bit already set and ON or SN set: the locked OR below would change
	 * nothing and the status test after it would return, so return now
	 * (coalescing) without the locked operation: a flooding sender then
	 * does not bounce the line the receiver drains.  With ON and SN both
	 * clear we take the full path even if the bit is set: a notification
	 * that could not be sent (signal queue full) or whose sender died
	 * leaves exactly that state, and the next post must notify (found by
	 * model/uintr.pml, config sigq).
	 */
	if (atomic_load_explicit(&upid->pir, memory_order_relaxed) & bit) {
		atomic_thread_fence(memory_order_seq_cst);
		if ((atomic_load(&upid->pir) & bit) &&
		    (atomic_load(&upid->status) & (UINTR__UPID_ON | UINTR__UPID_SN)))
			return 0;
	}
	atomic_fetch_or(&upid->pir, bit);
	status = atomic_load(&upid->status);
	for (;;) {
		if (status & (UINTR__UPID_ON | UINTR__UPID_SN))
			return 0;
		if ((status & UINTR__UPID_NV_MASK) != UINTR__NV(UINTR__NV_BLOCKED))
			break;
		if (atomic_compare_exchange_weak(&upid->status, &status, status | UINTR__UPID_ON)) {
			uintr__futex_wake(&upid->status);
			return 0;
		}
	}
	*statusp = status;
	return 1;
}

/* The post for interrupt sources inside the receiver's process that run
 * on the receiver thread itself (timer.c): the same RMW; 1 when a
 * notification of the running receiver is due, which the caller, being
 * that receiver, then processes itself (as the RFC kernel's self-IPI). */
int uintr__post_self(struct uintr__upid *upid, unsigned int vector)
{
	uint32_t status;

	return uintr__post_rmw(upid, vector, &status);
}

static inline void uintr__post(const struct uintr__target *t, unsigned int vector)
{
	uint32_t status;

	if (!uintr__post_rmw(t->upid, vector, &status))
		return;
	/* Event-loop state (loop.c): the eventfd write is the signal; the
	 * drain bumps EPOCH as the signal handler does. */
	if ((status & UINTR__UPID_NV_MASK) == UINTR__NV(UINTR__NV_LOOP) && t->loop_efd >= 0) {
		if (uintr__notify_loop(t))
			atomic_compare_exchange_strong(&t->upid->status, &status, status | UINTR__UPID_ON);
		return;
	}
	if (uintr__notify_running(t))
		atomic_compare_exchange_strong(&t->upid->status, &status, status | UINTR__UPID_ON);
}

/* True while any entry is connected (RFC: UITT not empty, TT enabled). */
int uintr__uitt_live(const struct uintr__uitt *u)
{
	unsigned int i;

	for (i = 0; i < UINTR_UITT_ENTRIES; i++) {
		const struct uintr__uitt_entry *e = &u->entry[i];

		if (e->valid && atomic_load(&e->target->info->vector_gen[e->vector]) == e->gen)
			return 1;
	}
	return 0;
}

/* SENDUIPI's checks and post (5.1): 0, or the fault the instruction takes
 * (SIGILL for #UD, SIGSEGV for #GP), having posted nothing.  Also used by
 * the binary-compatibility layer (src/compat), which raises the fault at
 * the program's own instruction. */
int uintr__senduipi_try(unsigned long long index)
{
	const struct uintr__uitt *u = uintr__self.uitt;
	const struct uintr__uitt_entry *e;

	/* #UD: no sender table (TT[0] = 0). */
	if (!u || !u->used)
		return SIGILL;
	/* #GP: index beyond UITTSZ, or entry not valid. */
	if (index >= UINTR_UITT_ENTRIES || !(e = &u->entry[index])->valid)
		return uintr__uitt_live(u) ? SIGSEGV : SIGILL; /* entries left may all be stale */
	/* The fd this entry was made through was released: the RFC has
	 * unregistered the sender (2.3), so the entry is invalid; if none
	 * is left the table is gone too. */
	if (atomic_load_explicit(&e->target->info->vector_gen[e->vector],
				 memory_order_relaxed) != e->gen)
		return uintr__uitt_live(u) ? SIGSEGV : SIGILL;
	uintr__post(e->target, e->vector);
	return 0;
}

/* SENDUIPI (5.1).  A fault is a real one (arch/arch.h); if a handler
 * returns from it, the check runs again, as the instruction would. */
UINTR__EXPORT void uintr_senduipi(unsigned long long index)
{
	int fault;

	while ((fault = uintr__senduipi_try(index)) != 0) {
		if (fault == SIGILL)
			uintr__arch_raise_ud();
		else
			uintr__arch_raise_gp();
	}
}

void uintr__target_unmap(struct uintr__target *t)
{
	if (t->upid)
		munmap(t->upid, UINTR__PAGE);
	if (t->info)
		munmap((void *)t->info, UINTR__PAGE);
	if (t->pidfd >= 0)
		close(t->pidfd);
	if (t->loop_efd >= 0)
		close(t->loop_efd);
	free(t);
}

static void uintr__target_put(struct uintr__uitt *u, struct uintr__target *t)
{
	struct uintr__target **pp;

	if (--t->refs > 0)
		return;
	for (pp = &u->targets; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	uintr__target_unmap(t);
}

static void uintr__close_header_fds(int fds[3])
{
	close(fds[0]);
	close(fds[1]);
	if (fds[2] >= 0)
		close(fds[2]);
}

static int uintr__memfd_ok(int fd, int seals, ino_t *ino)
{
	struct stat st;
	int have = fcntl(fd, F_GET_SEALS);

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != UINTR__PAGE ||
	    have < 0 || (have & seals) != seals)
		return 0;
	*ino = st.st_ino;
	return 1;
}

/*
 * Are these the pages of the receiver the header names?  The size and the
 * seals make them safe to map (no SIGBUS, senders cannot write the info
 * page); the info page must then name the same receiver as the header.
 * 0, EOPNOTSUPP, or ENOMEM when the page cannot be mapped.
 */
static int uintr__memfds_check(const struct uintr__fd_header *h, int memfds[2],
			       ino_t *upid_ino, ino_t *info_ino)
{
	const struct uintr__info *info;
	int ok;

	if (!uintr__memfd_ok(memfds[0], F_SEAL_SHRINK | F_SEAL_GROW, upid_ino) ||
	    !uintr__memfd_ok(memfds[1], F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE, info_ino))
		return EOPNOTSUPP;
	info = uintr__map_memfd(memfds[1], 0);
	if (!info)
		return ENOMEM;
	ok = info->magic == UINTR__INFO_MAGIC && info->token == h->token &&
	     info->tgid == h->tgid && info->tid == h->tid;
	munmap((void *)info, UINTR__PAGE);
	return ok ? 0 : EOPNOTSUPP;
}

/*
 * Is the receiver thread alive and still the one that registered, not a
 * thread that reused its tid?  On pidfs the pidfd's inode says so exactly.
 * Elsewhere the start time must match (clock ticks: a tid reused within
 * the same tick passes, a documented limit) and, since the pidfd was
 * opened before the check, its thread must still be alive after it.
 */
static int uintr__target_alive(const struct uintr__target *t)
{
	uint64_t start;
	char state = '?';

	if (!atomic_load(&t->info->active))
		return uintr__fail(ESHUTDOWN);
	start = uintr__thread_start_time(t->tgid, t->tid, &state);
	if (start == 0 && (errno == EMFILE || errno == ENFILE))
		return -1;
	if (start == 0 || start != t->info->start_time || state == 'Z' || state == 'X')
		return uintr__fail(ESHUTDOWN);
	/* EPERM: a receiver we may not signal (another user's). */
	if (t->pidfd >= 0 && syscall(SYS_pidfd_send_signal, t->pidfd, 0, NULL, 0) != 0)
		return uintr__fail(errno == EPERM ? EPERM : ESHUTDOWN);
	return 0;
}

static int uintr__target_verify(struct uintr__target *t)
{
	t->pidfd = uintr__pidfd_open_thread(t->tid);
	if (t->pidfd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOMEM))
		return -1;
	if (t->info->pid_ino && uintr__pidfd_ino(t->pidfd) != t->info->pid_ino)
		return uintr__fail(ESHUTDOWN);
	return uintr__target_alive(t);
}

static struct uintr__target *uintr__target_find(struct uintr__uitt *u, uint64_t token)
{
	struct uintr__target *t;

	for (t = u ? u->targets : NULL; t; t = t->next)
		if (t->token == token)
			return t;
	return NULL;
}

/*
 * Check a header's memfds (consumed) against what we know: a target we
 * already map must be the very same pages; otherwise the pages must be
 * genuine.  EOPNOTSUPP for a forged uintr_fd.
 */
static int uintr__check_memfds(struct uintr__uitt *u, const struct uintr__fd_header *h,
			       int memfds[3])
{
	struct uintr__target *t = uintr__target_find(u, h->token);
	ino_t upid_ino = 0, info_ino = 0;
	int err = uintr__memfds_check(h, memfds, &upid_ino, &info_ino);

	uintr__close_header_fds(memfds);
	if (err)
		return uintr__fail(err);
	if (t && (t->upid_ino != upid_ino || t->info_ino != info_ino))
		return uintr__fail(EOPNOTSUPP);
	return 0;
}

/* Map the receiver named by a header (its fds consumed); errno on failure. */
static struct uintr__target *uintr__target_get(struct uintr__uitt *u,
					       const struct uintr__fd_header *h, int memfds[3])
{
	struct uintr__target *t = uintr__target_find(u, h->token);
	int err = ENOMEM;

	if (t) {
		if (uintr__check_memfds(u, h, memfds) != 0 || uintr__target_alive(t) != 0)
			return NULL;
		t->refs++;
		return t;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		uintr__close_header_fds(memfds);
		errno = ENOMEM;
		return NULL;
	}
	t->pidfd = -1;
	t->loop_efd = memfds[2];
	memfds[2] = -1;
	err = uintr__memfds_check(h, memfds, &t->upid_ino, &t->info_ino);
	if (!err) {
		err = ENOMEM;
		t->upid = uintr__map_memfd(memfds[0], 1);
		t->info = uintr__map_memfd(memfds[1], 0);
	}
	close(memfds[0]);
	close(memfds[1]);
	if (!t->upid || !t->info)
		goto fail;
	t->token = h->token;
	t->tgid = h->tgid;
	t->tid = h->tid;
	t->sender_tgid = getpid();
	t->sender_uid = getuid();
	/* Re-check through our own mapping: the pages are what we validated. */
	err = EOPNOTSUPP;
	if (t->info->magic != UINTR__INFO_MAGIC || t->info->token != h->token ||
	    t->info->tgid != h->tgid || t->info->tid != h->tid)
		goto fail;
	if (uintr__target_verify(t) != 0) {
		err = errno;
		goto fail;
	}
	t->refs = 1;
	t->next = u->targets;
	u->targets = t;
	return t;
fail:
	uintr__target_unmap(t);
	errno = err;
	return NULL;
}

/* Free entries whose fd was released (the RFC's task_work on the sender). */
static void uintr__uitt_sweep(struct uintr__uitt *u)
{
	unsigned int i;

	for (i = 0; i < UINTR_UITT_ENTRIES; i++) {
		struct uintr__uitt_entry *e = &u->entry[i];

		if (e->valid && atomic_load(&e->target->info->vector_gen[e->vector]) != e->gen) {
			struct uintr__target *t = e->target;

			e->valid = 0;
			atomic_signal_fence(memory_order_seq_cst);
			u->used--;
			uintr__target_put(u, t);
		}
	}
}

static struct uintr__uitt_entry *uintr__uitt_find(struct uintr__uitt *u,
						  const struct uintr__fd_header *h)
{
	unsigned int i;

	for (i = 0; u && i < UINTR_UITT_ENTRIES; i++) {
		struct uintr__uitt_entry *e = &u->entry[i];

		if (e->valid && e->target->token == h->token && e->vector == h->vector &&
		    e->gen == h->gen)
			return e;
	}
	return NULL;
}

UINTR__EXPORT int uintr_register_sender(int uintr_fd, unsigned int flags)
{
	struct uintr__fd_header h;
	struct uintr__uitt *u = uintr__self.uitt;
	struct uintr__target *t;
	int memfds[3];
	unsigned int i;

	if (flags != 0)
		return uintr__fail(EINVAL);
	if (uintr__read_fd_header(uintr_fd, &h, memfds) != 0)
		return -1;
	if (u)
		uintr__uitt_sweep(u);
	if (uintr__uitt_find(u, &h)) {
		/* Connected: EISCONN, unless this is a forged copy. */
		if (uintr__check_memfds(u, &h, memfds) != 0)
			return -1;
		return uintr__fail(EISCONN);
	}
	if (!u) {
		if (uintr__setup_process() != 0 || uintr__watch_thread_exit() != 0 ||
		    !(u = calloc(1, sizeof(*u)))) {
			uintr__close_header_fds(memfds);
			return uintr__fail(errno == EINVAL ? EINVAL : ENOMEM);
		}
		uintr__self.uitt = u;
	}
	t = uintr__target_get(u, &h, memfds);
	if (!t)
		return -1;
	for (i = 0; i < UINTR_UITT_ENTRIES; i++) {
		struct uintr__uitt_entry *e = &u->entry[i];

		if (!e->valid) {
			e->vector = (uint8_t)h.vector;
			e->gen = h.gen;
			e->target = t;
			atomic_signal_fence(memory_order_seq_cst);
			e->valid = 1;
			u->used++;
			return (int)i;
		}
	}
	uintr__target_put(u, t);
	return uintr__fail(ENOSPC);
}

UINTR__EXPORT int uintr_unregister_sender(int uintr_fd, unsigned int flags)
{
	struct uintr__fd_header h;
	struct uintr__uitt *u = uintr__self.uitt;
	struct uintr__uitt_entry *e;
	int memfds[3];

	if (flags != 0)
		return uintr__fail(EINVAL);
	if (uintr__read_fd_header(uintr_fd, &h, memfds) != 0)
		return -1;
	if (uintr__check_memfds(u, &h, memfds) != 0)
		return -1;
	if (u)
		uintr__uitt_sweep(u);
	e = uintr__uitt_find(u, &h);
	if (!e)
		return uintr__fail(EINVAL);
	/* Invalid first, so any later SENDUIPI on it faults (2.5). */
	e->valid = 0;
	atomic_signal_fence(memory_order_seq_cst);
	u->used--;
	uintr__target_put(u, e->target);
	return 0;
}

void uintr__sender_exit(void)
{
	struct uintr__uitt *u = uintr__self.uitt;
	struct uintr__target *t, *next;

	if (!u)
		return;
	uintr__self.uitt = NULL;
	for (t = u->targets; t; t = next) {
		next = t->next;
		uintr__target_unmap(t);
	}
	free(u);
}
