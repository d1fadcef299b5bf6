/*
 * solv_sort.c - the qsort_r of libsolv: CMake links a copy of libsolv.a whose one call of
 * qsort_r (solv_sort, util.c) is renamed to menv_solv_qsort_r.
 *
 * glibc 2.36's qsort_r is a merge sort that copies each element it moves with a call of
 * mempcpy unless it is 4 or 8 bytes long; libsolv's largest sort, of the solver's rules (24
 * bytes each, solver_unifyrules: 83,098 of them in a dry run of `python pip curl` on the
 * python-3.9 subchannel scaled x10), spent 14% of the whole process's CPU there, in mempcpy
 * and the merge loop. This is the same merge sort (the same halves, the same merge that
 * takes the left element on a tie: a stable sort, so the same order for any comparator,
 * consistent or not), with the copy of a fixed size inlined for the sizes libsolv sorts.
 * Other sizes, and a scratch array that cannot be allocated, go to glibc's qsort_r.
 */
#include <stdlib.h>
#include <string.h>

typedef int (*menv_solv_cmp)(const void *, const void *, void *);

void menv_solv_qsort_r(void *base, size_t n, size_t size, menv_solv_cmp cmp, void *arg);

/* Sorts b[0..n) of elements of S bytes with scratch t (n * S bytes), as glibc's
 * msort_with_tmp: halves n / 2 and n - n / 2, a merge into t that takes the left element
 * while cmp <= 0, then t back into b (the right half's tail stays where it is). */
#define MSORT(NAME, S)                                                                             \
	static void NAME(char *b, size_t n, menv_solv_cmp cmp, void *arg, char *t)                 \
	{                                                                                          \
		size_t n1, n2;                                                                     \
		char *b1, *b2, *tmp;                                                               \
                                                                                                   \
		if (n <= 1)                                                                        \
			return;                                                                    \
		n1 = n / 2;                                                                        \
		n2 = n - n1;                                                                       \
		b1 = b;                                                                            \
		b2 = b + n1 * (S);                                                                 \
		NAME(b1, n1, cmp, arg, t);                                                         \
		NAME(b2, n2, cmp, arg, t);                                                         \
		tmp = t;                                                                           \
		while (n1 > 0 && n2 > 0) {                                                         \
			if (cmp(b1, b2, arg) <= 0) {                                               \
				memcpy(tmp, b1, (S));                                              \
				b1 += (S);                                                         \
				--n1;                                                              \
			} else {                                                                   \
				memcpy(tmp, b2, (S));                                              \
				b2 += (S);                                                         \
				--n2;                                                              \
			}                                                                          \
			tmp += (S);                                                                \
		}                                                                                  \
		if (n1 > 0)                                                                        \
			memcpy(tmp, b1, n1 *(S));                                                  \
		memcpy(b, t, (n - n2) * (S));                                                      \
	}

MSORT(msort4, 4)
MSORT(msort8, 8)
MSORT(msort12, 12)
MSORT(msort16, 16)
MSORT(msort24, 24)
MSORT(msort32, 32)

void menv_solv_qsort_r(void *base, size_t n, size_t size, menv_solv_cmp cmp, void *arg)
{
	void (*sort)(char *, size_t, menv_solv_cmp, void *, char *);
	char stack[1024];
	char *t;

	switch (size) {
	case 4: sort = msort4; break;
	case 8: sort = msort8; break;
	case 12: sort = msort12; break;
	case 16: sort = msort16; break;
	case 24: sort = msort24; break;
	case 32: sort = msort32; break;
	default: qsort_r(base, n, size, cmp, arg); return;
	}
	if (n <= 1)
		return;
	t = n * size <= sizeof stack ? stack : malloc(n * size);
	if (!t) {
		qsort_r(base, n, size, cmp, arg);
		return;
	}
	sort(base, n, cmp, arg, t);
	if (t != stack)
		free(t);
}
