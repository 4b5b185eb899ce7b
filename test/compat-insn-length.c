/*
 * The x86-64 instruction lengths of src/compat/x86_64/length.c, which
 * decide which bytes patch.c rewrites, against objdump's on real code:
 * every instruction of this program, libc, the dynamic loader and
 * libuintr-compat.so (UINTR_COMPAT_LIB, set by make check) must have the
 * length objdump gives it, and at least 100000 instructions must have been
 * compared (libc alone has several hundred thousand, AVX-512 and VEX
 * among them).  Lines objdump cannot decode ("(bad)", ".byte") are not
 * compared.  Skipped (77) off x86-64 and where objdump is not installed.
 */
#include "helpers.h"

#if defined(__x86_64__)
#include <link.h>

#include "compat/x86_64/length.c"

static long compared, mismatched;

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	char **want = arg; /* want[0]: a name fragment in, want[1]: the path out */

	(void)size;
	if (!want[1] && info->dlpi_name && strstr(info->dlpi_name, want[0]))
		want[1] = strdup(info->dlpi_name);
	return 0;
}

static char *loaded(const char *fragment)
{
	char *want[2] = { (char *)fragment, NULL };

	dl_iterate_phdr(find_object, want);
	return want[1];
}

static int hex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* One objdump line "  addr:\tBB BB ..\tmnemonic ..." against the decoder. */
static void compare_line(const char *line, const char *file)
{
	const char *tab = strchr(line, '\t'), *text;
	unsigned char bytes[16];
	unsigned int n = 0, len;

	if (!tab || tab == line || tab[-1] != ':')
		return;
	for (text = tab + 1; *text && *text != '\t'; text++) {
		if (*text == ' ')
			continue;
		if (hex(text[0]) < 0 || hex(text[1]) < 0 || n == sizeof(bytes))
			return;
		bytes[n++] = (unsigned char)(hex(text[0]) * 16 + hex(text[1]));
		text++;
	}
	if (*text != '\t' || n == 0 || strstr(text, "(bad)") || strstr(text, ".byte"))
		return;
	len = uintr__compat_insn_length(bytes, n, NULL);
	compared++;
	if (len != n) {
		if (mismatched++ < 20)
			fprintf(stderr, "%s: length %u, objdump %u: %s", file, len, n, line);
	}
}

static void compare_file(const char *file)
{
	char cmd[4200], line[1024];
	FILE *p;

	if (!file || access(file, R_OK) != 0)
		return;
	snprintf(cmd, sizeof(cmd), "objdump -d --insn-width=15 '%s' 2>/dev/null", file);
	p = popen(cmd, "r");
	CHECK(p != NULL);
	while (fgets(line, sizeof(line), p))
		compare_line(line, file);
	CHECK_EQ(pclose(p), 0);
}

int main(void)
{
	static const unsigned char vzeroupper[] = { 0xc5, 0xf8, 0x77 };
	static const unsigned char stui_prefixed[] = { 0x2e, 0x66, 0xf3, 0x0f, 0x01, 0xef };
	static const unsigned char movabs[] = { 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8 };
	unsigned int at = 99;
	char self[4096];
	ssize_t n;

	if (system("objdump --version >/dev/null 2>&1") != 0) {
		puts("skipped: objdump (binutils) not installed");
		return T_SKIP;
	}
	/* A few by hand, with where the opcode starts. */
	CHECK_EQ(uintr__compat_insn_length(vzeroupper, sizeof(vzeroupper), &at), 3);
	CHECK_EQ(at, 0);
	CHECK_EQ(uintr__compat_insn_length(stui_prefixed, sizeof(stui_prefixed), &at), 6);
	CHECK_EQ(at, 3);
	CHECK_EQ(uintr__compat_insn_length(movabs, sizeof(movabs), &at), 10);
	CHECK_EQ(uintr__compat_insn_length(movabs, sizeof(movabs) - 1, &at), 0); /* cut short */

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	CHECK(n > 0);
	self[n] = 0;
	compare_file(self);
	for (const char **o = (const char *[]){ "libc.so", "ld-linux", NULL }; *o; o++) {
		char *path = loaded(*o);

		compare_file(path);
		free(path);
	}
	compare_file(getenv("UINTR_COMPAT_LIB"));
	printf("%ld instructions compared, %ld mismatched\n", compared, mismatched);
	CHECK_EQ(mismatched, 0);
	CHECK(compared >= 100000);
	return T_PASS;
}
#else
int main(void)
{
	puts("skipped: x86-64 only");
	return T_SKIP;
}
#endif
