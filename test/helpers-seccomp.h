/*
 * Seccomp filters for tests that watch or cut the library's system calls.
 * T_AUDIT_ARCH is this architecture's seccomp arch constant (undefined
 * where the tests do not know it); t_seccomp_install() puts the calling
 * thread under a filter, or fails with errno (qemu-user: ENOSYS).
 */
#ifndef UINTR_TEST_HELPERS_SECCOMP_H
#define UINTR_TEST_HELPERS_SECCOMP_H

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define T_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define T_AUDIT_ARCH AUDIT_ARCH_AARCH64
#elif defined(__riscv) && __riscv_xlen == 64
#define T_AUDIT_ARCH AUDIT_ARCH_RISCV64
#endif

/* The filter's first instructions: load the arch; if it is not ours,
 * return `foreign`; then load the syscall number. */
#define T_SECCOMP_PROLOGUE(foreign)                                                    \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),       \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, T_AUDIT_ARCH, 1, 0),                        \
	BPF_STMT(BPF_RET | BPF_K, (foreign)),                                           \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))

/* No TSYNC: only the calling thread is filtered.  0, or -1 with errno. */
static inline int t_seccomp_install(struct sock_filter *code, unsigned short len)
{
	struct sock_fprog prog = { .len = len, .filter = code };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

#endif
