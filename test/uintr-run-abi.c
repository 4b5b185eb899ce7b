/*
 * uintr-run's ABI selector (uintr-run(1), issue 12): UINTR_ABI=rfc (the
 * default, spelled out) or later, or --abi=rfc|later; any other value is
 * an error (exit 2, a message naming both ABIs) before the program starts
 * (it would create a file: the file must not exist), whether it comes
 * through uintr-run or to the preloaded library directly.  With a valid
 * value an RFC -muintr program runs under rfc, and the later one under
 * later (both from build/test/compat).
 */
#include "helpers.h"

#include <stdarg.h>

#if !defined(__x86_64__)
int main(void)
{
	fprintf(stderr, "uintr-run is for x86-64 programs only\n");
	return T_SKIP;
}
#else
#include <libgen.h>
#include <limits.h>

static char out[16384];

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
	char cmd[4096];
	size_t n = 0, k;
	va_list ap;
	FILE *p;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd) - 8, fmt, ap);
	va_end(ap);
	strcat(cmd, " 2>&1");
	p = popen(cmd, "r");
	CHECK(p != NULL);
	while (n < sizeof(out) - 1 && (k = fread(out + n, 1, sizeof(out) - 1 - n, p)) > 0)
		n += k;
	out[n] = '\0';
	st = pclose(p);
	CHECK(WIFEXITED(st));
	fprintf(stderr, "$ %s\n%s[exit %d]\n", cmd, out, WEXITSTATUS(st));
	return WEXITSTATUS(st);
}

#define HAS(s) CHECK(strstr(out, (s)) != NULL)

int main(int argc, char **argv)
{
	char buf[PATH_MAX + 64], dir[PATH_MAX], script[PATH_MAX], lib[PATH_MAX + 64];
	char marker[] = "/tmp/uintr-run-abi-XXXXXX";
	int fd;

	(void)argc;
	snprintf(buf, sizeof(buf), "%s", argv[0]);
	CHECK(realpath(dirname(buf), dir) != NULL);
	snprintf(buf, sizeof(buf), "%s/../../tools/uintr-run", dir);
	CHECK(realpath(buf, script) != NULL);
	snprintf(lib, sizeof(lib), "%s/../libuintr-compat.so", dir);
	if (access(lib, R_OK) != 0) {
		printf("skip: %s not built\n", lib);
		return T_SKIP;
	}
	fd = mkstemp(marker);
	CHECK(fd >= 0);
	close(fd);
	CHECK(unlink(marker) == 0);

	CHECK_EQ(run("UINTR_ABI=bogus %s /usr/bin/touch %s", script, marker), 2);
	HAS("UINTR_ABI=bogus: not an ABI");
	HAS("rfc");
	HAS("later");
	CHECK(access(marker, F_OK) != 0);
	CHECK_EQ(run("%s --abi=Later /usr/bin/touch %s", script, marker), 2);
	HAS("UINTR_ABI=Later: not an ABI");
	CHECK(access(marker, F_OK) != 0);
	CHECK_EQ(run("UINTR_ABI=2 LD_PRELOAD=%s /usr/bin/touch %s", lib, marker), 2);
	HAS("libuintr-compat: UINTR_ABI=2: not an ABI");
	CHECK(access(marker, F_OK) != 0);

	CHECK_EQ(run("UINTR_ABI=rfc %s %s/compat/spinning-receiver", script, dir), 0);
	CHECK_EQ(run("%s --abi=rfc %s/compat/spinning-receiver", script, dir), 0);
	CHECK_EQ(run("UINTR_ABI=later %s %s/compat/later-abi", script, dir), 0);
	CHECK_EQ(run("%s --abi later %s/compat/later-abi", script, dir), 0);
	CHECK_EQ(run("%s --abi=rfc /usr/bin/touch %s", script, marker), 0);
	CHECK(access(marker, F_OK) == 0);
	unlink(marker);
	return T_PASS;
}
#endif
