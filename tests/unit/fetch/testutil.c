/*
 * testutil.c - helpers for the fetch/ unit tests (see testutil.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <archive.h>
#include <archive_entry.h>

#include "testutil.h"

char *tu_path(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	assert_true(vasprintf(&s, fmt, ap) >= 0);
	va_end(ap);
	return s;
}

void tu_mkdirs(const char *path)
{
	char *p = strdup(path);

	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		assert_true(mkdir(p, 0755) == 0 || errno == EEXIST);
		*s = '/';
	}
	assert_true(mkdir(p, 0755) == 0 || errno == EEXIST);
	free(p);
}

char *tu_mkdtemp(void)
{
	char *t = tu_path("%s/fetch-XXXXXX", MENV_TEST_TMP);

	tu_mkdirs(MENV_TEST_TMP);
	assert_non_null(mkdtemp(t));
	return t;
}

static int rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)ftw;
	if (flag == FTW_DP || flag == FTW_D)
		chmod(path, 0700), rmdir(path);
	else
		unlink(path);
	return 0;
}

void tu_rmtree(const char *path)
{
	nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

bool tu_exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

void tu_write(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

void tu_copy(const char *from, const char *to)
{
	struct menv_buf b = MENV_BUF_INIT;

	assert_int_equal(menv_buf_read_file(&b, from, NULL), 0);
	tu_write(to, b.buf, b.len);
	menv_buf_release(&b);
}

size_t tu_count_prefixed(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, prefix, strlen(prefix)))
			n++;
	closedir(d);
	return n;
}

/* archive writers: everything goes to a menv_buf */
static la_ssize_t buf_write(struct archive *a, void *ud, const void *data, size_t len)
{
	(void)a;
	menv_buf_add(ud, data, len);
	return (la_ssize_t)len;
}

static void add_entry(struct archive *a, const char *name, mode_t type, mode_t perm,
                      const void *data, size_t len, const char *symlink, const char *hardlink)
{
	struct archive_entry *e = archive_entry_new();

	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, type);
	archive_entry_set_perm(e, perm);
	archive_entry_set_size(e, (la_int64_t)len);
	archive_entry_set_mtime(e, 1700000000, 0);
	if (symlink)
		archive_entry_set_symlink(e, symlink);
	if (hardlink)
		archive_entry_set_hardlink(e, hardlink);
	if (type == AE_IFCHR)
		archive_entry_set_rdev(e, makedev(1, 3));
	assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
	if (len)
		assert_int_equal(archive_write_data(a, data, len), (la_ssize_t)len);
	archive_entry_free(e);
}

static void tar_to_buf(struct menv_buf *out, const char *filter, const struct tu_entry *ents,
                       size_t n)
{
	struct archive *a = archive_write_new();

	assert_int_equal(archive_write_set_format_pax_restricted(a), ARCHIVE_OK);
	assert_int_equal(archive_write_add_filter_by_name(a, filter), ARCHIVE_OK);
	/* no zero padding after the compressed stream (zstd readers reject it) */
	assert_int_equal(archive_write_set_bytes_in_last_block(a, 1), ARCHIVE_OK);
	assert_int_equal(archive_write_open(a, out, NULL, buf_write, NULL), ARCHIVE_OK);
	for (size_t i = 0; i < n; i++) {
		const struct tu_entry *t = &ents[i];
		const char *arg = t->arg ? t->arg : "";

		switch (t->type) {
		case TU_FILE:
			add_entry(a, t->name, AE_IFREG, 0644, arg, strlen(arg), NULL, NULL);
			break;
		case TU_DIR: add_entry(a, t->name, AE_IFDIR, 0755, NULL, 0, NULL, NULL); break;
		case TU_SYMLINK: add_entry(a, t->name, AE_IFLNK, 0777, NULL, 0, arg, NULL); break;
		case TU_HARDLINK: add_entry(a, t->name, AE_IFREG, 0644, NULL, 0, NULL, arg); break;
		case TU_FIFO: add_entry(a, t->name, AE_IFIFO, 0644, NULL, 0, NULL, NULL); break;
		case TU_CHARDEV: add_entry(a, t->name, AE_IFCHR, 0644, NULL, 0, NULL, NULL); break;
		}
	}
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
}

void tu_write_tar(const char *path, const char *filter, const struct tu_entry *e, size_t n)
{
	struct menv_buf b = MENV_BUF_INIT;

	menv_buf_init(&b);
	tar_to_buf(&b, filter, e, n);
	tu_write(path, b.buf, b.len);
	menv_buf_release(&b);
}

void tu_write_conda(const char *path, const char *dist, const struct tu_entry *info, size_t ninfo,
                    const struct tu_entry *pkg, size_t npkg)
{
	struct menv_buf out = MENV_BUF_INIT, inner = MENV_BUF_INIT;
	static const char meta[] = "{\"conda_pkg_format_version\": 2}";
	struct archive *a = archive_write_new();
	char *name;

	menv_buf_init(&out);
	menv_buf_init(&inner);
	assert_int_equal(archive_write_set_format_zip(a), ARCHIVE_OK);
	assert_int_equal(archive_write_set_options(a, "zip:compression=store"), ARCHIVE_OK);
	assert_int_equal(archive_write_open(a, &out, NULL, buf_write, NULL), ARCHIVE_OK);
	add_entry(a, "metadata.json", AE_IFREG, 0644, meta, strlen(meta), NULL, NULL);
	if (npkg) {
		tar_to_buf(&inner, "zstd", pkg, npkg);
		name = tu_path("pkg-%s.tar.zst", dist);
		add_entry(a, name, AE_IFREG, 0644, inner.buf, inner.len, NULL, NULL);
		free(name);
	}
	menv_buf_reset(&inner);
	tar_to_buf(&inner, "zstd", info, ninfo);
	name = tu_path("info-%s.tar.zst", dist);
	add_entry(a, name, AE_IFREG, 0644, inner.buf, inner.len, NULL, NULL);
	free(name);
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
	tu_write(path, out.buf, out.len);
	menv_buf_release(&inner);
	menv_buf_release(&out);
}
