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

/* uintrstat on this process (through the test runner, e.g. qemu), its
 * output in out; 0 if it exited 0. */
static inline int ts_uintrstat(const char *argv0, char *out, size_t len)
{
	char cmd[1024], self[512];
	const char *runner = getenv("UINTR_TEST_RUNNER");
	size_t n = 0, k;
	FILE *f;

	snprintf(self, sizeof(self), "%s", argv0);
	snprintf(cmd, sizeof(cmd), "%s %s/../uintrstat %d", runner ? runner : "", dirname(self),
		 (int)getpid());
	f = popen(cmd, "r");
	CHECK(f != NULL);
	while (n < len - 1 && (k = fread(out + n, 1, len - 1 - n, f)) > 0)
		n += k;
	out[n] = '\0';
	return pclose(f) == 0 ? 0 : -1;
}

/* Under qemu-user the /proc status of a process is qemu's: signal masks
 * and dispositions there are not the program's. */
static inline int ts_native(void)
{
	const char *runner = getenv("UINTR_TEST_RUNNER");

	return !runner || !*runner;
}

#endif
