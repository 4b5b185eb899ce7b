/*
 * uintr.pml -- a Promela model of libuintr's notification protocol:
 * src/sender.c (uintr__post, uintr__notify_running), src/delivery.c
 * (uintr__process_notification, uintr__deliver, uintr__notification,
 * uintr_stui/clui), src/wait.c (uintr_wait, uintr__spin_for_post,
 * uintr__block_until_notified, uintr_poll, uintr_set_polling),
 * src/receiver.c (uintr__receiver_detach), src/uintr-int.h (uintr__enter,
 * uintr__leave); reference sections 5.1-5.5 and 6.1-6.3.  It follows the
 * code as of commit 3e44b34 (issue 17: the notification signal without
 * SA_NODEFER, the delivery loop's masked recognition); -DOLD gives the
 * uintr_wait / handler / post code of commit da70323 (before e65d27f).
 *
 * What is modelled
 *   - the UPID: the status word (ON, SN, NV in {RUNNING 0xEC, BLOCKED
 *     0xEB}) and PIR (NVEC vectors), written by every sender;
 *   - the receiver thread's state: UIRR (r->info->uirr), UIF
 *     (uintr__self.uif), uintr__self.blocking, uintr__self.receiver
 *     (registered or not), r->info->delivered; and, touched by its own code
 *     only, r->polling, r->wait_spin_ns (zero or not), r->wait_mark;
 *   - NS sender threads, each making POSTS (2) uintr_senduipi() calls, i.e.
 *     uintr__post(), to fixed vectors (the same and different ones);
 *   - the notification channels: the notification signal (real-time
 *     signals queue: a count of pending signals of the receiver thread; the
 *     library's handler runs on top of whatever the thread's own code does,
 *     at any step boundary, whenever a signal is pending and not blocked;
 *     without SA_NODEFER the kernel blocks the signal while the handler
 *     runs, so it never runs on top of itself: uintr__signal_handler sets
 *     uintr__self.notification_masked for its run, and uintr__deliver,
 *     when it runs there, recognizes after each user handler the posts of a
 *     notification whose signal waits for our sigreturn (ON set))
 *     and the futex on the status word (FUTEX_WAIT compares and queues
 *     atomically, FUTEX_WAKE wakes the sleeper; a signal dequeues the
 *     sleeper, runs the handler, and the FUTEX_WAIT is re-issued with the
 *     same value, as SA_RESTART does for FUTEX_WAIT without timeout);
 *   - the receiver's own code: any sequence of uintr_stui, uintr_clui,
 *     uintr_poll, uintr_set_polling(1/0), uintr_set_wait_spin (0 or not),
 *     uintr_wait, then either uintr_unregister_handler (and possibly thread
 *     exit) or, once every sender is done, the quiescent point (leave
 *     polling mode, uintr_stui, and either uintr_poll or nothing more).
 *
 * Granularity: each C11 atomic operation of the C code is one Promela step,
 * a CAS loop is a loop of CAS steps, each plain load or store of the
 * receiver's private state (uintr__self.*, r->*) is a step of its own.  A
 * step may also do the purely local computation that follows its load (a
 * test of the loaded value, __builtin_clzll), and ghost bookkeeping.
 * Memory model: sequential consistency (see README.md).  Each step that
 * stands for a C statement names the function in a comment.
 *
 * Build options (spin -DNAME=...):
 *   NS=1|2|3       senders (default 2)
 *   POSTS=1|2      uintr_senduipi calls per sender (default 2)
 *   NVEC=2|3       vectors (default 2)
 *   MAXNEST=1|2    frames of the library's signal handler that may be stacked
 *                  on the thread (default 1).  The library as written: 1 --
 *                  the handler runs on top of the thread's own code (its
 *                  library calls included) but never on top of itself (no
 *                  SA_NODEFER); the one way to a second frame, the user's
 *                  handler running uintr_stui in a delivery made from the
 *                  signal handler, is not modelled.  2 needs NODEFER
 *   NODEFER        the handler of the code before 3e44b34: SA_NODEFER (it
 *                  nests on itself, MAXNEST levels), no notification_masked,
 *                  no masked recognition in uintr__deliver (implied by OLD)
 *   ACTS=mask      receiver calls: 1 stui/clui, 2 poll, 4 set_polling,
 *                  8 wait, 16 unregister/exit (default 31: all), 32 the
 *                  event-loop calls (LOOP), 64 uintr_set_safepoints and
 *                  safepoints (SAFEPOINT)
 *   WAIT_SPIN=0|1|2  r->wait_spin_ns zero, non-zero, or changed at will (2)
 *   SPIN_ITERS=n   polls of uintr__spin_for_post before its deadline (1)
 *   OLD            the code of da70323: no `blocking`, no wait_mark event
 *                  count, no retry of a full signal queue, counters by
 *                  load + store, post's fast path on the PIR bit alone
 *   OLD_FASTPATH   only the last of these (ffb705b): post skips when the
 *                  PIR bit is set, whatever ON and SN are
 *   NO_RETIRE      (with HANDLER_UNREG) unregister frees the receiver even
 *                  under a library call that holds it (ffb705b outside
 *                  uintr__deliver)
 *   NO_STRICT      drop the "uintr_wait returns after a post made while it
 *                  waits" check (keeps: never asleep with PIR or UIRR set)
 *   NO_DCOUNT      count no deliveries (check only "each vector delivered")
 *   STRICT_SINCE   the literal "each delivery needs a post since the
 *                  previous delivery of that vector" (not a UINTR property)
 *   PROMPT_SIGNALS a queued signal is delivered before the receiver's own
 *                  code makes another step (fastest possible delivery)
 *   HANDLER_UNREG  the user's handler may call uintr_unregister_handler(0)
 *                  (the library supports it: uintr__enter/uintr__leave
 *                  count the frames using r, unregister retires r while
 *                  any is, the outermost leave frees it); checks that no
 *                  frame goes on using the freed r, and that a receiver
 *                  unregistered under uintr_wait is never notified again
 *   COUNTERS       model uintr__count_notification(&r->info->notifications)
 *   SIGQ_FULL      the signal queue may stay full for one notification
 *                  (uintr__notify_running gives up: ON is not set)
 *   KILL           one sender may be killed (SIGKILL) between any two of
 *                  its steps; uintr_wait's futex sleep then also rechecks
 *                  (UINTR__WAIT_RECHECK_NS)
 *   OLD_NOTIFY     ffb705b's notification order: CAS ON, then signal (and
 *                  give ON back when the signal queue stays full)
 *   LOOP           the event-loop state (src/loop.c, issue 15): the
 *                  receiver may enter it (NV := 0xEA), drain
 *                  (uintr_loop_drain) and sleep in epoll_wait on its eventfd
 *                  (ACTS bit 32); a post that finds NV = 0xEA writes the
 *                  eventfd, then sets ON by the EPOCH-checked CAS.  Checks:
 *                  never asleep in epoll_wait with a post in PIR, no ON left
 *                  set at the end, at the quiescent point the eventfd is not
 *                  readable after the last drain and everything was delivered
 *   OLD_LOOP       (with LOOP) a drain that does not bump EPOCH: a slow
 *                  sender's CAS sets ON after the drain consumed its write
 *   OLD_LOOP_RESET_LATE (with LOOP) a drain that reads the eventfd after
 *                  SN := 0 (issue 15's handler-first order done wrong): it
 *                  consumes the write of a post made after SN := 0
 *   OLD_LOOP_ARM   (with LOOP) a drain that clears SN without looking at PIR
 *                  again: a post made while it delivered is left behind
 *   SAFEPOINT      the instrumented state (src/safepoint.c, issue 14): the
 *                  receiver may enter and leave it (uintr_set_safepoints,
 *                  ACTS bit 64: SN kept set, r->sp_fallback) and take its
 *                  posts at a safepoint (uintr_safepoint = uintr_poll's
 *                  body); the Watchdog process scans PIR, r->recognized and
 *                  the status word and sends the notification signal for a
 *                  post still unrecognized at its next scan.  Checks: no
 *                  duplicate delivery (DCOUNT), and at the quiescent point a
 *                  receiver still instrumented that runs code without a
 *                  safepoint gets everything through the signal (else it
 *                  blocks there: an invalid end state)
 *   OLD_SP_LEAVE   (with SAFEPOINT) leaving the state without the poll that
 *                  uintr_set_safepoints(0, 0) makes: a post left in PIR
 *                  with SN clear
 */

#ifndef NS
#define NS 2
#endif
#ifndef NVEC
#define NVEC 2
#endif
#ifndef MAXNEST
#define MAXNEST 1
#endif
#if defined(OLD) && !defined(NODEFER)
#define NODEFER   /* da70323 installed the signal with SA_NODEFER */
#endif
#if MAXNEST >= 2 && !defined(NODEFER)
#error "MAXNEST >= 2 needs -DNODEFER: the library's handler no longer nests on itself (3e44b34)"
#endif
#ifndef ACTS
#define ACTS 31
#endif
#ifndef WAIT_SPIN
#define WAIT_SPIN 2
#endif
#ifndef SPIN_ITERS
#define SPIN_ITERS 1
#endif
#ifndef POSTS
#define POSTS 2
#endif

/* The vectors each sender posts (A, then B if POSTS == 2). */
#if NVEC == 2
#define S0A 1
#define S0B 0
#define S1A 1
#define S1B 1
#define S2A 0
#define S2B 1
#else
#define S0A 2
#define S0B 0
#define S1A 1
#define S1B 2
#define S2A 1
#define S2B 1
#endif

/* UPID status bits (uintr-int.h).  NVB stands for the NV field: set means
 * NV == UINTR__NV_BLOCKED (0xEB), clear means NV == UINTR__NV_RUNNING (0xEC). */
#define ON  1
#define SN  2
#define NVB 4
#define DEAD 8   /* UINTR__UPID_DEAD: set with SN by unregister, never cleared */
#define NVL 16   /* NV == UINTR__NV_LOOP (0xEA): the event-loop state (LOOP only) */

/* ---- the UPID page (shared with every sender) and the info page ---- */
byte status = 0;      /* uintr__receiver_new: atomic_store(&upid->status, NV(RUNNING)) */
byte pir = 0;         /* uintr__receiver_new: atomic_store(&upid->pir, 0) */
bit  ractive = 1;     /* info->active */
byte uirr = 0;        /* r->info->uirr (r->uirr in OLD): written by the receiver thread only */
byte ndel = 0;        /* r->info->delivered (used by uintr_wait's event count) */

/* ---- the receiver thread's private state, shared by its own code and
 * its signal handler (r->polling, r->wait_spin_ns, r->wait_mark are
 * touched by its own code only: locals of Receiver) ---- */
bit  uif = 0;         /* uintr__self.uif: 0 after registration (2.1) */
bit  blocking = 0;    /* uintr__self.blocking: in uintr__block_until_notified */
bit  reg = 1;         /* uintr__self.receiver != NULL: registered before the senders start */

/* ---- the thread as the kernel sees it ---- */
byte ctx = 0;         /* who runs: 0 the thread's own code, k the k-th nested signal handler
                       * (without NODEFER at most 1: the kernel blocks the signal while
                       * its handler runs, so ctx > 0 also means "signal blocked") */
#ifndef NODEFER
bit  nmask = 0;       /* uintr__self.notification_masked: 1 while the thread is inside
                       * uintr__signal_handler (the signal blocked by the kernel) */
#endif
byte sigpend = 0;     /* queued notification signals */
bit  sigblocked = 0;  /* our signal blocked (uintr__block_signal) */
bit  gone = 0;        /* the thread has exited */
bit  fsleep = 0;      /* queued on the futex of upid->status */
bit  fintr = 0;       /* the futex sleep was ended by a signal */
#ifdef LOOP
bit  efdr = 0;        /* the receiver's eventfd is readable (counter > 0) */
bit  esleep = 0;      /* asleep in epoll_wait on it */
bit  eintr = 0;       /* that sleep was ended by a signal (EINTR) */
#define EINTR_ON_SIGNAL if :: esleep -> eintr = 1 :: else -> skip fi
#else
#define EINTR_ON_SIGNAL skip
#endif

/* ---- ghost state ---- */
byte done = 0;            /* senders that have finished */
byte nposted[NVEC];       /* posts made (PIR bit set by it, or already set: coalesced);
                           * a function of the senders' positions: it costs no state */
bit  unreg = 0;           /* the receiver has set SN for unregister / exit */
#ifndef NO_DCOUNT
byte ndeliv[NVEC];        /* deliveries (calls of the user's handler) */
#define DCOUNT(v) ndeliv[v]++; assert(ndeliv[v] <= nposted[v])
#define DSEEN(v)  (nposted[v] == 0 || ndeliv[v] > 0)
#else
bit  dseen[NVEC];         /* delivered at least once */
#define DCOUNT(v) dseen[v] = 1
#define DSEEN(v)  (nposted[v] == 0 || dseen[v])
#endif
#if NVEC == 3
#define ALL_SEEN (DSEEN(0) && DSEEN(1) && DSEEN(2))
#else
#define ALL_SEEN (DSEEN(0) && DSEEN(1))
#endif
#ifndef NO_STRICT
bit  w_armed = 0;         /* uintr_wait has begun to wait (SN set to spin, or NV = BLOCKED) */
bit  w_owed = 0;          /* a post was made since: uintr_wait must return */
#define ARMED(a)  w_armed = w_armed | (a)
#define OWED      w_owed = w_owed | w_armed
#define WDONE     w_armed = 0; w_owed = 0
#else
#define ARMED(a)  skip
#define OWED      skip
#define WDONE     skip
#endif
#ifdef STRICT_SINCE
byte since[NVEC];         /* posts of the vector since its last delivery */
#define SINCE_POST(v) since[v]++
#define SINCE_DELIV(v) assert(since[v] > 0); since[v] = 0
#else
#define SINCE_POST(v) skip
#define SINCE_DELIV(v) skip
#endif
#ifdef HANDLER_UNREG
byte busy = 0;            /* uintr__self.busy: frames between uintr__enter and uintr__leave */
bit  retired = 0;         /* r is on uintr__self.retired */
bit  freed = 0;           /* uintr__receiver_free(r) has run */
bit  hu_done = 0;         /* the user's handler has unregistered (once) */
byte holds[MAXNEST + 1];  /* frame k: functions with uses of their cached r ahead */
#define HOLD(L)   holds[L]++
#define UNHOLD(L) holds[L]--
#define NOT_FREED assert(!freed)
/* uintr__receiver_free(r): no frame of the thread has a use of r ahead */
#define FREE      assert(holds[0] == 0 && holds[1] == 0 && holds[MAXNEST] == 0); freed = 1
/* uintr__enter(): busy = busy + 1 (a load and a store, but every nested
 * handler leaves busy as it found it: one step) */
#define ENTER     busy++
/* the frame's last use of r was the step before: a step of its own only
 * where anything checks it */
#define RELEASE_R(L) atomic { NOT_FREED; UNHOLD(L) }
/* uintr__leave(): busy = depth; if (depth == 0 && retired) reclaim */
#define LEAVE     busy--; \
	atomic { if :: busy == 0 && retired -> retired = 0; FREE :: else -> skip fi }
#else
#define HOLD(L)   skip
#define UNHOLD(L) skip
#define NOT_FREED skip
/* without HANDLER_UNREG nothing reads busy: no step at all */
#define ENTER     skip
#define LEAVE
#define RELEASE_R(L)
#endif
#ifdef COUNTERS
byte nnotif = 0;          /* r->info->notifications (OLD: a relaxed load + store) */
byte nnotif_true = 0;     /* ghost: notifications processed */
#endif
#if defined(SIGQ_FULL) || defined(KILL)
byte nfail = 0;           /* a notification failed: 1 while its sender retries
                           * (signal queue full), 2 once it has given up, or its
                           * sender was killed (KILL) */
bit  f_owed = 0;          /* a post was made since: it must not be left
                           * unnotified.  (Posts made before, coalesced into the
                           * failed notification, are recognized with the next
                           * notification or at the receiver's next poll/wait:
                           * documented.) */
#define GB_POST f_owed = f_owed | (nfail == 2)
#define PIR_MUST_DRAIN f_owed
#else
#define GB_POST skip
#define PIR_MUST_DRAIN 1
#endif
#ifdef KILL
bit  killed = 0;          /* a sender has been killed (at most one) */
bit  killreq[NS];         /* SIGKILL sent to sender i (Killer) */
#define RECHECK killed    /* the futex sleep's periodic recheck (wait.c), needed
                           * only after a death; without one it is left out, so
                           * that the protocol is checked without it */
#else
#define RECHECK 0
#endif
bit  stale[NS];           /* ghost of the EPOCH field: stale[i] is set when the
                           * notification handler has run (bumped EPOCH) since
                           * sender i loaded the status word (an unbounded
                           * epoch: the 13-bit field's wrap is not modelled) */
#ifdef SAFEPOINT
bit  spfb = 0;            /* r->sp_fallback: instrumented and not polling */
bit  wrec = 0;            /* ghost of r->recognized: a recognition took a nonzero
                           * PIR since the watchdog's last load of the count */
#define WD_REC wrec = 1;
#define SPST spst         /* r->safepoints (a local of Receiver) */
#else
#define WD_REC
#define SPST 0
#endif
#if NS == 3
#define BUMP_EPOCH stale[0] = 1; stale[1] = 1; stale[2] = 1
#elif NS == 2
#define BUMP_EPOCH stale[0] = 1; stale[1] = 1
#else
#define BUMP_EPOCH stale[0] = 1
#endif

/* A post is made (PIR bit set, by this post or an earlier one). */
#define POSTED(v) nposted[v]++; OWED; SINCE_POST(v); GB_POST
/* The same, for the fast path: its post point was the PIR load that found
 * the bit set (OWED there), the status load only decides not to notify. */
#define POSTED_FAST(v) nposted[v]++; SINCE_POST(v); GB_POST
/* The notify decision of uintr__post: only while SN = 0, before unregister. */
#define NOTIFY_OK assert(!unreg && ractive && (s & SN) == 0)

/* Checked at the first step of each library call of the receiver (and so
 * between any two of them): a recognized interrupt is never left pending
 * while UIF = 1; and if every sender had finished before the previous
 * uintr_poll / uintr_wait began, and that call processed, it left nothing
 * in PIR, nor in UIRR if UIF = 1 (quiescence). */
#define CHK assert(reg == 0 || !(uif && uirr != 0)); \
	assert(!qd || (pir == 0 && (uif == 0 || uirr == 0))); qd = 0; posted = 0

/* Locals of a frame of the receiver thread (its own code or a handler). */
#define FRAME_LOCALS byte pend, u, vec, cnt; bit msk

/* ================================================================== */
/* Senders: uintr_senduipi(index) on a valid entry = uintr__post(t, v)  */
/* ================================================================== */

inline post_rest(v)
{
	/* uintr__post: atomic_fetch_or(&upid->pir, bit) */
	atomic { pir = pir | (1 << v); POSTED(v) }
	/* uintr__post: status = atomic_load(&upid->status);
	 *              for (;;) { if (status & (ON | SN)) return; */
	if
	:: atomic { (status & (ON | SN)) != 0 -> skip }
	:: atomic { (status & (ON | SN)) == 0 -> s = status; stale[me] = 0; NOTIFY_OK }
#if defined(OLD) || defined(OLD_NOTIFY)
		/* (ffb705b and before: CAS ON, then notify, whatever NV) */
		do
		:: atomic { status == s && (s & NVB) != 0 -> status = s | ON; NOTIFY_OK }
			/* uintr__post: (status & NV_MASK) == NV(BLOCKED): uintr__futex_wake(&upid->status) */
			atomic { if :: fsleep -> fsleep = 0 :: else -> skip fi; s = 0 }
			break
		:: atomic { status == s && (s & NVB) == 0 -> status = s | ON; NOTIFY_OK }
			/* uintr__post: else uintr__notify_running(t) */
#ifdef SIGQ_FULL
			if
			:: atomic { if :: !gone -> sigpend++ :: else -> skip fi; s = 0 }
			:: atomic { !gone && nfail == 0 -> nfail = 1 }
				/* uintr__notify_running: EAGAIN 64 times (queue full):
				 *   atomic_fetch_and(&t->upid->status, ~UINTR__UPID_ON) */
				atomic { status = status & ~ON; s = 0; nfail = 2 }
			fi;
#else
			atomic { if :: !gone -> sigpend++ :: else -> skip fi; s = 0 }
#endif
			break
		:: atomic { status != s && (status & (ON | SN)) != 0 -> s = 0 }   /* failed; ON|SN: return */
			break
		:: atomic { status != s && (status & (ON | SN)) == 0 -> s = status }   /* failed: retry */
		od
#else
		do
		:: (s & NVB) != 0 ->
			/* uintr__post:   NV = BLOCKED:
			 *   if (atomic_compare_exchange_weak(&upid->status, &status, status | ON)) { */
			if
			:: atomic { status == s -> status = s | ON; NOTIFY_OK }
				/* uintr__post:     uintr__futex_wake(&upid->status); return; } */
				atomic { if :: fsleep -> fsleep = 0 :: else -> skip fi; s = 0 }
				break
			:: atomic { status != s && (status & (ON | SN)) != 0 -> s = 0 }   /* failed; ON|SN: return */
				break
			:: atomic { status != s && (status & (ON | SN)) == 0 -> s = status; stale[me] = 0 }   /* retry */
			fi
#ifdef LOOP
		:: (s & NVB) == 0 && (s & NVL) != 0 ->
			/* uintr__post:   NV = LOOP: uintr__notify_loop(t): write(t->loop_efd, 1) */
			efdr = 1;
			/* uintr__post:   then atomic_compare_exchange_strong(&upid->status, &status, status | ON);
			 * (EPOCH: the CAS fails if a drain or the handler ran since the load) */
			if
			:: atomic { status == s && !stale[me] -> status = s | ON; s = 0 }
			:: atomic { !(status == s && !stale[me]) -> s = 0 }
			fi;
			break
		:: (s & NVB) == 0 && (s & NVL) == 0 ->
#else
		:: (s & NVB) == 0 ->
#endif
			/* uintr__post:   NV = RUNNING: break out of the loop;
			 *   if (uintr__notify_running(t)) -- the signal first (a gone
			 *   thread counts as sent), */
#ifdef SIGQ_FULL
			if
			:: atomic { if :: !gone -> sigpend++ :: else -> skip fi }
#else
			atomic { if :: !gone -> sigpend++ :: else -> skip fi };
#endif
			/* uintr__post:   then atomic_compare_exchange_strong(&upid->status, &status, status | ON);
			 * (the word includes EPOCH: the CAS fails if the handler ran since the load) */
			if
			:: atomic { status == s && !stale[me] -> status = s | ON; s = 0 }
			:: atomic { !(status == s && !stale[me]) -> s = 0 }
			fi
#ifdef SIGQ_FULL
			:: atomic { !gone && nfail == 0 -> nfail = 2; s = 0 }   /* EAGAIN 64 times: no ON */
			fi
#endif
			break
		od
#endif
	fi
}

inline post(v)
{
	/* uintr__post: if (atomic_load_explicit(&upid->pir, memory_order_relaxed) & bit) { */
	if
	:: (pir & (1 << v)) != 0 ->
		/* uintr__post:   atomic_thread_fence(memory_order_seq_cst);  -- nothing under SC
		 * uintr__post:   if ((atomic_load(&upid->pir) & bit) && */
		if
#if defined(OLD) || defined(OLD_FASTPATH)
		:: atomic { (pir & (1 << v)) != 0 -> POSTED(v) }   /* return: coalesced */
#else
		:: atomic { (pir & (1 << v)) != 0 -> OWED } ->
			/* uintr__post:   (atomic_load(&upid->status) & (ON | SN))) return; }  -- coalesced */
			if
			:: atomic { (status & (ON | SN)) != 0 -> POSTED_FAST(v) }
			:: (status & (ON | SN)) == 0 -> post_rest(v)
			fi
#endif
		:: (pir & (1 << v)) == 0 -> post_rest(v)
		fi
	:: (pir & (1 << v)) == 0 -> post_rest(v)
	fi
}

proctype Sender(byte me; byte va; byte vb)
{
	byte s;

#ifdef KILL
	/* the sender may be killed (SIGKILL) between any two of its steps */
	{
		post(va);
#if POSTS >= 2
		post(vb);
#endif
	} unless atomic { killreq[me] -> nfail = 2; s = 0 };
#else
	post(va);
#if POSTS >= 2
	post(vb);
#endif
#endif
	done++
}

#ifdef KILL
/* SIGKILL to one sender, at any moment (or never): it dies before its
 * next step (an atomic step of the model is one indivisible operation) */
active proctype Killer()
{
	if
	:: atomic { killed = 1; killreq[0] = 1 }
#if NS >= 2
	:: atomic { killed = 1; killreq[1] = 1 }
#endif
#if NS >= 3
	:: atomic { killed = 1; killreq[2] = 1 }
#endif
	:: skip
	fi
}
#endif

/* ================================================================== */
/* The receiver thread: code run by its own code and by the handler    */
/* ================================================================== */

/* uintr__process_notification(r) (the receiver's own code).  LAST: the
 * caller uses r no more after it. */
inline process_notification(LV, LAST)
{
	/* uintr__process_notification: if (atomic_load(&r->upid->status) & UINTR__UPID_ON) */
	if
	:: (status & ON) != 0 ->
		/* uintr__process_notification: atomic_fetch_and(&r->upid->status, ~UINTR__UPID_ON) */
		status = status & ~ON
	:: (status & ON) == 0
	fi;
	recognize(LV, LAST)
}

/* uintr__recognize(r) */
inline recognize(LV, LAST)
{
	/* uintr__recognize: pending = atomic_exchange(&r->upid->pir, 0)
	 *   & atomic_load(&r->vector_mask) -- every vector has a live fd in this
	 *   model (no fd release): the mask is all ones, its load is folded in. */
	if
	:: atomic { pir == 0 -> if :: LAST -> UNHOLD(LV) :: else -> skip fi }
	:: atomic { pir != 0 -> pend = pir; pir = 0 }
		/* uintr__recognize: if (taken) uintr__count_delivery(&r->recognized) (SAFEPOINT:
		 *   the ghost wrec, folded into the next step: only the watchdog reads it)
		 * uintr__process_notification: if (pending) atomic_fetch_or(&r->info->uirr, pending) */
		atomic { WD_REC uirr = uirr | pend; pend = 0; if :: LAST -> UNHOLD(LV) :: else -> skip fi }
	fi
}

/* uintr__deliver(frame), called by uintr__deliver_here or the handler. */
inline deliver(LV)
{
	/* uintr__deliver: r = uintr__enter();  (busy++ and the load of
	 * uintr__self.receiver: both thread-private, one step) */
	if
	:: atomic { reg == 0 -> ENTER }
	:: atomic { reg != 0 -> ENTER; NOT_FREED; HOLD(LV) } ->
		do
		:: /* uintr__deliver: while (r && atomic_exchange(&uintr__self.uif, 0)) { */
			if
			:: atomic { uif == 0 -> skip } ; break
			:: atomic { uif != 0 -> uif = 0 } ->
				/* uintr__deliver: if (uintr__self.receiver != r) { uif = 1; break; }
				 * (one registration in the model: receiver == r  <=>  reg) */
				if
				:: atomic { reg == 0 -> uif = 1 } ; break
				:: reg != 0
				fi;
				/* uintr__deliver: uirr = atomic_load(&r->info->uirr); */
				if
				:: uirr == 0 ->
					/* uintr__deliver: if (!uirr) { atomic_store(&uintr__self.uif, 1); */
					uif = 1;
					/* uintr__deliver: if (!atomic_load(&r->info->uirr)) break; continue; } */
					if
					:: uirr == 0 -> break
					:: uirr != 0
					fi
				:: atomic { uirr != 0 -> u = uirr;
					/* uintr__deliver: vector = 63u - __builtin_clzll(uirr); */
					if
					:: (u & 4) != 0 -> vec = 2
					:: (u & 4) == 0 && (u & 2) != 0 -> vec = 1
					:: (u & 6) == 0 -> vec = 0
					fi;
					/* highest vector first: vec is in the loaded UIRR, nothing above it */
					assert((u & (1 << vec)) != 0 && (u >> (vec + 1)) == 0); u = 0 }
					/* uintr__deliver: atomic_fetch_and(&r->info->uirr, ~bit);
					 * The ghost delivery rides on it: the user's handler runs
					 * from here to the UIRET store below. */
					atomic {
						NOT_FREED;
						/* the bit is still pending: no recognized bit is delivered twice */
						assert((uirr & (1 << vec)) != 0);
						uirr = uirr & ~(1 << vec);
						assert(!unreg);       /* no delivery after unregister */
						DCOUNT(vec);          /* deliveries of a vector <= its posts */
						SINCE_DELIV(vec)
					}
#ifndef OLD
					/* uintr__deliver: uintr__count_delivery(&r->info->delivered):
					 * a relaxed load, then a relaxed store of the value + 1 */
					cnt = ndel;
#ifndef NODEFER
					/* uintr__deliver: masked = atomic_load_explicit(&uintr__self.notification_masked,
					 *   relaxed) -- thread-private, and no frame of the thread that could
					 *   change it runs between (a handler that interrupts the thread's own
					 *   code restores it): folded into the store of the count */
					atomic { ndel = cnt + 1; cnt = 0; msk = nmask; assert(msk == (LV > 0)) }
#else
					atomic { ndel = cnt + 1; cnt = 0 }
#endif
#endif
					/* uintr__deliver: r->handler(frame, vector); */
#ifdef HANDLER_UNREG
					if
					:: skip
					:: atomic { reg != 0 && !hu_done -> hu_done = 1 } ;
						/* the user's handler: uintr_unregister_handler(0) */
						unregister_handler()
					fi;
#endif
#ifndef NODEFER
					/* uintr__deliver: if (masked && !atomic_load_explicit(&uintr__self.notification_masked,
					 *   relaxed)) { uintr__set_signal_blocked(1); notification_masked = 1; }
					 *   -- only after the user's handler ran uintr_stui inside the signal
					 *   handler, which the model leaves out: never taken (its load folded) */
					/* uintr__deliver: if (masked && (atomic_load_explicit(&r->upid->status,
					 *   relaxed) & UINTR__UPID_ON)) uintr__recognize(r);
					 *   -- a notification whose signal waits for our own sigreturn: its posts
					 *   are recognized now (ON stays set: that signal's handler clears it) */
					if
					:: atomic { msk == 0 -> uif = 1; vec = 0 }
						/* (!masked: no load) uintr__deliver: atomic_store(&uintr__self.uif, 1);  -- UIRET */
					:: atomic { msk != 0 && (status & ON) != 0 -> NOT_FREED } ->
						/* uintr__deliver: uintr__recognize(r); */
						recognize(LV, 0);
						/* uintr__deliver: atomic_store(&uintr__self.uif, 1);  -- UIRET */
						atomic { uif = 1; vec = 0; msk = 0 }
					:: atomic { msk != 0 && (status & ON) == 0 -> skip } ->
						/* uintr__deliver: atomic_store(&uintr__self.uif, 1);  -- UIRET */
						atomic { uif = 1; vec = 0; msk = 0 }
					fi
#else
					/* uintr__deliver: atomic_store(&uintr__self.uif, 1);  -- UIRET */
					atomic { uif = 1; vec = 0 }
#endif
				fi
			fi
		od;
		UNHOLD(LV)
	fi;
	/* uintr__deliver: uintr__leave(); */
	LEAVE
}

/* uintr_unregister_handler(0) / uintr__receiver_exit: block, detach, restore. */
inline unregister_handler()
{
	/* uintr_unregister_handler: uintr__block_signal(&old) */
	sigblocked = 1;
	/* uintr__receiver_detach: atomic_fetch_or(&r->upid->status, UINTR__UPID_SN | UINTR__UPID_DEAD) */
	atomic { status = status | SN | DEAD; unreg = 1 }
#ifdef SAFEPOINT
	/* uintr__receiver_detach: uintr__safepoints_gone(r) (under uintr__lock):
	 *   atomic_store(&r->sp_fallback, 0) */
	spfb = 0;
#endif
	/* uintr__receiver_detach: atomic_store(&r->info->active, 0) */
	ractive = 0;
	/* uintr__receiver_detach: atomic_store(&r->info->uirr, 0)  -- recognized interrupts discarded */
	uirr = 0;
	/* (vector ends, receiver list, statistics: not modelled)
	 * uintr__receiver_detach: uintr__self.receiver = NULL */
	reg = 0;
#ifdef HANDLER_UNREG
	/* uintr__receiver_detach: if (uintr__self.busy) retire r (onto
	 *   uintr__self.retired); else uintr__receiver_free(r); */
	if
#ifndef NO_RETIRE
	:: atomic { busy > 0 -> retired = 1 }
	:: atomic { busy == 0 -> FREE }
#else
	:: atomic { FREE }   /* the code before e638679 (outside uintr__deliver) */
#endif
	fi;
#endif
	/* uintr_unregister_handler: uintr__restore_signal(&old) */
	sigblocked = 0
}

/* ================================================================== */
/* The library's signal handler, one proctype per nesting level        */
/* ================================================================== */

inline signal_handler(LV)
{
	skip;   /* (spin 6.5.2 misplaces an end label that opens an inline) */
end_idle:
	do
#ifndef NODEFER
	:: /* the kernel delivers a queued notification signal to the thread, on
	    * top of its own code (at any step boundary of it), and blocks the
	    * signal until the handler's sigreturn (no SA_NODEFER): never on top
	    * of this handler (ctx == 0) */
		d_step { ctx + 1 == LV && sigpend > 0 && !sigblocked && !gone ->
			sigpend--; ctx = LV; ENTER; nmask = 1;
			if :: fsleep -> fsleep = 0; fintr = 1 :: else -> skip fi; EINTR_ON_SIGNAL }
		/* uintr__signal_handler: was_masked = atomic_load_explicit(&notification_masked)
		 *   (0: the thread's own code), uintr__enter();
		 *   atomic_store_explicit(&uintr__self.notification_masked, 1, relaxed);
		 *   -- thread-private, and nothing else of the thread can run before
		 *   (the signal is blocked): in the step above */
#else
	:: /* the kernel delivers a queued notification signal to the thread, on
	    * top of whatever it runs (SA_NODEFER: on top of this handler too) */
		d_step { ctx + 1 == LV && sigpend > 0 && !sigblocked && !gone ->
			sigpend--; ctx = LV; ENTER;
			if :: fsleep -> fsleep = 0; fintr = 1 :: else -> skip fi; EINTR_ON_SIGNAL }
		/* uintr__signal_handler: uintr__enter(); (in the step above) */
#endif
		/* uintr__signal_handler: SI_QUEUE and our token tag: uintr__notification(si, uc)
		 * uintr__notification: r = uintr__self.receiver; if (!r) { spurious; return; } */
		if
		:: reg == 0
		:: atomic { reg != 0 -> HOLD(LV) } ->
			/* uintr__notification: if (r->token != token) -- one registration: never */
#ifdef COUNTERS
#ifdef OLD
			/* uintr__notification: uintr__count(&r->info->notifications):
			 * a relaxed load, then a relaxed store of the value + 1 */
			atomic { cnt = nnotif; nnotif_true++ }
			atomic { nnotif = cnt + 1; cnt = 0 }
#else
			/* uintr__notification: uintr__count_notification(&r->info->notifications):
			 * atomic_fetch_add_explicit(c, 1, relaxed) */
			atomic { nnotif++; nnotif_true++ }
#endif
#endif
#ifndef OLD
			/* uintr__notification: if (atomic_load(&uintr__self.blocking)) { */
			if
			:: atomic { blocking -> skip } ->
#ifndef OLD_NOTIFY
				/* uintr__notification: uintr__notification_consumed(r, 0); return; }
				 *   (a CAS loop bumping EPOCH: its successful attempt) */
				atomic { BUMP_EPOCH; UNHOLD(LV) }
#else
				atomic { UNHOLD(LV) }
#endif
			:: atomic { !blocking -> skip } ->
#endif
#if defined(OLD) || defined(OLD_NOTIFY)
			/* uintr__notification: uintr__process_notification(r) */
			process_notification(LV, 0);
#else
			/* uintr__notification: uintr__notification_consumed(r, 1): ON := 0 and EPOCH++
			 *   (a CAS loop: its successful attempt) */
			atomic { status = status & ~ON; BUMP_EPOCH };
			/* uintr__notification: uintr__recognize(r) */
			recognize(LV, 0);
#endif
			/* uintr__notification: if (!atomic_load(&uintr__self.uif) || */
			if
			:: atomic { uif == 0 -> UNHOLD(LV) }
			:: uif != 0 ->
				/* uintr__notification:     !atomic_load(&r->info->uirr)) return; */
				if
				:: atomic { uirr == 0 -> UNHOLD(LV) }
				:: atomic { uirr != 0 -> UNHOLD(LV) } ->
					/* uintr__notification: (r->deliver_context: NULL, compat only)
					 * uintr__arch_frame_read(uc, &frame); uintr__deliver(&frame);
					 * uintr__arch_frame_write(uc, &frame) */
					deliver(LV)
				fi
			fi
#ifndef OLD
			fi
#endif
		fi;
		/* uintr__signal_handler: uintr__leave(); */
		LEAVE;
		/* uintr__signal_handler returns; rt_sigreturn resumes the interrupted code */
		atomic {
#ifdef HANDLER_UNREG
			/* the interrupted frame must not go on using a freed receiver */
			assert(!(freed && holds[LV - 1] > 0));
#endif
#ifndef NODEFER
			/* uintr__signal_handler: atomic_store_explicit(&notification_masked,
			 *   was_masked (0), relaxed); (frame calls: not modelled) return;
			 *   rt_sigreturn restores the interrupted mask (the signal unblocked)
			 *   -- thread-private, the signal still blocked: one step */
			nmask = 0;
#endif
			ctx = LV - 1
		}
	od
}

/* NODEFER: level k runs on top of level k - 1; without it (the library as
 * written) only level 1, on top of the thread's own code */
proctype Handler1() provided (ctx <= 1)
{
	FRAME_LOCALS;
	signal_handler(1)
}

#if MAXNEST >= 2
proctype Handler2()   /* the innermost level: nothing nests on it */
{
	FRAME_LOCALS;
	signal_handler(2)
}
#endif

/* ================================================================== */
/* The receiver thread's own code                                      */
/* ================================================================== */

/* s = uintr__set_status(upid, MASK, VAL).  ARM: ghost.  KEEP: the caller
 * uses the result (else s stays 0). */
inline set_status(MASK, VAL, ARM, KEEP)
{
	/* uintr__set_status: s = atomic_load(&upid->status) */
	ss = status;
	do
	:: /* uintr__set_status: do { if (s & UINTR__UPID_DEAD) return s; */
		atomic { (ss & DEAD) != 0 -> if :: KEEP -> s = ss :: !KEEP -> skip fi; ss = 0 }
		break
	:: /* uintr__set_status: n = (s & ~mask) | value;
	    *   } while (!atomic_compare_exchange_weak(&upid->status, &s, n)); return n; */
		atomic { (ss & DEAD) == 0 && status == ss -> status = (ss & ~(MASK)) | (VAL);
			if :: KEEP -> s = status :: !KEEP -> skip fi; ss = 0; ARMED(ARM) }
		break
	:: atomic { (ss & DEAD) == 0 && status != ss -> ss = status }
	od
}

/* uintr__futex_wait(&upid->status, s) */
inline futex_wait()
{
	do
	:: /* FUTEX_WAIT: compares the word with s and queues the thread, atomically */
		if
		:: atomic { status != s -> skip } ; break   /* -EAGAIN */
		:: atomic { status == s -> fsleep = 1 }
			/* asleep until FUTEX_WAKE, or a signal (its delivery dequeues the thread),
			 * or (only with RECHECK) the timeout of UINTR__WAIT_RECHECK_NS */
end_fw:			if
			:: (fsleep == 0) ->
				if
				:: fintr -> fintr = 0   /* -ERESTARTSYS, SA_RESTART: re-issued with the same value */
				:: !fintr -> break      /* woken: returns 0 */
				fi
			:: atomic { RECHECK && fsleep -> fsleep = 0 } ; break   /* -ETIMEDOUT */
			fi
		fi
	od
}

/* posted = uintr__spin_for_post(r) */
inline spin_for_post()
{
	/* uintr__spin_for_post: if (!r->wait_spin_ns) return 0; */
	if
	:: spinns == 0 -> posted = 0
	:: spinns != 0 ->
		/* uintr__spin_for_post: if (!r->polling)
		 *   uintr__set_status(r->upid, UINTR__UPID_SN, UINTR__UPID_SN); */
		if
#ifdef OLD
		:: polling == 0 -> atomic { status = status | SN; ARMED(1) }
#else
		:: polling == 0 && SPST == 0 -> set_status(SN, SN, 1, 0)
#endif
		:: atomic { (polling != 0 || SPST != 0) -> ARMED(1) }
		fi;
		/* uintr__spin_for_post: while (!uintr__wait_is_over(r)) { cpu_relax; deadline }
		 * uintr__wait_is_over: uintr__anything_posted(r) || uintr__delivered_since_wait(r)
		 * uintr__anything_posted: atomic_load_explicit(&r->upid->pir, relaxed) ||
		 *                         atomic_load_explicit(&r->info->uirr, relaxed)
		 * uintr__delivered_since_wait: atomic_load_explicit(&r->info->delivered,
		 *                         relaxed) != r->wait_mark          (not in OLD) */
		do
		:: atomic { pir != 0 -> k = 0 } ; break
		:: pir == 0 ->
#ifdef OLD
			if
			:: atomic { uirr != 0 -> k = 0 } ; break
			:: atomic { uirr == 0 && k < SPIN_ITERS -> k++ }   /* before the deadline */
			:: atomic { uirr == 0 -> k = 0 } ; break          /* now >= deadline */
			fi
#else
			if
			:: atomic { uirr != 0 -> k = 0 } ; break
			:: uirr == 0 ->
				if
				:: atomic { ndel != wmark -> k = 0 } ; break
				:: atomic { ndel == wmark && k < SPIN_ITERS -> k++ }   /* before the deadline */
				:: atomic { ndel == wmark -> k = 0 } ; break          /* now >= deadline */
				fi
			fi
#endif
		od;
		/* uintr__spin_for_post: if (!r->polling) uintr__set_status(r->upid, UINTR__UPID_SN, 0); */
		if
#ifdef OLD
		:: polling == 0 -> status = status & ~SN
#else
		:: polling == 0 && SPST == 0 -> set_status(SN, 0, 0, 0)
#endif
		:: polling != 0 || SPST != 0
		fi;
		/* uintr__spin_for_post: return uintr__wait_is_over(r); */
		if
		:: atomic { pir != 0 -> posted = 1 }
		:: pir == 0 ->
			if
			:: atomic { uirr != 0 -> posted = 1 }
#ifdef OLD
			:: atomic { uirr == 0 -> posted = 0 }
#else
			:: uirr == 0 ->
				if
				:: atomic { ndel != wmark -> posted = 1 }
				:: atomic { ndel == wmark -> posted = 0 }
				fi
#endif
			fi
		fi
	fi
}

/* uintr__block_until_notified(r) */
inline block_until_notified()
{
#ifndef OLD
	/* uintr__block_until_notified: atomic_store(&uintr__self.blocking, 1); */
	blocking = 1;
#endif
	/* uintr__block_until_notified: s = uintr__set_status(upid, NV_MASK | SN, NV(BLOCKED)); */
	set_status(NVB | NVL | SN, NVB, 1, 1);
	do
	:: /* uintr__block_until_notified: while (!(s & (UINTR__UPID_ON | UINTR__UPID_DEAD)) &&
	    *                                     !uintr__wait_is_over(r)) { */
		if
		:: (s & (ON | DEAD)) != 0 -> break
		:: atomic { (s & (ON | DEAD)) == 0 && pir != 0 -> skip } ; break
		:: atomic { (s & (ON | DEAD)) == 0 && pir == 0 -> skip } ->
			if
			:: atomic { uirr != 0 -> skip } ; break
#ifdef OLD
			:: atomic { uirr == 0 -> skip } ->
#else
			:: uirr == 0 ->
				if
				:: atomic { ndel != wmark -> skip } ; break
				:: atomic { ndel == wmark -> skip }
				fi;
#endif
				/* uintr__block_until_notified: uintr__futex_wait(&upid->status, s); */
				futex_wait();
				/* uintr__block_until_notified: s = atomic_load(&upid->status); } */
				s = status
			fi
		fi
	od;
	/* uintr__block_until_notified: uintr__set_status(upid, NV_MASK | SN,
	 *     uintr__nv_idle(r) | uintr__sn(r));  -- uintr__sn: r->polling ? SN : 0,
	 *     uintr__nv_idle: r->loop ? NV(LOOP) : NV(RUNNING) */
	set_status(NVB | NVL | SN, ((polling || SPST) -> SN : 0) | (loopst -> NVL : 0), 0, 0);
	s = 0;
#ifndef OLD
	/* uintr__block_until_notified: atomic_store(&uintr__self.blocking, 0); */
	blocking = 0
#else
	skip
#endif
}

/* the body of uintr_wait's loop */
inline wait_round()
{
	/* uintr_wait: if (!uintr__spin_for_post(r)) uintr__block_until_notified(r); */
	spin_for_post();
	if
	:: posted == 0 -> block_until_notified()
	:: posted != 0
	fi;
#ifndef OLD
	/* uintr_wait: if (uintr__self.receiver != r) break;  -- a handler unregistered it */
	if
	:: atomic { reg == 0 -> WDONE } ; goto wait_gone
	:: reg != 0
	fi;
#endif
	/* uintr_wait: uintr__process_notification(r); */
	process_notification(0, 0)
}

inline uintr_wait()
{
	/* uintr_wait: r = uintr__enter(); if (!r) { uintr__leave(); return EOPNOTSUPP; } */
	atomic { CHK; ENTER };
	if
	:: reg == 0
	:: atomic { reg != 0 -> qe = (done == NS); HOLD(0) } ->
		do
#ifdef OLD
		:: /* uintr_wait: for (;;) { */
			qd = qe;
			wait_round();
			/* uintr_wait: if (atomic_load(&r->uirr)) break; } */
			if
			:: atomic { uirr != 0 -> WDONE; UNHOLD(0) } ; break
			:: uirr == 0
			fi
#else
		:: /* uintr_wait: while (!uintr__delivered_since_wait(r)) { */
			atomic { ndel != wmark -> WDONE } ; break
		:: atomic { ndel == wmark -> qd = qe } ->
			wait_round();
			/* uintr_wait: if (atomic_load(&r->info->uirr)) break; } */
			if
			:: atomic { uirr != 0 -> WDONE } ; break
			:: uirr == 0
			fi
#endif
		od;
wait_gone:
		qe = 0;
		/* uintr_wait: if (atomic_load(&uintr__self.uif)) uintr__deliver_here(...); */
		if
		:: uif != 0 -> deliver(0)
		:: uif == 0
		fi;
#ifndef OLD
		/* uintr_wait: r->wait_mark = atomic_load_explicit(&r->info->delivered, relaxed); */
		atomic { NOT_FREED; wmark = ndel; UNHOLD(0) }
#endif
	fi;
	/* uintr_wait: uintr__leave(); return -1 (EINTR) */
	LEAVE
}

inline poll_rest()
{
	/* uintr_poll: uintr__process_notification(r); */
	process_notification(0, 1);
	/* uintr_poll: if (!atomic_load(&uintr__self.uif)) return 0; */
	if
	:: uif == 0
	:: uif != 0 -> /* uintr_poll: return uintr__deliver_here(...); */ deliver(0)
	fi
}

/* uintr_poll(); TOP: called from the program (not from uintr_set_polling) */
inline uintr_poll(TOP)
{
	/* uintr_poll: r = uintr__enter(); if (!r) { uintr__leave(); return EOPNOTSUPP; } */
	atomic { if :: TOP -> CHK :: !TOP -> skip fi; ENTER };
	if
	:: reg == 0
	:: atomic { reg != 0 -> qd = (done == NS); HOLD(0) } ->
		/* uintr_poll: if (uintr__anything_posted(r)) { */
		if
		:: pir != 0 -> poll_rest()
		:: pir == 0 ->
			if
			:: uirr != 0 -> poll_rest()
			:: atomic { uirr == 0 -> UNHOLD(0) }
			fi
		fi
	fi;
	/* uintr_poll: uintr__leave(); */
	LEAVE
}

inline uintr_stui(TOP)
{
	/* uintr_stui: r = uintr__enter(); */
	/* uintr_stui: if (atomic_load_explicit(&uintr__self.notification_masked, relaxed))
	 *   { notification_masked = 0; uintr__set_signal_blocked(0); }  -- in the
	 *   thread's own code it is 0 (a handler that interrupts it restores it), and
	 *   the user's handler does not call uintr_stui in the model: never taken,
	 *   its load folded into this step */
	atomic { if :: TOP -> CHK :: !TOP -> skip fi; ENTER; rr = reg; if :: rr -> HOLD(0) :: else -> skip fi }
	/* uintr_stui: atomic_store(&uintr__self.uif, 1); */
	uif = 1;
	/* uintr_stui: if (r && atomic_load(&r->info->uirr)) uintr__deliver_here(...); */
	if
	:: atomic { rr && uirr != 0 -> NOT_FREED; UNHOLD(0); rr = 0 } ; deliver(0)
	:: atomic { !(rr && uirr != 0) -> if :: rr -> NOT_FREED; UNHOLD(0) :: else -> skip fi; rr = 0 }
	fi;
	/* uintr_stui: uintr__leave(); */
	LEAVE
}

inline uintr_set_polling_on()
{
	/* uintr_set_polling: r = uintr__enter(); if (!r) { uintr__leave(); return EOPNOTSUPP; } */
	atomic { CHK; ENTER };
	if
	:: reg == 0
	:: atomic { reg != 0 -> HOLD(0) } ->
		/* uintr_set_polling: r->polling = on != 0; */
		polling = 1;
#ifdef SAFEPOINT
		/* uintr_set_polling: atomic_store(&r->sp_fallback, r->safepoints && !on) */
		spfb = 0;
#endif
		/* uintr_set_polling: if (r->polling) uintr__set_status(r->upid, SN, SN); */
		set_status(SN, SN, 0, 0);
		RELEASE_R(0)
	fi;
	/* uintr_set_polling: uintr__leave(); */
	LEAVE
}

inline uintr_set_polling_off()
{
	/* uintr_set_polling: r = uintr__enter(); if (!r) { uintr__leave(); return EOPNOTSUPP; } */
	atomic { CHK; ENTER };
	if
	:: reg == 0
	:: atomic { reg != 0 -> HOLD(0) } ->
		/* uintr_set_polling: r->polling = on != 0; */
		polling = 0;
#ifdef SAFEPOINT
		/* uintr_set_polling: atomic_store(&r->sp_fallback, r->safepoints && !on) */
		spfb = SPST;
#endif
		/* uintr_set_polling: uintr__set_status(r->upid, SN, uintr__sn(r)); */
		set_status(SN, (SPST -> SN : 0), 0, 0);
		RELEASE_R(0)
		/* uintr_set_polling: uintr_poll(); } */
		uintr_poll(0)
	fi;
	/* uintr_set_polling: uintr__leave(); */
	LEAVE
}

#ifdef SAFEPOINT
/* uintr_set_safepoints(deadline_ns > 0, 0) */
inline uintr_set_safepoints_on()
{
	/* uintr_set_safepoints: r = uintr__enter(); (r->loop: EBUSY -- not with LOOP)
	 *   uintr__lock(); r->safepoints = 1; (the watchdog exists)
	 *   atomic_store(&r->sp_fallback, !r->polling); uintr__unlock(); */
	atomic { CHK; ENTER; spst = 1; spfb = !polling };
	/* uintr_set_safepoints: uintr__set_status(r->upid, UINTR__UPID_SN, UINTR__UPID_SN);
	 *   uintr_safepoint_word = &r->upid->pir; */
	set_status(SN, SN, 0, 0);
	/* uintr_set_safepoints: uintr__leave(); */
	LEAVE
}

/* uintr_set_safepoints(0, 0) */
inline uintr_set_safepoints_off()
{
	/* uintr_set_safepoints: r = uintr__enter();
	 *   uintr__lock(); uintr__safepoints_gone(r): r->safepoints = 0,
	 *   atomic_store(&r->sp_fallback, 0); uintr__unlock(); word := &zero */
	atomic { CHK; ENTER; spst = 0; spfb = 0 };
	/* uintr_set_safepoints: uintr__set_status(r->upid, UINTR__UPID_SN, uintr__sn(r)); */
	set_status(SN, (polling -> SN : 0), 0, 0);
	/* uintr_set_safepoints: uintr__leave(); */
	LEAVE;
#ifndef OLD_SP_LEAVE
	/* uintr_set_safepoints: uintr_poll(); */
	uintr_poll(0)
#endif
}

/*
 * The watchdog (src/safepoint.c, uintr__watchdog / uintr__watch_one), one
 * receiver.  Its scans are at arbitrary times; a scan at which nothing
 * can change its state (PIR = 0, which only forgets wd_since, or its
 * signal on its way with nothing recognized since) is left out: the next
 * nonzero PIR after a recognition starts the clock again either way.
 * The deadline is one scan: the first scan that sees PIR nonzero starts
 * the clock (wd_since), the next one, with no recognition in between,
 * notifies (as for the receiver with the smallest deadline, period
 * deadline/2).  Under uintr__lock, so never during the receiver's
 * enter/leave of the state or its detach (their steps are atomic here).
 */
active proctype Watchdog()
{
	bit seen = 0, sent = 0, chg = 0;

end_wd:
	do
	:: /* uintr__watch_one: pir = atomic_load(&r->upid->pir) (nonzero) */
		atomic { pir != 0 && spfb && !(sent && !wrec) -> skip };
		/* uintr__watch_one: seq = atomic_load_explicit(&r->recognized, relaxed) */
		atomic { chg = wrec; wrec = 0 };
		/* uintr__watch_one: status = atomic_load(&r->upid->status);
		 *   if (!pir || !atomic_load(&r->sp_fallback) || DEAD || NV == BLOCKED) forget */
		if
		:: atomic { (!spfb || (status & (DEAD | NVB)) != 0) -> seen = 0; sent = 0; chg = 0 }
		:: atomic { spfb && (status & (DEAD | NVB)) == 0 -> skip } ->
			if
			:: atomic { !seen || chg -> seen = 1; sent = 0; chg = 0 }
				/* uintr__watch_one: wd_since = now; wd_seq = seq; wd_sent = 0; */
			:: atomic { seen && !chg && sent -> skip }
				/* uintr__watch_one: wd_sent: on its way, being handled, or blocked */
			:: atomic { seen && !chg && !sent ->
				/* uintr__watch_one: uintr__notify_deferred(&t) (the signal;
				 *   a gone thread counts as sent): wd_sent = 1 */
				if :: !gone -> sigpend++ :: else -> skip fi; sent = 1 }
			fi
		fi
	od
}
#endif

#ifdef LOOP
/* uintr__loop_status(r, UINTR__UPID_SN) and uintr__loop_status(r, 0):
 * SN := 1 (busy) or 0 (arm), ON := 0, EPOCH += 1, unless DEAD (a CAS loop:
 * its successful attempt).  OLD_LOOP: without the EPOCH bump. */
#ifndef OLD_LOOP
#define LOOP_BUSY atomic { if :: (status & DEAD) == 0 -> status = (status & ~ON) | SN; BUMP_EPOCH :: else -> skip fi }
#define LOOP_ARM atomic { if :: (status & DEAD) == 0 -> status = status & ~(ON | SN); BUMP_EPOCH :: else -> skip fi }
#else
#define LOOP_BUSY atomic { if :: (status & DEAD) == 0 -> status = (status & ~ON) | SN :: else -> skip fi }
#define LOOP_ARM atomic { if :: (status & DEAD) == 0 -> status = status & ~(ON | SN) :: else -> skip fi }
#endif

/* uintr_loop_fd(0): r->loop = 1; NV := LOOP (a CAS loop, unless DEAD) */
inline uintr_loop_fd()
{
	atomic { CHK; loopst = 1 };
	atomic { if :: (status & DEAD) == 0 -> status = status | NVL :: else -> skip fi }
}

/* OLD_LOOP_RESET_LATE: the eventfd read moved to after uintr__loop_status(r, 0)
 * (and, where the loop breaks before it, just before the break) */
#ifdef OLD_LOOP_RESET_LATE
#define RESET_LATE_READ efdr = 0
#else
#define RESET_LATE_READ skip
#endif

/* uintr_loop_drain(0) */
inline uintr_loop_drain(TOP)
{
	/* uintr_loop_drain: r = uintr__enter(); if (!r || !r->loop) ... */
	atomic { if :: TOP -> CHK :: !TOP -> skip fi; ENTER };
	if
	:: reg == 0
	:: atomic { reg != 0 -> HOLD(0) } ->
		/* uintr_loop_drain: uintr__loop_status(r, UINTR__UPID_SN); */
		LOOP_BUSY;
		do
		:: /* uintr_loop_drain: uintr__process_notification(r); */
			process_notification(0, 0);
			/* uintr_loop_drain: if (atomic_load(&uintr__self.uif) && atomic_load(&r->info->uirr)) deliver */
			if
			:: uif == 0
			:: uif != 0 ->
				if
				:: uirr != 0 -> deliver(0)
				:: uirr == 0
				fi
			fi;
#ifndef OLD_LOOP_RESET_LATE
			/* uintr_loop_drain: read(r->loop_efd, &count, sizeof(count)): the counter to 0 */
			efdr = 0;
#endif
			/* uintr_loop_drain: if (uintr__self.receiver != r || r->polling) break; */
			if
			:: reg == 0 -> RESET_LATE_READ; break
			:: reg != 0 && polling != 0 -> RESET_LATE_READ; break
			:: reg != 0 && polling == 0 ->
				/* uintr_loop_drain: uintr__loop_status(r, 0); */
				LOOP_ARM;
				RESET_LATE_READ;
#ifdef OLD_LOOP_ARM
				break
#else
				/* uintr_loop_drain: if (!atomic_load(&r->upid->pir)) break; */
				if
				:: pir == 0 -> break
				:: pir != 0 -> /* uintr_loop_drain: uintr__loop_status(r, UINTR__UPID_SN); */ LOOP_BUSY
				fi
#endif
			fi
		od;
		RELEASE_R(0)
	fi;
	/* uintr_loop_drain: uintr__leave(); */
	LEAVE
}

/* The program's epoll_wait(ep, ..., -1) on a set holding the loop fd: it
 * returns when the eventfd is readable, or with EINTR after a signal
 * handler ran.  A program sleeps only out of polling mode (uintr(7)). */
inline epoll_wait()
{
	atomic { CHK; esleep = 1 };
end_ep:
	atomic { efdr || eintr -> esleep = 0; eintr = 0 }
}
#endif

#ifdef PROMPT_SIGNALS
/* a queued signal is delivered before the thread's own code makes another step */
proctype Receiver() provided (ctx == 0 && (sigpend == 0 || sigblocked || gone))
#else
proctype Receiver() provided (ctx == 0)
#endif
{
	FRAME_LOCALS;
	byte s, ss, k;
	bit rr, posted, qd, qe;
	bit polling = 0;                  /* r->polling */
	bit loopst = 0;                   /* r->loop: in the event-loop state */
#ifdef SAFEPOINT
	bit spst = 0;                     /* r->safepoints: in the instrumented state */
#endif
	bit spinns = (WAIT_SPIN != 0);    /* r->wait_spin_ns != 0 (the default is 30 us) */
	byte wmark = 0;                   /* r->wait_mark */

end_top:
	do
#if ACTS & 1
	:: uintr_stui(1)
	:: /* uintr_clui: atomic_store(&uintr__self.uif, 0); */
		atomic { CHK; uif = 0 }
#endif
#if ACTS & 2
	:: uintr_poll(1)
#endif
#if ACTS & 4
	:: polling == 0 -> uintr_set_polling_on()
	:: polling != 0 -> uintr_set_polling_off()
#endif
#if WAIT_SPIN == 2 && (ACTS & 8)
	:: /* uintr_set_wait_spin(0) or (30000): r->wait_spin_ns = ns; */
		atomic { CHK; spinns = 1 - spinns }
#endif
#if ACTS & 8
	:: uintr_wait()
#endif
#if ACTS & 16
	:: atomic { reg != 0 -> CHK } ; goto unregistered
#endif
#if defined(LOOP) && (ACTS & 32)
	:: loopst == 0 -> uintr_loop_fd()
	:: loopst != 0 -> uintr_loop_drain(1)
	:: loopst != 0 && polling == 0 -> epoll_wait()
#endif
#if defined(SAFEPOINT) && (ACTS & 64)
	:: spst == 0 -> uintr_set_safepoints_on()
	:: spst != 0 -> uintr_set_safepoints_off()
	:: /* a safepoint: if (*uintr_safepoint_word != 0) uintr_safepoint();
	    * uintr_safepoint: uintr__poll_point(), the body of uintr_poll */
		spst != 0 && pir != 0 -> uintr_poll(1)
#endif
	:: atomic { done == NS -> CHK } ; goto quiescent
	od;

unregistered:
	/* uintr_unregister_handler(0), or thread exit (uintr__receiver_exit: the same steps) */
	unregister_handler();
	if
	:: atomic { gone = 1; sigpend = 0 }   /* the thread exits: its queued signals die with it */
	:: skip                               /* it lives on: late signals find no receiver */
	fi;
	goto stop;

quiescent:
	/* Every sender has finished (joined).  Leave polling mode, enable
	 * delivery; then either poll (everything posted must have been
	 * delivered) or just go on running with UIF = 1 (the Monitor checks
	 * that the handler delivers everything). */
	if
	:: polling != 0 -> uintr_set_polling_off()
	:: polling == 0
	fi;
	uintr_stui(0);
#ifdef SAFEPOINT
	/* Still instrumented, the receiver now runs code with no safepoint
	 * (UIF = 1): the watchdog's signal must deliver everything posted;
	 * if it never does, the receiver blocks here for good (an invalid
	 * end state). */
	if
	:: spst != 0 && reg != 0 ->
		/* (a handler that unregisters discards what was recognized) */
		atomic { reg == 0 || (pir == 0 && uirr == 0) -> assert(reg == 0 || ALL_SEEN) }
	:: else -> skip
	fi;
#endif
#ifdef LOOP
	/* The loop drains once more: then the eventfd is not readable and
	 * everything posted has been delivered. */
	if
	:: loopst != 0 -> uintr_loop_drain(0);
		atomic { assert(reg == 0 || (pir == 0 && uirr == 0 && efdr == 0 && ALL_SEEN)) }
	:: else -> skip
	fi;
#endif
	if
	:: uintr_poll(0);
		atomic { assert(reg == 0 || (pir == 0 && uirr == 0 && ALL_SEEN)) }
	:: skip
	fi;
stop:
	skip
}

/* ================================================================== */
/* End-state checks                                                    */
/* ================================================================== */

/* When nothing can move any more (every sender done, no signal deliverable,
 * the receiver finished or asleep in uintr_wait's futex): */
active proctype Monitor()
{
	timeout ->
	atomic {
		if
		:: reg && !gone ->
			/* uintr_wait never sleeps for good with something posted or recognized */
			assert(!(fsleep && (pir != 0 || uirr != 0)));
#ifndef NO_STRICT
			/* ... nor after a post made while it was waiting */
			assert(!(fsleep && w_owed));
#endif
			/* no notification outstanding that nobody will process */
			assert((status & ON) == 0);
			/* no post left in PIR while notifications are enabled */
			assert((status & SN) != 0 || pir == 0 || !PIR_MUST_DRAIN);
			/* nothing recognized left undelivered while UIF = 1 */
			assert(!uif || uirr == 0);
#ifdef LOOP
			/* the loop never sleeps for good with something posted
			 * (KILL: but for posts coalesced into the notification of a
			 * sender killed before it made it; documented) */
			assert(!(esleep && pir != 0 && PIR_MUST_DRAIN));
#endif
			skip
		:: else ->
			/* a receiver unregistered under uintr_wait does not sleep in it */
			assert(!fsleep)
		fi;
#ifdef COUNTERS
		assert(nnotif == nnotif_true);
#endif
		skip
	}
}

init
{
	atomic {
		run Receiver();
		run Handler1();
#if MAXNEST >= 2
		run Handler2();
#endif
		run Sender(0, S0A, S0B);
#if NS >= 2
		run Sender(1, S1A, S1B);
#endif
#if NS >= 3
		run Sender(2, S2A, S2B);
#endif
	}
}

/* Liveness, for the acceptance runs (./pan -a -f -N name). */
#ifndef NO_STRICT
/* a post made while uintr_wait waits makes it return */
ltl wait_returns { [] (w_owed -> <> !w_owed) }
#endif
/* uintr_wait does not stay asleep with something posted or recognized */
ltl wakes { [] ((reg && fsleep && (pir != 0 || uirr != 0)) -> <> !fsleep) }
/* a post in PIR while notifications are on is eventually drained */
ltl pir_drained { [] ((reg && pir != 0 && (status & SN) == 0) -> <> (!reg || pir == 0 || (status & SN) != 0)) }
/* a recognized interrupt is eventually delivered while UIF stays 1 */
ltl uif_delivers { [] ((reg && uif && uirr != 0) -> <> (!reg || !uif || uirr == 0)) }
