/*
 * history.c - reading `conda-meta/history` (CEP-32; conda's History): blocks that start with
 * `==> DATE <==`, then `# cmd: ...`, `+channel/subdir::dist` (linked), `-...` (unlinked),
 * `# update specs: [...]` or `# remove specs: [...]`. Each block is a revision; replaying
 * them gives the environment of any revision (`menv list --revisions`,
 * `menv install --revision N`). Writing happens in prefix.c, inside the transaction.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "envs.h"

/* Items of a JSON or Python list literal of strings: ["a", 'b c']. */
static void parse_spec_list(const char *s, struct menv_strvec *out)
{
	const char *p = strchr(s, '[');
	if (!p) {
		/* very old conda: a comma-separated list */
		while (*s == ' ')
			s++;
		if (*s)
			menv_strvec_push(out, s);
		return;
	}
	for (p++; *p && *p != ']';) {
		if (*p == '\'' || *p == '"') {
			char q = *p++;
			struct menv_buf b = MENV_BUF_INIT;
			while (*p && *p != q) {
				if (*p == '\\' && p[1])
					p++;
				menv_buf_addch(&b, *p++);
			}
			menv_strvec_push_owned(out, menv_buf_detach(&b));
			if (*p)
				p++;
		} else {
			p++;
		}
	}
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
	char *save = NULL;
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
		} else if (!strncmp(line, "# update specs:", 15)) {
			parse_spec_list(line + 15, &cur->specs);
		} else if (!strncmp(line, "# remove specs:", 15)) {
			parse_spec_list(line + 15, &cur->specs);
			cur->remove_specs = true;
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
