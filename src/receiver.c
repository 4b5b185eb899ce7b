/*
 * The receiver: uintr_register_handler, uintr_unregister_handler, thread
 * exit, and the readable thread state (reference 2.1, 2.2, 2.7, 4.4).
 *
 * A receiver is a thread.  Registering gives it a UPID (a memfd page every
 * sender maps) and an info page (the receiver's identity and liveness,
 * read-only to senders).  Unregistering or exiting sets SN for good and
 * clears `active`: later posts are harmless, later sender registrations on
 * its fds fail with ESHUTDOWN, and re-registering makes a new UPID.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uintr-int.h"

#define UINTR__PAGE 4096

struct uintr__receiver *uintr__receivers; /* under uintr__lock */

int uintr__new_memfd(const char *name)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -1;
	if (ftruncate(fd, UINTR__PAGE) != 0) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* Map a library memfd page; its size is sealed, so no SIGBUS later. */
void *uintr__map_memfd(int fd, int writable)
{
	void *p = mmap(NULL, UINTR__PAGE, writable ? PROT_READ | PROT_WRITE : PROT_READ,
		       MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

static uint64_t uintr__new_token(void)
{
	static _Atomic uint64_t counter;
	uint64_t r = 0;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = ((uint64_t)getpid() << 24) ^ (uint64_t)uintr__arch_cycles();
	r += atomic_fetch_add(&counter, 1);
	return UINTR__TOKEN_TAG | (r & ~UINTR__TOKEN_MASK);
}

void uintr__receiver_free(struct uintr__receiver *r)
{
	if (r->upid)
		munmap(r->upid, UINTR__PAGE);
	if (r->info && !r->info_kept)
		munmap(r->info, UINTR__PAGE);
	if (r->upid_memfd >= 0)
		close(r->upid_memfd);
	if (r->info_memfd >= 0)
		close(r->info_memfd);
	if (r->loop_efd >= 0)
		close(r->loop_efd);
	if (r->sp_pidfd >= 0)
		close(r->sp_pidfd);
	munmap(r, sizeof(*r));
}

/* Free the receivers this thread retired while busy (uintr__leave).
 * Async-signal-safe: munmap and close only. */
void uintr__receivers_reclaim(void)
{
	struct uintr__receiver *r = atomic_exchange(&uintr__self.retired, NULL), *next;

	for (; r; r = next) {
		next = r->next;
		uintr__receiver_free(r);
	}
}

static struct uintr__receiver *uintr__receiver_new(uintr_handler_t handler)
{
	/* Mapped, not malloc'ed: it may be freed from a signal handler
	 * (uintr__leave), where only munmap is safe. */
	struct uintr__receiver *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int err;

	if (r == MAP_FAILED)
		return NULL;
	r->upid_memfd = r->info_memfd = r->loop_efd = r->sp_pidfd = -1;
	r->handler = handler;
	r->stack_adjust = UINTR__DEFAULT_STACK_ADJUST;
	r->wait_spin_ns = uintr__default_wait_spin();
	r->tid = uintr__gettid();
	r->token = uintr__new_token();

	r->upid_memfd = uintr__new_memfd("uintr-upid");
	if (r->upid_memfd < 0 || !(r->upid = uintr__map_memfd(r->upid_memfd, 1)))
		goto fail;
	r->info_memfd = uintr__new_memfd("uintr-info");
	if (r->info_memfd < 0 || !(r->info = uintr__map_memfd(r->info_memfd, 1)))
		goto fail;
	/* Made now, not at uintr_loop_fd(): every uintr_fd header carries it,
	 * so senders in any process can reach the event-loop state (loop.c). */
	r->loop_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->loop_efd < 0)
		goto fail;

	atomic_store(&r->upid->status, UINTR__NV(UINTR__NV_RUNNING));
	atomic_store(&r->upid->pir, 0);
	r->info->magic = UINTR__INFO_MAGIC;
	r->info->token = r->token;
	r->info->tgid = getpid();
	r->info->tid = r->tid;
	r->info->signo = uintr__signo;
	{
		char state;
		int pidfd = uintr__pidfd_open_thread(r->tid);

		if (pidfd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOMEM))
			goto fail;
		r->info->start_time = uintr__thread_start_time(getpid(), r->tid, &state);
		r->info->pid_ino = uintr__pidfd_ino(pidfd);
		if (pidfd >= 0)
			close(pidfd);
		if (!r->info->start_time) {
			if (errno != EMFILE && errno != ENFILE)
				errno = ENOMEM;
			goto fail;
		}
	}
	{
		struct stat st;

		if (fstat(r->upid_memfd, &st) == 0)
			r->info->upid_ino = (uint64_t)st.st_ino;
	}
	atomic_store(&r->info->active, 1);

	/* Senders may read both pages but never change their size; only we
	 * (through the mapping we already hold) may write the info page. */
	if (fcntl(r->upid_memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0 ||
	    fcntl(r->info_memfd, F_ADD_SEALS,
		  F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL) != 0)
		goto fail;
	return r;
fail:
	err = errno;
	uintr__receiver_free(r);
	errno = err;
	return NULL;
}

static void uintr__receiver_detach(struct uintr__receiver *r);

UINTR__EXPORT int uintr_register_handler(uintr_handler_t handler, unsigned int flags)
{
	struct uintr__receiver *r;
	sigset_t old;

	if (flags != 0)
		return uintr__fail(EINVAL);
	if (!handler)
		return uintr__fail(EFAULT);
	if (uintr__self.receiver)
		return uintr__fail(EBUSY);
	if (uintr__setup_process() != 0 || uintr__watch_thread_exit() != 0)
		return -1;
	r = uintr__receiver_new(handler);
	if (!r)
		return uintr__fail(errno == EMFILE || errno == ENFILE ? errno : ENOMEM);

	uintr__lock();
	r->next = uintr__receivers;
	uintr__receivers = r;
	uintr__unlock();
	/* UIF is not touched (2.1): a thread starts with UIF = 0 and must STUI. */
	uintr__block_signal(&old);
	if (uintr__self.receiver) {
		/* A signal handler registered one meanwhile. */
		uintr__receiver_detach(r);
		uintr__restore_signal(&old);
		return uintr__fail(EBUSY);
	}
	uintr__self.receiver = r;
	uintr__restore_signal(&old);
	if (uintr__debug)
		uintr__debug_check("uintr_register_handler");
	return 0;
}

/* do_uintr_unregister_handler / the receiver half of uintr_free (2.2, 2.7). */
static void uintr__receiver_detach(struct uintr__receiver *r)
{
	struct uintr__receiver **pp;

	/* Instrumented code must not load the UPID any more: it is unmapped
	 * below or by the outermost uintr__leave(). */
	if (uintr__self.receiver == r)
		uintr_safepoint_word = &uintr__safepoint_zero;
	atomic_fetch_or(&r->upid->status, UINTR__UPID_SN | UINTR__UPID_DEAD);
	atomic_store(&r->info->active, 0);
	uintr__timers_receiver_gone(r);
	atomic_store(&r->info->uirr, 0); /* pending recognized interrupts are discarded */
	uintr__lock();
	/* The orphaned ends keep the info page (vector_fd.c); the counters
	 * go into the process totals below, under the same lock, before the
	 * watcher may release the last of them and unmap it. */
	if (uintr__vector_orphan_ends(r))
		r->info_kept = 1;
	uintr__safepoints_gone(r);
	for (pp = &uintr__receivers; *pp; pp = &(*pp)->next) {
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	}
	atomic_fetch_add(&uintr__process_notifications, atomic_load(&r->info->notifications));
	atomic_fetch_add(&uintr__process_delivered, atomic_load(&r->info->delivered));
	atomic_fetch_add(&uintr__process_spurious, atomic_load(&r->info->spurious));
	uintr__unlock();
	if (uintr__self.receiver == r)
		uintr__self.receiver = NULL;
	/* Unregistered from a handler nested in library code that still
	 * holds r (uintr__enter): retire it; the outermost leave frees it. */
	if (atomic_load_explicit(&uintr__self.busy, memory_order_relaxed)) {
		r->next = atomic_load_explicit(&uintr__self.retired, memory_order_relaxed);
		atomic_store_explicit(&uintr__self.retired, r, memory_order_relaxed);
	} else {
		uintr__receiver_free(r);
	}
}

UINTR__EXPORT int uintr_unregister_handler(unsigned int flags)
{
	struct uintr__receiver *r = uintr__self.receiver;
	sigset_t old;

	if (flags != 0 || !r)
		return uintr__fail(EINVAL);
	uintr__block_signal(&old);
	uintr__receiver_detach(r);
	uintr__restore_signal(&old);
	return 0;
}

/* Thread exit.  Nothing of the library runs on this thread any more, not
 * even below a handler that never returned (pthread_exit, longjmp): what
 * it retired can go too. */
void uintr__receiver_exit(void)
{
	struct uintr__receiver *r = uintr__self.receiver;
	sigset_t old;

	uintr__block_signal(&old);
	if (r)
		uintr__receiver_detach(r);
	uintr__receivers_reclaim();
	atomic_store(&uintr__self.busy, 0);
	uintr__restore_signal(&old);
}

UINTR__EXPORT int uintr_read_state(struct uintr_state *state)
{
	struct uintr__receiver *r;
	struct uintr__uitt *u = uintr__self.uitt ? uintr__self.uitt : atomic_load(&uintr__process_uitt);

	if (!state)
		return uintr__fail(EFAULT);
	memset(state, 0, sizeof(*state));
	r = uintr__enter();
	if (r) {
		state->handler = (unsigned long long)(uintptr_t)r->handler;
		state->stack_adjust = r->stack_adjust;
		state->uinv = UINTR__NV_RUNNING;
		state->upid_addr = (unsigned long long)(uintptr_t)r->upid;
		state->uirr = atomic_load(&r->info->uirr);
		state->blocked = (unsigned char)uintr__delivery_blockers();
	}
	if (u && (u->shared || uintr__uitt_live(u))) {
		/* The RFC writes 256 (2.4), the later branch 255 (3). */
		state->uitt_size = u->shared ? UINTR_UITT_ENTRIES - 1 : UINTR_UITT_ENTRIES;
		state->uitt_addr = (unsigned long long)(uintptr_t)u | 1;
	}
	uintr__leave();
	if (atomic_load(&uintr__self.uif))
		state->uif_byte = UINTR_STATE_UIF;
	return 0;
}

UINTR__EXPORT int uintr_get_stats(struct uintr_stats *stats, unsigned int flags)
{
	struct uintr__receiver *r;

	if (flags & ~UINTR_STATS_PROCESS)
		return uintr__fail(EINVAL);
	if (!stats)
		return uintr__fail(EFAULT);
	if (flags & UINTR_STATS_PROCESS) {
		struct uintr__receiver *p;

		uintr__lock();
		stats->notifications = atomic_load(&uintr__process_notifications);
		stats->delivered = atomic_load(&uintr__process_delivered);
		stats->spurious = atomic_load(&uintr__process_spurious);
		for (p = uintr__receivers; p; p = p->next) {
			stats->notifications += atomic_load(&p->info->notifications);
			stats->delivered += atomic_load(&p->info->delivered);
			stats->spurious += atomic_load(&p->info->spurious);
		}
		uintr__unlock();
		return 0;
	}
	r = uintr__enter();
	if (r) {
		stats->notifications = atomic_load(&r->info->notifications);
		stats->delivered = atomic_load(&r->info->delivered);
		stats->spurious = atomic_load(&r->info->spurious);
	}
	uintr__leave();
	return r ? 0 : uintr__fail(EOPNOTSUPP);
}
