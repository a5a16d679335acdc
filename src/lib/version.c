/* The library's version, set by the build. */
#include <rdmakit/version.h>

const char *rk_version(void)
{
	return RDMAKIT_VERSION_STRING;
}
