/*
 * solv_realloc.c - the realloc of libsolv in sanitizer builds (-DMENV_SANITIZE=ON,
 * -DMENV_FUZZ=ON) only, where CMake links a copy of libsolv.a whose one call of realloc
 * (solv_realloc, util.c) is renamed to menv_solv_realloc.
 *
 * libsolv grows its arrays by small steps and counts on realloc to be cheap. solv_extend()
 * calls it at every block of elements (64 rules for the solver's rule array) but past 2048
 * elements rounds the size up to about 1/32 of the array, so most calls ask for the size the
 * block already has; a Queue grows by 64 elements at a time. glibc keeps or extends a block
 * in place (mremap past its mmap threshold); ASan's realloc always moves it (a fresh block,
 * a copy, the old one quarantined), which makes each append O(n) and the solver's rule
 * building quadratic: `create --dry-run python pip curl` on the conda-forge python-3.9
 * subchannel (a 7.5 MiB rule array copied whole every 64 rules) was still in
 * solver_addpkgrulesforsolvable after 12 minutes under ASan, and solver.reachable ran past
 * its 1500 s limit. Here a block grows by half its size at least and is kept while the size
 * asked for fits in it; the part past that size is poisoned, so ASan still reports any
 * access beyond what libsolv asked for.
 */
#include <malloc.h>
#include <stdlib.h>

#include <sanitizer/asan_interface.h>

void *menv_solv_realloc(void *old, size_t len);

/* realloc(old, len) with geometric growth: the block (ASan's malloc_usable_size() is the size
 * it was allocated with) is kept when len fits and is at least half of it, else reallocated
 * to max(len, 1.5 x its size) when growing, to len when shrinking; the bytes past len are
 * poisoned. Returns NULL only where realloc does (libsolv aborts then). */
void *menv_solv_realloc(void *old, size_t len)
{
	if (!old || !len)
		return realloc(old, len);
	size_t cap = malloc_usable_size(old);
	if (len > cap || len < cap / 2) {
		size_t grown = cap + cap / 2;
		cap = len > cap && grown > len ? grown : len;
		old = realloc(old, cap);
		if (!old)
			return NULL;
	}
	ASAN_UNPOISON_MEMORY_REGION(old, len);
	ASAN_POISON_MEMORY_REGION((char *)old + len, cap - len);
	return old;
}
