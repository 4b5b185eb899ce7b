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

static int show_process(int pid, int quiet_if_none)
{
	struct page upids[256], infos[256];
	int nupid = 0, ninfo = 0, i, j, pidfd, shown = 0;
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
	printf("  %-8s %-20s %-20s %12s %13s %9s %s\n", "tid", "vectors", "pending",
	       "delivered", "notifications", "spurious", "state");
	for (i = 0; i < ninfo; i++) {
		const struct uintr__info *in = infos[i].map;
		uint64_t pending = atomic_load(&((struct uintr__info *)in)->uirr);

		for (j = 0; j < nupid; j++) {
			if (upids[j].ino == in->upid_ino)
				pending |= atomic_load(&((struct uintr__upid *)upids[j].map)->pir);
		}
		printf("  %-8d", in->tid);
		print_vectors(atomic_load(&((struct uintr__info *)in)->registered));
		print_vectors(pending);
		printf(" %12llu %13llu %9llu %s\n",
		       (unsigned long long)atomic_load(&((struct uintr__info *)in)->delivered),
		       (unsigned long long)atomic_load(&((struct uintr__info *)in)->notifications),
		       (unsigned long long)atomic_load(&((struct uintr__info *)in)->spurious),
		       atomic_load(&((struct uintr__info *)in)->active) ? "active" : "inactive");
		shown++;
	}
	if (!shown)
		printf("  (no receivers)\n");

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
