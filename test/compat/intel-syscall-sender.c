/* helpers-intel-sender.h, under the default (RFC) ABI. */
#include "helpers-intel-sender.h"

int main(void)
{
	return intel_syscall_sender();
}
