/*
 * render.c - drawing shared by the commands that change environments: a package record in
 * conda's --json transaction shape, package-cache progress lines, and the check that a
 * target prefix is free.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "fetch.h"
#include "solver.h"

json_t *menv_cli_record_json(const struct menv_record *r)
{
	json_t *o = json_object();
	char *dist = menv_record_dist(r);
	json_object_set_new(o, "name", json_string(r->name));
	json_object_set_new(o, "version", json_string(r->version));
	json_object_set_new(o, "build_string", json_string(r->build));
	json_object_set_new(o, "build_number", json_integer(r->build_number));
	json_object_set_new(o, "channel", json_string(r->channel ? r->channel->name : ""));
	json_object_set_new(o, "base_url", json_string(r->channel ? r->channel->base_url : ""));
	json_object_set_new(o, "subdir", json_string(r->subdir ? r->subdir : ""));
	json_object_set_new(o, "platform", json_string(r->subdir ? r->subdir : ""));
	json_object_set_new(o, "url", json_string(r->url ? r->url : ""));
	json_object_set_new(o, "fn", json_string(r->fn));
	json_object_set_new(o, "dist_name", json_string(dist));
	if (r->md5)
		json_object_set_new(o, "md5", json_string(r->md5));
	if (r->sha256)
		json_object_set_new(o, "sha256", json_string(r->sha256));
	if (r->size >= 0)
		json_object_set_new(o, "size", json_integer(r->size));
	free(dist);
	return o;
}

void menv_cli_on_fetch(void *ud, enum menv_fetch_event ev, const struct menv_record *r)
{
	if (ud && *(bool *)ud)
		return;
	const char *what = ev == MENV_FETCH_CACHED       ? "cached"
	                   : ev == MENV_FETCH_DOWNLOADED ? "downloaded"
	                                                 : "extracted";
	fprintf(stderr, "  %-10s %s-%s-%s\n", what, r->name, r->version, r->build);
}

bool menv_cli_prefix_in_use(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	bool used = false;

	if (!d)
		return access(path, F_OK) == 0;
	while (!used && (de = readdir(d)))
		used = strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return used;
}

static double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void menv_cli_progress_init(struct menv_cli_progress *p, struct menv_fetch_opts *fo, bool quiet)
{
	memset(p, 0, sizeof(*p));
	if (quiet || !isatty(STDERR_FILENO))
		return; /* piped: the per-package lines say enough */
	p->start = mono_now();
	fo->progress = menv_cli_progress_draw;
	fo->progress_ud = p;
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

void menv_cli_progress_draw(void *ud, int64_t done, int64_t total, size_t finished, size_t n,
                            const struct menv_fetch_item *running, size_t nrunning)
{
	struct menv_cli_progress *p = ud;
	if (p->ended)
		return;
	double secs = mono_now() - p->start;
	double rate = secs > 0.05 ? (double)done / secs : 0;
	char bar[25];
	bool last = finished >= n;

	/* back to the first line drawn last time; everything below it is redrawn */
	if (p->lines)
		fprintf(stderr, "\033[%zuA", p->lines);
	fputc('\r', stderr);
	fprintf(stderr, "\033[J");
	p->lines = 0;
	/* a bar per running download (at most MENV_CLI_PROGRESS_ROWS), then the overall bar */
	for (size_t i = 0; i < nrunning && !last && i < MENV_CLI_PROGRESS_ROWS; i++) {
		draw_bar(bar, 16, running[i].done, running[i].total);
		fprintf(stderr, "  %-32.32s [%.16s] %7.2f", running[i].name, bar,
		        (double)running[i].done / 1e6);
		if (running[i].total > 0)
			fprintf(stderr, " / %.2f", (double)running[i].total / 1e6);
		fprintf(stderr, " MB\n");
		p->lines++;
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
		p->ended = true;
	}
	fflush(stderr);
}

void menv_cli_print_json_error(const struct menv_error *err, const struct menv_solver *solver)
{
	json_t *j = json_pack("{s:b, s:s, s:s}", "success", 0, "error", menv_error_name(err->code),
	                      "message", err->msg);
	if (solver && err->code == MENV_EUNSAT) {
		json_object_set(j, "problems", menv_solver_problems_json(solver));
		json_object_set_new(j, "problem_tree", json_string(menv_solver_problems(solver)));
	}
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
	printf("%s\n", s);
	free(s);
	json_decref(j);
}
