/*
 * solv_regex.c - the regcomp and regfree of libsolv: CMake links a copy of libsolv.a whose
 * calls of them (conda.c's glob matching, repodata.c's regex search) are renamed to
 * menv_solv_regcomp and menv_solv_regfree.
 *
 * libsolv's conda matcher compiles a regular expression for each glob it compares (the build
 * "*_cp39" of every `python_abi 3.9.* *_cp39` dependency, a version such as "1.*.2"), runs it
 * on one string and frees it, so glibc compiled the same few patterns hundreds of times and
 * built their DFA's transition tables anew for each run: 13% of the instructions of a dry run
 * of `python pip curl` on the python-3.9 subchannel (337 globs, a handful of patterns). Here
 * each (pattern, flags) is compiled once and kept for the process, and the caller gets a copy
 * of that regex_t (which shares glibc's DFA, so the states one regexec built serve the next;
 * glibc's regexec locks the DFA it shares); freeing such a copy does nothing. Past SLOTS
 * patterns, or when one cannot be kept, glibc's regcomp and regfree run as before. Matching
 * is glibc's in every case: the same answers.
 */
#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

int menv_solv_regcomp(regex_t *reg, const char *pattern, int cflags);
void menv_solv_regfree(regex_t *reg);

#define SLOTS 256

static struct {
	char *pattern;
	int cflags;
	regex_t reg;
} kept[SLOTS];
static size_t nkept;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* regcomp(reg, pattern, cflags): 0 with *reg a copy of the kept regex of (pattern, cflags),
 * compiled on first use; else what glibc's regcomp returns. */
int menv_solv_regcomp(regex_t *reg, const char *pattern, int cflags)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nkept; i++) {
		if (kept[i].cflags == cflags && !strcmp(kept[i].pattern, pattern)) {
			*reg = kept[i].reg;
			pthread_mutex_unlock(&lock);
			return 0;
		}
	}
	if (nkept < SLOTS) {
		char *copy = strdup(pattern);
		if (copy && regcomp(&kept[nkept].reg, pattern, cflags) == 0) {
			kept[nkept].pattern = copy;
			kept[nkept].cflags = cflags;
			*reg = kept[nkept++].reg;
			pthread_mutex_unlock(&lock);
			return 0;
		}
		free(copy);
	}
	pthread_mutex_unlock(&lock);
	return regcomp(reg, pattern, cflags);
}

/* regfree(reg), unless reg is a copy of a kept regex (which lives as long as the process). */
void menv_solv_regfree(regex_t *reg)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nkept; i++) {
		if (!memcmp(&kept[i].reg, reg, sizeof(*reg))) {
			pthread_mutex_unlock(&lock);
			return;
		}
	}
	pthread_mutex_unlock(&lock);
	regfree(reg);
}
