/*
 * test_lockfile_corpus.c - every file of ../shared/corpus/lockfiles parses or is rejected with
 * the reason recorded in corpus-expected.tsv; each parsed conda-lock, explicit and pixi file
 * is written back (conda-lock and explicit in their own format, pixi as conda-lock) and read
 * again, and must give the same model (menv_lockfile_to_json) - nothing menv understands is
 * lost. Prints one line per file and the counts.
 *
 * usage: test_lockfile_corpus CORPUS_LOCKFILES_DIR EXPECTED_TSV [--print | --digest]
 *   --print writes the observed table (to refresh EXPECTED_TSV after a reviewed change).
 *   --digest writes one line per parsed entry with a URL, "FILE\tURL\tNAME\tMD5\tSHA256"
 *   ("-" for a missing hash), for corpus_hashes.py to compare with its own reading.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "specs.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void walk(const char *root, const char *rel, struct menv_strvec *out)
{
	char *dir = rel[0] ? menv_xasprintf("%s/%s", root, rel) : menv_xstrdup(root);
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *r = rel[0] ? menv_xasprintf("%s/%s", rel, de->d_name)
		                 : menv_xstrdup(de->d_name);
		char *full = menv_xasprintf("%s/%s", root, r);
		struct stat st;
		if (stat(full, &st) == 0 && S_ISDIR(st.st_mode))
			walk(root, r, out);
		else
			menv_strvec_push(out, r);
		free(full);
		free(r);
	}
	if (d)
		closedir(d);
	free(dir);
}

/* Do two depends arrays name the same packages? (conda-lock's mapping joins a name listed
 * twice into one spec) */
static bool same_dep_names(json_t *a, json_t *b)
{
	json_t *sa = json_object(), *sb = json_object();
	json_t *arr[2] = {a, b}, *set[2] = {sa, sb};
	for (int k = 0; k < 2; k++) {
		size_t i;
		json_t *d;
		json_array_foreach(arr[k], i, d)
		{
			const char *s = json_string_value(d);
			if (!s)
				continue;
			char *n = menv_xstrndup(s, strcspn(s, " =<>!~["));
			json_object_set_new(set[k], n, json_true());
			free(n);
		}
	}
	bool eq = json_equal(sa, sb);
	json_decref(sa);
	json_decref(sb);
	return eq;
}

/* Re-writes `lf` and parses it again; returns NULL on success or what differed. */
static char *round_trip(const struct menv_lockfile *lf, const char *rel)
{
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_error err = {0};
	struct menv_lockfile *again = NULL;
	char *why = NULL;

	if (lf->format == MENV_LOCK_EXPLICIT)
		menv_lockfile_write_explicit(lf, NULL, &b);
	else if (menv_lockfile_write_conda_lock(lf, &b, &err)) {
		why = menv_xasprintf("not written: %s", err.msg);
		goto out;
	}
	/* a conda package without a hash (pixi.lock and micromamba's JSON may leave both out)
	 * cannot be read back from conda-lock, whose model requires one: the re-written file
	 * is refused, naming the first such package */
	const char *hashless = NULL;
	for (size_t i = 0; i < lf->npkgs && !hashless && lf->format != MENV_LOCK_EXPLICIT; i++)
		if (lf->pkgs[i].manager == MENV_LOCK_CONDA && lf->pkgs[i].url && !lf->pkgs[i].md5 &&
		    !lf->pkgs[i].sha256)
			hashless = lf->pkgs[i].name;
	if (menv_lockfile_parse(b.buf, b.len, rel, &again, &err)) {
		char *want =
		        hashless ? menv_xasprintf(": no md5 or sha256 for %s", hashless) : NULL;
		size_t n = want ? strlen(want) : 0, m = strlen(err.msg);
		if (!want || m < n || strcmp(err.msg + m - n, want))
			why = menv_xasprintf("re-written file does not parse: %s", err.msg);
		free(want);
		goto out;
	}
	if (hashless) {
		why = menv_xasprintf("'%s' has no hash, and its conda-lock entry was read",
		                     hashless);
		goto out;
	}
	json_t *a = menv_lockfile_to_json(lf), *c = menv_lockfile_to_json(again);
	if (lf->format == MENV_LOCK_PIXI || lf->format == MENV_LOCK_MAMBA_JSON) {
		/* pixi / mamba JSON -> conda-lock: compare what conda-lock v1 can hold */
		size_t n_in = 0;
		for (size_t i = 0; i < lf->npkgs; i++)
			n_in += lf->pkgs[i].url != NULL;
		if (n_in != again->npkgs)
			why = menv_xasprintf("%s -> conda-lock kept %zu of %zu entries",
			                     menv_lock_format_name(lf->format), again->npkgs, n_in);
		for (size_t i = 0, k = 0; !why && i < lf->npkgs; i++) {
			const struct menv_lock_package *p = &lf->pkgs[i], *q;
			if (!p->url)
				continue;
			q = &again->pkgs[k++];
			if (strcmp(p->url, q->url) || strcmp(p->name, q->name) ||
			    strcmp(p->platform, q->platform) ||
			    (p->sha256 && (!q->sha256 || strcmp(p->sha256, q->sha256))) ||
			    (p->md5 && (!q->md5 || strcmp(p->md5, q->md5))) ||
			    !same_dep_names(p->depends, q->depends))
				why = menv_xasprintf("%s -> conda-lock changed '%s'",
				                     menv_lock_format_name(lf->format), p->url);
		}
	} else {
		if (!json_equal(a, c)) {
			char *sa = json_dumps(a, JSON_SORT_KEYS | JSON_COMPACT);
			char *sc = json_dumps(c, JSON_SORT_KEYS | JSON_COMPACT);
			size_t k = 0;
			while (sa[k] && sa[k] == sc[k])
				k++;
			size_t from = k > 80 ? k - 80 : 0;
			why = menv_xasprintf("model differs after re-writing at byte %zu:\n    "
			                     "before: ...%.160s\n    after:  ...%.160s",
			                     k, sa + from, sc + from);
			free(sa);
			free(sc);
		}
	}
	json_decref(a);
	json_decref(c);
out:
	menv_lockfile_free(again);
	menv_buf_release(&b);
	return why;
}

int main(int argc, char **argv)
{
	struct menv_strvec files = MENV_STRVEC_INIT, expect_keys = MENV_STRVEC_INIT,
	                   expect_vals = MENV_STRVEC_INIT;
	size_t parsed = 0, rejected = 0, mismatched = 0, trips = 0, pkgs = 0;
	size_t per_format[5] = {0};
	bool print = argc > 3 && !strcmp(argv[3], "--print");
	bool digest = argc > 3 && !strcmp(argv[3], "--digest");

	if (argc < 3) {
		fprintf(stderr, "usage: %s CORPUS_LOCKFILES_DIR EXPECTED_TSV [--print]\n", argv[0]);
		return 2;
	}
	struct stat st;
	if (stat(argv[1], &st) != 0) {
		printf("SKIP: no corpus at %s\n", argv[1]);
		return 77;
	}
	walk(argv[1], "", &files);
	qsort(files.v, files.n, sizeof(*files.v), cmp_str);

	FILE *tf = fopen(argv[2], "r");
	char line[4096];
	while (tf && fgets(line, sizeof(line), tf)) {
		line[strcspn(line, "\n")] = '\0';
		char *tab = strchr(line, '\t');
		if (line[0] == '#' || !tab)
			continue;
		*tab = '\0';
		menv_strvec_push(&expect_keys, line);
		menv_strvec_push(&expect_vals, tab + 1);
	}
	if (tf)
		fclose(tf);

	if (print)
		printf("# file\texpected outcome: 'ok FORMAT vN packages=N platforms=N' or "
		       "'reject CODE: message fragment'\n");
	for (size_t i = 0; i < files.n; i++) {
		const char *rel = files.v[i];
		char *path = menv_xasprintf("%s/%s", argv[1], rel);
		struct menv_lockfile *lf = NULL;
		struct menv_error err = {0};
		struct menv_buf b = MENV_BUF_INIT;
		char *got;

		if (menv_buf_read_file(&b, path, &err)) {
			printf("FAIL %s: cannot read: %s\n", rel, err.msg);
			mismatched++;
			free(path);
			continue;
		}
		int rc = menv_lockfile_parse(b.buf, b.len, rel, &lf, &err);
		if (digest) {
			for (size_t k = 0; !rc && k < lf->npkgs; k++) {
				const struct menv_lock_package *p = &lf->pkgs[k];
				if (p->url)
					printf("%s\t%s\t%s\t%s\t%s\n", rel, p->url, p->name,
					       p->md5 ? p->md5 : "-", p->sha256 ? p->sha256 : "-");
			}
			menv_lockfile_free(lf);
			menv_buf_release(&b);
			free(path);
			continue;
		}
		if (rc) {
			rejected++;
			got = menv_xasprintf("reject %s: %s", menv_error_name(rc), err.msg);
		} else {
			parsed++;
			pkgs += lf->npkgs;
			per_format[lf->format]++;
			got = menv_xasprintf("ok %s v%d packages=%zu platforms=%zu",
			                     menv_lock_format_name(lf->format), lf->version,
			                     lf->npkgs, lf->platforms.n);
		}
		if (print) {
			printf("%s\t%s\n", rel, got);
		} else {
			const char *want = NULL;
			for (size_t k = 0; k < expect_keys.n && !want; k++)
				if (!strcmp(expect_keys.v[k], rel))
					want = expect_vals.v[k];
			/* a rejection matches when the recorded text is a prefix of it */
			bool ok =
			        want && (!strcmp(want, got) || (!strncmp(want, "reject ", 7) &&
			                                        !strncmp(got, want, strlen(want))));
			printf("%s %s: %s\n", ok ? "ok  " : "FAIL", rel, got);
			if (!ok) {
				printf("     expected: %s\n",
				       want ? want : "(no entry in the table)");
				mismatched++;
			}
		}
		if (!rc) {
			char *why = round_trip(lf, rel);
			trips++;
			if (why) {
				printf("FAIL %s: round trip: %s\n", rel, why);
				mismatched++;
				free(why);
			}
		}
		free(got);
		menv_lockfile_free(lf);
		menv_buf_release(&b);
		free(path);
	}
	if (!print && !digest)
		printf("\n%zu files: %zu parsed (%zu conda-lock, %zu explicit, %zu pixi, %zu "
		       "mamba-json; %zu package entries), %zu rejected with a reason; %zu round "
		       "trips; %zu failures\n",
		       files.n, parsed, per_format[MENV_LOCK_CONDA_LOCK],
		       per_format[MENV_LOCK_EXPLICIT], per_format[MENV_LOCK_PIXI],
		       per_format[MENV_LOCK_MAMBA_JSON], pkgs, rejected, trips, mismatched);
	/* every mode frees what it read (LeakSanitizer checks the --print and --digest runs) */
	menv_strvec_clear(&files);
	menv_strvec_clear(&expect_keys);
	menv_strvec_clear(&expect_vals);
	return print || digest ? 0 : mismatched ? 1 : 0;
}
