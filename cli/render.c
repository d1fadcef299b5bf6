/*
 * render.c - what the commands draw of what the library reports: a transaction's plan (the
 * text table and conda's --json shape, both from the same struct menv_txn_plan), its events
 * (status lines, warnings, package messages), package-cache lines and progress bars, the
 * smoke check's steps, and errors as conda's JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* ---------------------------------------------------------------------------------------- */
/* JSON                                                                                      */

void menv_cli_put_text(char *s)
{
	fputs(s ? s : "", stdout);
	free(s);
}

void menv_cli_put_json(json_t *j, bool sort_keys)
{
	char *s = json_dumps(j, JSON_INDENT(2) | (sort_keys ? JSON_SORT_KEYS : 0));
	printf("%s\n", s ? s : "null");
	free(s);
	json_decref(j);
}

/* ---------------------------------------------------------------------------------------- */
/* The plan as text: the library's rows (menv_txn_plan_rows), columns sized to their content */

void menv_cli_print_plan(const struct menv_txn_plan *p)
{
	struct menv_txn_plan_rows t;
	struct menv_buf line = MENV_BUF_INIT;
	size_t width[MENV_PLAN_COLUMNS] = {0};
	char sz[32];

	menv_txn_plan_rows(p, &t);
	printf("\nTransaction%s\n\n  Prefix: %s\n\n",
	       p->solved ? "" : " (from lockfile, not solved)", p->prefix);
	for (size_t i = 0, w; i < t.n; i++)
		for (int c = 0; c < MENV_PLAN_COLUMNS; c++)
			if ((w = menv_utf8_width(t.v[i].cols[c])) > width[c])
				width[c] = w;
	/* fitted to the terminal: the channel column gives way, shortened in its middle */
	size_t cols = menv_cli_term_width(),
	       used = 4 + width[0] + width[1] + width[2] + width[4] + 8;
	if (cols && used + width[3] > cols) {
		size_t room = cols > used + 8 ? cols - used : 8;
		for (size_t i = 0; i < t.n; i++)
			menv_txn_plan_row_set(&t.v[i], 3, menv_utf8_fit(t.v[i].cols[3], room));
		width[3] = room;
	}
	if (!t.n && !p->pip->n && p->remove_env)
		printf("  No package records to unlink: the environment's folder is removed\n\n");
	else if (!t.n && !p->pip->n)
		printf(p->kind == MENV_TXN_CREATE || p->kind == MENV_TXN_CREATE_LOCK
		               ? "  Nothing to install: an empty environment\n\n"
		               : "  All requested packages already installed.\n\n");
	for (size_t i = 0; i < t.n; i++) {
		const struct menv_txn_plan_row *w = &t.v[i];
		if (!i || t.v[i - 1].kind != w->kind)
			printf("  %s (%zu package%s):\n\n", menv_change_kind_name(w->kind),
			       t.counts[w->kind], MENV_CLI_S(t.counts[w->kind]));
		menv_buf_reset(&line); /* padded by columns (menv_utf8_width), not bytes */
		menv_buf_add(&line, (const char[]){' ', ' ', w->mark, ' '}, 4); /* no printf */
		for (int c = 0; c < 4; c++) {
			menv_buf_add_padded(&line, w->cols[c], width[c]);
			menv_buf_add(&line, "  ", 2);
		}
		menv_buf_add_right(&line, w->cols[4], width[4]);
		while (line.len && line.buf[line.len - 1] == ' ')
			line.buf[--line.len] = '\0'; /* no trailing blanks on rows without a size */
		puts(line.buf);
		if (i + 1 == t.n || t.v[i + 1].kind != w->kind)
			printf("\n");
	}
	if (p->pip->n) {
		printf("  pip (after the conda packages): %zu line%s%s\n\n", p->pip->n,
		       MENV_CLI_S(p->pip->n),
		       p->lock_file ? " of the lock's pip entries" : " of the 'pip:' section");
		for (size_t i = 0; i < p->pip->n; i++)
			printf("  + %s  pypi\n", t.pip.v[i]);
		printf("\n");
	}
	menv_size_text(t.download, sz, sizeof(sz));
	/* as conda: only what is not in the package cache is downloaded */
	if (p->nlink && t.cached == p->nlink) /* the cache's path where it fits */
		printf("  Total download: nothing (every package is in %s)\n\n",
		       cols && strlen(p->pkgs_dir) + 47 > cols ? "the package cache" : p->pkgs_dir);
	else if (p->nlink)
		printf("  Total download: %s%s\n\n", sz,
		       t.cached ? " (the others are in the package cache)" : "");
	menv_txn_plan_rows_release(&t);
	menv_buf_release(&line);
}

/* ---------------------------------------------------------------------------------------- */
/* Events, package-cache lines, progress, the smoke check                                    */

void menv_cli_on_event(void *ud, enum menv_env_event ev, const char *msg)
{
	struct menv_cli_draw *d = ud;
	switch (ev) {
	case MENV_ENV_LOCK_WAIT:
		fprintf(stderr, "menv: %s (use --no-wait to fail instead)\n", msg);
		break;
	case MENV_ENV_CACHE_WAIT:
	case MENV_ENV_RECOVERED: fprintf(stderr, "menv: %s\n", msg); break;
	case MENV_ENV_CLOBBER: fprintf(stderr, "%s\n", msg); break;
	case MENV_ENV_WARNING: fprintf(stderr, "menv: warning: %s\n", msg); break;
	case MENV_ENV_MESSAGE:
		if (d && d->messages)
			json_array_append_new(d->messages, json_string(msg));
		else
			printf("%s%s", msg, msg[0] && msg[strlen(msg) - 1] == '\n' ? "" : "\n");
		break;
	case MENV_ENV_SCRIPT_OUTPUT:
		if (d && d->verbose)
			fprintf(stderr, "%s", msg);
		break;
	case MENV_ENV_LINK:
	case MENV_ENV_UNLINK:
		if (d && d->verbose)
			fprintf(stderr, "  %s %s\n", ev == MENV_ENV_LINK ? "linking" : "unlinking",
			        msg);
		break;
	case MENV_ENV_STATUS:
	case MENV_ENV_PROBLEMS:
		if (!d || !d->quiet)
			fprintf(stderr, "%s%s", msg, ev == MENV_ENV_STATUS ? "\n" : "");
		break;
	case MENV_ENV_SMOKE:
		fflush(stdout);
		fprintf(d && d->json ? stderr : stdout,
		        "Smoke check of %s (ops/ built with the environment's toolchain)\n", msg);
		break;
	}
}

static void on_fetch(void *ud, enum menv_fetch_event ev, const struct menv_record *r)
{
	struct menv_cli_draw *d = ud;
	if (d && (d->quiet || d->bars))
		return; /* a bar on a terminal, else a line a package */
	const char *what = ev == MENV_FETCH_CACHED       ? "cached"
	                   : ev == MENV_FETCH_DOWNLOADED ? "downloaded"
	                                                 : "extracted";
	fprintf(stderr, "  %-10s %s-%s-%s\n", what, r->name, r->version, r->build);
}

static double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* "[####....]" of `width` cells for done of total (empty when the total is unknown) */
static void draw_bar(char *bar, size_t width, int64_t done, int64_t total)
{
	size_t fill = total > 0 ? (size_t)((double)done / (double)total * (double)width) : 0;
	if (fill > width)
		fill = width;
	memset(bar, '#', fill);
	memset(bar + fill, '.', width - fill);
	bar[width] = '\0';
}

static void on_progress(void *ud, int64_t done, int64_t total, size_t finished, size_t n,
                        const struct menv_fetch_item *running, size_t nrunning)
{
	struct menv_cli_draw *d = ud;
	if (d->bars_ended)
		return;
	if (!d->start)
		d->start = mono_now();
	double secs = mono_now() - d->start;
	double rate = secs > 0.05 ? (double)done / secs : 0;
	char bar[25];
	bool last = finished >= n;

	/* back to the first line drawn last time; everything below it is redrawn */
	if (d->lines)
		fprintf(stderr, "\033[%zuA", d->lines);
	fputc('\r', stderr);
	fprintf(stderr, "\033[J");
	d->lines = 0;
	/* a bar per running download (at most MENV_CLI_PROGRESS_ROWS), then the overall bar */
	for (size_t i = 0; i < nrunning && !last && i < MENV_CLI_PROGRESS_ROWS; i++) {
		draw_bar(bar, 16, running[i].done, running[i].total);
		fprintf(stderr, "  %-32.32s [%.16s] %7.2f", running[i].name, bar,
		        (double)running[i].done / 1e6);
		if (running[i].total > 0)
			fprintf(stderr, " / %.2f", (double)running[i].total / 1e6);
		fprintf(stderr, " MB\n");
		d->lines++;
	}
	/* under 80 columns, so that a line never wraps and the cursor-up count stays right */
	draw_bar(bar, 20, done, total);
	fprintf(stderr, "  downloading [%s] %.1f/%.1f MB %5.1f MB/s", bar, (double)done / 1e6,
	        (double)total / 1e6, rate / 1e6);
	if (rate > 0 && total > done)
		fprintf(stderr, " ETA %.0f s", (double)(total - done) / rate);
	fprintf(stderr, " %zu/%zu ", finished, n);
	if (last) {
		fputc('\n', stderr);
		d->bars_ended = true;
	}
	fflush(stderr);
}

static const char *verdict_word(enum menv_smoke_verdict v)
{
	return v == MENV_SMOKE_PASS ? "pass" : v == MENV_SMOKE_SKIP ? "skip" : "FAIL";
}

void menv_cli_on_smoke(void *ud, enum menv_smoke_event ev, const struct menv_smoke_step *st,
                       const char *line)
{
	struct menv_cli_draw *d = ud;
	FILE *f = d->json ? stderr : stdout;

	switch (ev) {
	case MENV_SMOKE_STEP_BEGIN:
		if (d->verbose)
			fprintf(f, "  %s ...\n", st->name);
		break;
	case MENV_SMOKE_STEP_END:
		fprintf(f, "  %-10s  %s  %s (%.1f s)\n", st->name, verdict_word(st->verdict),
		        st->summary, st->seconds);
		break;
	case MENV_SMOKE_LINE:
		/* failures always; every check and the timings with -v */
		if (d->verbose || !strncmp(line, "FAIL", 4) || !strncmp(line, "PERF", 4))
			fprintf(f, "      %s\n", line);
		break;
	case MENV_SMOKE_HINT: fprintf(f, "  hint: %s\n", line); break;
	}
	fflush(f);
}

int menv_cli_smoke_verdict(const struct menv_cli_draw *d, const struct menv_smoke_result *res,
                           bool record_failed)
{
	char *line = menv_smoke_result_line(res);
	bool ok = res->unchanged || res->passed;
	if (record_failed && !res->unchanged)
		fprintf(stderr, "menv: warning: the smoke check's report could not be written\n");
	fprintf(ok && !d->json ? stdout : stderr, "%s%s\n", ok ? "" : "menv: error: ", line);
	free(line);
	return ok ? MENV_EXIT_OK : MENV_EXIT_FAIL;
}

void menv_cli_draw_init(struct menv_cli_draw *d, struct menv_txn_callbacks *cb, bool quiet,
                        bool json, bool verbose)
{
	memset(d, 0, sizeof(*d));
	d->quiet = quiet || json;
	d->json = json;
	d->verbose = verbose;
	d->bars = !d->quiet && isatty(STDERR_FILENO);
	memset(cb, 0, sizeof(*cb));
	cb->event = menv_cli_on_event;
	cb->fetch = on_fetch;
	cb->progress = d->bars ? on_progress : NULL;
	cb->smoke = menv_cli_on_smoke;
	cb->ud = d;
}

/* conda's "Proceed ([y]/n)?" (conda/cli/common.py confirm): y, yes or an empty line go on;
 * n or no stop ("Exiting."); anything else asks again; end of input or Ctrl-C stops. */
bool menv_cli_confirm(void *ud, const struct menv_txn_plan *plan)
{
	char line[64];

	(void)ud;
	(void)plan;
	for (;;) {
		fputs("\nProceed ([y]/n)? ", stdout);
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin) || menv_cli_cancel) {
			fputs("\n", stdout);
			return false;
		}
		line[strcspn(line, "\r\n")] = '\0';
		if (!line[0] || !strcasecmp(line, "y") || !strcasecmp(line, "yes"))
			return true;
		if (!strcasecmp(line, "n") || !strcasecmp(line, "no")) {
			puts("Exiting.");
			return false;
		}
		printf("Invalid choice: %s\n", line);
	}
}

int menv_cli_recover(const char *prefix, struct menv_error *err)
{
	struct menv_txn_callbacks cb = {.event = menv_cli_on_event};
	return menv_txn_recover(prefix, &cb, err);
}

char *menv_cli_prefix(const struct menv_config *cfg, const char *name, const char *path,
                      struct menv_error *err)
{
	char *prefix = menv_env_prefix_find(cfg, name, path, err);
	if (prefix && menv_env_replaced_pending(prefix) && menv_cli_recover(prefix, err)) {
		free(prefix);
		return NULL;
	}
	return prefix;
}

void menv_cli_warnings(struct menv_strvec *warnings)
{
	for (size_t i = 0; i < warnings->n; i++)
		fprintf(stderr, "menv: warning: %s\n", warnings->v[i]);
	menv_strvec_clear(warnings);
}
