/* helpers-intel-handler.h, under the default (RFC) ABI. */
#include "helpers-intel-handler.h"

int main(void)
{
	return intel_syscall_handler();
}
