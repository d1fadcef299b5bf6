/*
 * lock_explicit.c - explicit lockfiles (CEP-23): `@EXPLICIT` followed by package URLs with
 * `#md5` or `#sha256:` fragments, read into the lockfile model and written from it.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "lockfile.h"
#include "specs.h"

int menv_lock_parse_explicit(struct menv_lockfile *lf, const char *bytes, size_t len,
                             const char *src, struct menv_error *err)
{
	char *platform = NULL;
	bool seen = false;
	size_t lineno = 0, bad, cap = 0;
	char *line = NULL; /* each line in turn (one buffer for the file) */
	int rc = 0;

	/* a NUL byte cut its line where C reads it ("x.conda\0junk" read as "x.conda", a line
	 * "\0https://..." skipped as blank): refused as in every YAML file */
	const char *nul = memchr(bytes, '\0', len);
	if (nul && menv_utf8_valid(bytes, (size_t)(nul - bytes), &bad))
		bad = (size_t)(nul - bytes);
	if (nul || !menv_utf8_valid(bytes, len, &bad)) {
		/* URLs and names go into JSON (records, --json), which takes nothing else */
		size_t ln = 1, col = 1;
		for (size_t j = 0; j < bad; j++)
			if (bytes[j] == '\n')
				ln++, col = 1;
			else
				col++;
		return menv_error_set(err, MENV_EPARSE, "%s:%zu:%zu: %s", src, ln, col,
		                      bytes[bad] ? "not valid UTF-8" : "a NUL byte");
	}
	/* each package line holds a URL */
	menv_lockfile_reserve(lf, menv_lock_count(bytes, len, "://"));
	for (size_t i = 0; i < len && !rc;) {
		if (!(lineno & 4095) && menv_cancelled()) {
			rc = menv_error_set(err, MENV_EINTR, "%s: reading interrupted", src);
			break;
		}
		size_t e = i;
		while (e < len && bytes[e] != '\n')
			e++;
		lineno++;
		if (e - i + 1 > cap) {
			cap = 2 * (e - i + 1);
			free(line);
			line = menv_xmalloc(cap);
		}
		memcpy(line, bytes + i, e - i);
		line[e - i] = '\0';
		char *s = line, *t;
		i = e + 1;
		if (lineno == 1 && !strncmp(s, "\xef\xbb\xbf", 3))
			s += 3;
		while (isspace((unsigned char)*s))
			s++;
		t = s + strlen(s);
		while (t > s && isspace((unsigned char)t[-1]))
			*--t = '\0';
		if (!*s)
			continue;
		if (*s == '#') {
			const char *c = s + 1;
			while (*c == ' ')
				c++;
			if (!strncmp(c, "platform:", 9)) {
				c += 9;
				while (*c == ' ')
					c++;
				free(platform);
				platform = menv_xstrdup(c);
			} else if (!strncmp(c, "pip ", 4)) {
				/* conda-lock: "# pip name @ URL" */
				const char *at = strstr(c + 4, " @ ");
				if (!at) {
					rc = menv_error_set(err, MENV_EPARSE,
					                    "%s:%zu: a pip line must "
					                    "read '# pip NAME @ URL'",
					                    src, lineno);
				} else {
					struct menv_lock_package *p = menv_lockfile_add(lf);
					p->manager = MENV_LOCK_PIP;
					p->line = lineno;
					p->name = menv_xstrndup(c + 4, (size_t)(at - c - 4));
					const char *u = at + 3;
					const char *frag = strstr(u, "#sha256=");
					if (frag) {
						p->url = menv_xstrndup(u, (size_t)(frag - u));
						menv_lock_set_hash(&p->sha256, frag + 8);
					} else {
						p->url = menv_xstrdup(u);
					}
				}
			}
			continue;
		}
		if (!strcmp(s, "@EXPLICIT")) {
			seen = true;
			continue;
		}
		if (!seen) {
			rc = menv_error_set(err, MENV_EPARSE,
			                    "%s:%zu: '%s' comes before the "
			                    "'@EXPLICIT' line",
			                    src, lineno, s);
			break;
		}
		char *frag = strchr(s, '#');
		char *md5 = NULL, *sha = NULL;
		if (frag) {
			*frag++ = '\0';
			if (!strncmp(frag, "sha256:", 7) && menv_lock_is_hex(frag + 7, 64))
				sha = frag + 7;
			else if (menv_lock_is_hex(frag, 32))
				md5 = frag;
			else if (menv_lock_is_hex(frag, 64))
				sha = frag;
			else
				rc = menv_error_set(err, MENV_EPARSE,
				                    "%s:%zu: '#%s' is neither an "
				                    "md5 nor a 'sha256:' hash",
				                    src, lineno, frag);
		}
		if (!rc && !strstr(s, "://"))
			rc = menv_error_set(err, MENV_EPARSE, "%s:%zu: '%s' is not a package URL",
			                    src, lineno, s);
		/* "x.conda?token=...": conda 26.7.1 refuses it ("ParseError: Could not parse
		 * explicit URL", its pattern ends the file name at '#' or the line's end), and a
		 * query would reach the records and exports; the query is not shown (a token) */
		char *query = rc ? NULL : strchr(s, '?');
		if (query) {
			*query = '\0';
			rc = menv_error_set(
			        err, MENV_EPARSE,
			        "%s:%zu: the URL '%s' has a query (not shown): an explicit "
			        "lockfile's URL takes none (conda cannot read it either); a "
			        "channel's token or password goes in its URL in .condarc, or in "
			        "~/.netrc",
			        src, lineno, s);
		}
		char *n = NULL, *v = NULL, *b = NULL;
		const char *dash[3];
		bool split = !rc && menv_lock_split_in_place(s, dash);
		if (!rc && !split) {
			/* anything else as menv_dist_split takes it, with its message */
			char *fn = menv_url_filename(s);
			rc = menv_dist_split(fn, &n, &v, &b, err);
			if (rc)
				menv_error_prefix(err, "%s:%zu", src, lineno);
			free(fn);
		}
		if (!rc) {
			/* every string of the entry held by lf (menv_lock_strndup) */
			struct menv_lock_package *p = menv_lockfile_add(lf);
			p->manager = MENV_LOCK_CONDA;
			p->line = lineno;
			if (split) {
				/* NAME-VERSION-BUILD.conda: the parts copied straight from the line */
				const char *fn = dash[0];
				while (fn > s && fn[-1] != '/')
					fn--;
				p->name = menv_lock_strndup(lf, fn, (size_t)(dash[0] - fn));
				p->version = menv_lock_strndup(lf, dash[0] + 1,
				                               (size_t)(dash[1] - dash[0] - 1));
				p->build = menv_lock_strndup(lf, dash[1] + 1,
				                             (size_t)(dash[2] - dash[1] - 1));
			} else {
				p->name = menv_lock_strdup(lf, n);
				p->version = menv_lock_strdup(lf, v);
				p->build = menv_lock_strdup(lf, b);
			}
			p->url = menv_lock_strdup(lf, s);
			/* the folder before the file name ("linux-64"), the entry before's copy
			 * where it is the same */
			size_t off, sl;
			if (menv_url_folder(s, &off, &sl)) {
				const char *prev = lf->npkgs > 1 ? p[-1].subdir : NULL;
				if (!menv_lock_holds(lf, prev))
					prev = NULL;
				p->subdir = prev && strlen(prev) == sl && !memcmp(prev, s + off, sl)
				                    ? p[-1].subdir
				                    : menv_lock_strndup(lf, s + off, sl);
			}
			const char *h = md5 ? md5 : sha;
			char *hex = h ? menv_lock_strdup(lf, h) : NULL;
			for (char *c = hex; c && *c; c++)
				*c = (char)tolower((unsigned char)*c);
			if (md5)
				p->md5 = hex;
			else
				p->sha256 = hex;
		}
		free(n);
		free(v);
		free(b);
	}
	free(line);
	if (!rc && !seen)
		rc = menv_error_set(err, MENV_EPARSE, "%s: no '@EXPLICIT' line", src);
	if (!rc && !platform) {
		/* no "# platform:" header: the subdir of the packages that are not noarch */
		for (size_t j = 0; j < lf->npkgs && !platform; j++)
			if (lf->pkgs[j].subdir && strcmp(lf->pkgs[j].subdir, "noarch"))
				platform = menv_xstrdup(lf->pkgs[j].subdir);
		if (!platform)
			platform = menv_xstrdup("noarch");
	}
	if (!rc) {
		menv_strvec_push(&lf->platforms, platform);
		/* one copy for every entry (lf holds it) */
		char *plat = menv_lock_strdup(lf, platform);
		for (size_t j = 0; j < lf->npkgs; j++) {
			lf->pkgs[j].platform = plat;
			json_decref(lf->pkgs[j].deps_map);
			lf->pkgs[j].deps_map = NULL;
		}
	}
	free(platform);
	return rc;
}

void menv_lockfile_write_explicit(const struct menv_lockfile *lf, const char *platform,
                                  struct menv_buf *out)
{
	if (!platform)
		platform = lf->platforms.n ? lf->platforms.v[0] : menv_platform_subdir();
	menv_buf_adds(out, "# This file may be used to create an environment using:\n"
	                   "# $ menv create -n NAME -f THIS_FILE\n");
	menv_buf_addf(out, "# platform: %s\n@EXPLICIT\n", platform);
	for (size_t i = 0; i < lf->npkgs; i++) {
		const struct menv_lock_package *p = &lf->pkgs[i];
		if (p->manager != MENV_LOCK_CONDA || !p->url ||
		    !menv_lock_on_platform(lf, p, platform))
			continue;
		if (p->sha256)
			menv_buf_addf(out, "%s#sha256:%s\n", p->url, p->sha256);
		else if (p->md5)
			menv_buf_addf(out, "%s#%s\n", p->url, p->md5);
		else
			menv_buf_addf(out, "%s\n", p->url);
	}
	for (size_t i = 0; i < lf->npkgs; i++) {
		const struct menv_lock_package *p = &lf->pkgs[i];
		if (p->manager != MENV_LOCK_PIP || !p->url ||
		    !menv_lock_on_platform(lf, p, platform))
			continue;
		menv_buf_addf(out, "# pip %s @ %s", p->name, p->url);
		if (p->sha256)
			menv_buf_addf(out, "#sha256=%s", p->sha256);
		menv_buf_addch(out, '\n');
	}
}
