/*
 * history.c - reading `conda-meta/history` (CEP-32; conda's History): blocks that start with
 * `==> DATE <==`, then `# cmd: ...`, `+channel/subdir::dist` (linked), `-...` (unlinked),
 * `# update specs: [...]`, `# remove specs: [...]` or `# neutered specs: [...]`. Each block
 * is a revision; replaying them gives the environment of any revision (`menv list
 * --revisions`, `menv install --revision N`), and their specs give what the user asked for
 * (conda's History.get_requested_specs_map), which every solve of the environment keeps.
 * Writing happens in prefix.c, inside the transaction; the spec lines are formatted here,
 * as conda writes them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "prefix.h"

/* conda's version_relation_re: an item of an old comma-separated spec list that starts
 * with a relation (">=1.5.1") belongs to the spec before it. */
static bool is_version_relation(const char *s)
{
	static const char *const ops[] = {"==", "!=", "<=", ">=", "~=", "=", "<", ">"};
	for (size_t i = 0; i < sizeof(ops) / sizeof(*ops); i++) {
		size_t n = strlen(ops[i]);
		if (strncmp(s, ops[i], n))
			continue;
		const char *r = s + n;
		return *r && !strchr("=<>!~", *r) && !strpbrk(r, " \t");
	}
	return false;
}

/* One Python string literal at *pp ('...' or "..."), escapes decoded, into b. */
static void python_string(const char **pp, struct menv_buf *b)
{
	const char *p = *pp;
	char q = *p++;
	while (*p && *p != q) {
		if (*p != '\\' || !p[1]) {
			menv_buf_addch(b, *p++);
			continue;
		}
		p++;
		switch (*p) {
		case 'n': menv_buf_addch(b, '\n'); break;
		case 't': menv_buf_addch(b, '\t'); break;
		case 'r': menv_buf_addch(b, '\r'); break;
		case 'x':
		case 'u': {
			int w = *p == 'x' ? 2 : 4;
			unsigned long cp = 0;
			int k = 0;
			for (; k < w && p[1 + k] && strchr("0123456789abcdefABCDEF", p[1 + k]); k++)
				cp = cp * 16 + (unsigned long)(p[1 + k] <= '9' ? p[1 + k] - '0'
				                               : p[1 + k] <= 'F'
				                                       ? p[1 + k] - 'A' + 10
				                                       : p[1 + k] - 'a' + 10);
			p += k;
			if (cp < 0x80) {
				menv_buf_addch(b, (char)cp);
			} else if (cp < 0x800) {
				menv_buf_addch(b, (char)(0xc0 | (cp >> 6)));
				menv_buf_addch(b, (char)(0x80 | (cp & 0x3f)));
			} else {
				menv_buf_addch(b, (char)(0xe0 | (cp >> 12)));
				menv_buf_addch(b, (char)(0x80 | ((cp >> 6) & 0x3f)));
				menv_buf_addch(b, (char)(0x80 | (cp & 0x3f)));
			}
			break;
		}
		default: menv_buf_addch(b, *p); break; /* \\ \' \" */
		}
		p++;
	}
	*pp = *p ? p + 1 : p;
}

/* The specs of a `# <action> specs:` line, as conda's History._parse_comment_line reads
 * them: a Python (or JSON) list literal of strings, or conda<4.5's comma-separated list
 * (where ",<2.0" continues the spec before it). Items that are empty or end with "@" are
 * left out. */
static void parse_spec_list(const char *s, struct menv_strvec *out)
{
	struct menv_strvec items = MENV_STRVEC_INIT;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '[') {
		for (const char *p = s + 1; *p && *p != ']';) {
			if (*p == '\'' || *p == '"') {
				struct menv_buf b = MENV_BUF_INIT;
				python_string(&p, &b);
				menv_strvec_push_owned(&items, menv_buf_detach(&b));
			} else {
				p++;
			}
		}
	} else if (!strchr(s, '[')) {
		for (const char *p = s; *p;) {
			size_t n = strcspn(p, ",");
			char *item = menv_xstrndup(p, n);
			if (items.n && is_version_relation(item)) {
				char *joined = menv_xasprintf("%s,%s", items.v[items.n - 1], item);
				free(items.v[items.n - 1]);
				items.v[items.n - 1] = joined;
				free(item);
			} else {
				menv_strvec_push_owned(&items, item);
			}
			p += n;
			if (*p == ',')
				p++;
		}
	} /* else: neither form; conda fails on it, menv reads no specs */
	for (size_t i = 0; i < items.n; i++) {
		size_t n = strlen(items.v[i]);
		if (n && items.v[i][n - 1] != '@')
			menv_strvec_push(out, items.v[i]);
	}
	menv_strvec_clear(&items);
}

/* A `# <action> specs: ...` line: the action word into act, the text after "specs:" in
 * *rest. */
static bool spec_action(const char *line, char *act, size_t len, const char **rest)
{
	const char *p = line, *w;
	if (*p++ != '#')
		return false;
	while (*p == ' ' || *p == '\t')
		p++;
	for (w = p; *p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
	            (*p >= '0' && *p <= '9');
	     p++)
		;
	if (p == w || (size_t)(p - w) >= len)
		return false;
	memcpy(act, w, (size_t)(p - w));
	act[p - w] = '\0';
	while (*p == ' ' || *p == '\t')
		p++;
	if (strncmp(p, "specs:", 6))
		return false;
	*rest = p + 6;
	return true;
}

int menv_history_load(const char *prefix, struct menv_revision **out, size_t *n,
                      struct menv_error *err)
{
	char *path = menv_xasprintf("%s/conda-meta/history", prefix);
	struct menv_buf b = MENV_BUF_INIT;
	struct menv_revision *revs = NULL, *cur = NULL;
	size_t cnt = 0;
	int rc;

	*out = NULL;
	*n = 0;
	rc = menv_buf_read_file(&b, path, err);
	if (rc == MENV_ENOTFOUND) {
		rc = 0;
		goto out;
	}
	if (rc)
		goto out;
	char *save = NULL, act[32];
	const char *rest;
	for (char *line = strtok_r(b.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t l = strlen(line);
		while (l && (line[l - 1] == '\r' || line[l - 1] == ' '))
			line[--l] = '\0';
		if (!strncmp(line, "==> ", 4) && l > 8 && !strcmp(line + l - 4, " <==")) {
			revs = menv_xrealloc(revs, (cnt + 1) * sizeof(*revs));
			cur = &revs[cnt++];
			memset(cur, 0, sizeof(*cur));
			cur->date = menv_xstrndup(line + 4, l - 8);
			continue;
		}
		if (!cur)
			continue;
		if (!strncmp(line, "# cmd:", 6)) {
			const char *c = line + 6;
			while (*c == ' ')
				c++;
			free(cur->cmd);
			cur->cmd = menv_xstrdup(c);
		} else if (spec_action(line, act, sizeof(act), &rest)) {
			/* conda's spec_pat: `#\s*(\w+)\s*specs:\s*(.+)?` */
			if (!strcmp(act, "update") || !strcmp(act, "install") ||
			    !strcmp(act, "create")) {
				parse_spec_list(rest, &cur->update_specs);
				parse_spec_list(rest, &cur->specs);
			} else if (!strcmp(act, "remove") || !strcmp(act, "uninstall")) {
				parse_spec_list(rest, &cur->remove_list);
				parse_spec_list(rest, &cur->specs);
				cur->remove_specs = true;
			} else if (!strcmp(act, "neutered")) {
				parse_spec_list(rest, &cur->neutered);
			}
		} else if (line[0] == '+' && line[1]) {
			menv_strvec_push(&cur->added, line + 1);
		} else if (line[0] == '-' && line[1]) {
			menv_strvec_push(&cur->removed, line + 1);
		}
	}
	*out = revs;
	*n = cnt;
out:
	menv_buf_release(&b);
	free(path);
	return rc;
}

void menv_history_free(struct menv_revision *revs, size_t n)
{
	for (size_t i = 0; revs && i < n; i++) {
		free(revs[i].date);
		free(revs[i].cmd);
		menv_strvec_clear(&revs[i].added);
		menv_strvec_clear(&revs[i].removed);
		menv_strvec_clear(&revs[i].specs);
		menv_strvec_clear(&revs[i].neutered);
		menv_strvec_clear(&revs[i].update_specs);
		menv_strvec_clear(&revs[i].remove_list);
	}
	free(revs);
}

static const char *dist_part(const char *label)
{
	const char *cc = strstr(label, "::");
	return cc ? cc + 2 : label;
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int menv_history_state(const struct menv_revision *revs, size_t n, size_t rev,
                       struct menv_strvec *out, struct menv_error *err)
{
	json_t *set;

	if (rev >= n)
		return menv_error_set(err, MENV_ENOTFOUND,
		                      "revision %zu does not exist (the history has %zu)", rev, n);
	set = json_object(); /* dist -> label */
	for (size_t i = 0; i <= rev; i++) {
		for (size_t k = 0; k < revs[i].removed.n; k++)
			json_object_del(set, dist_part(revs[i].removed.v[k]));
		for (size_t k = 0; k < revs[i].added.n; k++)
			json_object_set_new(set, dist_part(revs[i].added.v[k]),
			                    json_string(revs[i].added.v[k]));
	}
	const char *key;
	json_t *v;
	json_object_foreach(set, key, v) menv_strvec_push(out, json_string_value(v));
	json_decref(set);
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), by_str);
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* The specs the user asked for (conda's History.get_requested_specs_map)                   */

/* A spec's package name ("conda-forge::numpy>=1.2" -> "numpy"), or NULL when the spec does
 * not parse. Caller frees. */
static char *spec_name(const char *spec)
{
	struct menv_matchspec *ms = NULL;
	char *name = NULL;
	if (menv_matchspec_parse(spec, &ms, NULL) == 0 && ms->name)
		name = menv_xstrdup(ms->name);
	menv_matchspec_free(ms);
	return name;
}

/* conda's spec_map dict: name -> spec, in insertion order. `set` keeps a name's place, `pop`
 * removes it (its slot stays, empty; a later `set` appends). Hashed: 100,000 specs in a
 * history cost linear time. */
struct spec_map {
	struct menv_strvec names, specs; /* NULL entries: popped */
	struct menv_strmap at;           /* name -> index, SIZE_MAX once popped */
};

static void map_set(struct spec_map *m, const char *name, const char *spec)
{
	size_t *i = menv_strmap_get(&m->at, name);
	if (i && *i != SIZE_MAX) {
		free(m->specs.v[*i]);
		m->specs.v[*i] = menv_xstrdup(spec);
		return;
	}
	menv_strmap_put(&m->at, name, m->names.n);
	menv_strvec_push(&m->names, name);
	menv_strvec_push(&m->specs, spec);
}

static void map_pop(struct spec_map *m, const char *name)
{
	size_t *i = menv_strmap_get(&m->at, name);
	if (!i || *i == SIZE_MAX)
		return;
	free(m->names.v[*i]);
	free(m->specs.v[*i]);
	m->names.v[*i] = m->specs.v[*i] = NULL;
	*i = SIZE_MAX;
}

static void map_apply(struct spec_map *m, const struct menv_strvec *list, bool remove)
{
	for (size_t i = 0; i < list->n; i++) {
		char *name = spec_name(list->v[i]);
		if (!name)
			continue;
		if (remove)
			map_pop(m, name);
		else
			map_set(m, name, list->v[i]);
		free(name);
	}
}

int menv_history_requested_specs(const char *prefix, const struct menv_strvec *installed,
                                 struct menv_strvec *out, struct menv_error *err)
{
	struct menv_revision *revs = NULL;
	struct spec_map m = {MENV_STRVEC_INIT, MENV_STRVEC_INIT, MENV_STRMAP_INIT};
	struct menv_strset inst = MENV_STRSET_INIT;
	size_t n = 0;
	int rc = menv_history_load(prefix, &revs, &n, err);

	if (rc)
		return rc;
	for (size_t r = 0; r < n; r++) {
		/* conda's get_user_requests: only blocks with a `# cmd:` line are requests */
		if (!revs[r].cmd)
			continue;
		map_apply(&m, &revs[r].remove_list, true);
		map_apply(&m, &revs[r].update_specs, false);
		/* neutering overrides what was asked before */
		map_apply(&m, &revs[r].neutered, false);
	}
	for (size_t k = 0; installed && k < installed->n; k++)
		menv_strset_add(&inst, installed->v[k]);
	for (size_t i = 0; i < m.names.n; i++)
		if (m.names.v[i] && (!installed || menv_strset_has(&inst, m.names.v[i])))
			menv_strvec_push(out, m.specs.v[i]);
	menv_strset_clear(&inst);
	menv_strvec_clear(&m.names);
	menv_strvec_clear(&m.specs);
	menv_strmap_clear(&m.at);
	menv_history_free(revs, n);
	return 0;
}

void menv_history_specs_line(struct menv_buf *b, const char *action,
                             const struct menv_strvec *specs)
{
	menv_buf_addf(b, "# %s specs: [", action);
	for (size_t i = 0; i < specs->n; i++) {
		const char *s = specs->v[i];
		/* Python's repr of a str: single quotes unless the text holds ' and no " */
		char q = strchr(s, '\'') && !strchr(s, '"') ? '"' : '\'';
		menv_buf_addf(b, "%s%c", i ? ", " : "", q);
		for (; *s; s++) {
			if (*s == q || *s == '\\')
				menv_buf_addch(b, '\\');
			if (*s == '\n')
				menv_buf_addf(b, "\\n");
			else if (*s == '\t')
				menv_buf_addf(b, "\\t");
			else if (*s == '\r')
				menv_buf_addf(b, "\\r");
			else if ((unsigned char)*s < 0x20 || *s == 0x7f) /* repr's \xNN */
				menv_buf_addf(b, "\\x%02x", (unsigned char)*s);
			else
				menv_buf_addch(b, *s);
		}
		menv_buf_addch(b, q);
	}
	menv_buf_addf(b, "]\n");
}

char *menv_history_cmdline(int argc, char *const *argv)
{
	struct menv_buf b = MENV_BUF_INIT;
	menv_buf_adds(&b, "menv");
	for (int i = 1; i < argc; i++) {
		menv_buf_addch(&b, ' ');
		if (strpbrk(argv[i], " \t'\"$"))
			menv_buf_addf(&b, "'%s'", argv[i]);
		else
			menv_buf_adds(&b, argv[i]);
	}
	return menv_buf_detach(&b);
}
