/*
 * registry.c - the registry of environments that conda, mamba and micromamba share:
 * `$HOME/.conda/environments.txt`, one absolute prefix path a line. `menv create` adds the new
 * prefix (so environments made with -p show in `menv env list`, and in conda's), `menv remove
 * --all` takes it out. Changes are read-modify-write under flock(2) on
 * `environments.txt.lock` beside it and land with a rename, so two concurrent creates never
 * lose a line and a reader never sees half a file. Lines menv does not touch are kept as they
 * are (conda's own entries, blank lines, comments).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "activate.h"
#include "link.h"
#include "prefix.h"
#include "registry.h"
#include "solver.h"

char *menv_envreg_path(void)
{
	const char *h;
	if (menv_home(&h, NULL))
		return NULL; /* no registry rather than one in "/" or the current directory */
	return menv_xasprintf("%s%s.conda/environments.txt", h, h[strlen(h) - 1] == '/' ? "" : "/");
}

char *menv_envreg_normalize(const char *prefix)
{
	/* os.path.normpath for an absolute path: no "//", ".", trailing "/"; ".." taken
	 * lexically */
	size_t n = strlen(prefix);
	char *out = menv_xmalloc(n + 2);
	size_t len = 0;
	const char *p = prefix;

	out[len++] = '/';
	while (*p) {
		while (*p == '/')
			p++;
		const char *s = p;
		while (*p && *p != '/')
			p++;
		size_t cl = (size_t)(p - s);
		if (!cl || (cl == 1 && s[0] == '.'))
			continue;
		if (cl == 2 && s[0] == '.' && s[1] == '.') {
			while (len > 1 && out[len - 1] != '/')
				len--;
			if (len > 1)
				len--; /* the '/' before the dropped component */
			continue;
		}
		if (len > 1)
			out[len++] = '/';
		memcpy(out + len, s, cl);
		len += cl;
	}
	out[len] = '\0';
	return out;
}

/* A registry line as a prefix: surrounding blanks (and a CR) stripped, normalized; NULL for a
 * line that names no absolute path (blank, comment). Caller frees. */
static char *line_prefix(const char *line, size_t n)
{
	while (n && (line[0] == ' ' || line[0] == '\t')) {
		line++;
		n--;
	}
	while (n && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r'))
		n--;
	if (!n || line[0] != '/')
		return NULL;
	char *raw = menv_xstrndup(line, n);
	char *norm = menv_envreg_normalize(raw);
	free(raw);
	return norm;
}

int menv_envreg_load(struct menv_strvec *out, struct menv_error *err)
{
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_error rerr = {0};
	char *path = menv_envreg_path();
	int rc = 0;

	if (!path)
		goto out;
	rc = menv_buf_read_file(&b, path, &rerr);
	if (rc == MENV_ENOTFOUND) {
		rc = 0;
		goto out;
	}
	if (rc) {
		*err = rerr;
		goto out;
	}
	/* the prefixes read so far, hashed: a list scan each line was quadratic in the lines */
	struct menv_strset seen = MENV_STRSET_INIT;
	for (size_t i = 0; i < out->n; i++)
		menv_strset_add(&seen, out->v[i]);
	for (const char *l = b.buf; *l;) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);
		char *p = line_prefix(l, n);
		if (p && menv_strset_add(&seen, p))
			menv_strvec_push_owned(out, p);
		else
			free(p);
		l += n + (e ? 1 : 0);
	}
	menv_strset_clear(&seen);
out:
	menv_buf_release(&b);
	free(path);
	return rc;
}

/* Adds (add) or takes out every line naming `prefix`, under the registry's lock. */
static int update(const char *prefix, bool add, struct menv_error *err)
{
	struct menv_buf old = MENV_BUF_INIT, neu = MENV_BUF_INIT;
	struct menv_error rerr = {0};
	char *path = menv_envreg_path(), *lockpath = NULL, *dir = NULL, *target = NULL;
	char *want = NULL;
	bool found = false, changed = false, blocked = false;
	struct stat sb;
	int fd = -1, rc = 0;

	if (!path) {
		/* say what is wrong with HOME: unset, empty, relative or not a directory */
		const char *h;
		rc = menv_home(&h, err);
		if (!rc)
			rc = menv_error_set(err, MENV_EUSAGE, "no registry path");
		goto out;
	}
	if (prefix[0] != '/') {
		rc = menv_error_set(err, MENV_EUSAGE, "prefix '%s' is not an absolute path",
		                    prefix);
		goto out;
	}
	want = menv_envreg_normalize(prefix);
	if (!add && lstat(path, &sb) < 0 && (errno == ENOENT || errno == ENOTDIR))
		goto out; /* no registry: nothing to take out (and no lock file made for it) */
	dir = menv_xstrndup(path, (size_t)(strrchr(path, '/') - path));
	if (add && mkdir(dir, menv_dir_mode()) < 0 && errno != EEXIST) {
		rc = menv_error_sys(err, MENV_EIO, "cannot create '%s'", dir);
		goto out;
	}
	lockpath = menv_xasprintf("%s.lock", path);
	fd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, menv_file_mode());
	if (fd < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot open '%s'", lockpath);
		goto out;
	}
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			rc = menv_error_sys(err, MENV_EIO, "cannot lock '%s'", lockpath);
			goto out;
		}
	}
	/* the lock is held: a Ctrl-C now (after the prefix was made or removed) no longer stops
	 * the update, which would leave the environment out of the registry (or a removed one
	 * in it) while the command succeeds; a regular file's read cannot wait */
	menv_cancel_block(true);
	blocked = true;
	const char *pause = getenv("MENV_TEST_PAUSE_REGISTRY");
	if (pause && atoi(pause) > 0) /* test hook: a Ctrl-C lands here (envs.h) */
		sleep((unsigned)atoi(pause));
	/* a registry that is a symbolic link (kept in a dotfiles repository): write its target */
	if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
		char real[PATH_MAX];
		if (realpath(path, real))
			target = menv_xstrdup(real);
	}
	rc = menv_buf_read_file(&old, target ? target : path, &rerr);
	if (rc && rc != MENV_ENOTFOUND) {
		*err = rerr;
		goto out;
	}
	rc = 0;
	for (const char *l = old.buf; *l;) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);
		char *p = line_prefix(l, n);
		bool match = p && !strcmp(p, want);
		free(p);
		found |= match;
		if (add || !match) {
			menv_buf_add(&neu, l, n);
			menv_buf_addch(&neu, '\n');
		} else {
			changed = true;
		}
		l += n + (e ? 1 : 0);
	}
	if (add && !found) {
		menv_buf_addf(&neu, "%s\n", want);
		changed = true;
	}
	if (changed)
		rc = menv_write_file_atomic(target ? target : path, neu.buf, neu.len, err);
out:
	if (blocked)
		menv_cancel_block(false);
	if (fd >= 0)
		close(fd); /* releases the lock */
	menv_buf_release(&old);
	menv_buf_release(&neu);
	free(want);
	free(target);
	free(lockpath);
	free(dir);
	free(path);
	return rc;
}

bool menv_env_same_prefix(const char *a, const char *b)
{
	if (a[0] != '/' || b[0] != '/')
		return !strcmp(a, b);
	char *x = menv_envreg_normalize(a), *y = menv_envreg_normalize(b);
	bool same = !strcmp(x, y);
	free(x);
	free(y);
	return same;
}

int menv_envreg_add(const char *prefix, struct menv_error *err)
{
	return update(prefix, true, err);
}

int menv_envreg_remove(const char *prefix, struct menv_error *err)
{
	return update(prefix, false, err);
}

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* The first bytes of a long name or path for an error line (whole UTF-8 characters, with
 * "..." when cut). Caller frees. */
static char *shown_start(const char *s)
{
	size_t n = strlen(s), cut = n > 60 ? 60 : n;
	while (cut < n && cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
		cut--;
	char *head = menv_xasprintf("%.*s%s", (int)cut, s, cut < n ? "..." : "");
	char *shown = menv_utf8_escape(head);
	free(head);
	return shown;
}

/* The longest prefix: PATH_MAX less room for what menv names in and beside it (the staging
 * folder ".<name up to 200>.menv-tmp-XXXXXX", conda-meta/<dist>.json and its temporary
 * files); a longer one passed every check and failed at the staging folder, half made. */
#define PREFIX_MAX (PATH_MAX - 1 - 256)

int menv_env_path_check(const char *path, struct menv_error *err)
{
	size_t n = strlen(path);
	if (n > PREFIX_MAX) {
		char *shown = shown_start(path);
		int rc = menv_error_set(
		        err, MENV_EUSAGE,
		        "environment path '%s' is too long: %zu bytes, at most %d "
		        "(PATH_MAX less %d for the names menv makes in and beside it)",
		        shown, n, PREFIX_MAX, PATH_MAX - 1 - PREFIX_MAX);
		free(shown);
		return rc;
	}
	for (const char *s = path; *s;) {
		size_t c = strcspn(s, "/");
		if (c > NAME_MAX) {
			char *comp = menv_xasprintf("%.*s", (int)c, s), *shown = shown_start(comp);
			int rc = menv_error_set(err, MENV_EUSAGE,
			                        "environment path component '%s' is too long: %zu "
			                        "bytes, the system allows at most %d (NAME_MAX)",
			                        shown, c, NAME_MAX);
			free(shown);
			free(comp);
			return rc;
		}
		s += c;
		s += strspn(s, "/");
	}
	return 0;
}

int menv_env_name_check(const char *name, bool fresh, struct menv_error *err)
{
	char why[96];

	if (!*name || strchr(name, '/') || (fresh && (strpbrk(name, " :#") || name[0] == '-')) ||
	    !strcmp(name, ".") || !strcmp(name, ".."))
		snprintf(why, sizeof(why), "it may not %s",
		         fresh ? "start with '-' nor contain '/', ' ', ':' or '#'"
		               : "be empty, '.', '..' or contain '/'");
	/* the name is a line of history, the registry and every export */
	else if (!menv_utf8_valid(name, strlen(name), NULL) || has_control(name))
		snprintf(why, sizeof(why), "it must be UTF-8 text without control characters");
	/* a folder's name: longer, and only the last rename of a create would find out */
	else if (strlen(name) > NAME_MAX)
		snprintf(why, sizeof(why), "%zu bytes, the system allows at most %d (NAME_MAX)",
		         strlen(name), NAME_MAX);
	else
		return 0;
	char *shown = shown_start(name);
	int rc = menv_error_set(err, MENV_EUSAGE, "invalid environment name '%s': %s", shown, why);
	free(shown);
	return rc;
}

char *menv_env_prefix_new(const struct menv_config *cfg, const char *name, const char *prefix,
                          struct menv_error *err)
{
	if (name && prefix) {
		menv_error_set(err, MENV_EUSAGE, "give either -n NAME or -p PREFIX, not both");
		return NULL;
	}
	if (name) {
		/* conda's rule ('/', ' ', ':', '#' not allowed), no leading '-' (it would read
		 * as an option to `menv activate`), text, and the system's length */
		if (menv_env_name_check(name, true, err))
			return NULL;
		/* conda's rule for every command that names a new environment (create, rename,
		 * env create): `base` and `root` are the root prefix's names */
		if (!strcmp(name, "base") || !strcmp(name, "root")) {
			menv_error_set(err, MENV_EUSAGE,
			               "'%s' is reserved for the root environment; choose another "
			               "name",
			               name);
			return NULL;
		}
		/* conda's target_prefix: an environment of that name in any envs_dirs entry
		 * (locate_prefix_by_name) is the one meant; a second one of the same name in the
		 * first writable dir would make -n NAME name the other */
		char *found = NULL;
		struct menv_error ign = {0};
		if (!menv_env_locate(cfg->root_prefix, &cfg->envs_dirs, name, &found, &ign))
			return found;
		free(found);
		char *p = menv_xasprintf("%s/%s", cfg->envs_dir, name);
		if (menv_env_path_check(p, err)) {
			free(p);
			return NULL;
		}
		return p;
	}
	if (prefix) {
		char cwd[PATH_MAX];
		if (menv_env_path_check(prefix, err))
			return NULL;
		if (prefix[0] == '/')
			return menv_xstrdup(prefix);
		if (!getcwd(cwd, sizeof(cwd))) {
			menv_error_sys(err, MENV_EIO, "cannot read the current directory");
			return NULL;
		}
		char *p = menv_xasprintf("%s/%s", cwd, prefix);
		size_t n = strlen(p);
		while (n > 1 && p[n - 1] == '/')
			p[--n] = '\0';
		if (menv_env_path_check(p, err)) {
			free(p);
			return NULL;
		}
		return p;
	}
	menv_error_set(err, MENV_EUSAGE, "no environment given: use -n NAME or -p PREFIX");
	return NULL;
}

/* Whether `p` is missing with an interrupted rename --force's aside folder beside it, or
 * stands as an environment now that another command settled that rename meanwhile (after
 * menv_env_locate looked). */
static bool replaced_or_settled(const char *p)
{
	char *m = menv_xasprintf("%s/conda-meta", p);
	struct stat sb;
	bool r = menv_env_replaced_pending(p) || (stat(m, &sb) == 0 && S_ISDIR(sb.st_mode));
	free(m);
	return r;
}

char *menv_env_prefix_find(const struct menv_config *cfg, const char *name, const char *path,
                           struct menv_error *err)
{
	char *out = NULL, *rel = NULL;

	if (name && path) {
		menv_error_set(err, MENV_EUSAGE, "give either -n NAME or -p PREFIX, not both");
		return NULL;
	}
	if (name && strcmp(name, "base") && strcmp(name, "root") &&
	    menv_env_name_check(name, false, err))
		return NULL;
	if (path && menv_env_path_check(path, err))
		return NULL;
	if (path && !strchr(path, '/'))
		path = rel = menv_xasprintf("./%s", path);
	if (!name && !path) {
		path = getenv("CONDA_PREFIX");
		if (!path || !*path) {
			menv_error_set(err, MENV_EUSAGE,
			               "no environment given: use -n NAME or "
			               "-p PREFIX, or activate one");
			return NULL;
		}
	}
	if (menv_env_locate(cfg->root_prefix, &cfg->envs_dirs, name ? name : path, &out, err)) {
		out = NULL;
		/* a rename --force killed after it set this one aside: the prefix is named, and
		 * the caller's menv_txn_recover finds the rename through the aside folder */
		char cwd[PATH_MAX];
		for (size_t i = 0; !out && name && i < cfg->envs_dirs.n; i++) {
			char *p = menv_xasprintf("%s/%s", cfg->envs_dirs.v[i], name);
			if (replaced_or_settled(p))
				out = p;
			else
				free(p);
		}
		if (!out && path && (path[0] == '/' || getcwd(cwd, sizeof(cwd)))) {
			char *p = path[0] == '/' ? menv_xstrdup(path)
			                         : menv_xasprintf("%s/%s", cwd, path);
			size_t n = strlen(p);
			while (n > 1 && p[n - 1] == '/')
				p[--n] = '\0';
			if (replaced_or_settled(p))
				out = p;
			else
				free(p);
		}
		if (out)
			*err = (struct menv_error){0};
	}
	free(rel);
	return out;
}

static int strcmp_p(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* An environment as conda's is_conda_environment tells one (conda-meta/history is a file), and
 * not half there: one being removed, a rename's clone not yet complete, or a create that has
 * not committed (killed after its prefix was moved into place: the next command that touches
 * it removes it) is not listed. */
static bool has_meta(const char *prefix)
{
	char *m = menv_xasprintf("%s/conda-meta/history", prefix);
	struct stat sb;
	bool ok = stat(m, &sb) == 0 && S_ISREG(sb.st_mode) && !menv_env_leaving(prefix) &&
	          !menv_env_half_created(prefix);
	free(m);
	return ok;
}

/* Lists `p` unless it is listed already (compared normalized: "/a//b/" is "/a/b"); `seen`
 * the normalized prefixes listed, `set` the same hashed (a scan of `seen` was quadratic in a
 * registry's lines). */
static void add_env(struct menv_strvec *envs, struct menv_strvec *seen, struct menv_strset *set,
                    const char *p)
{
	char *norm = p[0] == '/' ? menv_envreg_normalize(p) : menv_xstrdup(p);
	if (!menv_strset_add(set, norm)) {
		free(norm);
		return;
	}
	menv_strvec_push_owned(seen, norm);
	menv_strvec_push(envs, p);
}

int menv_env_list(const struct menv_config *cfg, struct menv_strvec *envs,
                  struct menv_strvec *normalized, struct menv_error *err)
{
	struct menv_strvec named = MENV_STRVEC_INIT, registered = MENV_STRVEC_INIT;
	struct menv_strset set = MENV_STRSET_INIT;
	int rc;

	for (size_t i = 0; i < normalized->n; i++)
		menv_strset_add(&set, normalized->v[i]);
	add_env(envs, normalized, &set, cfg->root_prefix);
	/* the named environments of every envs dir, in order (conda's
	 * list_all_known_prefixes), each dir sorted; what killed creates, renames and removals
	 * left there removed first */
	for (size_t k = 0; k < cfg->envs_dirs.n; k++) {
		const char *dir = cfg->envs_dirs.v[k];
		size_t from = named.n;
		menv_env_remove_stale(dir);
		DIR *d = opendir(dir);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			char *p = menv_xasprintf("%s/%s", dir, de->d_name);
			if (has_meta(p))
				menv_strvec_push_owned(&named, p);
			else
				free(p);
		}
		if (d)
			closedir(d);
		if (named.n > from)
			qsort(named.v + from, named.n - from, sizeof(*named.v), strcmp_p);
	}
	for (size_t i = 0; i < named.n; i++)
		add_env(envs, normalized, &set, named.v[i]);
	/* registered prefixes (created with -p, or by conda), in the order they were made;
	 * those removed by hand are skipped, as conda skips them */
	rc = menv_envreg_load(&registered, err);
	for (size_t i = 0; i < registered.n; i++)
		if (has_meta(registered.v[i]))
			add_env(envs, normalized, &set, registered.v[i]);
	/* active prefixes outside the envs directory (created with -p) */
	for (int lvl = 0; lvl <= 64; lvl++) {
		char var[32];
		snprintf(var, sizeof(var), "CONDA_PREFIX_%d", lvl);
		const char *p = getenv(lvl == 0 ? "CONDA_PREFIX" : var);
		if (p && *p && has_meta(p))
			add_env(envs, normalized, &set, p);
	}
	menv_strvec_clear(&named);
	menv_strvec_clear(&registered);
	menv_strset_clear(&set);
	return rc;
}

int menv_env_used_packages(const struct menv_config *cfg, struct menv_strvec *keep,
                           struct menv_error *err)
{
	struct menv_strvec envs = MENV_STRVEC_INIT, norm = MENV_STRVEC_INIT;
	struct menv_strset kept = MENV_STRSET_INIT; /* keep, hashed: linear in the records */
	int rc = menv_env_list(cfg, &envs, &norm, err);

	for (size_t i = 0; i < keep->n; i++)
		menv_strset_add(&kept, keep->v[i]);

	for (size_t i = 0; i < envs.n; i++) {
		struct menv_prefix_record *recs = NULL;
		struct menv_error e2;
		size_t n = 0;
		if (menv_prefix_records_load(envs.v[i], &recs, &n, &e2))
			continue;
		for (size_t k = 0; k < n; k++) {
			const char *dir = json_string_value(
			        json_object_get(recs[k].json, "extracted_package_dir"));
			const char *base = dir ? strrchr(dir, '/') : NULL;
			char *dist = base ? menv_xstrdup(base + 1)
			                  : menv_xasprintf("%s-%s-%s", recs[k].name,
			                                   recs[k].version, recs[k].build);
			menv_strvec_push_unique(keep, &kept, dist);
			free(dist);
		}
		menv_prefix_records_free(recs, n);
	}
	menv_strvec_clear(&envs);
	menv_strvec_clear(&norm);
	menv_strset_clear(&kept);
	return rc;
}

/* One line of `menv info`: the key right-aligned to the longest one (as conda info). */
#define INFO_KEY_WIDTH ((int)sizeof("active env location") - 1)
static void info_kv(struct menv_buf *o, const char *key, const char *value)
{
	menv_buf_addf(o, "%*s : %s\n", INFO_KEY_WIDTH, key, value);
}

static void info_lines(struct menv_buf *o, const char *key, json_t *a)
{
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v) info_kv(o, i ? "" : key, json_string_value(v));
}

static void info_text(json_t *j, struct menv_buf *o)
{
	const char *active = json_string_value(json_object_get(j, "active_prefix"));
	const char *name = json_string_value(json_object_get(j, "active_prefix_name"));
	json_int_t shlvl = json_integer_value(json_object_get(j, "shlvl"));
	char lvl[24];

	snprintf(lvl, sizeof(lvl), "%lld", (long long)shlvl);
	info_kv(o, "active environment", active ? (name ? name : active) : "None");
	if (active)
		info_kv(o, "active env location", active);
	if (shlvl >= 0)
		info_kv(o, "shell level", lvl);
	info_kv(o, "menv version", MENV_VERSION);
	info_kv(o, "root prefix", json_string_value(json_object_get(j, "root_prefix")));
	info_lines(o, "package cache", json_object_get(j, "pkgs_dirs"));
	info_lines(o, "envs directories", json_object_get(j, "envs_dirs"));
	info_kv(o, "platform", json_string_value(json_object_get(j, "platform")));
	info_lines(o, "config files", json_object_get(j, "config_files"));
	info_lines(o, "channels", json_object_get(j, "channels"));
	info_lines(o, "virtual packages", json_object_get(j, "virtual_pkgs"));
}

void menv_env_list_text(const struct menv_config *cfg, const struct menv_strvec *envs,
                        const struct menv_strvec *normalized, struct menv_buf *out)
{
	const char *active = getenv("CONDA_PREFIX");
	char *act = !active || !*active ? NULL
	            : active[0] == '/'  ? menv_envreg_normalize(active)
	                                : menv_xstrdup(active);

	menv_buf_adds(out, "# menv environments:\n#\n");
	for (size_t i = 0; i < envs->n; i++) {
		const char *p = envs->v[i], *nm = "";
		if (i == 0)
			nm = "base";
		for (size_t k = 0; i && !*nm && k < cfg->envs_dirs.n; k++) {
			size_t dl = strlen(cfg->envs_dirs.v[k]);
			if (!strncmp(p, cfg->envs_dirs.v[k], dl) && p[dl] == '/' &&
			    !strchr(p + dl + 1, '/'))
				nm = p + dl + 1;
		}
		/* padded by columns, not bytes: "ümlaut" and "環境" keep the prefixes aligned */
		menv_buf_add_padded(out, nm, 20);
		menv_buf_addf(out, "  %s  %s\n", act && !strcmp(act, normalized->v[i]) ? "*" : " ",
		              p);
	}
	free(act);
}

json_t *menv_env_info(const struct menv_config *cfg, struct menv_buf *text)
{
	struct menv_strvec chans = MENV_STRVEC_INIT, dflt = MENV_STRVEC_INIT;
	struct menv_virtual virt[8];
	json_t *j = json_object(), *jv = json_array(), *jc = json_array(), *jf = json_array();
	size_t nv = menv_virtual_detect(virt, 8);

	menv_strvec_push(&dflt, "defaults");
	menv_channels_expand(cfg->channels.n ? &cfg->channels : &dflt, cfg, &chans);
	for (size_t i = 0; i < nv; i++)
		json_array_append_new(
		        jv, json_sprintf("%s=%s=%s", virt[i].name, virt[i].version, virt[i].build));
	for (size_t i = 0; i < chans.n; i++) { /* user:password@ and /t/TOKEN/ never shown */
		char *safe = menv_url_redact(chans.v[i]);
		json_array_append_new(jc, json_string(safe));
		free(safe);
	}
	for (size_t i = 0; i < cfg->files.n; i++)
		json_array_append_new(jf, json_string(cfg->files.v[i]));
	/* the active environment, from the variables activation sets (as conda info) */
	const char *active = getenv("CONDA_PREFIX"), *active_name = getenv("CONDA_DEFAULT_ENV");
	const char *shlvl = getenv("CONDA_SHLVL");
	if (active && !*active)
		active = NULL;
	json_object_set_new(j, "menv_version", json_string(MENV_VERSION));
	json_object_set_new(j, "root_prefix", json_string(cfg->root_prefix));
	json_t *jp = json_array();
	for (size_t i = 0; i < cfg->pkgs_dirs.n; i++)
		json_array_append_new(jp, json_string(cfg->pkgs_dirs.v[i]));
	json_object_set_new(j, "pkgs_dirs", jp);
	json_t *je = json_array();
	for (size_t i = 0; i < cfg->envs_dirs.n; i++)
		json_array_append_new(je, json_string(cfg->envs_dirs.v[i]));
	json_object_set_new(j, "envs_dirs", je);
	json_object_set_new(j, "platform", json_string(cfg->subdir));
	json_object_set_new(j, "channels", jc);
	json_object_set_new(j, "config_files", jf);
	json_object_set_new(j, "virtual_pkgs", jv);
	json_object_set_new(j, "active_prefix", active ? json_string(active) : json_null());
	json_object_set_new(j, "active_prefix_name",
	                    active && active_name ? json_string(active_name) : json_null());
	json_object_set_new(j, "shlvl", json_integer(shlvl ? atoi(shlvl) : -1));
	menv_strvec_clear(&chans);
	menv_strvec_clear(&dflt);
	if (text)
		info_text(j, text);
	return j;
}

struct clean_events {
	menv_env_cb cb;
	void *ud;
};

static void clean_waiting(void *ud, const char *msg)
{
	struct clean_events *e = ud;
	if (e->cb)
		e->cb(e->ud, MENV_ENV_CACHE_WAIT, msg);
}

int menv_env_clean(const struct menv_config *cfg, unsigned what, bool dry_run, menv_clean_cb cb,
                   menv_env_cb events, void *ud, struct menv_clean_stats *st,
                   struct menv_error *err)
{
	struct menv_strvec keep = MENV_STRVEC_INIT;
	struct menv_error e2 = {0};
	struct clean_events ev = {events, ud};
	int fd = -1, rc;

	if (!cfg->pkgs_dir_writable) {
		/* as conda clean: only writable caches are cleaned */
		memset(st, 0, sizeof(*st));
		if (events)
			events(ud, MENV_ENV_WARNING,
			       "no writable package cache among pkgs_dirs: nothing is removed");
		return 0;
	}
	rc = menv_pkgcache_use(cfg->pkgs_dir, true, NULL, clean_waiting, &ev, &fd, err);
	if (rc)
		return rc;
	if ((what & MENV_CLEAN_PACKAGES) && menv_env_used_packages(cfg, &keep, &e2) && events)
		events(ud, MENV_ENV_WARNING, e2.msg);
	rc = menv_pkgcache_clean(cfg->pkgs_dir, what, &keep, dry_run, cb, ud, st, err);
	menv_pkgcache_unuse(fd);
	menv_strvec_clear(&keep);
	return rc;
}

/* Is `dir` (absolute), or one of its parents, the directory `pre` (stat of the prefix)? The
 * path as written is walked up (each component stat'ed, so a link in it is followed), then
 * its realpath. */
static bool holds_by_inode(const struct stat *pre, const char *dir)
{
	char real[PATH_MAX];
	const char *paths[2] = {dir, realpath(dir, real) ? real : NULL};
	bool yes = false;
	for (int k = 0; k < 2 && !yes && paths[k]; k++) {
		char *q = menv_envreg_normalize(paths[k]);
		for (char *slash = NULL;; *slash = '\0') {
			struct stat sb;
			if (stat(*q ? q : "/", &sb) == 0 && sb.st_dev == pre->st_dev &&
			    sb.st_ino == pre->st_ino) {
				yes = true;
				break;
			}
			if (!*q || (slash = strrchr(q, '/')) == NULL)
				break;
		}
		free(q);
	}
	return yes;
}

/* Is `dir` `prefix` or beneath it, lexically or by inode (`pre`: NULL when `prefix` does not
 * exist)? */
static bool config_dir_in(const char *dir, const char *prefix, const struct stat *pre)
{
	if (!dir || dir[0] != '/')
		return false;
	char *a = menv_envreg_normalize(dir), *b = menv_envreg_normalize(prefix);
	size_t n = strlen(b);
	bool yes = !strncmp(a, b, n) && (a[n] == '/' || !a[n] || (n == 1 && b[0] == '/'));
	free(a);
	free(b);
	return yes || (pre && holds_by_inode(pre, dir));
}

int menv_env_check_not_config_dir(const struct menv_config *cfg, const char *prefix,
                                  struct menv_error *err)
{
	struct stat sb;
	const struct stat *pre = stat(prefix, &sb) == 0 ? &sb : NULL;
	if (config_dir_in(cfg->root_prefix, prefix, pre))
		return menv_env_same_prefix(cfg->root_prefix, prefix)
		               ? menv_error_set(err, MENV_EUSAGE,
		                                "'%s' is the root environment (it holds the "
		                                "environments and the package cache): it cannot be "
		                                "removed",
		                                prefix)
		               : menv_error_set(err, MENV_EUSAGE,
		                                "'%s' holds the root environment '%s': it cannot "
		                                "be removed",
		                                prefix, cfg->root_prefix);
	const struct menv_strvec *lists[2] = {&cfg->envs_dirs, &cfg->pkgs_dirs};
	const char *ones[2] = {cfg->envs_dir, cfg->pkgs_dir};
	static const char *const what[2] = {"the environments directory", "the package cache"};
	static const char *const key[2] = {"envs_dirs", "pkgs_dirs"};
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i <= lists[k]->n; i++) {
			const char *d = i < lists[k]->n ? lists[k]->v[i] : ones[k];
			if (config_dir_in(d, prefix, pre))
				return menv_error_set(
				        err, MENV_EUSAGE,
				        "'%s' %s %s '%s' (%s): it cannot be removed", prefix,
				        menv_env_same_prefix(d, prefix) ? "is" : "holds", what[k],
				        d, key[k]);
		}
	return 0;
}
