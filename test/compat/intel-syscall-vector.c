/* helpers-intel-vector.h, under the default (RFC) ABI. */
#include "helpers-intel-vector.h"

int main(void)
{
	return intel_syscall_vector();
}
