/*
 * index.c - `menv index`: writes `<subdir>/repodata.json` for a channel directory, like
 * conda-index. Each package's `info/index.json` plus the file's md5, sha256 and size becomes
 * its record; `.tar.bz2` files go under "packages", `.conda` under "packages.conda" (CEP-36,
 * repodata_version 1). `noarch/` is always written, as conda expects it in every channel.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

static const char *const known_subdirs[] = {
        "noarch",        "linux-32",      "linux-64",
        "linux-aarch64", "linux-armv6l",  "linux-armv7l",
        "linux-ppc64",   "linux-ppc64le", "linux-riscv64",
        "linux-s390x",   "osx-64",        "osx-arm64",
        "win-32",        "win-64",        "win-arm64",
        "zos-z",         "freebsd-64",    "emscripten-wasm32",
        "wasi-wasm32",
};

static bool is_known_subdir(const char *name)
{
	for (size_t i = 0; i < sizeof(known_subdirs) / sizeof(known_subdirs[0]); i++)
		if (!strcmp(name, known_subdirs[i]))
			return true;
	return false;
}

static bool is_package_name(const char *name)
{
	size_t n = strlen(name);

	if (name[0] == '.')
		return false;
	return (n > 6 && !strcmp(name + n - 6, ".conda")) ||
	       (n > 8 && !strcmp(name + n - 8, ".tar.bz2"));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The package files (names) of a directory, sorted. */
static int list_packages(const char *dir, struct menv_strvec *out, struct menv_error *err)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return menv_error_sys(err, errno == ENOENT ? MENV_ENOTFOUND : MENV_EIO,
		                      "cannot open the directory '%s'", dir);
	while ((de = readdir(d))) {
		struct stat st;
		char *path;

		if (!is_package_name(de->d_name))
			continue;
		path = menv_xasprintf("%s/%s", dir, de->d_name);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
			menv_strvec_push(out, de->d_name);
		free(path);
	}
	closedir(d);
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), cmp_str);
	return 0;
}

/* The record of one package file: its info/index.json plus md5, sha256 and size. */
static int package_record(const char *path, const char *subdir, json_t **out,
                          struct menv_error *err)
{
	struct menv_buf text = MENV_BUF_INIT;
	struct menv_hashes h;
	json_t *rec = NULL;
	int rc;

	menv_buf_init(&text);
	rc = menv_archive_read_member(path, "info/index.json", &text, err);
	if (rc == MENV_ENOTFOUND) {
		rc = menv_error_set(err, MENV_EPARSE,
		                    "'%s' is not a valid package: no "
		                    "'info/index.json'",
		                    path);
		goto out;
	}
	if (rc)
		goto out;
	char *src = menv_xasprintf("%s:info/index.json", path);
	rc = menv_json_parse(text.buf, text.len, 0, src, &rec, err);
	free(src);
	if (rc) {
		menv_error_prefix(err, "'%s' is not a valid package", path);
		goto out;
	}
	if (!json_is_object(rec)) {
		rc = menv_error_set(err, MENV_EPARSE,
		                    "'%s' is not a valid package: 'info/index.json' is not an "
		                    "object",
		                    path);
		goto out;
	}
	rc = menv_hash_file(path, &h, err);
	if (rc)
		goto out;
	json_object_set_new(rec, "md5", json_string(h.md5));
	json_object_set_new(rec, "sha256", json_string(h.sha256));
	json_object_set_new(rec, "size", json_integer(h.size));
	if (!json_is_string(json_object_get(rec, "subdir")))
		json_object_set_new(rec, "subdir", json_string(subdir));
	*out = rec;
	rec = NULL;
out:
	json_decref(rec);
	menv_buf_release(&text);
	return rc;
}

/* Refuses a record conda cannot load: a version that is not a string, or that conda's
 * VersionOrder refuses (conda fails the load of the whole repodata.json on it). */
static int check_record(const char *path, json_t *rec, struct menv_error *err)
{
	json_t *ver = json_object_get(rec, "version");
	struct menv_version *v = NULL;
	struct menv_error e = {0};

	if (!json_is_string(ver))
		return menv_error_set(err, MENV_EPARSE,
		                      "'%s' is not a valid package: its 'info/index.json' has no "
		                      "version string",
		                      path);
	if (menv_version_parse(json_string_value(ver), &v, &e))
		return menv_error_set(err, MENV_EPARSE,
		                      "'%s': %s (conda cannot load a repodata.json holding it)",
		                      path, e.msg);
	menv_version_free(v);
	return 0;
}

/* The text of `<dir>/<subdir>/repodata.json` (owned, into *out); a subdir folder that does
 * not exist (`noarch`, made later) has no packages. Writes nothing. */
static int index_subdir(const char *dir, const char *subdir, bool exists,
                        struct menv_index_stats *stats, char **out, struct menv_error *err)
{
	struct menv_strvec files = MENV_STRVEC_INIT;
	char *sdir = menv_xasprintf("%s/%s", dir, subdir);
	json_t *repo = json_object(), *tarbz2 = json_object(), *conda = json_object();
	int rc = 0;

	*out = NULL;
	json_object_set_new(repo, "info", json_pack("{s:s}", "subdir", subdir));
	json_object_set(repo, "packages", tarbz2);
	json_object_set(repo, "packages.conda", conda);
	json_object_set_new(repo, "removed", json_array());
	json_object_set_new(repo, "repodata_version", json_integer(1));

	if (exists)
		rc = list_packages(sdir, &files, err);
	if (rc)
		goto out;
	for (size_t i = 0; i < files.n; i++) {
		char *path = menv_xasprintf("%s/%s", sdir, files.v[i]);
		size_t n = strlen(files.v[i]);
		bool is_conda = n > 6 && !strcmp(files.v[i] + n - 6, ".conda");
		json_t *rec = NULL;

		rc = package_record(path, subdir, &rec, err);
		if (!rc && (rc = check_record(path, rec, err)))
			json_decref(rec);
		free(path);
		if (rc)
			goto out;
		json_object_set_new(is_conda ? conda : tarbz2, files.v[i], rec);
		stats->packages++;
	}
	*out = json_dumps(repo, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (!*out)
		rc = menv_error_set(err, MENV_EPARSE, "cannot encode '%s/repodata.json'", sdir);
out:
	json_decref(tarbz2);
	json_decref(conda);
	json_decref(repo);
	menv_strvec_clear(&files);
	free(sdir);
	return rc;
}

int menv_index_channel(const char *dir, struct menv_index_stats *stats, struct menv_error *err)
{
	struct menv_index_stats local = {0, 0};
	struct menv_strvec subdirs = MENV_STRVEC_INIT;
	struct dirent *de;
	char *noarch = NULL, **texts = NULL;
	bool make_noarch = false;
	DIR *d;
	int rc = 0;

	if (!stats)
		stats = &local;
	stats->packages = stats->subdirs = 0;
	d = opendir(dir);
	if (!d)
		return menv_error_sys(err, errno == ENOENT ? MENV_ENOTFOUND : MENV_EIO,
		                      "cannot open the channel directory '%s'", dir);
	while ((de = readdir(d))) {
		struct menv_strvec pkgs = MENV_STRVEC_INIT;
		struct stat st;
		char *path;
		bool keep;

		if (de->d_name[0] == '.')
			continue;
		path = menv_xasprintf("%s/%s", dir, de->d_name);
		keep = stat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
		       (is_known_subdir(de->d_name) ||
		        (list_packages(path, &pkgs, NULL) == 0 && pkgs.n > 0));
		if (keep)
			menv_strvec_push(&subdirs, de->d_name);
		menv_strvec_clear(&pkgs);
		free(path);
	}
	closedir(d);

	noarch = menv_xasprintf("%s/noarch", dir);
	if (!menv_strvec_contains(&subdirs, "noarch")) {
		make_noarch = true;
		menv_strvec_push(&subdirs, "noarch");
	}
	if (subdirs.n)
		qsort(subdirs.v, subdirs.n, sizeof(*subdirs.v), cmp_str);
	/* every index is made before any is written: a package refused leaves the channel as
	 * it was */
	texts = menv_xcalloc(subdirs.n + 1, sizeof(*texts));
	for (size_t i = 0; i < subdirs.n && !rc; i++)
		rc = index_subdir(dir, subdirs.v[i],
		                  !(make_noarch && !strcmp(subdirs.v[i], "noarch")), stats,
		                  &texts[i], err);
	if (!rc && make_noarch && mkdir(noarch, menv_dir_mode()) < 0 && errno != EEXIST)
		rc = menv_error_sys(err, MENV_EIO, "cannot create the directory '%s'", noarch);
	for (size_t i = 0; i < subdirs.n && !rc; i++) {
		char *out_path = menv_xasprintf("%s/%s/repodata.json", dir, subdirs.v[i]);
		menv_crash_point(); /* tests: a kill between two subdirs' indexes */
		rc = menv_write_file_atomic(out_path, texts[i], strlen(texts[i]), err);
		if (!rc)
			stats->subdirs++;
		free(out_path);
	}
	for (size_t i = 0; i < subdirs.n; i++)
		free(texts[i]);
	free(texts);
	free(noarch);
	menv_strvec_clear(&subdirs);
	return rc;
}
