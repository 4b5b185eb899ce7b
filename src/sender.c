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
 * Intel's later branch (reference 3) has one UITT per process instead,
 * which every thread sends through (src/later.c).  That table is changed
 * under uintr__lock and read by SENDUIPI on any thread without a lock, so
 * a target it no longer references is freed only once no SENDUIPI is in
 * flight (uintr__shared_reap).  A process uses one kind or the other: the
 * first sender registration decides (uintr__sender_kind).
 *
 * Where a vector is posted: uintr__post() below.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
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
	 * Cache-line transfers per post (issue 16), the UPID being one line
	 * that the receiver last wrote (its exchange of PIR) or reads while
	 * it polls:
	 *   - the entry, the target and vector_gen are read-mostly lines that
	 *     stay shared in our cache: 0 transfers;
	 *   - the UPID line: fetched once, for writing, by the prefetch; the
	 *     load of PIR, the locked OR and the load of status below then
	 *     hit our own cache.  Without the prefetch the first load took
	 *     the line shared and the OR took it again to upgrade it: 2
	 *     transfers where 1 is needed.  Measured (uintr-bench, 2 vCPUs,
	 *     two runs each): with a 200 ns line, uintr-poll went from 1.59x
	 *     and 1.65x the cache-line ping-pong to 1.38x and 1.54x; with a
	 *     50 ns line (the same VM later) 2.30x both ways, the rest being
	 *     uintr_poll's own instructions;
	 *   - a notification adds the CAS that sets ON, on the line we own
	 *     unless the receiver took it meanwhile.
	 * The receiver's poll then costs 1 transfer (its load of PIR) and one
	 * upgrade (its exchange).  A flooding sender whose bit is still set
	 * takes the line from the draining receiver once per post, which the
	 * read alone did not: fewer sends coalesce (tp-poll-2 deliveries/s
	 * 1.5x with the 200 ns line, 0.85x with the 50 ns one).
	 */
	uintr__arch_prefetch_write(&upid->pir);
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

/* The watchdog's notification of an instrumented receiver whose posts
 * found SN set and were not recognized by a safepoint in time
 * (safepoint.c): the same signal a post to a running receiver sends.
 * ON is left alone: with SN set no post looks at it. */
int uintr__notify_deferred(const struct uintr__target *t)
{
	return uintr__notify_running(t);
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

/*
 * Entry fields are read by SENDUIPI on other threads when the table is the
 * process's (later ABI): relaxed atomic accesses, `valid` written last with
 * release and read first with acquire.  As on hardware, an entry rewritten
 * while another thread sends through it may be read half old, half new.
 */
#define UINTR__LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define UINTR__STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

static void uintr__entry_set(struct uintr__uitt_entry *e, unsigned int vector, uint32_t gen,
			     struct uintr__target *t)
{
	UINTR__STORE(e->vector, (uint8_t)vector);
	UINTR__STORE(e->gen, gen);
	UINTR__STORE(e->target, t);
	__atomic_store_n(&e->valid, 1, __ATOMIC_RELEASE);
}

static void uintr__entry_clear(struct uintr__uitt_entry *e)
{
	__atomic_store_n(&e->valid, 0, __ATOMIC_SEQ_CST);
}

/* True while any entry is connected (RFC: UITT not empty, TT enabled). */
int uintr__uitt_live(const struct uintr__uitt *u)
{
	unsigned int i;

	for (i = 0; i < UINTR_UITT_ENTRIES; i++) {
		const struct uintr__uitt_entry *e = &u->entry[i];

		if (__atomic_load_n(&e->valid, __ATOMIC_ACQUIRE) &&
		    atomic_load(&UINTR__LOAD(e->target)->info->vector_gen[UINTR__LOAD(e->vector)]) ==
			    UINTR__LOAD(e->gen))
			return 1;
	}
	return 0;
}

/* #GP, or #UD when no entry is left: a per-thread table with no
 * connection is freed (2.5: TT := 0); the process's table stays
 * programmed until the process ends (3). */
static int uintr__bad_index(const struct uintr__uitt *u)
{
	return u->shared || uintr__uitt_live(u) ? SIGSEGV : SIGILL;
}

static inline int uintr__uitt_send(const struct uintr__uitt *u, unsigned long long index)
{
	const struct uintr__uitt_entry *e;
	struct uintr__target *t;
	unsigned int vector;

	/* #UD: no sender table (TT[0] = 0). */
	if (!u->shared && !UINTR__LOAD(u->used))
		return SIGILL;
	/* #GP: index beyond UITTSZ, or entry not valid. */
	if (index >= UINTR_UITT_ENTRIES ||
	    !__atomic_load_n(&(e = &u->entry[index])->valid, __ATOMIC_ACQUIRE))
		return uintr__bad_index(u); /* entries left may all be stale */
	t = UINTR__LOAD(e->target);
	vector = UINTR__LOAD(e->vector);
	/* The fd this entry was made through was released: the RFC has
	 * unregistered the sender (2.3), so the entry is invalid; if none
	 * is left the table is gone too. */
	if (atomic_load_explicit(&t->info->vector_gen[vector], memory_order_relaxed) !=
	    UINTR__LOAD(e->gen))
		return uintr__bad_index(u);
	uintr__post(t, vector);
	return 0;
}

struct uintr__uitt *_Atomic uintr__process_uitt;
_Atomic int uintr__sender_kind;
static _Atomic unsigned long uintr__sends_in_flight;

/* SENDUIPI's checks and post (5.1): 0, or the fault the instruction takes
 * (SIGILL for #UD, SIGSEGV for #GP), having posted nothing.  Also used by
 * the binary-compatibility layer (src/compat), which raises the fault at
 * the program's own instruction. */
int uintr__senduipi_try(unsigned long long index)
{
	const struct uintr__uitt *u = uintr__self.uitt;
	int fault;

	if (u)
		return uintr__uitt_send(u, index);
	u = atomic_load_explicit(&uintr__process_uitt, memory_order_acquire);
	if (!u)
		return SIGILL;
	/* The process's table: another thread may drop an entry meanwhile;
	 * its target is freed only after this send (uintr__shared_reap). */
	atomic_fetch_add(&uintr__sends_in_flight, 1);
	fault = uintr__uitt_send(u, index);
	atomic_fetch_sub(&uintr__sends_in_flight, 1);
	return fault;
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
	if (t->memfd[0] >= 0)
		close(t->memfd[0]);
	if (t->memfd[1] >= 0)
		close(t->memfd[1]);
	free(t);
}

/* The process's table, under uintr__lock: free the targets no entry
 * references any more once no SENDUIPI is in flight.  A send that began
 * before an entry was cleared holds the count; one that begins after it
 * sees the entry invalid (both sides seq_cst). */
static void uintr__shared_reap(struct uintr__uitt *u)
{
	struct uintr__target *t, *next;

	atomic_thread_fence(memory_order_seq_cst);
	if (!u->zombies || atomic_load(&uintr__sends_in_flight) != 0)
		return;
	for (t = u->zombies; t; t = next) {
		next = t->next;
		uintr__target_unmap(t);
	}
	u->zombies = NULL;
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
	if (u->shared) {
		t->next = u->zombies;
		u->zombies = t;
		uintr__shared_reap(u);
		return;
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
	if (u->shared) {
		/* Kept: the process's table can be handed to another process
		 * (uintr_later_ipi_fd), and these are its credentials. */
		t->memfd[0] = memfds[0];
		t->memfd[1] = memfds[1];
	} else {
		t->memfd[0] = t->memfd[1] = -1;
		close(memfds[0]);
		close(memfds[1]);
	}
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

			uintr__entry_clear(e);
			atomic_signal_fence(memory_order_seq_cst);
			UINTR__STORE(u->used, u->used - 1);
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

/*
 * A new entry for the receiver and vector a header names (memfds
 * consumed), at the lowest free index; EISCONN if `isconn` and this table
 * is connected through that fd already (the RFC's rule; the later branch
 * gives a second index instead).  The process's table: under uintr__lock.
 */
int uintr__uitt_add(struct uintr__uitt *u, const struct uintr__fd_header *h, int memfds[3],
		    int isconn)
{
	struct uintr__target *t;
	unsigned int i;

	uintr__uitt_sweep(u);
	if (isconn && uintr__uitt_find(u, h)) {
		/* Connected: EISCONN, unless this is a forged copy. */
		if (uintr__check_memfds(u, h, memfds) != 0)
			return -1;
		return uintr__fail(EISCONN);
	}
	t = uintr__target_get(u, h, memfds);
	if (!t)
		return -1;
	for (i = 0; i < UINTR_UITT_ENTRIES; i++) {
		struct uintr__uitt_entry *e = &u->entry[i];

		if (!e->valid) {
			uintr__entry_set(e, h->vector, h->gen, t);
			UINTR__STORE(u->used, u->used + 1);
			return (int)i;
		}
	}
	uintr__target_put(u, t);
	return uintr__fail(ENOSPC);
}

/* Invalid first, so any later SENDUIPI on it faults (2.5); EINVAL if the
 * index holds no entry. */
int uintr__uitt_remove(struct uintr__uitt *u, unsigned long long index)
{
	struct uintr__uitt_entry *e;

	if (!u || index >= UINTR_UITT_ENTRIES || !(e = &u->entry[index])->valid)
		return uintr__fail(EINVAL);
	uintr__entry_clear(e);
	atomic_signal_fence(memory_order_seq_cst);
	UINTR__STORE(u->used, u->used - 1);
	uintr__target_put(u, e->target);
	return 0;
}

/* The process's sender table (later ABI), made at the first use; NULL
 * with errno if it cannot be (or this process uses per-thread tables:
 * EINVAL).  Under uintr__lock. */
struct uintr__uitt *uintr__shared_uitt(void)
{
	struct uintr__uitt *u = atomic_load(&uintr__process_uitt);

	if (u)
		return u;
	if (uintr__sender_kind_claim(UINTR__SENDERS_PROCESS) != 0)
		return NULL;
	if (uintr__setup_process() != 0 || !(u = calloc(1, sizeof(*u)))) {
		errno = errno == EINVAL ? EINVAL : ENOMEM;
		return NULL;
	}
	u->shared = 1;
	atomic_store_explicit(&uintr__process_uitt, u, memory_order_release);
	return u;
}

/* The first sender registration decides whether this process's sender
 * tables are per thread (RFC, 2.4) or one per process (later branch, 3);
 * the other kind then fails with EINVAL (uintr(7)). */
int uintr__sender_kind_claim(int kind)
{
	int none = UINTR__SENDERS_UNDECIDED;

	if (atomic_compare_exchange_strong(&uintr__sender_kind, &none, kind) || none == kind)
		return 0;
	return uintr__fail(EINVAL);
}

/*
 * The process's table as a message (uintr_later_ipi_fd, reference 3): its
 * valid entries and their receivers, each receiver with its UPID and info
 * memfds (SCM_RIGHTS, two per receiver, so at most 126 in one message:
 * ENOSPC beyond).  A snapshot: entries added later are not in it.
 */
#define UINTR__IPI_MAGIC 0x75697069746162ull /* "uipitab" */
#define UINTR__IPI_MAX_TARGETS 126
struct uintr__ipi_msg {
	uint64_t magic;
	uint32_t nentries, ntargets;
	struct {
		uint16_t index;
		uint8_t vector;
		uint8_t target;
		uint32_t gen;
	} entry[UINTR_UITT_ENTRIES];
	struct {
		uint64_t token;
		int32_t tgid, tid;
	} target[UINTR__IPI_MAX_TARGETS];
};

/* Under uintr__lock.  0, or -1 with errno. */
int uintr__uitt_export(struct uintr__uitt *u, int sock)
{
	struct uintr__target *tl[UINTR__IPI_MAX_TARGETS];
	union {
		char buf[CMSG_SPACE(2 * UINTR__IPI_MAX_TARGETS * sizeof(int))];
		struct cmsghdr align;
	} control;
	struct uintr__ipi_msg *m = calloc(1, sizeof(*m));
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	unsigned int i, k;
	int fds[2 * UINTR__IPI_MAX_TARGETS], ret;

	if (!m)
		return uintr__fail(ENOMEM);
	uintr__uitt_sweep(u);
	m->magic = UINTR__IPI_MAGIC;
	for (i = 0; i < UINTR_UITT_ENTRIES; i++) {
		const struct uintr__uitt_entry *e = &u->entry[i];

		if (!e->valid)
			continue;
		for (k = 0; k < m->ntargets && tl[k] != e->target; k++)
			;
		if (k == m->ntargets) {
			if (k == UINTR__IPI_MAX_TARGETS) {
				free(m);
				return uintr__fail(ENOSPC);
			}
			tl[k] = e->target;
			m->target[k].token = e->target->token;
			m->target[k].tgid = e->target->tgid;
			m->target[k].tid = e->target->tid;
			fds[2 * k] = e->target->memfd[0];
			fds[2 * k + 1] = e->target->memfd[1];
			m->ntargets++;
		}
		m->entry[m->nentries].index = (uint16_t)i;
		m->entry[m->nentries].vector = e->vector;
		m->entry[m->nentries].target = (uint8_t)k;
		m->entry[m->nentries].gen = e->gen;
		m->nentries++;
	}
	if (m->ntargets) {
		struct cmsghdr *c;

		memset(&control, 0, sizeof(control));
		msg.msg_control = control.buf;
		msg.msg_controllen = CMSG_SPACE(2 * m->ntargets * sizeof(int));
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(2 * m->ntargets * sizeof(int));
		memcpy(CMSG_DATA(c), fds, 2 * m->ntargets * sizeof(int));
	}
	ret = sendmsg(sock, &msg, MSG_NOSIGNAL) == (ssize_t)sizeof(*m) ? 0 : -1;
	if (ret)
		errno = errno == EMFILE || errno == ENFILE ? errno : ENOMEM;
	free(m);
	return ret;
}

/* Read (peek: any number of processes may adopt it) a table message;
 * NULL if fd holds none (errno EBADF or ENOTTY). */
static struct uintr__ipi_msg *uintr__ipi_read(int fd, int fds[2 * UINTR__IPI_MAX_TARGETS],
					      int *nfds)
{
	union {
		char buf[CMSG_SPACE(2 * UINTR__IPI_MAX_TARGETS * sizeof(int))];
		struct cmsghdr align;
	} control;
	struct uintr__ipi_msg *m;
	struct iovec iov;
	struct msghdr msg;
	struct cmsghdr *c;
	struct stat st;
	int type = 0, i;
	socklen_t len = sizeof(type);
	ssize_t n;

	*nfds = 0;
	if (fstat(fd, &st) != 0) {
		errno = EBADF;
		return NULL;
	}
	if (!S_ISSOCK(st.st_mode) || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 ||
	    type != SOCK_SEQPACKET || !(m = calloc(1, sizeof(*m) + 1))) {
		errno = ENOTTY;
		return NULL;
	}
	iov.iov_base = m;
	iov.iov_len = sizeof(*m) + 1;
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = control.buf;
	msg.msg_controllen = sizeof(control.buf);
	n = recvmsg(fd, &msg, MSG_PEEK | MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	for (c = n >= 0 ? CMSG_FIRSTHDR(&msg) : NULL; c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));

			for (i = 0; i < k && *nfds < 2 * UINTR__IPI_MAX_TARGETS; i++)
				memcpy(&fds[(*nfds)++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
		}
	}
	if (n != (ssize_t)sizeof(*m) || m->magic != UINTR__IPI_MAGIC ||
	    m->ntargets > UINTR__IPI_MAX_TARGETS || m->nentries > UINTR_UITT_ENTRIES ||
	    (int)(2 * m->ntargets) != *nfds) {
		for (i = 0; i < *nfds; i++)
			close(fds[i]);
		*nfds = 0;
		free(m);
		errno = n < 0 && (errno == EMFILE || errno == ENFILE) ? errno : ENOTTY;
		return NULL;
	}
	return m;
}

int uintr__is_uitt_fd(int fd)
{
	int fds[2 * UINTR__IPI_MAX_TARGETS], nfds, i;
	struct uintr__ipi_msg *m = uintr__ipi_read(fd, fds, &nfds);

	for (i = 0; i < nfds; i++)
		close(fds[i]);
	free(m);
	return m != NULL;
}

/*
 * Adopt a table message as the (new, empty) process table u: the same
 * indexes to the same receivers, each receiver checked as
 * uintr_register_sender checks it; entries to receivers that are gone
 * are left out (SENDUIPI on them takes #GP).  Under uintr__lock.
 */
int uintr__uitt_import(struct uintr__uitt *u, int fd)
{
	int fds[2 * UINTR__IPI_MAX_TARGETS], nfds, i;
	struct uintr__target *tl[UINTR__IPI_MAX_TARGETS];
	struct uintr__ipi_msg *m = uintr__ipi_read(fd, fds, &nfds);
	unsigned int k;

	if (!m)
		return -1;
	for (k = 0; k < m->ntargets; k++) {
		struct uintr__fd_header h;

		memset(&h, 0, sizeof(h));
		h.magic = UINTR__FD_MAGIC;
		h.token = m->target[k].token;
		h.tgid = m->target[k].tgid;
		h.tid = m->target[k].tid;
		{
			/* No event-loop eventfd travels with the table. */
			int three[3] = { fds[2 * k], fds[2 * k + 1], -1 };

			tl[k] = uintr__target_get(u, &h, three);
		}
	}
	for (i = 0; i < (int)m->nentries; i++) {
		struct uintr__uitt_entry *e = &u->entry[m->entry[i].index];
		struct uintr__target *t = m->entry[i].target < m->ntargets ? tl[m->entry[i].target]
									  : NULL;

		if (!t || e->valid || m->entry[i].vector >= UINTR_MAX_VECTORS)
			continue;
		t->refs++;
		uintr__entry_set(e, m->entry[i].vector, m->entry[i].gen, t);
		UINTR__STORE(u->used, u->used + 1);
	}
	for (k = 0; k < m->ntargets; k++)
		if (tl[k])
			uintr__target_put(u, tl[k]); /* the entries hold it now */
	free(m);
	return 0;
}

UINTR__EXPORT int uintr_register_sender(int uintr_fd, unsigned int flags)
{
	struct uintr__fd_header h;
	struct uintr__uitt *u = uintr__self.uitt;
	int memfds[3];

	if (flags != 0)
		return uintr__fail(EINVAL);
	if (uintr__read_fd_header(uintr_fd, &h, memfds) != 0)
		return -1;
	if (!u) {
		if (uintr__sender_kind_claim(UINTR__SENDERS_THREAD) != 0 ||
		    uintr__setup_process() != 0 || uintr__watch_thread_exit() != 0 ||
		    !(u = calloc(1, sizeof(*u)))) {
			uintr__close_header_fds(memfds);
			return uintr__fail(errno == EINVAL ? EINVAL : ENOMEM);
		}
		uintr__self.uitt = u;
	}
	return uintr__uitt_add(u, &h, memfds, 1);
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
	return uintr__uitt_remove(u, (unsigned long long)(e - u->entry));
}

/* fork: the child keeps the process's table, as the later branch's child
 * mm shares its parent's UITT (3), but no thread of the parent's is in a
 * send there. */
void uintr__sender_fork_child(void)
{
	atomic_store(&uintr__sends_in_flight, 0);
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
