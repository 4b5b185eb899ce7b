/*
 * What the programs that an emulated program execs inherit (uintr-run(1)).
 *
 * The preload travels in LD_PRELOAD, so by default every dynamically
 * linked program that this one execs runs under the emulation too: a
 * shell, make or a test driver started by uintr-run can start -muintr
 * programs.  UINTR_COMPAT_INHERIT=0 (uintr-run -n) keeps it to this
 * program: the library removes itself from LD_PRELOAD here, after the
 * dynamic linker has read it and before the program's main can exec.  The
 * seccomp filter (syscall.c) is inherited either way: the kernel never
 * drops a filter.
 *
 * The marker string lets uintr-run tell a static program that has the
 * emulation linked in (which it runs as it is) from one that does not
 * (which it refuses, with the link line).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"

__attribute__((used)) static const char uintr__compat_marker[] =
	"libuintr-compat: UINTR emulation linked in";

/* Remove every entry naming libuintr-compat from the colon- or
 * space-separated list in LD_PRELOAD (ld.so(8) accepts both). */
static void uintr__compat_drop_preload(void)
{
	const char *old = getenv("LD_PRELOAD");
	char *copy, *tok, *save, *out;
	size_t n = 0;

	if (!old || !strstr(old, "libuintr-compat"))
		return;
	copy = strdup(old);
	out = calloc(1, strlen(old) + 1);
	if (!copy || !out) {
		free(copy);
		free(out);
		return;
	}
	for (tok = strtok_r(copy, ": ", &save); tok; tok = strtok_r(NULL, ": ", &save)) {
		const char *base = strrchr(tok, '/');

		base = base ? base + 1 : tok;
		if (!strncmp(base, "libuintr-compat", 15))
			continue;
		n += (size_t)sprintf(out + n, "%s%s", n ? ":" : "", tok);
	}
	if (n)
		setenv("LD_PRELOAD", out, 1);
	else
		unsetenv("LD_PRELOAD");
	free(copy);
	free(out);
}

__attribute__((constructor)) static void uintr__compat_inherit_init(void)
{
	const char *env = getenv("UINTR_COMPAT_INHERIT");

	if (!env || !*env || !strcmp(env, "1"))
		return;
	if (strcmp(env, "0") != 0) {
		fprintf(stderr, "libuintr-compat: UINTR_COMPAT_INHERIT=%s is not 0 or 1: "
			"children inherit the emulation (the default)\n", env);
		return;
	}
	uintr__compat_drop_preload();
	unsetenv("UINTR_COMPAT_INHERIT");
}
