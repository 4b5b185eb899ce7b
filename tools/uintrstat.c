/*
 * uintrstat: what an RFC kernel shows in /proc/interrupts (the UIS line:
 * spurious notifications, reference 4.5, 6.2) and in a uintr_fd's fdinfo
 * (user_vector, 2.3), for processes that use libuintr.
 *
 *   uintrstat [PID...]      (no PID: every process of this user)
 *
 * For each process: its live receivers (tid, vectors with a live fd,
 * pending = posted or recognized, delivered, notifications, spurious) and
 * its uintr fds with their vectors.  It reads the receivers' info and UPID
 * pages through /proc/PID/fd (the memfds the library keeps open), and the
 * uintr fds through pidfd_getfd where the caller may (same user with ptrace
 * rights, or root); otherwise it lists them as sockets it cannot inspect.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "uintr-int.h"

#define PAGE 4096

struct page {
	uint64_t ino;
	void *map;
};

static void print_vectors(uint64_t mask)
{
	char buf[256] = "-";
	size_t n = 0;
	unsigned int v;

	for (v = 0; v < 64; v++)
		if (mask & (1ull << v))
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%u", n ? "," : "", v);
	printf(" %-20s", buf);
}

static void *map_proc_fd(int pid, const char *name, uint64_t *ino)
{
	char path[64];
	struct stat st;
	void *p;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/fd/%s", pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || st.st_size != PAGE) {
		close(fd);
		return NULL;
	}
	*ino = (uint64_t)st.st_ino;
	p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/* The vector of a uintr fd of another process, or -1. */
static int fd_vector(int pidfd, int fd, pid_t *tid)
{
	struct uintr__fd_header h;
	ssize_t n;
	int mine;

	if (pidfd < 0)
		return -1;
	mine = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	if (mine < 0)
		return -1;
	n = recv(mine, &h, sizeof(h), MSG_PEEK | MSG_DONTWAIT);
	close(mine);
	if (n != (ssize_t)sizeof(h) || h.magic != UINTR__FD_MAGIC || h.vector >= 64)
		return -1;
	*tid = h.tid;
	return (int)h.vector;
}

/* Bit signo-1 of the hex mask on the line `key` of a /proc status file;
 * -1 if unknown. */
static int proc_sigbit(const char *path, const char *key, int signo)
{
	char line[256];
	int bit = -1;
	FILE *f = fopen(path, "r");

	if (!f || signo < 1 || signo > 64) {
		if (f)
			fclose(f);
		return -1;
	}
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key))) {
			unsigned long long mask = strtoull(line + strlen(key), NULL, 16);

			bit = (int)((mask >> (signo - 1)) & 1);
			break;
		}
	fclose(f);
	return bit;
}

/* Why a live receiver gets no interrupt while it runs (uintr_read_state's
 * UINTR_STATE_SIGNAL_* seen from outside), and whether it sleeps in
 * uintr_wait; appended to "active".  Sets *legend bits for the notes. */
static void receiver_state(int pid, const struct uintr__info *in, const struct uintr__upid *upid,
			   char *buf, size_t len, unsigned int *legend)
{
	char path[96];
	size_t n;

	if (!atomic_load(&((struct uintr__info *)in)->active)) {
		snprintf(buf, len, "inactive");
		return;
	}
	n = (size_t)snprintf(buf, len, "active");
	if (upid && ((atomic_load(&((struct uintr__upid *)upid)->status) & UINTR__UPID_NV_MASK) ==
		     UINTR__NV(UINTR__NV_BLOCKED)))
		n += (size_t)snprintf(buf + n, len - n, ",waiting");
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, (int)in->tid);
	if (proc_sigbit(path, "SigBlk:", in->signo) == 1) {
		n += (size_t)snprintf(buf + n, len - n, ",signal-blocked");
		*legend |= UINTR_STATE_SIGNAL_BLOCKED;
	}
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (proc_sigbit(path, "SigCgt:", in->signo) == 0) {
		snprintf(buf + n, len - n, ",signal-lost");
		*legend |= UINTR_STATE_SIGNAL_LOST;
	}
}

/* The UINTR_* variables a process started with (/proc/PID/environ: what
 * it setenv()s later is not there), each checked as the library checks it. */
static void show_environment(int pid)
{
	static char env[65536];
	char path[64], why[UINTR__ENV_WHY];
	size_t n = 0;
	ssize_t k;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	while (n < sizeof(env) - 1 && (k = read(fd, env + n, sizeof(env) - 1 - n)) > 0)
		n += (size_t)k;
	close(fd);
	env[n] = '\0';
	for (size_t i = 0; i < n; i += strlen(env + i) + 1) {
		const char *var = env + i, *value = strchr(var, '=');
		const char *effect = NULL;
		uint64_t ns;
		int v;

		if (!value || strncmp(var, "UINTR_", 6) != 0)
			continue;
		value++;
		if (!strncmp(var, "UINTR_SIGNAL=", 13) &&
		    uintr__env_signal(value, &v, why, sizeof(why)) != 0)
			effect = "registration fails with EINVAL";
		else if (!strncmp(var, "UINTR_WAIT_SPIN_NS=", 19) &&
			 uintr__env_wait_spin(value, &ns, why, sizeof(why)) != 0)
			effect = "ignored: uintr_wait polls 30000 ns";
		else if (!strncmp(var, "UINTR_DEBUG=", 12) &&
			 uintr__env_debug(value, &v, why, sizeof(why)) != 0)
			effect = "ignored: debug messages off";
		if (effect)
			printf("  environment: %s: %s; %s\n", var, why, effect);
	}
}

static int show_process(int pid, int quiet_if_none)
{
	struct page upids[256], infos[256];
	int nupid = 0, ninfo = 0, i, j, pidfd, shown = 0, signo = 0;
	unsigned int legend = 0;
	char dirpath[64], comm[64] = "?", path[320], link[256];
	struct dirent *d;
	FILE *f;
	DIR *dir;

	snprintf(dirpath, sizeof(dirpath), "/proc/%d/fd", pid);
	dir = opendir(dirpath);
	if (!dir)
		return quiet_if_none ? 0 : -1;
	while ((d = readdir(dir))) {
		ssize_t n;
		uint64_t ino;
		void *p;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dirpath, d->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strstr(link, "/memfd:uintr-info") && ninfo < 256 &&
		    (p = map_proc_fd(pid, d->d_name, &ino)) &&
		    ((struct uintr__info *)p)->magic == UINTR__INFO_MAGIC)
			infos[ninfo++] = (struct page){ ino, p };
		else if (strstr(link, "/memfd:uintr-upid") && nupid < 256 &&
			 (p = map_proc_fd(pid, d->d_name, &ino)))
			upids[nupid++] = (struct page){ ino, p };
	}
	if (quiet_if_none && ninfo == 0) {
		closedir(dir);
		for (i = 0; i < nupid; i++)
			munmap(upids[i].map, PAGE);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	if ((f = fopen(path, "r"))) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	printf("pid %d (%s)\n", pid, comm);
	show_environment(pid);
	printf("  %-8s %-20s %-20s %12s %13s %9s %s\n", "tid", "vectors", "pending",
	       "delivered", "notifications", "spurious", "state");
	for (i = 0; i < ninfo; i++) {
		const struct uintr__info *in = infos[i].map;
		const struct uintr__upid *upid = NULL;
		uint64_t pending = atomic_load(&((struct uintr__info *)in)->uirr);
		char state[96];

		for (j = 0; j < nupid; j++) {
			if (upids[j].ino == in->upid_ino) {
				upid = upids[j].map;
				pending |= atomic_load(&((struct uintr__upid *)upids[j].map)->pir);
			}
		}
		receiver_state(pid, in, upid, state, sizeof(state), &legend);
		if (in->signo)
			signo = in->signo;
		printf("  %-8d", in->tid);
		print_vectors(atomic_load(&((struct uintr__info *)in)->registered));
		print_vectors(pending);
		printf(" %12llu %13llu %9llu %s\n",
		       (unsigned long long)atomic_load(&((struct uintr__info *)in)->delivered),
		       (unsigned long long)atomic_load(&((struct uintr__info *)in)->notifications),
		       (unsigned long long)atomic_load(&((struct uintr__info *)in)->spurious),
		       state);
		shown++;
	}
	if (!shown)
		printf("  (no receivers)\n");
	if (legend & UINTR_STATE_SIGNAL_BLOCKED)
		printf("  signal-blocked: the thread blocks signal %d, the notification signal: "
		       "no interrupt while it runs, only at uintr_poll/uintr_wait or when it "
		       "unblocks it\n", signo);
	if (legend & UINTR_STATE_SIGNAL_LOST)
		printf("  signal-lost: signal %d, the notification signal, is not caught any more "
		       "(the program set it to SIG_IGN or SIG_DFL): no interrupt while a receiver "
		       "runs\n", signo);

	/* uintr fds: sockets whose header says so. */
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	rewinddir(dir);
	printf("  uintr fds:");
	shown = 0;
	while ((d = readdir(dir))) {
		ssize_t n;
		pid_t tid = 0;
		int v;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dirpath, d->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strncmp(link, "socket:", 7) != 0)
			continue;
		v = fd_vector(pidfd, atoi(d->d_name), &tid);
		if (v >= 0) {
			printf("%s fd %s: vector %d (receiver tid %d)", shown ? "," : "", d->d_name, v,
			       (int)tid);
			shown++;
		}
	}
	printf("%s\n", shown ? "" : pidfd < 0 ? " (cannot inspect)" : " none");
	if (pidfd >= 0)
		close(pidfd);
	closedir(dir);
	for (i = 0; i < ninfo; i++)
		munmap(infos[i].map, PAGE);
	for (i = 0; i < nupid; i++)
		munmap(upids[i].map, PAGE);
	return 1;
}

int main(int argc, char **argv)
{
	int i, found = 0;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: uintrstat [PID...]\n"
		       "Live libuintr receivers and uintr fds of each process "
		       "(default: all processes that have receivers).\n");
		return 0;
	}
	if (argc > 1) {
		for (i = 1; i < argc; i++) {
			if (show_process(atoi(argv[i]), 0) < 0) {
				fprintf(stderr, "uintrstat: %s: %s\n", argv[i], strerror(errno));
				return 1;
			}
		}
		return 0;
	} else {
		DIR *proc = opendir("/proc");
		struct dirent *d;

		if (!proc)
			return 1;
		while ((d = readdir(proc)))
			if (d->d_name[0] >= '1' && d->d_name[0] <= '9')
				found += show_process(atoi(d->d_name), 1) > 0;
		closedir(proc);
		if (!found)
			printf("no process with libuintr receivers\n");
	}
	return 0;
}
