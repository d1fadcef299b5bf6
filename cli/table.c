/*
 * table.c - the text tables of `menv list` and `menv search`: columns sized to their content
 * and fitted to the terminal the way the plan (render.c) is: when a row would be wider than
 * the terminal (stdout's width, else $COLUMNS), the channel column gives way first, then the
 * build, each cell shortened in its middle ("file:///srv/...annels/main").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"

size_t menv_cli_term_width(void)
{
	struct winsize ws;
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col)
		return ws.ws_col;
	long c;
	return menv_cli_parse_count(getenv("COLUMNS"), 100000, &c) == 0 ? (size_t)c : 0;
}

/* The narrowest a column is shortened to. */
#define MIN_W 12

/* A header row (`head`, `lead` before its first cell) and `nrows` rows of `ncol` cells
 * (row-major); when too wide, column `shrink1` gives way first, then `shrink2` (-1: none). */
static void table(const char *lead, const char *const *head, const char *const *cells, size_t nrows,
                  size_t ncol, int shrink1, int shrink2)
{
	size_t *w = menv_xcalloc(ncol, sizeof(*w)), cols = menv_cli_term_width(), total = 0;
	for (size_t c = 0; c < ncol; c++) {
		w[c] = strlen(head[c]) + (c ? 0 : strlen(lead)); /* columns, not bytes */
		for (size_t r = 0; r < nrows; r++)
			if (menv_utf8_width(cells[r * ncol + c]) > w[c])
				w[c] = menv_utf8_width(cells[r * ncol + c]);
		total += w[c] + (c ? 1 : 0);
	}
	/* fitted to the terminal: `shrink1` gives way first, then `shrink2` */
	for (int k = 0, c = shrink1; cols && total > cols && k < 2; k++, c = shrink2) {
		if (c < 0 || (size_t)c >= ncol || w[c] <= MIN_W)
			continue;
		size_t cut = total - cols < w[c] - MIN_W ? total - cols : w[c] - MIN_W;
		w[c] -= cut;
		total -= cut;
	}
	struct menv_buf line = MENV_BUF_INIT;
	for (size_t r = 0; r <= nrows; r++) {
		menv_buf_reset(&line);
		for (size_t c = 0; c < ncol; c++) {
			const char *cell = r ? cells[(r - 1) * ncol + c] : head[c];
			char *fitted = menv_utf8_fit(cell, w[c]);
			menv_buf_adds(&line, !r && !c ? lead : c ? " " : "");
			menv_buf_add_padded(&line, fitted, w[c] - (!r && !c ? strlen(lead) : 0));
			free(fitted);
		}
		while (line.len && line.buf[line.len - 1] == ' ')
			line.buf[--line.len] = '\0'; /* no trailing blanks */
		puts(line.buf);
	}
	menv_buf_release(&line);
	free(w);
}

void menv_cli_packages(json_t *rows)
{
	static const char *const keys[] = {"name", "version", "build_string", "channel"};
	size_t n = json_array_size(rows), i;
	const char **cells = menv_xcalloc(4 * n + 1, sizeof(*cells));
	json_t *r;
	json_array_foreach(rows, i, r)
	{
		for (int c = 0; c < 4; c++)
			cells[4 * i + c] = json_string_value(json_object_get(r, keys[c]));
	}
	/* the channel gives way first, then the build */
	table("# ", (const char *const[]){"Name", "Version", "Build", "Channel"}, cells, n, 4, 3,
	      2);
	free(cells);
}
