/* uintrstat (issue 7, reference 4.5 and 2.3): run on this process, it
 * lists the receiver thread with its vectors, its pending vector, its exact
 * delivered count, and the uintr fds with their vectors. */
#include "helpers.h"

#include <libgen.h>

static _Atomic int handled;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	(void)vector;
	handled++;
}

int main(int argc, char **argv)
{
	char cmd[512], out[8192], line[512], want[128];
	struct uintr_state st;
	int fd5, fd9, idx5, idx9, i;
	size_t n = 0;
	FILE *p;

	(void)argc;
	CHECK(uintr_register_handler(handler, 0) == 0);
	fd5 = uintr_create_fd(5, 0);
	fd9 = uintr_create_fd(9, 0);
	CHECK(fd5 >= 0 && fd9 >= 0);
	idx5 = uintr_register_sender(fd5, 0);
	idx9 = uintr_register_sender(fd9, 0);
	CHECK(idx5 >= 0 && idx9 >= 0);
	uintr_stui();
	for (i = 0; i < 3; i++) {
		uintr_senduipi((unsigned long long)idx5);
		WAIT_UNTIL(handled == i + 1);
	}
	uintr_clui(); /* vector 9 stays pending */
	uintr_senduipi((unsigned long long)idx9);
	do
		CHECK(uintr_read_state(&st) == 0);
	while (!(st.uirr & (1ull << 9)));

	snprintf(cmd, sizeof(cmd), "%s %s/../uintrstat %d",
		 getenv("UINTR_TEST_RUNNER") ? getenv("UINTR_TEST_RUNNER") : "", dirname(argv[0]),
		 (int)getpid());
	p = popen(cmd, "r");
	CHECK(p != NULL);
	while (fgets(line, sizeof(line), p) && n + strlen(line) < sizeof(out)) {
		strcpy(out + n, line);
		n += strlen(line);
	}
	CHECK(pclose(p) == 0);
	fputs(out, stderr);
	/* vectors 5 and 9, vector 9 pending, 3 deliveries, 4 notifications
	 * (three sends of 5, one of 9 recognized with UIF = 0), 0 spurious. */
	snprintf(want, sizeof(want), "  %-8d %-20s %-20s %12d %13d %9d active", (int)t_gettid(),
		 "5,9", "9", 3, 4, 0);
	CHECK(strstr(out, want) != NULL);
	snprintf(want, sizeof(want), "fd %d: vector 5", fd5);
	CHECK(strstr(out, want) != NULL);
	snprintf(want, sizeof(want), "fd %d: vector 9", fd9);
	CHECK(strstr(out, want) != NULL);
	uintr_stui();
	CHECK_EQ(handled, 4);
	return T_PASS;
}
