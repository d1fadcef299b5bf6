/*
 * platform.c - the conda subdir of the running machine (CEP-26 platform names).
 */
#include <string.h>
#include <sys/utsname.h>

#include "specs.h"

const char *menv_platform_subdir(void)
{
	struct utsname u;

	if (uname(&u) < 0)
		return "linux-64";
	if (!strcmp(u.machine, "x86_64"))
		return "linux-64";
	if (!strcmp(u.machine, "aarch64"))
		return "linux-aarch64";
	if (!strcmp(u.machine, "ppc64le"))
		return "linux-ppc64le";
	if (!strcmp(u.machine, "s390x"))
		return "linux-s390x";
	if (!strncmp(u.machine, "i", 1) && strstr(u.machine, "86"))
		return "linux-32";
	return "linux-64";
}
