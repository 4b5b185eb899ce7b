/* helpers-intel-sender.h, under uintr-run --abi=later. */
#include "helpers-intel-sender.h"

int main(void)
{
	return intel_syscall_sender();
}
