/* The beneath primitives (envs/beneath.c): every path is resolved under a root descriptor, no
 * link above the last component is followed (not even one pointing inside the root), the
 * last component is never followed, and a link's target (inside or outside) is never
 * written. Each case runs twice: with openat2 (where the kernel has it) and with the walk
 * forced, as on kernels without openat2. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "link.h"

struct fixture {
	char top[256];  /* <tmp>/beneath-XXXXXX */
	char root[300]; /* <top>/root, the prefix */
	int rootfd;
};

static void put(const char *path, const char *data)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(data, f);
	fclose(f);
}

static char *slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static size_t entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;
	assert_non_null(d);
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

static char *at(struct fixture *fx, const char *rel)
{
	static char p[2][600];
	static int k;
	k ^= 1;
	snprintf(p[k], sizeof(p[k]), "%s/%s", fx->top, rel);
	return p[k];
}

/* <top>/outside/victim.txt, <top>/root/{d/,f,in -> d,up -> ../outside,abs -> <top>/outside,
 * leaf -> ../outside/victim.txt,d/deep/L -> ../..} */
static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	mkdir(MENV_TEST_TMP, 0755);
	snprintf(fx->top, sizeof(fx->top), "%s/beneath-XXXXXX", MENV_TEST_TMP);
	assert_non_null(mkdtemp(fx->top));
	snprintf(fx->root, sizeof(fx->root), "%s/root", fx->top);
	assert_int_equal(mkdir(fx->root, 0755), 0);
	assert_int_equal(mkdir(at(fx, "outside"), 0755), 0);
	put(at(fx, "outside/victim.txt"), "victim\n");
	assert_int_equal(mkdir(at(fx, "root/d"), 0755), 0);
	assert_int_equal(mkdir(at(fx, "root/d/deep"), 0755), 0);
	put(at(fx, "root/f"), "file\n");
	assert_int_equal(symlink("d", at(fx, "root/in")), 0);
	assert_int_equal(symlink("../outside", at(fx, "root/up")), 0);
	assert_int_equal(symlink(at(fx, "outside"), at(fx, "root/abs")), 0);
	assert_int_equal(symlink("../outside/victim.txt", at(fx, "root/leaf")), 0);
	assert_int_equal(symlink("../..", at(fx, "root/d/deep/L")), 0);
	assert_int_equal(menv_beneath_root(fx->root, &fx->rootfd, NULL), 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	close(fx->rootfd);
	menv_remove_tree(fx->top);
	assert_int_equal(access(fx->top, F_OK), -1);
	free(fx);
	menv_beneath_force_walk(false);
	return 0;
}

static void outside_untouched(struct fixture *fx)
{
	assert_int_equal(entries(at(fx, "outside")), 1);
	assert_string_equal(slurp(at(fx, "outside/victim.txt")), "victim\n");
}

static void test_relpath(void **state)
{
	(void)state;
	assert_true(menv_beneath_relpath_ok("a"));
	assert_true(menv_beneath_relpath_ok("lib/python3.11/site-packages/x.py"));
	assert_true(menv_beneath_relpath_ok("..a/b..c/...")); /* names, not ".." */
	assert_false(menv_beneath_relpath_ok(""));
	assert_false(menv_beneath_relpath_ok("/etc/passwd"));
	assert_false(menv_beneath_relpath_ok("a/../../b"));
	assert_false(menv_beneath_relpath_ok(".."));
	assert_false(menv_beneath_relpath_ok("./conda-meta/x.json"));
	assert_false(menv_beneath_relpath_ok("a//b"));
	assert_false(menv_beneath_relpath_ok("a/"));
	assert_false(menv_beneath_relpath_ok("a\nb"));
}

/* mkdirs' callback: appends "<rel>;" to the string ud */
static int cb(void *ud, const char *rel, struct menv_error *e)
{
	(void)e;
	strcat(ud, rel);
	strcat(ud, ";");
	return 0;
}

static void cases(struct fixture *fx)
{
	struct menv_error err = {0};
	struct stat st;
	int fd = -1;

	/* a plain write, through real directories */
	assert_int_equal(menv_beneath_write(fx->rootfd, "d/x", "x\n", 2, 0644, O_EXCL, &err), 0);
	assert_string_equal(slurp(at(fx, "root/d/x")), "x\n");
	/* O_EXCL: an existing name is never overwritten */
	assert_int_equal(menv_beneath_write(fx->rootfd, "d/x", "y\n", 2, 0644, O_EXCL, &err),
	                 MENV_EIO);
	assert_int_equal(errno, EEXIST);
	assert_string_equal(slurp(at(fx, "root/d/x")), "x\n");

	/* links above the last component: refused, whether they point in or out */
	const char *through[] = {"in/x", "up/x", "abs/x", "d/deep/L/x", "d/deep/L/d/x", "up/new/x"};
	for (size_t i = 0; i < sizeof(through) / sizeof(*through); i++) {
		memset(&err, 0, sizeof(err));
		assert_int_equal(
		        menv_beneath_write(fx->rootfd, through[i], "z", 1, 0644, O_EXCL, &err),
		        MENV_EUNSAFE);
		assert_non_null(strstr(err.msg, "is a symbolic link"));
		assert_int_equal(menv_beneath_mkdirs(fx->rootfd, through[i], NULL, NULL, &err),
		                 MENV_EUNSAFE);
		assert_int_equal(menv_beneath_lstat(fx->rootfd, through[i], &st, &err),
		                 MENV_EUNSAFE);
		assert_int_equal(menv_beneath_symlink("t", fx->rootfd, through[i], &err),
		                 MENV_EUNSAFE);
		assert_int_equal(menv_beneath_mkdir(fx->rootfd, through[i], 0755, &err),
		                 MENV_EUNSAFE);
		assert_int_equal(menv_beneath_unlink(fx->rootfd, through[i], 0, &err),
		                 MENV_EUNSAFE);
		assert_int_equal(menv_beneath_rename(fx->rootfd, "d/x", through[i], &err),
		                 MENV_EUNSAFE);
		assert_int_equal(menv_beneath_link(at(fx, "root/f"), fx->rootfd, through[i], &err),
		                 MENV_EUNSAFE);
		menv_beneath_remove_tree(fx->rootfd, through[i]);
		assert_false(menv_beneath_exists(fx->rootfd, through[i]));
	}
	memset(&err, 0, sizeof(err));
	menv_beneath_write(fx->rootfd, "d/deep/L/d/x", "z", 1, 0644, O_EXCL, &err);
	assert_string_equal(err.msg, "'d/deep/L' is a symbolic link (menv writes nothing through "
	                             "links in a prefix)");
	assert_int_equal(entries(at(fx, "root/d")), 2); /* deep, x */
	assert_string_equal(slurp(at(fx, "root/d/x")), "x\n");
	outside_untouched(fx);

	/* the last component is never followed: a link to a file outside is not opened */
	assert_int_equal(menv_beneath_open(fx->rootfd, "leaf", O_WRONLY | O_TRUNC, 0, &fd, &err),
	                 MENV_EUNSAFE);
	assert_int_equal(fd, -1);
	assert_int_equal(menv_beneath_write(fx->rootfd, "leaf", "z", 1, 0644, O_TRUNC, &err),
	                 MENV_EUNSAFE);
	assert_int_equal(menv_beneath_lstat(fx->rootfd, "leaf", &st, &err), 0);
	assert_true(S_ISLNK(st.st_mode));
	outside_untouched(fx);

	/* not a directory, missing, lexically bad */
	assert_int_equal(menv_beneath_write(fx->rootfd, "f/x", "z", 1, 0644, O_EXCL, &err),
	                 MENV_EEXIST);
	assert_int_equal(menv_beneath_write(fx->rootfd, "nope/x", "z", 1, 0644, O_EXCL, &err),
	                 MENV_ENOTFOUND);
	assert_int_equal(menv_beneath_write(fx->rootfd, "../outside/x", "z", 1, 0644, O_EXCL, &err),
	                 MENV_EUNSAFE);
	assert_int_equal(menv_beneath_write(fx->rootfd, "d/../../x", "z", 1, 0644, O_EXCL, &err),
	                 MENV_EUNSAFE);
	outside_untouched(fx);

	/* mkdir -p: the callback sees each directory before it is made */
	char seen[256] = "";
	assert_int_equal(menv_beneath_mkdirs(fx->rootfd, "d/a/b/c", cb, seen, &err), 0);
	assert_string_equal(seen, "d/a;d/a/b;d/a/b/c;");
	assert_int_equal(stat(at(fx, "root/d/a/b/c"), &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	seen[0] = '\0';
	assert_int_equal(menv_beneath_mkdirs(fx->rootfd, "d/a/b/c", cb, seen, &err), 0);
	assert_string_equal(seen, ""); /* all there already */
	assert_int_equal(menv_beneath_mkdirs(fx->rootfd, "d/deep/L/new", cb, seen, &err),
	                 MENV_EUNSAFE);
	assert_string_equal(seen, "");
	assert_int_equal(menv_beneath_mkdirs(fx->rootfd, "f/g", cb, seen, &err), MENV_EEXIST);
	assert_true(menv_beneath_dir_empty(fx->rootfd, "d/a/b/c"));
	assert_false(menv_beneath_dir_empty(fx->rootfd, "d/a"));
	assert_false(menv_beneath_dir_empty(fx->rootfd, "in")); /* a link, not a directory */

	/* links are made, moved and removed as links */
	assert_int_equal(menv_beneath_symlink("../../outside", fx->rootfd, "d/out", &err), 0);
	char target[64] = "";
	assert_true(readlink(at(fx, "root/d/out"), target, sizeof(target) - 1) > 0);
	assert_string_equal(target, "../../outside");
	assert_int_equal(menv_beneath_rename(fx->rootfd, "d/out", "d/a/out2", &err), 0);
	assert_int_equal(menv_beneath_lstat(fx->rootfd, "d/a/out2", &st, &err), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(menv_beneath_unlink(fx->rootfd, "d/a/out2", 0, &err), 0);
	assert_int_equal(menv_beneath_unlink(fx->rootfd, "d/a/out2", 0, &err), MENV_ENOTFOUND);
	assert_int_equal(menv_beneath_link(at(fx, "root/f"), fx->rootfd, "d/a/hard", &err), 0);
	assert_string_equal(slurp(at(fx, "root/d/a/hard")), "file\n");
	outside_untouched(fx);

	/* rm -rf never follows: links to the outside and to the root go, their targets stay */
	assert_int_equal(symlink("../../../outside", at(fx, "root/d/a/b/up")), 0);
	assert_int_equal(symlink("../../..", at(fx, "root/d/a/b/root")), 0);
	put(at(fx, "root/d/a/b/c/file"), "in c\n");
	menv_beneath_remove_tree(fx->rootfd, "d/a");
	assert_false(menv_beneath_exists(fx->rootfd, "d/a"));
	assert_int_equal(entries(at(fx, "root/d")), 2);
	assert_string_equal(slurp(at(fx, "root/f")), "file\n");
	outside_untouched(fx);

	/* one component at a time (the link of a package, envs/link.c): made where missing, the
	 * callback first, opened where there; a link or a file in the way refused, nothing made */
	int dfd = -1, sub = -1;
	seen[0] = '\0';
	assert_int_equal(menv_beneath_dir(fx->rootfd, "d", &dfd, &err), 0);
	assert_int_equal(menv_beneath_subdir(dfd, "n", "d/n", cb, seen, &sub, &err), 0);
	assert_string_equal(seen, "d/n;");
	assert_true(sub >= 0);
	assert_int_equal(menv_beneath_write_at(sub, "w", "d/n/w", "w\n", 2, 0644, O_EXCL, &err), 0);
	assert_string_equal(slurp(at(fx, "root/d/n/w")), "w\n");
	assert_int_equal(menv_beneath_write_at(sub, "w", "d/n/w", "v\n", 2, 0644, O_EXCL, &err),
	                 MENV_EIO);
	close(sub);
	assert_int_equal(menv_beneath_subdir(dfd, "n", "d/n", cb, seen, &sub, &err), 0);
	assert_string_equal(seen, "d/n;"); /* there already: no callback */
	close(sub);
	const char *bad[][2] = {{"in", "MENV_EUNSAFE"},  {"up", "MENV_EUNSAFE"},
	                        {"abs", "MENV_EUNSAFE"}, {"leaf", "MENV_EUNSAFE"},
	                        {"f", "MENV_EEXIST"},    {"..", "MENV_EUNSAFE"},
	                        {"d/n", "MENV_EUNSAFE"}, {".", "MENV_EUNSAFE"}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		memset(&err, 0, sizeof(err));
		sub = -1;
		int rc =
		        menv_beneath_subdir(fx->rootfd, bad[i][0], bad[i][0], cb, seen, &sub, &err);
		assert_int_equal(rc, bad[i][1][6] == 'U' ? MENV_EUNSAFE : MENV_EEXIST);
		assert_int_equal(sub, -1);
	}
	memset(&err, 0, sizeof(err));
	menv_beneath_subdir(fx->rootfd, "up", "up", cb, seen, &sub, &err);
	assert_string_equal(err.msg, "'up' is a symbolic link (menv writes nothing through links "
	                             "in a prefix)");
	assert_string_equal(seen, "d/n;");
	/* the last component of write_at is never followed either */
	assert_int_equal(
	        menv_beneath_write_at(fx->rootfd, "leaf", "leaf", "z", 1, 0644, O_TRUNC, &err),
	        MENV_EUNSAFE);
	outside_untouched(fx);
	/* the one-call open: a directory, or -1 with errno for a link, a file or nothing */
	int ffd = -1;
	if (menv_beneath_uses_openat2()) {
		assert_int_equal(menv_beneath_dir_fast(fx->rootfd, "d/deep", &ffd), 0);
		assert_true(ffd >= 0);
		close(ffd);
		const char *no[] = {"in", "up", "d/deep/L", "d/deep/L/d", "f", "nope", "nope/x"};
		for (size_t i = 0; i < sizeof(no) / sizeof(*no); i++) {
			assert_int_equal(menv_beneath_dir_fast(fx->rootfd, no[i], &ffd), -1);
			assert_int_equal(ffd, -1);
		}
		menv_beneath_dir_fast(fx->rootfd, "nope/x", &ffd);
		assert_int_equal(errno, ENOENT);
	} else {
		assert_int_equal(menv_beneath_dir_fast(fx->rootfd, "d/deep", &ffd), -1);
		assert_int_equal(errno, ENOSYS);
	}
	close(dfd);

	/* clean up for the next run */
	assert_int_equal(menv_beneath_unlink(fx->rootfd, "d/n/w", 0, &err), 0);
	assert_int_equal(menv_beneath_unlink(fx->rootfd, "d/n", AT_REMOVEDIR, &err), 0);
	assert_int_equal(menv_beneath_unlink(fx->rootfd, "d/x", 0, &err), 0);
}

/* Whether this kernel (and any seccomp filter) lets openat2 through. */
static bool kernel_has_openat2(void)
{
	struct open_how how = {.flags = O_PATH | O_DIRECTORY, .resolve = RESOLVE_BENEATH};
	long fd = syscall(SYS_openat2, AT_FDCWD, ".", &how, sizeof(how));
	if (fd >= 0)
		close((int)fd);
	return fd >= 0;
}

static void test_openat2(void **state)
{
	struct fixture *fx = *state;
	menv_beneath_force_walk(false);
	cases(fx);
	if (kernel_has_openat2())
		assert_true(menv_beneath_uses_openat2());
	else
		print_message("note: this kernel has no openat2: the walk ran both times\n");
}

static void test_walk(void **state)
{
	struct fixture *fx = *state;
	menv_beneath_force_walk(true);
	cases(fx);
	assert_false(menv_beneath_uses_openat2());
}

/* menv_remove_tree on a path that is a link removes the link only */
static void test_remove_tree_link(void **state)
{
	struct fixture *fx = *state;
	menv_remove_tree(at(fx, "root/up"));
	assert_int_equal(access(at(fx, "root/up"), F_OK), -1);
	menv_remove_tree(at(fx, "root/d/deep"));
	assert_int_equal(access(at(fx, "root/d/deep"), F_OK), -1);
	assert_int_equal(access(at(fx, "root/f"), F_OK), 0);
	outside_untouched(fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_relpath),
	        cmocka_unit_test_setup_teardown(test_openat2, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_walk, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_remove_tree_link, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
