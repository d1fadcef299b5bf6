/*
 * test_archive.c - package extraction and member reading: the corpus (zlib in both formats
 * checked against its paths.json, nano's gzip-as-bz2, rattler's symlink, zip64 and "./"
 * packages) and hostile archives built here (tar.bz2 and .conda) that must be refused with
 * MENV_EUNSAFE without writing outside the destination; truncated archives give MENV_EPARSE.
 * A large `.tar.bz2` extracts to the same bytes through lbzip2 and through libarchive's own
 * bzip2, and a corrupt one fails with one line either way.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <cmocka.h>

#include "skip77.h"

#include <archive.h>
#include <archive_entry.h>

#include "testutil.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Relative paths of every non-directory under root/rel. */
static void walk(const char *root, const char *rel, struct menv_strvec *out)
{
	char *dir = rel[0] ? tu_path("%s/%s", root, rel) : strdup(root);
	DIR *d = opendir(dir);
	struct dirent *de;

	assert_non_null(d);
	while ((de = readdir(d))) {
		struct stat st;
		char *r, *full;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		r = rel[0] ? tu_path("%s/%s", rel, de->d_name) : strdup(de->d_name);
		full = tu_path("%s/%s", root, r);
		assert_int_equal(lstat(full, &st), 0);
		if (S_ISDIR(st.st_mode))
			walk(root, r, out);
		else
			menv_strvec_push(out, r);
		free(full);
		free(r);
	}
	closedir(d);
	free(dir);
}

static void file_set(const char *root, struct menv_strvec *out)
{
	walk(root, "", out);
	qsort(out->v, out->n, sizeof(*out->v), cmp_str);
}

/* Every "hardlink" entry of info/paths.json exists with the recorded sha256 and size. */
static size_t check_paths_json(const char *root)
{
	char *pj = tu_path("%s/info/paths.json", root);
	json_t *j = json_load_file(pj, 0, NULL);
	json_t *paths = json_object_get(j, "paths"), *p;
	size_t i, checked = 0;

	assert_non_null(paths);
	assert_true(json_array_size(paths) > 0);
	json_array_foreach(paths, i, p)
	{
		const char *rel = json_string_value(json_object_get(p, "_path"));
		const char *type = json_string_value(json_object_get(p, "path_type"));
		const char *sha = json_string_value(json_object_get(p, "sha256"));
		char *full = tu_path("%s/%s", root, rel);
		struct menv_hashes h;
		struct stat st;

		assert_int_equal(lstat(full, &st), 0);
		if (!strcmp(type, "softlink")) {
			/* present; its sha256 is the target's (see test_zlib_both_formats) */
		} else {
			assert_true(S_ISREG(st.st_mode));
			assert_int_equal(menv_hash_file(full, &h, NULL), 0);
			assert_string_equal(h.sha256, sha);
			assert_int_equal(h.size,
			                 json_integer_value(json_object_get(p, "size_in_bytes")));
			checked++;
		}
		free(full);
	}
	json_decref(j);
	free(pj);
	return checked;
}

static void test_zlib_both_formats(void **state)
{
	char *tmp = tu_mkdtemp();
	char *a = tu_path("%s/conda", tmp), *b = tu_path("%s/tarbz2", tmp);
	struct menv_strvec fa = MENV_STRVEC_INIT, fb = MENV_STRVEC_INIT;
	struct menv_error err = {0};
	char *so;
	struct stat st;

	(void)state;
	tu_mkdirs(a);
	tu_mkdirs(b);
	assert_int_equal(menv_archive_extract(ZLIB_CONDA, a, &err), 0);
	assert_int_equal(menv_archive_extract(ZLIB_TARBZ2, b, &err), 0);
	file_set(a, &fa);
	file_set(b, &fb);
	assert_int_equal(fa.n, fb.n);
	assert_true(fa.n >= 20);
	for (size_t i = 0; i < fa.n; i++)
		assert_string_equal(fa.v[i], fb.v[i]);
	assert_true(menv_strvec_contains(&fa, "lib/libz.so.1.2.11"));
	assert_true(menv_strvec_contains(&fa, "info/index.json"));
	/* lib/libz.a, libz.so.1.2.11, zconf.h, zlib.h, zlib.pc: 5 files with hashes */
	assert_int_equal(check_paths_json(a), 5);
	assert_int_equal(check_paths_json(b), 5);
	/* This corpus zlib lost its symlinks: the .tar.bz2 holds empty files for lib/libz.so
	 * and lib/libz.so.1, the .conda symlinks with empty targets. Both extract as empty
	 * files. */
	so = tu_path("%s/lib/libz.so", a);
	assert_int_equal(lstat(so, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 0);
	free(so);
	so = tu_path("%s/lib/libz.so.1", b);
	assert_int_equal(lstat(so, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 0);
	free(so);

	menv_strvec_clear(&fa);
	menv_strvec_clear(&fb);
	tu_rmtree(tmp);
	free(a);
	free(b);
	free(tmp);
}

static void test_nano_gzip_named_bz2(void **state)
{
	char *tmp = tu_mkdtemp();
	char *p = tu_path("%s/info/index.json", tmp);
	struct menv_error err = {0};
	json_t *j;

	(void)state;
	assert_int_equal(menv_archive_extract(NANO_TARBZ2, tmp, &err), 0);
	j = json_load_file(p, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(j, "name")), "nano");
	assert_string_equal(json_string_value(json_object_get(j, "version")), "2.4.1");
	json_decref(j);
	free(p);
	p = tu_path("%s/bin/nano", tmp);
	assert_true(tu_exists(p));
	free(p);
	p = tu_path("%s/share/man/man1/nano.1", tmp);
	assert_true(tu_exists(p));
	free(p);
	tu_rmtree(tmp);
	free(tmp);
}

static void test_symlink_package(void **state)
{
	char *tmp = tu_mkdtemp();
	char *link = tu_path("%s/lib/liblink.so", tmp);
	char *real = tu_path("%s/lib/libreal.so.1", tmp);
	char *hard = tu_path("%s/lib/libhard.so", tmp);
	struct menv_error err = {0};
	struct stat sl, sr, sh;
	char target[256];
	ssize_t n;

	(void)state;
	assert_int_equal(menv_archive_extract(SYMLINK_CONDA, tmp, &err), 0);
	assert_int_equal(lstat(link, &sl), 0);
	assert_true(S_ISLNK(sl.st_mode));
	n = readlink(link, target, sizeof(target) - 1);
	assert_true(n > 0);
	target[n] = '\0';
	assert_string_equal(target, "libreal.so.1");
	/* the hard link inside the package is a hard link to the real file */
	assert_int_equal(lstat(real, &sr), 0);
	assert_int_equal(lstat(hard, &sh), 0);
	assert_true(S_ISREG(sr.st_mode));
	assert_int_equal(sr.st_ino, sh.st_ino);
	assert_int_equal(sr.st_size, 18);
	tu_rmtree(tmp);
	free(hard);
	free(real);
	free(link);
	free(tmp);
}

static void test_zip64_and_dotslash(void **state)
{
	char *tmp = tu_mkdtemp();
	char *p = tu_path("%s/bin/hello.txt", tmp);
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_error err = {0};
	json_t *j;

	(void)state;
	menv_buf_init(&b);
	assert_int_equal(menv_archive_extract(ZIP64_CONDA, tmp, &err), 0);
	assert_int_equal(menv_buf_read_file(&b, p, &err), 0);
	assert_int_equal(b.len, 14);
	menv_buf_reset(&b);
	assert_int_equal(menv_archive_read_member(ZIP64_CONDA, "info/index.json", &b, &err), 0);
	j = json_loadb(b.buf, b.len, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(j, "name")), "zip64-test");
	json_decref(j);

	/* members stored as "./info/index.json" are found by their plain name */
	menv_buf_reset(&b);
	assert_int_equal(menv_archive_read_member(DOTSLASH_CONDA, "info/index.json", &b, &err), 0);
	j = json_loadb(b.buf, b.len, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(j, "name")), "dotslash-test");
	json_decref(j);
	free(p);
	p = tu_path("%s/lib/data.txt", tmp);
	assert_int_equal(menv_archive_extract(DOTSLASH_CONDA, tmp, &err), 0);
	assert_true(tu_exists(p));

	menv_buf_release(&b);
	tu_rmtree(tmp);
	free(p);
	free(tmp);
}

static void test_read_member(void **state)
{
	struct menv_buf b = MENV_BUF_INIT, disk = MENV_BUF_INIT;
	struct menv_error err = {0};
	json_t *j;

	(void)state;
	menv_buf_init(&b);
	menv_buf_init(&disk);
	assert_int_equal(menv_archive_read_member(ZLIB_TARBZ2, "info/index.json", &b, &err), 0);
	j = json_loadb(b.buf, b.len, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(j, "name")), "zlib");
	assert_string_equal(json_string_value(json_object_get(j, "version")), "1.2.11");
	assert_int_equal(json_integer_value(json_object_get(j, "build_number")), 3);
	json_decref(j);

	/* the .conda gives the same bytes for info/ and pkg/ members */
	menv_buf_reset(&disk);
	assert_int_equal(menv_archive_read_member(ZLIB_CONDA, "info/index.json", &disk, &err), 0);
	assert_int_equal(disk.len, b.len);
	assert_memory_equal(disk.buf, b.buf, b.len);
	menv_buf_reset(&b);
	menv_buf_reset(&disk);
	assert_int_equal(menv_archive_read_member(ZLIB_CONDA, "include/zlib.h", &b, &err), 0);
	assert_int_equal(menv_archive_read_member(ZLIB_TARBZ2, "include/zlib.h", &disk, &err), 0);
	assert_true(b.len > 10000);
	assert_int_equal(disk.len, b.len);
	assert_memory_equal(disk.buf, b.buf, b.len);

	/* missing members and archives */
	menv_buf_reset(&b);
	assert_int_equal(menv_archive_read_member(ZLIB_CONDA, "info/nothing.json", &b, &err),
	                 MENV_ENOTFOUND);
	assert_non_null(strstr(err.msg, "'info/nothing.json'"));
	assert_int_equal(b.len, 0);
	assert_int_equal(menv_archive_read_member(ZLIB_TARBZ2, "lib/nothing", &b, &err),
	                 MENV_ENOTFOUND);
	assert_int_equal(
	        menv_archive_read_member(CORPUS "/none.tar.bz2", "info/index.json", &b, &err),
	        MENV_ENOTFOUND);
	menv_buf_release(&disk);
	menv_buf_release(&b);
}

/* Rewrites the ZIP `from` as `to` with every member moved under `folder`/ (libarchive). */
static void zip_under_folder(const char *from, const char *to, const char *folder)
{
	struct archive *in = archive_read_new(), *out = archive_write_new();
	struct archive_entry *e;
	char buf[65536];

	archive_read_support_format_zip(in);
	assert_int_equal(archive_read_open_filename(in, from, sizeof(buf)), ARCHIVE_OK);
	assert_int_equal(archive_write_set_format_zip(out), ARCHIVE_OK);
	assert_int_equal(archive_write_set_options(out, "zip:compression=store"), ARCHIVE_OK);
	assert_int_equal(archive_write_open_filename(out, to), ARCHIVE_OK);
	while (archive_read_next_header(in, &e) == ARCHIVE_OK) {
		char *name = tu_path("%s/%s", folder, archive_entry_pathname(e));
		struct menv_buf data = MENV_BUF_INIT;
		la_ssize_t n;
		while ((n = archive_read_data(in, buf, sizeof(buf))) > 0)
			menv_buf_add(&data, buf, (size_t)n);
		struct archive_entry *w = archive_entry_new();
		archive_entry_set_pathname(w, name);
		archive_entry_set_filetype(w, AE_IFREG);
		archive_entry_set_perm(w, 0644);
		archive_entry_set_size(w, (la_int64_t)data.len);
		assert_int_equal(archive_write_header(out, w), ARCHIVE_OK);
		assert_int_equal(archive_write_data(out, data.buf, data.len), (la_ssize_t)data.len);
		archive_entry_free(w);
		menv_buf_release(&data);
		free(name);
	}
	archive_read_free(in);
	assert_int_equal(archive_write_close(out), ARCHIVE_OK);
	archive_write_free(out);
}

/* A .conda whose members sit under a folder (rattler's test resource
 * ca-certificates-2024.7.4-hbcca054_0.conda is laid out so; it is not in the corpus, so one
 * is built here): read and extracted as rattler reads it, by the members' file names */
static void test_conda_members_in_folder(void **state)
{
	static const struct tu_entry info[] = {{"info/index.json", TU_FILE,
	                                        "{\"name\": \"ca-certificates\", \"version\": "
	                                        "\"2024.7.4\", \"build\": \"hbcca054_0\"}"}};
	static const struct tu_entry pkg[] = {{"ssl/cacert.pem", TU_FILE, "-----BEGIN CERT"}};
	const char *dist = "ca-certificates-2024.7.4-hbcca054_0";
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_error err = {0};
	char *tmp = tu_mkdtemp();
	char *flat = tu_path("%s/flat.conda", tmp), *cd = tu_path("%s/%s.conda", tmp, dist);
	char *dest = tu_path("%s/dest", tmp);

	(void)state;
	tu_write_conda(flat, dist, info, 1, pkg, 1);
	zip_under_folder(flat, cd, dist);
	assert_int_equal(menv_archive_read_member(cd, "info/index.json", &b, &err), 0);
	json_t *j = json_loadb(b.buf, b.len, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(j, "version")), "2024.7.4");
	json_decref(j);
	menv_buf_reset(&b);
	assert_int_equal(menv_archive_read_member(cd, "ssl/cacert.pem", &b, &err), 0);
	assert_string_equal(b.buf, "-----BEGIN CERT");
	tu_mkdirs(dest);
	if (menv_archive_extract(cd, dest, &err))
		fail_msg("%s", err.msg);
	char *pem = tu_path("%s/ssl/cacert.pem", dest);
	menv_buf_reset(&b);
	assert_int_equal(menv_buf_read_file(&b, pem, &err), 0);
	assert_string_equal(b.buf, "-----BEGIN CERT");
	/* the ZIP's folder is no path on disk */
	char *folder = tu_path("%s/%s", dest, dist);
	assert_false(tu_exists(folder));
	free(folder);
	free(pem);
	menv_buf_release(&b);
	tu_rmtree(tmp);
	free(dest);
	free(cd);
	free(flat);
	free(tmp);
}

/* ---- hostile archives ---- */

struct hostile {
	char *root; /* tmp: holds dest/ and the archives; "outside" is root itself */
	char *dest;
};

static int hostile_setup(void **state)
{
	struct hostile *h = calloc(1, sizeof(*h));

	h->root = tu_mkdtemp();
	h->dest = tu_path("%s/dest", h->root);
	tu_mkdirs(h->dest);
	*state = h;
	return 0;
}

static int hostile_teardown(void **state)
{
	struct hostile *h = *state;

	tu_rmtree(h->root);
	free(h->dest);
	free(h->root);
	free(h);
	return 0;
}

/* Builds the entries as a .tar.bz2 and as a .conda (hostile pkg tar), extracts each into a
 * fresh dest and expects MENV_EUNSAFE naming `entry`, with `outside` not created. */
/* When set, the reason expect_unsafe()'s error must give (menv's own check, not only the
 * second line of libarchive's SECURE_* flags). */
static const char *unsafe_why;

static void expect_unsafe(struct hostile *h, const struct tu_entry *e, size_t n, const char *entry,
                          const char *outside)
{
	static const struct tu_entry info[] = {{"info/index.json", TU_FILE, "{}"}};
	char *tb = tu_path("%s/evil-1.0-0.tar.bz2", h->root);
	char *cd = tu_path("%s/evil-1.0-0.conda", h->root);
	const char *files[] = {tb, cd};
	struct menv_error err = {0};

	tu_write_tar(tb, "bzip2", e, n);
	tu_write_conda(cd, "evil-1.0-0", info, 1, e, n);
	for (size_t i = 0; i < 2; i++) {
		tu_rmtree(h->dest);
		tu_mkdirs(h->dest);
		memset(&err, 0, sizeof(err));
		int rc = menv_archive_extract(files[i], h->dest, &err);
		if (rc != MENV_EUNSAFE)
			print_message("unexpected: %s\n", err.msg);
		assert_int_equal(rc, MENV_EUNSAFE);
		assert_int_equal(err.code, MENV_EUNSAFE);
		assert_non_null(strstr(err.msg, entry));
		assert_non_null(strstr(err.msg, files[i]));
		assert_null(strchr(err.msg, '\n'));
		if (unsafe_why && !strstr(err.msg, unsafe_why))
			fail_msg("'%s' does not give the reason '%s'", err.msg, unsafe_why);
		if (outside)
			assert_false(tu_exists(outside));
	}
	free(cd);
	free(tb);
}

static void test_hostile_absolute(void **state)
{
	struct hostile *h = *state;
	char *abs = tu_path("%s/abs-pwned", h->root);
	struct tu_entry e[] = {{"ok.txt", TU_FILE, "fine"}, {abs, TU_FILE, "pwned"}};

	unsafe_why = "is an absolute path";
	expect_unsafe(h, e, 2, abs, abs);
	unsafe_why = NULL;
	free(abs);
}

static void test_hostile_dotdot(void **state)
{
	struct hostile *h = *state;
	char *outside = tu_path("%s/escape", h->root);
	struct tu_entry e[] = {{"../escape", TU_FILE, "pwned"}};
	struct tu_entry e2[] = {{"lib/../../escape", TU_FILE, "pwned"}};

	unsafe_why = "has a '..' component";
	expect_unsafe(h, e, 1, "'../escape'", outside);
	expect_unsafe(h, e2, 1, "'lib/../../escape'", outside);
	unsafe_why = NULL;
	free(outside);
}

static void test_hostile_symlink_to_etc(void **state)
{
	struct hostile *h = *state;
	struct tu_entry e[] = {{"etc", TU_SYMLINK, "/etc"}, {"etc/menv-pwned", TU_FILE, "pwned"}};
	char *link = tu_path("%s/etc", h->dest);

	expect_unsafe(h, e, 2, "'etc'", "/etc/menv-pwned");
	assert_false(tu_exists(link));
	free(link);
}

static void test_hostile_symlink_up(void **state)
{
	struct hostile *h = *state;
	struct tu_entry e[] = {{"a", TU_SYMLINK, "../../x"}};
	/* ".." after a normal component could go through a symlink: refused too */
	struct tu_entry e2[] = {{"lib/b", TU_SYMLINK, "sub/../../../x"}};
	char *a = tu_path("%s/a", h->dest);

	expect_unsafe(h, e, 1, "'a'", NULL);
	assert_false(tu_exists(a));
	expect_unsafe(h, e2, 1, "'lib/b'", NULL);
	free(a);
}

static void test_hostile_hardlinks(void **state)
{
	struct hostile *h = *state;
	struct tu_entry e[] = {{"passwd", TU_HARDLINK, "/etc/passwd"}};
	struct tu_entry e2[] = {{"x", TU_HARDLINK, "../victim"}};
	char *victim = tu_path("%s/victim", h->root);
	char *passwd = tu_path("%s/passwd", h->dest);
	struct stat st;

	expect_unsafe(h, e, 1, "'passwd'", passwd);
	tu_write(victim, "secret", 6);
	expect_unsafe(h, e2, 1, "'x'", NULL);
	assert_int_equal(stat(victim, &st), 0);
	assert_int_equal(st.st_nlink, 1); /* no second link was made */
	free(passwd);
	free(victim);
}

static void test_hostile_special_files(void **state)
{
	struct hostile *h = *state;
	struct tu_entry e[] = {{"fifo", TU_FIFO, NULL}};
	struct tu_entry e2[] = {{"dev/null", TU_CHARDEV, NULL}};
	char *fifo = tu_path("%s/fifo", h->dest);

	expect_unsafe(h, e, 1, "'fifo'", fifo);
	expect_unsafe(h, e2, 1, "'dev/null'", NULL);
	free(fifo);
}

/* a name that is not UTF-8 could be in no record (JSON): refused, and named escaped. The tar
 * is GNU format written here (testutil's pax writer would convert the name). */
static void test_hostile_non_utf8_name(void **state)
{
	struct hostile *h = *state;
	char *tb = tu_path("%s/evil-1.0-0.tar.bz2", h->root);
	char *f = tu_path("%s/bin/caf\xe9", h->dest);
	struct archive *a = archive_write_new();
	struct archive_entry *e = archive_entry_new();
	struct menv_error err = {0};

	assert_int_equal(archive_write_set_format_gnutar(a), ARCHIVE_OK);
	assert_int_equal(archive_write_add_filter_bzip2(a), ARCHIVE_OK);
	assert_int_equal(archive_write_open_filename(a, tb), ARCHIVE_OK);
	archive_entry_copy_pathname(e, "bin/caf\xe9");
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, 1);
	assert_true(archive_write_header(a, e) >= ARCHIVE_WARN);
	assert_int_equal(archive_write_data(a, "x", 1), 1);
	archive_entry_free(e);
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);

	assert_int_equal(menv_archive_extract(tb, h->dest, &err), MENV_EUNSAFE);
	char *want =
	        tu_path("unsafe entry 'bin/caf\\xe9' in '%s': the name is not valid UTF-8", tb);
	assert_string_equal(err.msg, want); /* the name escaped: the message stays UTF-8 */
	assert_false(tu_exists(f));
	free(want);
	free(tb);
	free(f);
}

static void test_hostile_existing_symlink(void **state)
{
	struct hostile *h = *state;
	char *outdir = tu_path("%s/outdir", h->root);
	char *link = tu_path("%s/out", h->dest);
	char *victim = tu_path("%s/outdir/file", h->root);
	char *tb = tu_path("%s/through-1.0-0.tar.bz2", h->root);
	struct tu_entry e[] = {{"out/file", TU_FILE, "pwned"}};
	struct menv_error err = {0};

	tu_mkdirs(outdir);
	tu_write_tar(tb, "bzip2", e, 1);
	assert_int_equal(symlink(outdir, link), 0);
	assert_int_equal(menv_archive_extract(tb, h->dest, &err), MENV_EUNSAFE);
	assert_non_null(strstr(err.msg, "'out/file'"));
	assert_non_null(strstr(err.msg, "symlink 'out'"));
	assert_false(tu_exists(victim));
	free(tb);
	free(victim);
	free(link);
	free(outdir);
}

/* A symlink then a file written through it, both inside the archive: refused. */
static void test_hostile_write_through_own_symlink(void **state)
{
	struct hostile *h = *state;
	struct tu_entry e[] = {
	        {"lib", TU_DIR, NULL}, {"alias", TU_SYMLINK, "lib"}, {"alias/file", TU_FILE, "x"}};
	char *f = tu_path("%s/lib/file", h->dest);

	expect_unsafe(h, e, 3, "'alias/file'", f);
	free(f);
}

static void test_safe_links_built_here(void **state)
{
	struct hostile *h = *state;
	static const struct tu_entry info[] = {{"info/index.json", TU_FILE, "{\"name\": \"ok\"}"}};
	struct tu_entry e[] = {{"lib/libx.so.1", TU_FILE, "ELF"},
	                       {"lib/libx.so", TU_SYMLINK, "libx.so.1"},
	                       {"bin/tool", TU_SYMLINK, "../lib/libx.so.1"},
	                       {"share/dot", TU_SYMLINK, "./../lib"},
	                       {"lib/libx-hard.so", TU_HARDLINK, "lib/libx.so.1"},
	                       {"./info/extra.txt", TU_FILE, "x"}};
	char *cd = tu_path("%s/ok-1.0-0.conda", h->root);
	char *p = tu_path("%s/bin/tool", h->dest);
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_error err = {0};

	menv_buf_init(&b);
	tu_write_conda(cd, "ok-1.0-0", info, 1, e, 6);
	assert_int_equal(menv_archive_extract(cd, h->dest, &err), 0);
	assert_int_equal(menv_buf_read_file(&b, p, &err), 0); /* follows bin/tool */
	assert_string_equal(b.buf, "ELF");
	free(p);
	p = tu_path("%s/info/extra.txt", h->dest);
	assert_true(tu_exists(p));
	menv_buf_release(&b);
	free(p);
	free(cd);
}

static void test_truncated_and_garbage(void **state)
{
	struct hostile *h = *state;
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_error err = {0};
	char *tb = tu_path("%s/trunc-1.0-0.tar.bz2", h->root);
	char *cd = tu_path("%s/trunc-1.0-0.conda", h->root);
	char *junk = tu_path("%s/junk-1.0-0.tar.bz2", h->root);

	menv_buf_init(&b);
	assert_int_equal(menv_buf_read_file(&b, ZLIB_TARBZ2, NULL), 0);
	tu_write(tb, b.buf, b.len / 2);
	menv_buf_reset(&b);
	assert_int_equal(menv_buf_read_file(&b, ZLIB_CONDA, NULL), 0);
	tu_write(cd, b.buf, b.len - 200);
	tu_write(junk, "this is not an archive at all\n", 30);

	assert_int_equal(menv_archive_extract(tb, h->dest, &err), MENV_EPARSE);
	assert_non_null(strstr(err.msg, tb));
	assert_int_equal(menv_archive_extract(cd, h->dest, &err), MENV_EPARSE);
	assert_non_null(strstr(err.msg, cd));
	assert_int_equal(menv_archive_extract(junk, h->dest, &err), MENV_EPARSE);
	assert_non_null(strstr(err.msg, junk));
	menv_buf_reset(&b);
	assert_int_equal(menv_archive_read_member(junk, "info/index.json", &b, &err), MENV_EPARSE);
	assert_int_equal(menv_archive_read_member(cd, "info/index.json", &b, &err), MENV_EPARSE);

	menv_buf_release(&b);
	free(junk);
	free(cd);
	free(tb);
}

/* ---- lbzip2 and the built-in bzip2 ---- */

/* Both trees hold the same names, types, modes, bytes and link targets. */
static void same_tree(const char *a, const char *b)
{
	struct menv_strvec fa = MENV_STRVEC_INIT, fb = MENV_STRVEC_INIT;

	file_set(a, &fa);
	file_set(b, &fb);
	assert_int_equal(fa.n, fb.n);
	for (size_t i = 0; i < fa.n; i++) {
		char *pa = tu_path("%s/%s", a, fa.v[i]), *pb = tu_path("%s/%s", b, fb.v[i]);
		struct menv_buf ba = MENV_BUF_INIT, bb = MENV_BUF_INIT;
		struct stat sa, sb;

		assert_string_equal(fa.v[i], fb.v[i]);
		assert_int_equal(lstat(pa, &sa), 0);
		assert_int_equal(lstat(pb, &sb), 0);
		assert_int_equal(sa.st_mode, sb.st_mode);
		if (S_ISLNK(sa.st_mode)) {
			char la[256] = "", lb[256] = "";
			assert_true(readlink(pa, la, sizeof(la) - 1) > 0);
			assert_true(readlink(pb, lb, sizeof(lb) - 1) > 0);
			assert_string_equal(la, lb);
		} else {
			menv_buf_init(&ba);
			menv_buf_init(&bb);
			assert_int_equal(menv_buf_read_file(&ba, pa, NULL), 0);
			assert_int_equal(menv_buf_read_file(&bb, pb, NULL), 0);
			assert_int_equal(ba.len, bb.len);
			assert_memory_equal(ba.buf, bb.buf, ba.len);
			menv_buf_release(&ba);
			menv_buf_release(&bb);
		}
		free(pa);
		free(pb);
	}
	menv_strvec_clear(&fa);
	menv_strvec_clear(&fb);
}

static int count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	int c, n = 0;

	if (!f)
		return 0;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static void test_lbzip2_and_builtin(void **state)
{
	struct hostile *h = *state;
	const char *real = "/usr/bin/lbzip2";
	struct menv_error err = {0};
	struct menv_buf b = MENV_BUF_INIT, want = MENV_BUF_INIT;
	char *wrap = tu_path("%s/bin", h->root), *mark = tu_path("%s/used", h->root);
	char *script = tu_path("%s/lbzip2", wrap), *text;
	char *tb = tu_path("%s/big-1.0-0.tar.bz2", h->root);
	char *bad = tu_path("%s/bad-1.0-0.tar.bz2", h->root);
	char *cut = tu_path("%s/cut-1.0-0.tar.bz2", h->root);
	char *d1 = tu_path("%s/via-lbzip2", h->root), *d2 = tu_path("%s/via-libarchive", h->root);
	char *big = malloc(4u << 20), *path0 = strdup(getenv("PATH") ? getenv("PATH") : "");
	char *newpath = tu_path("%s:%s", wrap, path0);
	uint32_t x = 2463534242u;

	if (access(real, X_OK) < 0) {
		print_message("lbzip2 is not installed (.ci/setup installs it): skipped\n");
		menv_skip();
	}
	/* 4 MiB of six bits per byte: about 3 MB of bzip2, four blocks, above LBZIP2_MIN */
	for (size_t i = 0; i < (4u << 20) - 1; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		big[i] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[x & 63];
	}
	big[(4u << 20) - 1] = '\0';
	struct tu_entry e[] = {
	        {"info/index.json", TU_FILE, "{\"name\": \"big\"}"},
	        {"lib", TU_DIR, NULL},
	        {"lib/big.dat", TU_FILE, big},
	        {"lib/small.txt", TU_FILE, "small\n"},
	        {"lib/again.dat", TU_HARDLINK, "lib/big.dat"},
	        {"lib/link.dat", TU_SYMLINK, "big.dat"},
	        {"share/doc/README", TU_FILE, "read me\n"},
	};
	tu_write_tar(tb, "bzip2", e, sizeof(e) / sizeof(*e));
	menv_buf_init(&b);
	assert_int_equal(menv_buf_read_file(&b, tb, NULL), 0);
	assert_true(b.len > 2 * 900 * 1000);
	assert_memory_equal(b.buf, "BZh", 3);

	/* an lbzip2 first on PATH that notes each use, then runs the real one */
	tu_mkdirs(wrap);
	text = tu_path("#!/bin/sh\necho used >>'%s'\nexec %s \"$@\"\n", mark, real);
	tu_write(script, text, strlen(text));
	assert_int_equal(chmod(script, 0755), 0);
	setenv("PATH", newpath, 1);

	tu_mkdirs(d1);
	if (menv_archive_extract(tb, d1, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(count_lines(mark), 1);
	setenv("MENV_TEST_NO_LBZIP2", "1", 1);
	tu_mkdirs(d2);
	if (menv_archive_extract(tb, d2, &err))
		fail_msg("%s", err.msg);
	unsetenv("MENV_TEST_NO_LBZIP2");
	assert_int_equal(count_lines(mark), 1); /* the built-in decoder read it */
	same_tree(d1, d2);
	char *bigf = tu_path("%s/lib/big.dat", d1);
	menv_buf_init(&want);
	assert_int_equal(menv_buf_read_file(&want, bigf, NULL), 0);
	assert_int_equal(want.len, (4u << 20) - 1);
	assert_memory_equal(want.buf, big, want.len);
	free(bigf);

	/* a flipped byte in a middle block (its CRC fails) and a cut stream: one line each,
	 * naming the file, through either decoder; the safety checks are the tar reader's, the
	 * same for both (test_hostile_*) */
	b.buf[b.len / 2] ^= 0x55;
	tu_write(bad, b.buf, b.len);
	b.buf[b.len / 2] ^= 0x55;
	tu_write(cut, b.buf, b.len * 2 / 3);
	const char *broken[] = {bad, cut};
	for (int k = 0; k < 2; k++)
		for (int builtin = 0; builtin < 2; builtin++) {
			char *d = tu_path("%s/broken-%d-%d", h->root, k, builtin);
			int before = count_lines(mark);
			tu_mkdirs(d);
			if (builtin)
				setenv("MENV_TEST_NO_LBZIP2", "1", 1);
			memset(&err, 0, sizeof(err));
			int rc = menv_archive_extract(broken[k], d, &err);
			unsetenv("MENV_TEST_NO_LBZIP2");
			print_message("%s: %s\n", builtin ? "libarchive" : "lbzip2", err.msg);
			assert_int_equal(rc, MENV_EPARSE);
			assert_non_null(strstr(err.msg, broken[k]));
			assert_null(strchr(err.msg, '\n'));
			assert_int_equal(count_lines(mark), before + !builtin);
			if (!builtin && k == 0)
				assert_non_null(strstr(err.msg, "lbzip2: "));
			free(d);
		}
	/* an lbzip2 ended by SIGTERM (as Ctrl-C ends the process group) is an interruption; one
	 * killed otherwise is an error naming the signal */
	const char *ends[] = {"kill -TERM $$\n", "kill -KILL $$\n"};
	const int codes[] = {MENV_EINTR, MENV_EPARSE};
	for (int k = 0; k < 2; k++) {
		char *body = tu_path("#!/bin/sh\n%s", ends[k]),
		     *d = tu_path("%s/ended-%d", h->root, k);
		tu_write(script, body, strlen(body));
		tu_mkdirs(d);
		memset(&err, 0, sizeof(err));
		assert_int_equal(menv_archive_extract(tb, d, &err), codes[k]);
		assert_non_null(strstr(err.msg, tb));
		assert_null(strchr(err.msg, '\n'));
		if (k == 1)
			assert_non_null(strstr(err.msg, "signal 9"));
		free(body);
		free(d);
	}
	setenv("PATH", path0, 1);

	menv_buf_release(&b);
	menv_buf_release(&want);
	free(text);
	free(newpath);
	free(path0);
	free(big);
	free(d1);
	free(d2);
	free(cut);
	free(bad);
	free(tb);
	free(script);
	free(mark);
	free(wrap);
}

#define HOSTILE(t) cmocka_unit_test_setup_teardown(t, hostile_setup, hostile_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_zlib_both_formats),
	        cmocka_unit_test(test_nano_gzip_named_bz2),
	        cmocka_unit_test(test_symlink_package),
	        cmocka_unit_test(test_zip64_and_dotslash),
	        cmocka_unit_test(test_conda_members_in_folder),
	        cmocka_unit_test(test_read_member),
	        HOSTILE(test_hostile_absolute),
	        HOSTILE(test_hostile_dotdot),
	        HOSTILE(test_hostile_symlink_to_etc),
	        HOSTILE(test_hostile_symlink_up),
	        HOSTILE(test_hostile_hardlinks),
	        HOSTILE(test_hostile_special_files),
	        HOSTILE(test_hostile_non_utf8_name),
	        HOSTILE(test_hostile_existing_symlink),
	        HOSTILE(test_hostile_write_through_own_symlink),
	        HOSTILE(test_safe_links_built_here),
	        HOSTILE(test_truncated_and_garbage),
	        HOSTILE(test_lbzip2_and_builtin),
	};
	return menv_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
