/*
 * The arch interface's local read-modify-writes (src/arch/arch.h:
 * uintr__arch_local_take/or/and, which UIF and UIRR use since issue 16)
 * are atomic with respect to a signal handler of the calling thread: an
 * update the handler makes between their read and their write is never
 * lost.  The main thread keeps updating two words while another thread
 * signals it as fast as it can; each handler run sets a bit of the UIRR-
 * like word (local_or) and the UIF-like byte (a plain store of 1, as a
 * nested delivery's UIRET does).  The main thread clears its own bit of
 * the word with local_and and takes the byte with local_take, counting
 * what it finds.  Exact: every handler run is found, once in the word and
 * once in the byte; with a load and a store in place of either operation
 * the handler's update is lost in the window between them.  At most
 * 100000 runs; on a machine too busy to run the two threads by turns (a
 * model search on both CPUs of the CI VM made 100000 take over 120 s)
 * the signaller stops after 10 s once it has made 5000 (the mutations
 * above lose about 9 updates in 10).
 */
#include "helpers.h"

#include "arch/arch.h"

#define RUNS     100000
#define MIN_RUNS 5000
#define ENOUGH_S 10.0

static _Atomic uint64_t word;
static _Atomic unsigned char byte;
static _Atomic unsigned long handled, stop, runs;
static pthread_t main_thread;

static void on_signal(int signo)
{
	(void)signo;
	/* Both flags were found and cleared since the last run: the sender
	 * waits for that before signalling again (below). */
	uintr__arch_local_or(&word, 2);
	atomic_store_explicit(&byte, 1, memory_order_relaxed);
	atomic_fetch_add(&handled, 1);
}

static void *signaller(void *arg)
{
	unsigned long sent = 0;
	double enough = t_now() + ENOUGH_S;

	(void)arg;
	while (sent < RUNS && (sent < MIN_RUNS || t_now() < enough)) {
		/* One signal outstanding at a time, so every run leaves one bit
		 * and one byte for the main thread to find. */
		WAIT_UNTIL(atomic_load(&handled) == sent &&
			   !(atomic_load(&word) & 2) && !atomic_load(&byte));
		CHECK(pthread_kill(main_thread, SIGUSR1) == 0);
		sent++;
	}
	WAIT_UNTIL(atomic_load(&handled) == sent && !(atomic_load(&word) & 2) &&
		   !atomic_load(&byte));
	atomic_store(&runs, sent);
	atomic_store(&stop, 1);
	return NULL;
}

int main(void)
{
	unsigned long found_word = 0, found_byte = 0;
	struct sigaction sa;
	pthread_t t;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
	main_thread = pthread_self();
	t = t_start(signaller, NULL);
	/* A lost update clears the flag it was meant to leave: the
	 * signaller then goes on, and only the counts tell. */
	while (!atomic_load(&stop)) {
		/* Bit 0 is ours: set and cleared around the handler's bit 1,
		 * so that each clear rewrites the word the handler writes. */
		uintr__arch_local_or(&word, 1);
		uintr__arch_local_and(&word, ~1ull);
		if (atomic_load(&word) & 2) {
			uintr__arch_local_and(&word, ~2ull);
			found_word++;
		}
		if (uintr__arch_local_take(&byte))
			found_byte++;
	}
	t_join(t);
	if (found_word != runs || found_byte != runs || atomic_load(&handled) != runs) {
		fprintf(stderr, "signals %lu, handler runs %lu; found in the word %lu, in the byte %lu\n",
			(unsigned long)runs, (unsigned long)atomic_load(&handled), found_word,
			found_byte);
		return T_FAIL;
	}
	printf("PASS: %lu handler runs, none lost by local_or/and/take\n", (unsigned long)runs);
	return T_PASS;
}
