/* helpers-intel-handler.h, under uintr-run --abi=later. */
#include "helpers-intel-handler.h"

int main(void)
{
	return intel_syscall_handler();
}
