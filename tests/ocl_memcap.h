/* ocl_memcap.h - the test device's memory counters (ocl_memcap.c). */
#ifndef IWPP_TEST_OCL_MEMCAP_H
#define IWPP_TEST_OCL_MEMCAP_H

#include <stddef.h>

/* Device buffers past @p cap bytes alive at once are refused (0: no cap). */
void iwpp_memcap_set(size_t cap);
/* Bytes of device buffers alive now. */
size_t iwpp_memcap_live(void);
/* The most alive at once since the last call (then the count starts again from what is alive). */
size_t iwpp_memcap_peak_reset(void);

#endif
