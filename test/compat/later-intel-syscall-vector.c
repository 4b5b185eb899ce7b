/* helpers-intel-vector.h, under uintr-run --abi=later. */
#include "helpers-intel-vector.h"

int main(void)
{
	return intel_syscall_vector();
}
