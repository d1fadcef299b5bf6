/*
 * lockfile.c - the one model every lockfile format reads into and writes from (struct
 * menv_lockfile), format detection, the entry points (menv_lockfile_parse, _load, _select,
 * _to_json) and the helpers the format files share. Each format lives in its own file:
 * lock_condalock.c (conda-lock v1, CEP-37), lock_explicit.c (CEP-23), lock_pixi.c
 * (pixi.lock v4-v7, rattler_lock), lock_mamba.c (micromamba's JSON lock); their shared
 * internals are declared in lockfile.h. YAML is read and written by yaml.c.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "lockfile.h"
#include "specs.h"

/* ---------------------------------------------------------------------------------------- */
/* Small helpers                                                                            */

/* A scalar as text (strings as they are, integers printed), or NULL. Caller frees. */
char *menv_lock_jtext(json_t *v)
{
	if (json_is_string(v))
		return menv_xstrdup(json_string_value(v));
	if (json_is_integer(v))
		return menv_xasprintf("%" JSON_INTEGER_FORMAT, json_integer_value(v));
	if (json_is_real(v))
		return menv_xasprintf("%g", json_real_value(v));
	return NULL;
}

const char *menv_lock_jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcmp(s + n - m, suf);
}

bool menv_lock_is_hex(const char *s, size_t n)
{
	/* no strlen first: a 64-digit test of an md5 stops at its 33rd byte, the NUL */
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return s[n] == '\0';
}

static char *lower_dup(const char *s)
{
	char *d = menv_xstrdup(s);
	for (char *p = d; p && *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return d;
}

bool menv_lock_in_list(const char *const *list, const char *k)
{
	for (size_t i = 0; list[i]; i++)
		if (!strcmp(list[i], k))
			return true;
	return false;
}

json_t *menv_lock_jstr_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

int menv_dist_split(const char *fn, char **name, char **version, char **build,
                    struct menv_error *err)
{
	size_t n = strlen(fn);
	char *dist, *b, *v;

	*name = *version = *build = NULL;
	if (has_suffix(fn, ".conda"))
		dist = menv_xstrndup(fn, n - 6);
	else if (has_suffix(fn, ".tar.bz2"))
		dist = menv_xstrndup(fn, n - 8);
	else
		return menv_error_set(err, MENV_EPARSE,
		                      "'%s' is not a conda package file name "
		                      "(.conda or .tar.bz2)",
		                      fn);
	b = strrchr(dist, '-');
	if (b) {
		*b = '\0';
		v = strrchr(dist, '-');
		if (v) {
			*v = '\0';
			if (*dist && v[1] && b[1]) {
				*name = menv_xstrdup(dist);
				*version = menv_xstrdup(v + 1);
				*build = menv_xstrdup(b + 1);
				free(dist);
				return 0;
			}
		}
	}
	free(dist);
	return menv_error_set(err, MENV_EPARSE,
	                      "'%s' is not a conda package file name "
	                      "(name-version-build)",
	                      fn);
}

const char *menv_lock_format_name(enum menv_lock_format f)
{
	switch (f) {
	case MENV_LOCK_CONDA_LOCK: return "conda-lock";
	case MENV_LOCK_EXPLICIT: return "explicit";
	case MENV_LOCK_PIXI: return "pixi";
	case MENV_LOCK_MAMBA_JSON: return "mamba-json";
	default: return "none";
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Model                                                                                    */

struct menv_lockfile *menv_lockfile_new(enum menv_lock_format format)
{
	struct menv_lockfile *lf = menv_xcalloc(1, sizeof(*lf));
	lf->format = format;
	lf->version = format == MENV_LOCK_CONDA_LOCK ? 1 : 0;
	lf->content_hash = json_object();
	lf->channels_raw = json_array();
	lf->metadata_extra = json_object();
	lf->platforms_raw = json_array();
	return lf;
}

/* The strings of a parsed lock's entries, in chunks (menv_lock_strndup): one allocation a
 * chunk rather than one a string (issue 22: 100,000 entries held ~8 strings each). */
struct menv_lock_strs {
	struct menv_lock_strs *prev; /* the chunk filled before this one */
	size_t used, cap;
	char data[];
};

/* Every entry's category unless its file names another (never freed). */
static char lock_main[] = "main";

char *menv_lock_strndup(struct menv_lockfile *lf, const char *s, size_t n)
{
	struct menv_lock_strs *c = lf->strs;
	if (!c || c->cap - c->used < n + 1) {
		size_t cap = c ? 2 * c->cap : 65536;
		if (cap > (4u << 20))
			cap = 4u << 20;
		if (cap < n + 1)
			cap = n + 1;
		struct menv_lock_strs *nc = menv_xmalloc(sizeof(*nc) + cap);
		*nc = (struct menv_lock_strs){c, 0, cap};
		/* a string too long for a fresh chunk gets its own, behind the current one */
		if (c && cap == n + 1 && c->cap - c->used > n + 1) {
			nc->prev = c->prev;
			c->prev = nc;
		} else {
			lf->strs = nc;
		}
		c = nc;
	}
	char *d = c->data + c->used;
	memcpy(d, s, n);
	d[n] = '\0';
	c->used += n + 1;
	return d;
}

char *menv_lock_strdup(struct menv_lockfile *lf, const char *s)
{
	return s ? menv_lock_strndup(lf, s, strlen(s)) : NULL;
}

bool menv_lock_holds(const struct menv_lockfile *lf, const char *s)
{
	for (const struct menv_lock_strs *c = lf->strs; s && c; c = c->prev)
		if (s >= c->data && s < c->data + c->cap)
			return true;
	return false;
}

/* Frees `s` unless lf's chunks (or the static "main") hold it. */
static void lock_free(const struct menv_lockfile *lf, char *s)
{
	if (s && s != lock_main && !menv_lock_holds(lf, s))
		free(s);
}

static void package_release(const struct menv_lockfile *lf, struct menv_lock_package *p)
{
	char *const field[] = {p->name, p->version, p->build,    p->platform, p->subdir, p->url,
	                       p->md5,  p->sha256,  p->category, p->source,   p->env};
	for (size_t k = 0; k < sizeof(field) / sizeof(*field); k++)
		lock_free(lf, field[k]);
	json_decref(p->depends);
	json_decref(p->deps_map);
	json_decref(p->extra);
}

void menv_lockfile_free(struct menv_lockfile *lf)
{
	if (!lf)
		return;
	menv_lockfile_clear_entries(lf);
	free(lf->pkgs);
	for (size_t i = 0; i < lf->nenvs; i++) {
		free(lf->envs[i].name);
		menv_strvec_clear(&lf->envs[i].channels);
		menv_strvec_clear(&lf->envs[i].indexes);
		menv_strvec_clear(&lf->envs[i].find_links);
	}
	free(lf->envs);
	free(lf->path);
	menv_strvec_clear(&lf->channels);
	menv_strvec_clear(&lf->platforms);
	menv_strvec_clear(&lf->sources);
	json_decref(lf->content_hash);
	json_decref(lf->channels_raw);
	json_decref(lf->metadata_extra);
	json_decref(lf->platforms_raw);
	free(lf);
}

void menv_lockfile_clear_entries(struct menv_lockfile *lf)
{
	for (size_t i = 0; i < lf->npkgs; i++)
		package_release(lf, &lf->pkgs[i]);
	lf->npkgs = 0;
	while (lf->strs) {
		struct menv_lock_strs *c = lf->strs;
		lf->strs = c->prev;
		free(c);
	}
}

void menv_lockfile_reserve(struct menv_lockfile *lf, size_t n)
{
	if (lf->npkgs + n <= lf->pkgs_alloc)
		return;
	lf->pkgs_alloc = lf->npkgs + n;
	lf->pkgs = menv_xrealloc(lf->pkgs, lf->pkgs_alloc * sizeof(*lf->pkgs));
}

size_t menv_lock_count(const char *bytes, size_t len, const char *needle)
{
	/* memchr to the first byte, then memcmp: memmem over the rest of the buffer at each hit
	 * is linear here but quadratic under ASan, whose interceptor checks the whole haystack
	 * on every call (unit.test_limits' 1,500,000-entry lock: 168 s) */
	size_t n = 0, nl = strlen(needle);
	const char *p = bytes, *end = bytes + len;
	while (nl && (size_t)(end - p) >= nl &&
	       (p = memchr(p, needle[0], (size_t)(end - p) - nl + 1))) {
		if (!memcmp(p, needle, nl)) {
			n++;
			p += nl;
		} else {
			p++;
		}
	}
	return n;
}

struct menv_lock_package *menv_lockfile_add(struct menv_lockfile *lf)
{
	if (lf->npkgs >= lf->pkgs_alloc) {
		lf->pkgs_alloc = lf->pkgs_alloc ? 2 * lf->pkgs_alloc : 16;
		if (lf->pkgs_alloc <= lf->npkgs)
			lf->pkgs_alloc = 2 * lf->npkgs;
		lf->pkgs = menv_xrealloc(lf->pkgs, lf->pkgs_alloc * sizeof(*lf->pkgs));
	}
	struct menv_lock_package *p = &lf->pkgs[lf->npkgs++];
	memset(p, 0, sizeof(*p));
	p->size = -1;
	p->category = lock_main;
	return p;
}

void menv_lock_set_hash(char **slot, const char *hex)
{
	free(*slot);
	*slot = hex && *hex ? lower_dup(hex) : NULL;
}

void menv_lock_set_hash_json(char **slot, json_t *v)
{
	if (!v || json_is_null(v) || json_is_string(v)) {
		menv_lock_set_hash(slot, json_string_value(v));
		return;
	}
	free(*slot);
	*slot = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	if (!*slot)
		*slot = menv_xstrdup("?");
}

void menv_lock_keep_empty_hashes(struct menv_lock_package *p, json_t *hashes)
{
	static const char *const keys[] = {"md5", "sha256"};
	char **slot[] = {&p->md5, &p->sha256};
	for (size_t k = 0; k < 2; k++) {
		json_t *v = json_object_get(hashes, keys[k]);
		if (json_is_string(v) && !json_string_length(v)) {
			free(*slot[k]);
			*slot[k] = menv_xstrdup("");
		}
	}
}

void menv_lock_entry_common(struct menv_lock_package *p, json_t *e, json_t *hashes,
                            const char *const *known)
{
	const char *k;
	json_t *v;

	p->name = menv_lock_jtext(json_object_get(e, "name"));
	p->version = menv_lock_jtext(json_object_get(e, "version"));
	menv_lock_set_hash_json(&p->md5, json_object_get(hashes, "md5"));
	menv_lock_set_hash_json(&p->sha256, json_object_get(hashes, "sha256"));
	if (p->manager == MENV_LOCK_CONDA)
		menv_lock_keep_empty_hashes(p, hashes);
	json_object_foreach(e, k, v)
	{
		if (menv_lock_in_list(known, k))
			continue;
		if (!p->extra)
			p->extra = json_object();
		json_object_set(p->extra, k, v);
	}
}

bool menv_lock_split_in_place(const char *url, const char *dash[3])
{
	size_t n = strlen(url);
	const char *end = url + n;
	if (memchr(url, '?', n))
		return false;
	if (n > 6 && !memcmp(end - 6, ".conda", 6))
		end -= 6;
	else if (n > 8 && !memcmp(end - 8, ".tar.bz2", 8))
		end -= 8;
	else
		return false;
	const char *fn = end;
	while (fn > url && fn[-1] != '/')
		fn--;
	const char *b = end;
	while (b > fn && b[-1] != '-')
		b--;
	if (b <= fn || b == end)
		return false;
	const char *v = b - 1;
	while (v > fn && v[-1] != '-')
		v--;
	if (v <= fn + 1 || v == b - 1)
		return false;
	dash[0] = v - 1;
	dash[1] = b - 1;
	dash[2] = end;
	return true;
}

int menv_lock_fill_from_url(struct menv_lock_package *p, bool names, struct menv_error *err)
{
	char *fn = menv_url_filename(p->url), *n = NULL, *ver = NULL, *b = NULL;
	int rc = menv_dist_split(fn, &n, &ver, &b, err);

	free(fn);
	if (rc)
		return rc;
	if (names && !p->name)
		p->name = n, n = NULL;
	if (names && !p->version)
		p->version = ver, ver = NULL;
	if (!p->build)
		p->build = b, b = NULL;
	size_t off, len;
	if (!p->subdir && menv_url_folder(p->url, &off, &len))
		p->subdir = menv_xstrndup(p->url + off, len);
	free(n);
	free(ver);
	free(b);
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Detection                                                                                */

/* The first line that is neither blank nor a comment, trimmed, into `out`; a byte order mark
 * skipped where `bytes` start the file. */
static void first_content_line(const char *bytes, size_t len, bool start, char *out, size_t cap)
{
	size_t i = 0;
	out[0] = '\0';
	if (start && len >= 3 && !memcmp(bytes, "\xef\xbb\xbf", 3))
		i = 3;
	while (i < len) {
		size_t e = i;
		while (e < len && bytes[e] != '\n')
			e++;
		size_t s = i;
		while (s < e && (bytes[s] == ' ' || bytes[s] == '\t' || bytes[s] == '\r'))
			s++;
		if (s < e && bytes[s] != '#') {
			size_t n = e - s;
			while (n && (bytes[s + n - 1] == '\r' || bytes[s + n - 1] == ' '))
				n--;
			if (n >= cap)
				n = cap - 1;
			memcpy(out, bytes + s, n);
			out[n] = '\0';
			return;
		}
		i = e + 1;
	}
}

/* What one pass over the lines finds: a line that is exactly "@EXPLICIT" (blanks around
 * allowed), and the top-level (column 0) YAML keys a format is known by. One pass with
 * memchr: detection runs on every file handed to menv, of any size. */
enum {
	SEEN_EXPLICIT = 1,
	SEEN_DEPENDENCIES = 2,
	SEEN_ENVIRONMENTS = 4,
	SEEN_VERSION = 8,
	SEEN_PACKAGE = 16,
	SEEN_METADATA = 32,
};

static unsigned scan_lines(const char *bytes, size_t len)
{
	static const struct {
		const char *key;
		unsigned bit;
	} keys[] = {{"dependencies:", SEEN_DEPENDENCIES},
	            {"environments:", SEEN_ENVIRONMENTS},
	            {"version:", SEEN_VERSION},
	            {"package:", SEEN_PACKAGE},
	            {"metadata:", SEEN_METADATA}};
	unsigned seen = 0;

	/* "@EXPLICIT" as a line's only text: each '@' (a YAML lock has none) with nothing but
	 * blanks before it on its line and after the word */
	for (const char *at = bytes, *end = bytes + len;
	     !(seen & SEEN_EXPLICIT) && (at = memchr(at, '@', (size_t)(end - at))); at++) {
		const char *b = at, *a = at + 9;
		while (b > bytes && b[-1] != '\n' && isspace((unsigned char)b[-1]))
			b--;
		if ((b > bytes && b[-1] != '\n') || end - at < 9 || memcmp(at, "@EXPLICIT", 9))
			continue;
		while (a < end && *a != '\n' && isspace((unsigned char)*a))
			a++;
		if (a == end || *a == '\n')
			seen |= SEEN_EXPLICIT;
	}
	/* the keys start a line (100,000 entries' lines start with ' ' or '-'): only each
	 * line's first byte is looked at; none where "@EXPLICIT" decided it (detected()) */
	for (size_t i = 0; i < len && !(seen & SEEN_EXPLICIT);) {
		for (size_t k = 0; bytes[i] >= 'a' && k < sizeof(keys) / sizeof(*keys); k++) {
			size_t kl;
			if (bytes[i] != keys[k].key[0]) /* an explicit lock's "file:///..." lines */
				continue;
			kl = strlen(keys[k].key);
			if (len - i >= kl && !memcmp(bytes + i, keys[k].key, kl))
				seen |= keys[k].bit;
		}
		const char *nl = memchr(bytes + i, '\n', len - i);
		if (!nl)
			break;
		i = (size_t)(nl - bytes) + 1;
	}
	return seen;
}

/* The format what one pass found says: the lines' keys, the first content line, whether the
 * text holds "lockVersion". */
static enum menv_lock_format detected(unsigned seen, const char *first, bool lock_version)
{
	if (seen & SEEN_EXPLICIT)
		return MENV_LOCK_EXPLICIT;
	if (first[0] == '{')
		return lock_version ? MENV_LOCK_MAMBA_JSON : MENV_LOCK_NONE;
	if (seen & SEEN_DEPENDENCIES)
		return MENV_LOCK_NONE; /* an environment.yml */
	if ((seen & SEEN_ENVIRONMENTS) && (seen & SEEN_VERSION))
		return MENV_LOCK_PIXI;
	if (seen & (SEEN_PACKAGE | SEEN_METADATA | SEEN_VERSION))
		return MENV_LOCK_CONDA_LOCK;
	return MENV_LOCK_NONE;
}

unsigned menv_lock_line_keys(const char *line, size_t len)
{
	return scan_lines(line, len);
}

enum menv_lock_format menv_lock_detected(unsigned seen)
{
	return detected(seen, "", false);
}

enum menv_lock_format menv_lockfile_detect(const char *bytes, size_t len)
{
	char first[256];
	first_content_line(bytes, len, true, first, sizeof(first));
	return detected(scan_lines(bytes, len), first,
	                first[0] == '{' && memmem(bytes, len, "\"lockVersion\"", 13) != NULL);
}

/* The format of the regular file open as `fd`, read from where it is to its end in 1 MiB
 * pieces, whole lines at a time (a 100,000-entry lock is never held whole), as
 * menv_lockfile_detect finds it; *managers (where not NULL) the times "manager:" occurs (an
 * upper bound of a conda-lock file's entries). Errors: MENV_EINTR, MENV_EIO. */
static int detect_fd(int fd, const char *path, enum menv_lock_format *out, size_t *managers,
                     struct menv_error *err)
{
	struct menv_buf b = MENV_BUF_INIT;
	char first[256] = "";
	unsigned seen = 0;
	bool lock_version = false, at_start = true, eof = false;
	int rc = 0;
	/* "@EXPLICIT" decides it (detected()): the rest is not read (an explicit lock of 100,000
	 * lines read once more for nothing) */
	while (!eof && !(seen & SEEN_EXPLICIT)) {
		if (menv_cancelled()) {
			rc = menv_error_set(err, MENV_EINTR, "reading '%s' interrupted", path);
			break;
		}
		menv_buf_grow(&b, 1u << 20);
		ssize_t r = read(fd, b.buf + b.len, b.alloc - b.len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = menv_error_sys(err, MENV_EIO, "cannot read '%s'", path);
			break;
		}
		eof = r == 0;
		b.len += (size_t)r;
		b.buf[b.len] = '\0';
		/* the whole lines read so far (all of it at the end) */
		const char *nl = eof ? NULL : memrchr(b.buf, '\n', b.len);
		size_t n = eof ? b.len : nl ? (size_t)(nl - b.buf) + 1 : 0;
		if (!n)
			continue;
		seen |= scan_lines(b.buf, n);
		if (managers)
			*managers += menv_lock_count(b.buf, n, "manager:");
		if (!first[0])
			first_content_line(b.buf, n, at_start, first, sizeof(first));
		/* looked for only where the text may be JSON (its first content line yet to come) */
		if (!lock_version && (!first[0] || first[0] == '{'))
			lock_version = memmem(b.buf, n, "\"lockVersion\"", 13) != NULL;
		at_start = false;
		memmove(b.buf, b.buf + n, b.len - n);
		b.len -= n;
	}
	menv_buf_release(&b);
	*out = rc ? MENV_LOCK_NONE : detected(seen, first, lock_version);
	return rc;
}

int menv_lockfile_detect_file(const char *path, enum menv_lock_format *out, struct menv_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		/* what menv_buf_read_file says of it (a FIFO, /dev/null, a missing file) */
		struct menv_buf b = MENV_BUF_INIT;
		if (fd >= 0)
			close(fd);
		int rc = menv_buf_read_file(&b, path, err);
		*out = rc ? MENV_LOCK_NONE : menv_lockfile_detect(b.buf, b.len);
		menv_buf_release(&b);
		return rc;
	}
	int rc = detect_fd(fd, path, out, NULL, err);
	close(fd);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Entry points                                                                             */

/* The hash in a package URL's fragment, as conda's explicit reader takes it (conda/misc.py's
 * url pattern: "#<md5>", "#sha256:<hex>" or "#<sha256>", CEP-23), into *kind ("md5",
 * "sha256") and *hex (borrowed from the URL), and pixi's "#sha256=<hex>"; false for a
 * fragment that is none of them. A pip URL's fragment ("#sha256=<hex>", PEP 503) where
 * `pip`; its other fragments ("#egg=", "#md5=") give no sha256: true with *hex NULL. */
static bool fragment_hash(const char *frag, bool pip, const char **kind, const char **hex)
{
	*kind = "sha256";
	*hex = NULL;
	if (pip) {
		if (!strncmp(frag, "sha256=", 7))
			*hex = frag + 7;
		return true;
	}
	if ((!strncmp(frag, "sha256:", 7) || !strncmp(frag, "sha256=", 7)) &&
	    menv_lock_is_hex(frag + 7, 64))
		*hex = frag + 7;
	else if (menv_lock_is_hex(frag, 64))
		*hex = frag;
	else if (menv_lock_is_hex(frag, 32))
		*kind = "md5", *hex = frag;
	return *hex != NULL;
}

/* Entry `p`'s URL may carry a hash of its own in its fragment ("...conda#<md5>", as conda-lock
 * renders an explicit file, "#sha256:<hex>"; a pip URL's "#sha256=<hex>"), beside the entry's
 * md5/sha256 (conda-lock's `hash`, pixi's and micromamba's keys). Conda's explicit reader
 * takes the fragment as the one hash to check; menv's readers used only the entry's keys and
 * a disagreeing fragment was dropped with the URL's fragment. Now: a fragment that disagrees
 * with the entry's hash of its kind is refused (MENV_EPARSE naming the entry and both), one
 * the entry lacks is its hash of that kind (checked against the package like the others), and
 * a conda URL's fragment that is no hash is refused as conda refuses it ("Could not parse
 * explicit URL"). An explicit file's fragment is the line's hash already (not in p->url). */
static int url_fragment_hash(struct menv_lockfile *lf, struct menv_lock_package *p, const char *src,
                             size_t i, struct menv_error *err)
{
	const char *frag = p->url ? strchr(p->url, '#') : NULL, *kind, *hex;
	bool pip = p->manager == MENV_LOCK_PIP;
	if (!frag)
		return 0;
	if (!fragment_hash(frag + 1, pip, &kind, &hex))
		return menv_error_set(err, MENV_EPARSE,
		                      "%s: package entry %zu ('%s'): its url's fragment '%s' is "
		                      "neither an md5 nor a 'sha256:' hash",
		                      src, i + 1, p->name ? p->name : "?", frag);
	if (!hex)
		return 0;
	char **slot = kind[0] == 'm' ? &p->md5 : &p->sha256;
	if (!*slot) {
		char *h = menv_lock_strdup(lf, hex);
		for (char *c = h; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		*slot = h;
		return 0;
	}
	if (strcasecmp(*slot, hex))
		return menv_error_set(err, MENV_EPARSE,
		                      "%s: package entry %zu ('%s'): the %s in its url's fragment "
		                      "(%s) is not its %s (%s)",
		                      src, i + 1, p->name ? p->name : "?", kind, hex, kind, *slot);
	return 0;
}

/* A control character (a newline, ESC) in an entry's text would reach the plan, the records
 * and the history as it is: a package "dep\e[31mendent" drawn raw on the terminal; an md5
 * or sha256 that is not 32 or 64 hex digits can match no file. Refused for every format,
 * naming the entry (its index in lf->pkgs in *bad). `printable`: every text is known to be
 * printable ASCII (read by menv_lock_scan), only the hashes are looked at. */
static int check_entry_text(struct menv_lockfile *lf, const char *src, bool printable, size_t *bad,
                            struct menv_error *err)
{
	for (size_t i = 0; i < lf->npkgs; i++) {
		*bad = i;
		const struct menv_lock_package *p = &lf->pkgs[i];
		const char *const field[] = {p->name,     p->version, p->build, p->platform,
		                             p->subdir,   p->url,     p->md5,   p->sha256,
		                             p->category, p->source,  p->env};
		static const char *const what[] = {"name",     "version", "build",      "platform",
		                                   "subdir",   "url",     "md5",        "sha256",
		                                   "category", "source",  "environment"};
		for (size_t k = 0; !printable && k < sizeof(field) / sizeof(*field); k++) {
			const unsigned char *c = (const unsigned char *)field[k];
			while (c && *c && *c >= 0x20 && *c != 0x7f)
				c++;
			if (c && *c)
				return menv_error_set(
				        err, MENV_EPARSE,
				        "%s: package entry %zu ('%s'): its %s holds a "
				        "control character",
				        src, i + 1, p->name ? p->name : "?", what[k]);
		}
		/* no hash: conda-lock's model requires one (its md5; rattler takes either), and an
		 * empty one is none in any format (rattler refuses it; conda refuses "URL#"): the
		 * package was installed unchecked. pixi.lock and micromamba's JSON may leave both
		 * out, and so may an explicit file (conda installs its lines without #md5
		 * unchecked). */
		bool md5 = p->md5 && *p->md5, sha = p->sha256 && *p->sha256;
		bool empty = (p->md5 && !*p->md5) || (p->sha256 && !*p->sha256);
		if (p->manager == MENV_LOCK_CONDA && !md5 && !sha &&
		    (empty || lf->format == MENV_LOCK_CONDA_LOCK))
			return menv_error_set(err, MENV_EPARSE, "%s: no md5 or sha256 for %s", src,
			                      p->name ? p->name : "?");
		if (p->manager == MENV_LOCK_CONDA && empty)
			return menv_error_set(err, MENV_EPARSE, "%s: the %s of %s is empty", src,
			                      p->md5 && !*p->md5 ? "md5" : "sha256",
			                      p->name ? p->name : "?");
		/* a conda package's hash that cannot be one ("df04b", 12345) passed the dry run and
		 * failed the create's download as a mismatch, or (a number) was dropped and the
		 * package installed unchecked; a pip entry's "sha256" may be a git commit (40 hex
		 * digits: conda-lock's git+https entries), pip checks it */
		const char *hash = p->manager != MENV_LOCK_CONDA                   ? NULL
		                   : p->md5 && !menv_lock_is_hex(p->md5, 32)       ? "md5"
		                   : p->sha256 && !menv_lock_is_hex(p->sha256, 64) ? "sha256"
		                                                                   : NULL;
		if (hash)
			return menv_error_set(err, MENV_EPARSE,
			                      "%s: package entry %zu ('%s'): its %s '%s' is not %d "
			                      "hexadecimal digits",
			                      src, i + 1, p->name ? p->name : "?", hash,
			                      hash[0] == 'm' ? p->md5 : p->sha256,
			                      hash[0] == 'm' ? 32 : 64);
		int rc = url_fragment_hash(lf, &lf->pkgs[i], src, i, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* The path of lf's entry i in its file where its line is not known (a mamba JSON lock's
 * conda package, by its file name), for check_entry_text's message; false for the others. */
static bool entry_at(const struct menv_lockfile *lf, size_t i, char **fn, struct menv_lock_at *at)
{
	const struct menv_lock_package *p = &lf->pkgs[i];
	if (lf->format == MENV_LOCK_MAMBA_JSON && p->manager == MENV_LOCK_CONDA && p->url) {
		*fn = menv_url_filename(p->url);
		*at = (struct menv_lock_at){{"packages", *fn}, {0, 0}, 2, false};
		return true;
	}
	return false;
}

/* Each entry's line (menv_lock_package.line) where the reader held a document and not the
 * lines: conda-lock read by the general reader (entry i is `package` item i), pixi (the
 * reader left each entry's `packages` index + 1 in its line). One more reading of the file. */
static void entry_lines(struct menv_lockfile *lf, const char *bytes, size_t len)
{
	bool pixi = lf->format == MENV_LOCK_PIXI;
	size_t n = 0;
	for (size_t i = 0; i < lf->npkgs; i++) {
		size_t want = pixi ? lf->pkgs[i].line : lf->pkgs[i].line ? 0 : i + 1;
		n = want > n ? want : n;
	}
	if (!n)
		return;
	size_t *lines = menv_xcalloc(n, sizeof(*lines));
	menv_yaml_item_lines(bytes, len, pixi ? "packages" : "package", lines, n);
	for (size_t i = 0; i < lf->npkgs; i++) {
		struct menv_lock_package *p = &lf->pkgs[i];
		if (pixi)
			p->line = p->line ? lines[p->line - 1] : 0;
		else if (!p->line && i < n)
			p->line = lines[i];
	}
	free(lines);
}

/* Is every byte of bytes[0..len) printable ASCII or above (>= 0x20, not 0x7f) but '\n'? Then
 * every text an explicit lock's entries take from their lines is printable: check_entry_text
 * need not look at each (an 8 MB lock of 100,000 lines: 8 bytes a step). */
static bool printable_lines(const char *bytes, size_t len)
{
	const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w, x;
		memcpy(&w, bytes + i, 8);
		x = w ^ (ones * 0x7f);
		/* a byte below 0x20 or equal to 0x7f in the word: its bytes one at a time */
		if ((((w - ones * 0x20) & ~w) | ((x - ones) & ~x)) & highs)
			for (size_t k = i; k < i + 8; k++)
				if (((unsigned char)bytes[k] < 0x20 && bytes[k] != '\n') ||
				    bytes[k] == 0x7f)
					return false;
	}
	for (; i < len; i++)
		if (((unsigned char)bytes[i] < 0x20 && bytes[i] != '\n') || bytes[i] == 0x7f)
			return false;
	return true;
}

/* menv_lockfile_parse, a conda-lock file read by menv_lock_scan first where `scan`. */
static int parse(const char *bytes, size_t len, const char *src, bool scan,
                 struct menv_lockfile **out, struct menv_error *err)
{
	enum menv_lock_format f = menv_lockfile_detect(bytes, len);
	struct menv_lockfile *lf = NULL;
	json_t *root = NULL;
	struct menv_lock_at at = {{NULL}, {0}, 0, false}; /* the node an error is about */
	bool scanned = false; /* read by menv_lock_scan: every text printable ASCII */
	int rc = 0;

	*out = NULL;
	if (f == MENV_LOCK_NONE) {
		char first[256];
		first_content_line(bytes, len, true, first, sizeof(first));
		if (strstr(first, "://"))
			return menv_error_set(
			        err, MENV_EPARSE,
			        "%s: a list of URLs without an "
			        "'@EXPLICIT' line is not an explicit lockfile (CEP-23)",
			        src);
		return menv_error_set(err, MENV_EPARSE,
		                      "%s: not a lockfile (no '@EXPLICIT' line, "
		                      "no conda-lock 'package:'/'metadata:', no pixi "
		                      "'environments:', no 'lockVersion')",
		                      src);
	}
	lf = menv_lockfile_new(f);
	lf->path = menv_xstrdup(src);
	if (f == MENV_LOCK_EXPLICIT) {
		rc = menv_lock_parse_explicit(lf, bytes, len, src, err);
		scanned = !rc && printable_lines(bytes, len); /* its texts are its lines' bytes */
		goto out;
	}
	if (f == MENV_LOCK_CONDA_LOCK) {
		/* the usual file without libyaml, or without a document model; any other the
		 * general way */
		rc = scan ? menv_lock_scan_conda_lock(lf, bytes, len, -1, src, &at, err) : 1;
		scanned = !rc;
		if (rc == 1)
			rc = menv_lock_read_conda_lock(lf, bytes, len, -1, src, &at, err);
		if (rc != 1)
			goto out;
		menv_lockfile_free(lf);
		lf = menv_lockfile_new(f);
		lf->path = menv_xstrdup(src);
		rc = 0;
	}
	if (f == MENV_LOCK_MAMBA_JSON) {
		rc = menv_json_parse(bytes, len, 0, src, &root, err);
		if (rc)
			goto out;
	} else {
		rc = menv_yaml_to_json(bytes, len, src, &root, err);
		if (rc)
			goto out;
	}
	if (!json_is_object(root)) {
		rc = menv_error_set(err, MENV_EPARSE, "%s: a lockfile must be a mapping", src);
		goto out;
	}
	if (f == MENV_LOCK_CONDA_LOCK)
		rc = menv_lock_parse_conda_lock(lf, root, src, &at, err);
	else if (f == MENV_LOCK_PIXI)
		rc = menv_lock_parse_pixi(lf, root, src, &at, err);
	else
		rc = menv_lock_parse_mamba_json(lf, root, src, &at, err);
out:
	/* an error about one entry gets its line (the keys of `at` are root's: before it goes) */
	if (rc && at.n) {
		size_t col = 0, line = menv_yaml_line_at(bytes, len, at.key, at.index, at.n, &col);
		menv_lock_error_line(err, src, line, at.col ? col : 0);
	}
	json_decref(root);
	if (!rc && (f == MENV_LOCK_CONDA_LOCK || f == MENV_LOCK_PIXI))
		entry_lines(lf, bytes, len);
	size_t i;
	if (!rc && (rc = check_entry_text(lf, src, scanned, &i, err))) {
		char *fn = NULL;
		if (lf->pkgs[i].line)
			menv_lock_error_line(err, src, lf->pkgs[i].line, 0);
		else if (entry_at(lf, i, &fn, &at))
			menv_lock_error_line(
			        err, src,
			        menv_yaml_line_at(bytes, len, at.key, at.index, at.n, NULL), 0);
		free(fn);
	}
	if (rc) {
		menv_lockfile_free(lf);
		return rc;
	}
	*out = lf;
	return 0;
}

int menv_lockfile_parse(const char *bytes, size_t len, const char *src, struct menv_lockfile **out,
                        struct menv_error *err)
{
	return parse(bytes, len, src, true, out, err);
}

int menv_lockfile_parse_libyaml(const char *bytes, size_t len, const char *src,
                                struct menv_lockfile **out, struct menv_error *err)
{
	return parse(bytes, len, src, false, out, err);
}

/* A regular conda-lock file read as it streams, the file never held whole (a 100,000-entry
 * lock is 20 MB): by menv_lock_scan_conda_lock of the descriptor (which tells a conda-lock
 * file too: one reading), else detect_fd and menv_lock_read_conda_lock of the descriptor
 * (libyaml). 0 with the lockfile in *out; MENV_EINTR; 1 where menv_lockfile_load reads it
 * whole instead (another format, not a regular file, any error: that reading says it, with
 * its line). */
static int load_streamed(const char *path, struct menv_lockfile **out, struct menv_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct menv_error e = {0}; /* what the whole reading says instead (but MENV_EINTR) */
	struct stat st;
	enum menv_lock_format f = MENV_LOCK_NONE;
	size_t managers = 0, bad;
	int rc = 1;

	if (fd < 0)
		return 1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 1;
	}
	struct menv_lockfile *lf = menv_lockfile_new(MENV_LOCK_CONDA_LOCK);
	struct menv_lock_at at = {{NULL}, {0}, 0, false};
	lf->path = menv_xstrdup(path);
	rc = menv_lock_scan_conda_lock(lf, NULL, 0, fd, path, &at, &e);
	bool scanned = !rc; /* every text of its entries printable ASCII (menv_lock_scan) */
	if (rc == 1 && (lseek(fd, 0, SEEK_SET) != 0 || detect_fd(fd, path, &f, &managers, &e) ||
	                f != MENV_LOCK_CONDA_LOCK || lseek(fd, 0, SEEK_SET) != 0))
		rc = e.code == MENV_EINTR ? MENV_EINTR : 1;
	else if (rc == 1) {
		menv_lockfile_reserve(lf, managers);
		rc = menv_lock_read_conda_lock(lf, NULL, 0, fd, path, &at, &e);
	}
	close(fd);
	/* every entry has its line (the stream's); one the checks refuse is said by the whole
	 * reading, as menv_lockfile_parse says it */
	if (!rc && check_entry_text(lf, path, scanned, &bad, &e))
		rc = 1;
	if (rc) {
		menv_lockfile_free(lf);
		return rc == MENV_EINTR ? menv_error_set(err, MENV_EINTR, "%s", e.msg) : 1;
	}
	*out = lf;
	return 0;
}

int menv_lockfile_load(const char *path, struct menv_lockfile **out, struct menv_error *err)
{
	struct menv_buf b = MENV_BUF_INIT;
	*out = NULL;
	int rc = load_streamed(path, out, err);
	if (rc != 1)
		return rc;
	rc = menv_buf_read_stream(&b, path, err);
	if (!rc)
		rc = menv_lockfile_parse(b.buf, b.len, path, out, err);
	menv_buf_release(&b);
	return rc;
}

/* Does entry `p` belong to `platform` (a platform name, or for pixi v7 its subdir)? */
bool menv_lock_on_platform(const struct menv_lockfile *lf, const struct menv_lock_package *p,
                           const char *platform)
{
	if (!p->platform)
		return false;
	/* an explicit file of noarch packages only, without "# platform:", suits every platform */
	if (!strcmp(p->platform, platform) || !strcmp(p->platform, "noarch"))
		return true;
	return lf->format == MENV_LOCK_PIXI &&
	       !strcmp(menv_lock_pixi_subdir(lf, p->platform), platform);
}

int menv_lockfile_select(const struct menv_lockfile *lf, const char *env, const char *platform,
                         const struct menv_lock_package ***out, size_t *n, struct menv_error *err)
{
	const char *src = lf->path ? lf->path : "lockfile";
	bool known_platform = false;

	*out = NULL;
	*n = 0;
	if (lf->format == MENV_LOCK_PIXI) {
		const char *want = env ? env : "default";
		bool found = false;
		for (size_t i = 0; i < lf->nenvs && !found; i++)
			found = !strcmp(lf->envs[i].name, want);
		if (!found) {
			struct menv_buf b = MENV_BUF_INIT;
			for (size_t i = 0; i < lf->nenvs; i++)
				menv_buf_addf(&b, "%s'%s'", i ? ", " : "", lf->envs[i].name);
			menv_error_set(err, MENV_ENOTFOUND,
			               "%s has no environment '%s' (it has %s)", src, want,
			               lf->nenvs ? b.buf : "none");
			menv_buf_release(&b);
			return MENV_ENOTFOUND;
		}
		env = want;
	} else if (env) {
		return menv_error_set(err, MENV_EUSAGE,
		                      "-e/--environment '%s' applies to pixi "
		                      "lockfiles only; '%s' is a %s file",
		                      env, src, menv_lock_format_name(lf->format));
	}
	for (size_t i = 0; i < lf->platforms.n && !known_platform; i++)
		known_platform = !strcmp(lf->platforms.v[i], platform) ||
		                 !strcmp(lf->platforms.v[i], "noarch") ||
		                 (lf->format == MENV_LOCK_PIXI &&
		                  !strcmp(menv_lock_pixi_subdir(lf, lf->platforms.v[i]), platform));
	const struct menv_lock_package **v = menv_xcalloc(lf->npkgs + 1, sizeof(*v));
	for (size_t i = 0; i < lf->npkgs; i++) {
		const struct menv_lock_package *p = &lf->pkgs[i];
		if (env && (!p->env || strcmp(p->env, env)))
			continue;
		if (!menv_lock_on_platform(lf, p, platform))
			continue;
		if (p->source) {
			free(v);
			return menv_error_set(err, MENV_EUNSUPPORTED,
			                      "%s: '%s' is a source package "
			                      "('%s') that must be built; menv installs only "
			                      "locked package files",
			                      src, p->name, p->source);
		}
		v[(*n)++] = p;
	}
	if (!*n && !known_platform) {
		/* the first few named, as an error is one line (a lock of 50,000 platforms) */
		enum { SHOWN = 5 };
		struct menv_buf b = MENV_BUF_INIT;
		for (size_t i = 0; i < lf->platforms.n && i < SHOWN; i++)
			menv_buf_addf(&b, "%s%s", i ? ", " : "", lf->platforms.v[i]);
		if (lf->platforms.n > SHOWN)
			menv_buf_addf(&b, " and %zu more", lf->platforms.n - SHOWN);
		menv_error_set(err, MENV_ENOTFOUND,
		               "%s has no packages for platform '%s' (it "
		               "locks %s)",
		               src, platform, lf->platforms.n ? b.buf : "no platform");
		menv_buf_release(&b);
		free(v);
		return MENV_ENOTFOUND;
	}
	*out = v;
	return 0;
}

static json_t *strvec_json(const struct menv_strvec *sv)
{
	json_t *a = json_array();
	for (size_t i = 0; i < sv->n; i++)
		json_array_append_new(a, json_string(sv->v[i]));
	return a;
}

json_t *menv_lockfile_to_json(const struct menv_lockfile *lf)
{
	json_t *j = json_object(), *pk = json_array(), *envs = json_array();
	json_object_set_new(j, "format", json_string(menv_lock_format_name(lf->format)));
	json_object_set_new(j, "version", json_integer(lf->version));
	json_object_set_new(j, "channels", strvec_json(&lf->channels));
	json_object_set_new(j, "platforms", strvec_json(&lf->platforms));
	json_object_set_new(j, "sources", strvec_json(&lf->sources));
	json_object_set(j, "content_hash", lf->content_hash);
	json_object_set(j, "metadata_extra", lf->metadata_extra);
	for (size_t i = 0; i < lf->nenvs; i++) {
		const struct menv_lock_env *e = &lf->envs[i];
		json_array_append_new(envs, json_pack("{s:s, s:o, s:o, s:o}", "name", e->name,
		                                      "channels", strvec_json(&e->channels),
		                                      "indexes", strvec_json(&e->indexes),
		                                      "find_links", strvec_json(&e->find_links)));
	}
	json_object_set_new(j, "environments", envs);
	for (size_t i = 0; i < lf->npkgs; i++) {
		const struct menv_lock_package *p = &lf->pkgs[i];
		json_t *e = json_object();
		json_object_set_new(e, "manager",
		                    json_string(p->manager == MENV_LOCK_PIP ? "pip" : "conda"));
		json_object_set_new(e, "name", menv_lock_jstr_or_null(p->name));
		json_object_set_new(e, "version", menv_lock_jstr_or_null(p->version));
		json_object_set_new(e, "build", menv_lock_jstr_or_null(p->build));
		json_object_set_new(e, "platform", menv_lock_jstr_or_null(p->platform));
		json_object_set_new(e, "subdir", menv_lock_jstr_or_null(p->subdir));
		json_object_set_new(e, "url", menv_lock_jstr_or_null(p->url));
		json_object_set_new(e, "md5", menv_lock_jstr_or_null(p->md5));
		json_object_set_new(e, "sha256", menv_lock_jstr_or_null(p->sha256));
		json_object_set_new(e, "size", json_integer(p->size));
		json_object_set_new(e, "category", menv_lock_jstr_or_null(p->category));
		json_object_set_new(e, "optional", json_boolean(p->optional));
		json_object_set(e, "depends", p->depends ? p->depends : json_null());
		if (p->deps_map_implied)
			json_object_set_new(e, "dependencies", menv_lock_deps_map(p->depends));
		else
			json_object_set(e, "dependencies", p->deps_map ? p->deps_map : json_null());
		json_object_set_new(e, "extra", p->extra ? json_incref(p->extra) : json_object());
		json_object_set_new(e, "source", menv_lock_jstr_or_null(p->source));
		json_object_set_new(e, "environment", menv_lock_jstr_or_null(p->env));
		json_array_append_new(pk, e);
	}
	json_object_set_new(j, "packages", pk);
	return j;
}
