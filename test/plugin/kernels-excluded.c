/*
 * Compiled with the plugin and -fplugin-arg-uintr_safepoint-exclude=
 * '*-excluded.c': no function of this file gets a safepoint.
 */
#include "kernels.h"

__attribute__((noinline)) long k_loop_file(long n)
{
	long s = 0;

	for (volatile long i = 0; i < n; i++)
		s += i ^ (s >> 3);
	return s;
}
