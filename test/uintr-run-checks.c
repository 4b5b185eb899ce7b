/*
 * tools/uintr-run (uintr-run(1)) checks a program before it runs it and
 * says what to do: a name not in PATH and a missing file (127), a file
 * that is not executable, not ELF nor a #! script, a 32-bit or non-x86-64
 * ELF, and a static program without the emulation linked in (126, with the
 * --whole-archive link line); a static program with the emulation runs.
 * Invoked through a chain of symlinks it still finds libuintr-compat.so
 * next to its real location.  Children inherit the preload by default
 * (two levels of sh see it in LD_PRELOAD); with -n or
 * UINTR_COMPAT_INHERIT=0 the program itself runs emulated but its
 * children do not get the preload.
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
#include <elf.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <sys/stat.h>

static char tmp[] = "/tmp/uintr-run-checks-XXXXXX";
static char script[PATH_MAX], testdir[PATH_MAX];
static char out[16384];

/* Run a shell command line, stdout and stderr into `out`; its exit status. */
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

static void put(const char *name, const void *data, size_t len, mode_t mode)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	CHECK(fd >= 0);
	CHECK(write(fd, data, len) == (ssize_t)len);
	CHECK(fchmod(fd, mode) == 0);
	close(fd);
}

/* An ELF header with one PT_LOAD program header (no PT_INTERP: static). */
static void put_elf64(const char *name, unsigned int machine)
{
	struct {
		Elf64_Ehdr eh;
		Elf64_Phdr ph;
	} f;

	memset(&f, 0, sizeof(f));
	memcpy(f.eh.e_ident, ELFMAG, SELFMAG);
	f.eh.e_ident[EI_CLASS] = ELFCLASS64;
	f.eh.e_ident[EI_DATA] = ELFDATA2LSB;
	f.eh.e_ident[EI_VERSION] = EV_CURRENT;
	f.eh.e_type = ET_EXEC;
	f.eh.e_machine = (Elf64_Half)machine;
	f.eh.e_version = EV_CURRENT;
	f.eh.e_phoff = sizeof(f.eh);
	f.eh.e_ehsize = sizeof(f.eh);
	f.eh.e_phentsize = sizeof(f.ph);
	f.eh.e_phnum = 1;
	f.ph.p_type = PT_LOAD;
	put(name, &f, sizeof(f), 0755);
}

static int exists(const char *path)
{
	return access(path, F_OK) == 0;
}

int main(int argc, char **argv)
{
	char buf[PATH_MAX + 64], lib[PATH_MAX + 64] = "", found[PATH_MAX + 64], bin[PATH_MAX + 64];
	Elf32_Ehdr e32;
	const char *env = getenv("UINTR_COMPAT_LIB");

	(void)argc;
	snprintf(buf, sizeof(buf), "%s", argv[0]);
	CHECK(realpath(dirname(buf), testdir) != NULL);
	snprintf(buf, sizeof(buf), "%s/../../tools/uintr-run", testdir);
	CHECK(realpath(buf, script) != NULL);
	CHECK(mkdtemp(tmp) != NULL);
	/* Where the script itself would find the library (tools/../build). */
	snprintf(buf, sizeof(buf), "%s", script);
	snprintf(found, sizeof(found), "%s/../build/libuintr-compat.so", dirname(buf));
	if (env && *env && exists(env))
		snprintf(lib, sizeof(lib), "%s", env);
	else if (exists(found))
		snprintf(lib, sizeof(lib), "%s", found);

	CHECK_EQ(run("%s no-such-program-uintr-18", script), 127);
	HAS("no-such-program-uintr-18: command not found in PATH");
	CHECK_EQ(run("%s %s/absent", script, tmp), 127);
	HAS("absent: no such file");

	put("noexec", "x", 1, 0644);
	CHECK_EQ(run("%s %s/noexec", script, tmp), 126);
	HAS("noexec: not executable");

	put("text", "hello\n", 6, 0755);
	CHECK_EQ(run("%s %s/text", script, tmp), 126);
	HAS("text: not an ELF executable or a #! script");

	memset(&e32, 0, sizeof(e32));
	memcpy(e32.e_ident, ELFMAG, SELFMAG);
	e32.e_ident[EI_CLASS] = ELFCLASS32;
	e32.e_ident[EI_DATA] = ELFDATA2LSB;
	e32.e_type = ET_EXEC;
	e32.e_machine = EM_386;
	put("elf32", &e32, sizeof(e32), 0755);
	CHECK_EQ(run("%s %s/elf32", script, tmp), 126);
	HAS("elf32: a 32-bit program");
	HAS("rebuild it for x86-64");

	put_elf64("elfarm", EM_AARCH64);
	CHECK_EQ(run("%s %s/elfarm", script, tmp), 126);
	HAS("another architecture (e_machine 183)");

	put_elf64("static", EM_X86_64);
	CHECK_EQ(run("%s %s/static", script, tmp), 126);
	HAS("static is statically linked: a static program cannot preload");
	HAS("-Wl,--whole-archive ");
	HAS("libuintr-compat.a -Wl,--no-whole-archive");

	/* A static program with the emulation linked in runs as it is. */
	snprintf(bin, sizeof(bin), "%s/compat/static-spinning-receiver", testdir);
	if (exists(bin))
		CHECK_EQ(run("%s %s", script, bin), 0);

	put("script", "#!/bin/sh\necho script ran\n", 26, 0755);
	CHECK_EQ(run("%s -n %s/script", script, tmp), 126);
	HAS("is a #! script: with --no-inherit");
	CHECK_EQ(run("%s --bogus true", script), 2);
	HAS("unknown option --bogus");

	/* Symlinks: tmp/link2 -> link (relative) -> the script. */
	snprintf(buf, sizeof(buf), "%s/link", tmp);
	CHECK(symlink(script, buf) == 0);
	snprintf(buf, sizeof(buf), "%s/link2", tmp);
	CHECK(symlink("link", buf) == 0);
	if (exists(found)) {
		CHECK_EQ(run("env -u UINTR_COMPAT_LIB -u LD_PRELOAD %s/link2 sh -c 'printf \"[%%s]\" \"$LD_PRELOAD\"'",
			     tmp), 0);
		HAS("/libuintr-compat.so]");
	} else {
		CHECK_EQ(run("env -u UINTR_COMPAT_LIB %s/link2 true", tmp), 127);
		HAS("libuintr-compat.so not found");
	}

	if (lib[0]) {
		/* Inherited by default, two levels down. */
		CHECK_EQ(run("env -u LD_PRELOAD UINTR_COMPAT_LIB=%s %s sh -c "
			     "'sh -c \"printf \\\"[%%s]\\\" \\\"\\$LD_PRELOAD\\\"\"'", lib, script), 0);
		HAS("libuintr-compat.so]");
		/* Not with -n, nor with UINTR_COMPAT_INHERIT=0. */
		CHECK_EQ(run("env -u LD_PRELOAD UINTR_COMPAT_LIB=%s %s -n sh -c "
			     "'printf \"[%%s][%%s]\" \"$LD_PRELOAD\" \"$UINTR_COMPAT_INHERIT\"'", lib, script), 0);
		CHECK(strcmp(out, "[][]") == 0);
		CHECK_EQ(run("env UINTR_COMPAT_INHERIT=0 LD_PRELOAD=libkeep.so UINTR_COMPAT_LIB=%s %s sh -c "
			     "'printf \"[%%s]\" \"$LD_PRELOAD\"'", lib, script), 0);
		/* ld.so warns that libkeep.so cannot be preloaded; the list kept it. */
		HAS("[libkeep.so]");
		CHECK_EQ(run("env UINTR_COMPAT_INHERIT=yes UINTR_COMPAT_LIB=%s %s true", lib, script), 0);
		HAS("UINTR_COMPAT_INHERIT=yes is not 0 or 1");
		/* The program itself still runs emulated under -n. */
		snprintf(bin, sizeof(bin), "%s/compat/spinning-receiver", testdir);
		if (exists(bin))
			CHECK_EQ(run("UINTR_COMPAT_LIB=%s %s -n %s", lib, script, bin), 0);
	}

	CHECK_EQ(run("rm -rf %s", tmp), 0);
	return T_PASS;
}
#endif
