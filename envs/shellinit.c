/*
 * shellinit.c - the shell hook (`menv shell hook`: the `menv` shell function that evaluates
 * what activate/deactivate print) and the rc files that `menv shell init`/`deinit` edit (one
 * marked block, taken out byte for byte), plus the settings they read (changeps1, the default
 * shell and its rc file). Split from activate.c, which owns what activation computes.
 *
 * Every value and path reaches the shell single-quoted for that shell (menv_shell_quote).
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "activate.h"
#include "link.h"

/* ---------------------------------------------------------------------------------------- */
/* Hook and rc files                                                                         */

void menv_shell_hook(enum menv_shell sh, const char *exe, bool changeps1, struct menv_buf *out)
{
	if (sh == MENV_SHELL_FISH) {
		menv_buf_adds(out, "# menv shell hook (fish): eval it, then 'menv activate ENV'\n"
		                   "set -g __menv_exe ");
		menv_shell_quote(sh, exe, out);
		menv_buf_adds(
		        out, "\n"
		             "if not set -q CONDA_SHLVL\n"
		             "    set -gx CONDA_SHLVL 0\n"
		             "end\n"
		             "function menv --description 'menv; activate and deactivate change "
		             "this shell'\n"
		             "    if set -q argv[1]; and contains -- $argv[1] activate deactivate\n"
		             "        set -l __menv_code ($__menv_exe shell $argv[1] --shell fish "
		             "$argv[2..-1] | string collect)\n"
		             "        set -l __menv_rc $pipestatus[1]\n"
		             "        test $__menv_rc -eq 0; or return $__menv_rc\n"
		             "        eval $__menv_code\n"
		             "    else\n"
		             "        $__menv_exe $argv\n"
		             "    end\n"
		             "end\n");
		if (changeps1)
			menv_buf_adds(out, "if functions -q fish_prompt; and not functions -q "
			                   "__menv_fish_prompt_orig\n"
			                   "    functions -c fish_prompt __menv_fish_prompt_orig\n"
			                   "    functions -e fish_prompt\n"
			                   "    function fish_prompt\n"
			                   "        set -l __menv_st $status\n"
			                   "        if set -q CONDA_PROMPT_MODIFIER\n"
			                   "            printf '%s' $CONDA_PROMPT_MODIFIER\n"
			                   "        end\n"
			                   "        __menv_return $__menv_st\n"
			                   "        __menv_fish_prompt_orig\n"
			                   "    end\n"
			                   "    function __menv_return\n"
			                   "        return $argv[1]\n"
			                   "    end\n"
			                   "end\n");
		return;
	}
	menv_buf_addf(out,
	              "# menv shell hook (%s): eval it, then 'menv activate ENV'\n"
	              "__menv_exe=",
	              menv_shell_name(sh));
	menv_shell_quote(sh, exe, out);
	menv_buf_addf(out,
	              "\n"
	              "if [ -z \"${CONDA_SHLVL+x}\" ]; then\n"
	              "\texport CONDA_SHLVL=0\n"
	              "fi\n"
	              "menv() {\n"
	              "\tif [ \"$#\" -ge 1 ] && { [ \"$1\" = activate ] || [ \"$1\" = deactivate "
	              "]; }; then\n"
	              "\t\t__menv_sub=$1\n"
	              "\t\tshift\n"
	              "\t\t__menv_code=$(PS1=\"${PS1-}\" \"$__menv_exe\" shell \"$__menv_sub\" "
	              "--shell %s "
	              "\"$@\") || {\n"
	              "\t\t\t__menv_rc=$?\n"
	              "\t\t\tunset __menv_code __menv_sub\n"
	              "\t\t\treturn \"$__menv_rc\"\n"
	              "\t\t}\n"
	              "\t\teval \"$__menv_code\"\n"
	              "\t\tunset __menv_code __menv_sub\n"
	              "\telse\n"
	              "\t\t\"$__menv_exe\" \"$@\"\n"
	              "\tfi\n"
	              "}\n",
	              menv_shell_name(sh));
}

#define RC_BEGIN "# >>> menv initialize >>>"
#define RC_END   "# <<< menv initialize <<<"
/* what init changed outside its block, written inside it so that deinit gives the file back
 * byte for byte: the line break it put after a last line that had none, the file itself */
#define RC_ADDED_NEWLINE "# (menv shell init added the line break before this block)"
#define RC_CREATED_FILE  "# (menv shell init created this file)"

static bool is_line(const char *s, size_t n, const char *line)
{
	return n == strlen(line) && !strncmp(s, line, n);
}

int menv_shell_rc_edit(const char *path, enum menv_shell sh, const char *exe, bool add,
                       bool *changed, struct menv_error *err)
{
	struct menv_buf old = MENV_BUF_INIT, neu = MENV_BUF_INIT, block = MENV_BUF_INIT;
	char *real = NULL;
	struct stat sb;
	mode_t mode = 0644;
	bool created = false; /* no file before */
	int rc = 0;

	*changed = false;
	real = realpath(path, NULL);
	if (!real) {
		if (errno != ENOENT)
			return menv_error_sys(err, MENV_EIO, "cannot resolve '%s'", path);
		if (!add)
			return 0;
		created = true;
		real = menv_xstrdup(path);
		char *slash = strrchr(real, '/');
		if (slash && slash != real) {
			*slash = '\0';
			rc = menv_mkdirs(real, err);
			*slash = '/';
			if (rc)
				goto out;
		}
	} else {
		rc = menv_buf_read_file(&old, real, err);
		if (rc)
			goto out;
		if (stat(real, &sb) == 0)
			mode = sb.st_mode & 07777;
	}
	if (!old.buf)
		menv_buf_adds(&old, "");

	/* the markers of the blocks there are, kept by a new block in their place */
	bool has_block = false, added_newline = false, created_file = false;
	for (const char *s = old.buf, *in = NULL; *s;) {
		size_t n = strcspn(s, "\n");
		if (!in && is_line(s, n, RC_BEGIN))
			in = s, has_block = true;
		else if (in && is_line(s, n, RC_END))
			in = NULL;
		else if (in && is_line(s, n, RC_ADDED_NEWLINE))
			added_newline = true;
		else if (in && is_line(s, n, RC_CREATED_FILE))
			created_file = true;
		s += n + (s[n] == '\n');
	}
	if (add && !has_block && old.len && old.buf[old.len - 1] != '\n')
		added_newline = true;
	created_file |= add && created;

	menv_buf_adds(&block, RC_BEGIN "\n# !! Contents within this block are managed by "
	                               "'menv shell init' !!\n");
	if (added_newline)
		menv_buf_adds(&block, RC_ADDED_NEWLINE "\n");
	if (created_file)
		menv_buf_adds(&block, RC_CREATED_FILE "\n");
	if (sh == MENV_SHELL_FISH) {
		menv_shell_quote(sh, exe, &block);
		menv_buf_adds(&block, " shell hook --shell fish | source\n");
	} else {
		menv_buf_adds(&block, "eval \"$(");
		menv_shell_quote(sh, exe, &block);
		menv_buf_addf(&block, " shell hook --shell %s)\"\n", menv_shell_name(sh));
	}
	menv_buf_adds(&block, RC_END "\n");

	/* copy every line outside existing blocks; put the new block where the first was */
	bool inside = false, placed = false;
	size_t block_at = SIZE_MAX; /* where the last removed block was, in neu */
	const char *s = old.buf;
	while (*s) {
		size_t n = strcspn(s, "\n");
		bool nl = s[n] == '\n';
		if (!inside && n == strlen(RC_BEGIN) && !strncmp(s, RC_BEGIN, n)) {
			inside = true;
			if (add && !placed)
				menv_buf_add(&neu, block.buf, block.len);
			placed = true;
			block_at = neu.len;
		} else if (inside && n == strlen(RC_END) && !strncmp(s, RC_END, n)) {
			inside = false;
		} else if (!inside) {
			menv_buf_add(&neu, s, n + (nl ? 1 : 0));
		}
		s += n + (nl ? 1 : 0);
	}
	if (inside) {
		rc = menv_error_set(err, MENV_EPARSE, "'%s': '%s' without '%s'", path, RC_BEGIN,
		                    RC_END);
		goto out;
	}
	if (add && !placed) {
		if (neu.len && neu.buf[neu.len - 1] != '\n')
			menv_buf_addch(&neu, '\n');
		menv_buf_add(&neu, block.buf, block.len);
	}
	/* deinit: the line break init added goes when nothing follows the block; the file init
	 * created goes when nothing else is left in it */
	if (!add && added_newline && block_at == neu.len && neu.len && neu.buf[neu.len - 1] == '\n')
		neu.buf[--neu.len] = '\0';
	if (!add && created_file && !neu.len) {
		if (unlink(real) < 0)
			rc = menv_error_sys(err, MENV_EIO, "cannot remove '%s'", path);
		else
			*changed = true;
		goto out;
	}
	if (neu.len == old.len && !memcmp(neu.buf ? neu.buf : "", old.buf, old.len))
		goto out;
	rc = menv_write_file_atomic(real, neu.buf ? neu.buf : "", neu.len, err);
	if (!rc) {
		chmod(real, mode);
		*changed = true;
	}
out:
	free(real);
	menv_buf_release(&old);
	menv_buf_release(&neu);
	menv_buf_release(&block);
	return rc;
}

/* changeps1 (default true): the typed setting menv_config_load read ($MENV_CHANGEPS1,
 * $CONDA_CHANGEPS1, else the rc files; a value that is no bool was refused there). */
bool menv_config_changeps1(const struct menv_config *cfg)
{
	return cfg->changeps1;
}

enum menv_shell menv_shell_default(void)
{
	const char *sh = getenv("SHELL");
	const char *base = sh ? strrchr(sh, '/') : NULL;
	enum menv_shell out = MENV_SHELL_POSIX;
	if (base)
		menv_shell_from_name(base + 1, &out, NULL);
	return out;
}

char *menv_shell_rc_default(enum menv_shell sh)
{
	const char *home = NULL;
	const char *zd = getenv("ZDOTDIR"), *xdg = getenv("XDG_CONFIG_HOME");
	/* never "./.bashrc" or "/.bashrc": without a usable HOME there is no default file */
	if (menv_home(&home, NULL) && !(sh == MENV_SHELL_ZSH && zd && *zd) &&
	    !(sh == MENV_SHELL_FISH && xdg && *xdg))
		return NULL;
	switch (sh) {
	case MENV_SHELL_BASH: return menv_xasprintf("%s/.bashrc", home);
	case MENV_SHELL_ZSH: return menv_xasprintf("%s/.zshrc", zd && *zd ? zd : home);
	case MENV_SHELL_FISH:
		if (xdg && *xdg)
			return menv_xasprintf("%s/fish/config.fish", xdg);
		return menv_xasprintf("%s/.config/fish/config.fish", home);
	default: return menv_xasprintf("%s/.profile", home);
	}
}
