/*
 * Run a function in a child process whose stderr is a pipe, and get what
 * it wrote and how it ended: for the library's messages on stderr (the
 * environment, UINTR_DEBUG), which a process writes once.
 */
#ifndef UINTR_TEST_HELPERS_STDERR_H
#define UINTR_TEST_HELPERS_STDERR_H

#include "helpers.h"

#include <libgen.h>

/* fn runs in the child with `name`=`value` set (value NULL: unset) and
 * returns its exit status.  The child's stderr, up to len - 1 bytes, is
 * in out; its exit status must be T_PASS. */
static inline void ts_run_child(int (*fn)(void), const char *name, const char *value, char *out,
				size_t len)
{
	int p[2], st;
	size_t n = 0;
	ssize_t k;
	pid_t pid;

	CHECK(pipe(p) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		dup2(p[1], STDERR_FILENO);
		close(p[1]);
		if (value)
			setenv(name, value, 1);
		else
			unsetenv(name);
		_exit(fn());
	}
	close(p[1]);
	while (n < len - 1 && (k = read(p[0], out + n, len - 1 - n)) > 0)
		n += (size_t)k;
	out[n] = '\0';
	close(p[0]);
	CHECK(waitpid(pid, &st, 0) == pid);
	fprintf(stderr, "child with %s=%s wrote on stderr:\n%s--\n", name, value ? value : "(unset)",
		out);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), T_PASS);
}

/* How often `needle` occurs in `hay`. */
static inline int ts_count(const char *hay, const char *needle)
{
	int n = 0;

	for (; (hay = strstr(hay, needle)); hay += strlen(needle))
		n++;
	return n;
}

struct ts_uintrstat_job {
	const char *cmd;
	char *out;
	size_t len;
	int rc;
};

static inline void *ts_uintrstat_thread(void *arg)
{
	struct ts_uintrstat_job *j = arg;
	size_t n = 0, k;
	FILE *f = popen(j->cmd, "r");

	CHECK(f != NULL);
	while (n < j->len - 1 && (k = fread(j->out + n, 1, j->len - 1 - n, f)) > 0)
		n += k;
	j->out[n] = '\0';
	j->rc = pclose(f) == 0 ? 0 : -1;
	return NULL;
}

/* uintrstat on this process (through the test runner, e.g. qemu), its
 * output in out; 0 if it exited 0.  Started from a thread of its own:
 * popen() blocks every signal of the calling thread while it spawns, and
 * uintrstat, reading the caller's mask meanwhile, would report a blocked
 * notification signal that the test never blocked. */
static inline int ts_uintrstat(const char *argv0, char *out, size_t len)
{
	char cmd[1024], self[512];
	const char *runner = getenv("UINTR_TEST_RUNNER");
	struct ts_uintrstat_job job = { cmd, out, len, -1 };
	pthread_t t;

	snprintf(self, sizeof(self), "%s", argv0);
	snprintf(cmd, sizeof(cmd), "%s %s/../uintrstat %d", runner ? runner : "", dirname(self),
		 (int)getpid());
	CHECK(pthread_create(&t, NULL, ts_uintrstat_thread, &job) == 0);
	CHECK(pthread_join(t, NULL) == 0);
	return job.rc;
}

/* Under qemu-user the /proc status of a process is qemu's: signal masks
 * and dispositions there are not the program's. */
static inline int ts_native(void)
{
	const char *runner = getenv("UINTR_TEST_RUNNER");

	return !runner || !*runner;
}

#endif
