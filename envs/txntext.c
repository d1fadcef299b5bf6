/*
 * txntext.c - a transaction's plan as the rows of its text table (mamba's and conda's
 * "Transaction" summary): one row a package (two for a changed one: the old above the new),
 * grouped by kind, the download it needs (a front end sizes and draws the columns); and the
 * lines that say what a commit did.
 */
#include <stdio.h>
#include <stdlib.h>

#include "txn.h"

static const char *jstr(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : "";
}

void menv_size_text(int64_t n, char *out, size_t len)
{
	if (n < 0)
		snprintf(out, len, "-");
	else if (n < 1000)
		snprintf(out, len, "%lld B", (long long)n);
	else if (n < 1000 * 1000)
		snprintf(out, len, "%.1f kB", (double)n / 1e3);
	else if (n < 1000LL * 1000 * 1000)
		snprintf(out, len, "%.1f MB", (double)n / 1e6);
	else
		snprintf(out, len, "%.1f GB", (double)n / 1e9);
}

const char *menv_change_kind_name(enum menv_change_kind k)
{
	static const char *const names[] = {"Install", "Upgrade",   "Downgrade",
	                                    "Change",  "Reinstall", "Remove"};
	return k <= MENV_CHANGE_REMOVE ? names[k] : "";
}

void menv_txn_plan_rows(const struct menv_txn_plan *p, struct menv_txn_plan_rows *out)
{
	struct menv_txn_plan_row *rows = menv_xcalloc(2 * p->nchanges + 1, sizeof(*rows));
	size_t n = 0;

	*out = (struct menv_txn_plan_rows){.pip = MENV_STRVEC_INIT};
	for (size_t i = 0; i < p->nchanges; i++) {
		const struct menv_txn_change *c = &p->changes[i];
		const struct menv_record *r = c->link;
		json_t *u = c->unlink;
		bool again = c->kind == MENV_CHANGE_REINSTALL;
		char sz[32];

		out->counts[c->kind]++;
		if (u && !again) /* the old one above the new, as mamba */
			rows[n++] = (struct menv_txn_plan_row){
			        c->kind,
			        '-',
			        {c->name, jstr(u, "version"), jstr(u, "build"),
			         menv_channel_display(p->cfg, jstr(u, "channel"),
			                              jstr(u, "subdir")),
			         ""},
			        1u << 3};
		if (!r)
			continue;
		menv_size_text(r->size, sz, sizeof(sz));
		rows[n++] = (struct menv_txn_plan_row){
		        c->kind,
		        again ? 'o' : '+',
		        {r->name, r->version,
		         again ? menv_xasprintf("%s (relink)", r->build) : r->build,
		         r->channel ? r->channel->name : "",
		         c->cached     ? "Cached"
		         : r->size < 0 ? "-"
		                       : menv_xstrdup(sz)},
		        (again ? 1u << 2 : 0) | (c->cached || r->size < 0 ? 0 : 1u << 4)};
		if (c->cached)
			out->cached++;
		else if (r->size > 0)
			out->download += r->size;
	}
	out->v = rows;
	out->n = n;
	for (size_t i = 0; i < p->pip->n; i++) /* --index-url http://user:password@... */
		menv_strvec_push_owned(&out->pip, menv_text_redact(p->pip->v[i]));
}

char *menv_txn_result_text(const struct menv_txn_plan *p, const struct menv_txn_result *r,
                           const char *name, bool hint)
{
	struct menv_buf o = MENV_BUF_INIT;
	const struct menv_link_stats *st = &r->stats;
	bool create = p->kind == MENV_TXN_CREATE || p->kind == MENV_TXN_CREATE_LOCK;
	char pip[32] = "", removed[48] = "";
	if (r->pip_installed) /* what pip installed, not the lines it was given */
		snprintf(pip, sizeof(pip), " (%zu pip)", r->pip_installed);
	if (!create)
		snprintf(removed, sizeof(removed), "%zu package%s removed, ", st->unlinked,
		         st->unlinked == 1 ? "" : "s");
	if (p->finished_removal)
		menv_buf_addf(&o, "Removed %s: its interrupted removal was finished\n", p->prefix);
	else if (p->remove_env)
		menv_buf_addf(&o, "Removed %s: %zu package%s\n", p->prefix, st->unlinked,
		              st->unlinked == 1 ? "" : "s");
	else
		menv_buf_addf(
		        &o,
		        "%s %s%s%s: %s%zu linked%s, %zu file%s (%zu reflinked, "
		        "%zu hardlinked, %zu softlinked, %zu copied, %zu relocated, %zu .pyc)%s\n",
		        create ? "Created" : "Updated", p->prefix,
		        p->lock_file ? " from lockfile " : "", p->lock_file ? p->lock_file : "",
		        removed, st->packages + r->pip_installed, pip, st->files,
		        st->files == 1 ? "" : "s", st->reflinks, st->hardlinks, st->softlinks,
		        st->copies, st->replaced, st->pyc, p->lock_file ? ", no solve" : "");
	if (st->clobbered)
		menv_buf_addf(&o,
		              "warning: %zu file%s provided by more than one package; the later "
		              "package's copy was kept\n",
		              st->clobbered, st->clobbered == 1 ? " was" : "s were");
	if (hint && create && !p->remove_env) /* as conda ends a create */
		menv_buf_addf(
		        &o,
		        "\n# To activate this environment, use\n#\n#     $ menv activate %s\n#\n# "
		        "To "
		        "deactivate an active environment, use\n#\n#     $ menv deactivate\n",
		        name ? name : p->prefix);
	return menv_buf_detach(&o);
}

char *menv_txn_lock_line(const struct menv_txn_plan *p)
{
	if (!p->lock_file)
		return NULL;
	return menv_xasprintf("Installing from lockfile %s (%s, %s) into %s: %zu to link, %zu to "
	                      "unlink, %zu conda + %zu pip package%s in the lock, no solve",
	                      p->lock_file, p->lock_format, p->cfg->subdir, p->prefix, p->nlink,
	                      p->nunlink, p->lock_conda, p->lock_pip,
	                      p->lock_conda + p->lock_pip == 1 ? "" : "s");
}

void menv_txn_plan_rows_release(struct menv_txn_plan_rows *rows)
{
	for (size_t i = 0; i < rows->n; i++)
		for (int c = 0; c < MENV_PLAN_COLUMNS; c++)
			if (rows->v[i].own & (1u << c))
				free((char *)rows->v[i].cols[c]);
	free(rows->v);
	menv_strvec_clear(&rows->pip);
	*rows = (struct menv_txn_plan_rows){0};
}

void menv_txn_plan_row_set(struct menv_txn_plan_row *row, int c, char *text)
{
	if (row->own & (1u << c))
		free((char *)row->cols[c]);
	row->cols[c] = text;
	row->own |= 1u << c;
}
