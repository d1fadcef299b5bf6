/*
 * activate.c - activation: the shell code that `menv activate` / `menv deactivate` hand to the
 * calling shell, the environment `menv run` starts a command with, environment variables of a
 * prefix (the JSON files of `etc/conda/env_vars.d`, `conda-meta/state`). The shell hook and the
 * rc files that `shell init` edits are in shellinit.c.
 *
 * The shell runs the activate.d scripts, so what they change is only visible afterwards. The
 * code therefore ends with a call back into menv (`menv shell _continue`), which compares the
 * exported environment with a snapshot taken before the environment was applied and records
 * every change in `_MENV_BACKUP_<level>`. Deactivation runs the deactivate.d scripts, then puts
 * each recorded variable back and removes only the PATH entries activation added. The conda
 * bookkeeping (CONDA_SHLVL, CONDA_PREFIX[_N], CONDA_DEFAULT_ENV, CONDA_PROMPT_MODIFIER,
 * CONDA_STACKED_N, PS1) follows conda's activator, including its "switch" semantics: activating
 * without --stack takes the current environment off first, and deactivating it puts it back.
 *
 * Every value and path reaches the shell single-quoted for that shell, so no value can run code.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "activate.h"
#include "child.h"
#include "link.h"
#include "registry.h"

#define CONT_VAR   "_MENV_CONT"
#define BACKUP_FMT "_MENV_BACKUP_%d"

/* ---------------------------------------------------------------------------------------- */
/* Names and the environment model                                                          */

bool menv_env_var_reserved(const char *name)
{
	static const char *const names[] = {"PATH",
	                                    "CONDA_PREFIX",
	                                    "CONDA_SHLVL",
	                                    "CONDA_DEFAULT_ENV",
	                                    "CONDA_PROMPT_MODIFIER",
	                                    "CONDA_EXE",
	                                    "CONDA_PYTHON_EXE",
	                                    NULL};
	static const char *const prefixes[] = {"CONDA_PREFIX_", "CONDA_STACKED_", "_MENV_", NULL};
	for (size_t i = 0; names[i]; i++)
		if (!strcmp(name, names[i]))
			return true;
	for (size_t i = 0; prefixes[i]; i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

bool menv_env_var_name_ok(const char *name)
{
	if (!name ||
	    !((*name >= 'A' && *name <= 'Z') || (*name >= 'a' && *name <= 'z') || *name == '_'))
		return false;
	for (const char *p = name + 1; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	return true;
}

/* An environment as two parallel vectors, in order. */
struct envm {
	struct menv_strvec names, values;
};

static long envm_find(const struct envm *e, const char *name)
{
	for (size_t i = 0; i < e->names.n; i++)
		if (!strcmp(e->names.v[i], name))
			return (long)i;
	return -1;
}

static const char *envm_get(const struct envm *e, const char *name)
{
	long i = envm_find(e, name);
	return i < 0 ? NULL : e->values.v[i];
}

static void envm_set(struct envm *e, const char *name, const char *value)
{
	long i = envm_find(e, name);
	if (i >= 0) {
		free(e->values.v[i]);
		e->values.v[i] = menv_xstrdup(value);
		return;
	}
	menv_strvec_push(&e->names, name);
	menv_strvec_push(&e->values, value);
}

static void envm_unset(struct envm *e, const char *name)
{
	long i = envm_find(e, name);
	if (i < 0)
		return;
	free(e->names.v[i]);
	free(e->values.v[i]);
	memmove(&e->names.v[i], &e->names.v[i + 1], (e->names.n - (size_t)i - 1) * sizeof(char *));
	memmove(&e->values.v[i], &e->values.v[i + 1],
	        (e->values.n - (size_t)i - 1) * sizeof(char *));
	e->names.n--;
	e->values.n--;
}

static void envm_load(struct envm *e, char *const *environ_)
{
	for (size_t i = 0; environ_ && environ_[i]; i++) {
		const char *eq = strchr(environ_[i], '=');
		if (!eq || eq == environ_[i])
			continue;
		char *name = menv_xstrndup(environ_[i], (size_t)(eq - environ_[i]));
		envm_set(e, name, eq + 1);
		free(name);
	}
}

static void envm_clear(struct envm *e)
{
	menv_strvec_clear(&e->names);
	menv_strvec_clear(&e->values);
}

static int envm_level(const struct envm *e)
{
	const char *s = envm_get(e, "CONDA_SHLVL");
	long n = s ? strtol(s, NULL, 10) : 0;
	return n < 0 || n > 1000 ? 0 : (int)n;
}

/* Variables that activation manages itself or that shells change on their own: never part of
 * a backup. */
static bool bookkeeping(const char *name)
{
	static const char *const fixed[] = {"_",
	                                    "PWD",
	                                    "OLDPWD",
	                                    "SHLVL",
	                                    "PS1",
	                                    "CONDA_SHLVL",
	                                    "CONDA_PREFIX",
	                                    "CONDA_DEFAULT_ENV",
	                                    "CONDA_PROMPT_MODIFIER",
	                                    NULL};
	for (size_t i = 0; fixed[i]; i++)
		if (!strcmp(name, fixed[i]))
			return true;
	if (!strncmp(name, "_MENV_", 6))
		return true;
	const char *num = NULL;
	if (!strncmp(name, "CONDA_PREFIX_", 13))
		num = name + 13;
	else if (!strncmp(name, "CONDA_STACKED_", 14))
		num = name + 14;
	if (num && *num && strspn(num, "0123456789") == strlen(num))
		return true;
	return !menv_env_var_name_ok(name);
}

/* ---------------------------------------------------------------------------------------- */
/* Shells and quoting                                                                        */

int menv_shell_from_name(const char *name, enum menv_shell *out, struct menv_error *err)
{
	static const struct {
		const char *name;
		enum menv_shell sh;
	} tab[] = {
	        {"bash", MENV_SHELL_BASH},   {"zsh", MENV_SHELL_ZSH},  {"fish", MENV_SHELL_FISH},
	        {"posix", MENV_SHELL_POSIX}, {"sh", MENV_SHELL_POSIX}, {"dash", MENV_SHELL_POSIX},
	};
	for (size_t i = 0; name && i < sizeof(tab) / sizeof(*tab); i++) {
		if (!strcmp(name, tab[i].name)) {
			*out = tab[i].sh;
			return 0;
		}
	}
	return menv_error_set(err, MENV_EUSAGE, "unknown shell '%s' (use bash, zsh, fish or posix)",
	                      name ? name : "");
}

const char *menv_shell_name(enum menv_shell sh)
{
	switch (sh) {
	case MENV_SHELL_BASH: return "bash";
	case MENV_SHELL_ZSH: return "zsh";
	case MENV_SHELL_FISH: return "fish";
	default: return "posix";
	}
}

void menv_shell_quote(enum menv_shell sh, const char *s, struct menv_buf *out)
{
	if (sh == MENV_SHELL_FISH) {
		/* fish: inside '...' only \' and \\ are special */
		menv_buf_addch(out, '\'');
		for (; *s; s++) {
			if (*s == '\\' || *s == '\'')
				menv_buf_addch(out, '\\');
			menv_buf_addch(out, *s);
		}
		menv_buf_addch(out, '\'');
		return;
	}
	/* POSIX: '...' is literal; a quote becomes \' between quoted runs (never '' next to a
	 * quote, which zsh's RC_QUOTES would read as a quote) */
	if (!*s) {
		menv_buf_adds(out, "''");
		return;
	}
	while (*s) {
		if (*s == '\'') {
			menv_buf_adds(out, "\\'");
			s++;
			continue;
		}
		size_t n = strcspn(s, "'");
		menv_buf_addch(out, '\'');
		menv_buf_add(out, s, n);
		menv_buf_addch(out, '\'');
		s += n;
	}
}

/* Shell code being built, and the environment it will leave behind. */
struct emit {
	enum menv_shell sh;
	struct menv_buf *code;
	struct envm *env;
};

static void em_export(struct emit *em, const char *name, const char *value)
{
	if (em->sh == MENV_SHELL_FISH)
		menv_buf_addf(em->code, "set -gx %s ", name);
	else
		menv_buf_addf(em->code, "export %s=", name);
	menv_shell_quote(em->sh, value, em->code);
	menv_buf_addch(em->code, '\n');
	envm_set(em->env, name, value);
}

static void em_unset(struct emit *em, const char *name)
{
	if (em->sh == MENV_SHELL_FISH)
		menv_buf_addf(em->code, "set -e -g %s\n", name);
	else
		menv_buf_addf(em->code, "unset %s\n", name);
	envm_unset(em->env, name);
}

static void em_restore(struct emit *em, const char *name, const char *value)
{
	if (value)
		em_export(em, name, value);
	else if (envm_get(em->env, name))
		em_unset(em, name);
}

static void em_source(struct emit *em, const char *path)
{
	menv_buf_adds(em->code, em->sh == MENV_SHELL_FISH ? "source " : ". ");
	menv_shell_quote(em->sh, path, em->code);
	menv_buf_addch(em->code, '\n');
}

/* The call back into menv after scripts ran; `json` travels in _MENV_CONT. */
static void em_continue(struct emit *em, const char *exe, const char *json)
{
	em_export(em, CONT_VAR, json);
	if (em->sh == MENV_SHELL_FISH) {
		menv_buf_adds(em->code, "set -l __menv_c (");
		menv_shell_quote(em->sh, exe, em->code);
		menv_buf_adds(em->code, " shell _continue --shell fish | string collect)\n"
		                        "eval $__menv_c\n");
	} else {
		menv_buf_adds(em->code, "eval \"$(PS1=\"${PS1-}\" ");
		menv_shell_quote(em->sh, exe, em->code);
		menv_buf_addf(em->code, " shell _continue --shell %s)\"\n",
		              menv_shell_name(em->sh));
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Environment variables of a prefix                                                        */

static int strcmp_p(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Entries of `dir` ending in `ext` (or all regular files when ext is NULL), as full paths, in
 * byte order of their names. A missing directory gives none. */
static void list_dir(const char *dir, const char *ext, struct menv_strvec *out)
{
	struct menv_strvec names = MENV_STRVEC_INIT;
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name), e = ext ? strlen(ext) : 0;
		if (de->d_name[0] == '.' && (n == 1 || (n == 2 && de->d_name[1] == '.')))
			continue;
		if (ext && (n <= e || strcmp(de->d_name + n - e, ext)))
			continue;
		char *p = menv_xasprintf("%s/%s", dir, de->d_name);
		struct stat sb;
		if (stat(p, &sb) == 0 && S_ISREG(sb.st_mode))
			menv_strvec_push_owned(&names, p);
		else
			free(p);
	}
	closedir(d);
	if (names.n)
		qsort(names.v, names.n, sizeof(*names.v), strcmp_p);
	for (size_t i = 0; i < names.n; i++)
		menv_strvec_push(out, names.v[i]);
	menv_strvec_clear(&names);
}

static void vars_put(struct menv_strvec *names, struct menv_strvec *values, const char *name,
                     const char *value)
{
	for (size_t i = 0; i < names->n; i++) {
		if (!strcmp(names->v[i], name)) {
			free(values->v[i]);
			values->v[i] = menv_xstrdup(value);
			return;
		}
	}
	menv_strvec_push(names, name);
	menv_strvec_push(values, value);
}

/* Adds the string members of a JSON object (numbers as their text). */
static void vars_from_object(json_t *obj, struct menv_strvec *names, struct menv_strvec *values)
{
	const char *k;
	json_t *v;

	json_object_foreach(obj, k, v)
	{
		char num[64];
		const char *s = NULL;
		if (json_is_string(v))
			s = json_string_value(v);
		else if (json_is_integer(v))
			snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v)),
			        s = num;
		else if (json_is_real(v))
			snprintf(num, sizeof(num), "%.17g", json_real_value(v)), s = num;
		if (s && menv_env_var_name_ok(k) && !menv_env_var_reserved(k))
			vars_put(names, values, k, s);
	}
}

static json_t *state_load(const char *prefix, struct menv_error *err)
{
	char *path = menv_xasprintf("%s/conda-meta/state", prefix);
	json_t *j = NULL;

	if (access(path, F_OK) < 0) {
		j = json_object();
		goto out;
	}
	j = menv_json_load_file(path, JSON_PRESERVE_ORDER, err);
	if (!j)
		;
	else if (!json_is_object(j)) {
		json_decref(j);
		j = NULL;
		menv_error_set(err, MENV_EPARSE, "'%s' is not a JSON object", path);
	}
out:
	free(path);
	return j;
}

int menv_env_state_vars_load(const char *prefix, struct menv_strvec *names,
                             struct menv_strvec *values, struct menv_error *err)
{
	json_t *st = state_load(prefix, err);
	if (!st)
		return err ? err->code : MENV_EPARSE;
	json_t *ev = json_object_get(st, "env_vars");
	if (json_is_object(ev))
		vars_from_object(ev, names, values);
	json_decref(st);
	return 0;
}

int menv_env_state_vars_show(const char *prefix, json_t **json, struct menv_buf *text,
                             struct menv_error *err)
{
	struct menv_strvec names = MENV_STRVEC_INIT, values = MENV_STRVEC_INIT;
	int rc = menv_env_state_vars_load(prefix, &names, &values, err);

	if (json)
		*json = rc ? NULL : json_object();
	for (size_t i = 0; !rc && i < names.n; i++) {
		char *safe = menv_text_redact(values.v[i]);
		if (json)
			json_object_set_new(*json, names.v[i], json_string(safe));
		if (text)
			menv_buf_addf(text, "%s = %s\n", names.v[i], safe);
		free(safe);
	}
	menv_strvec_clear(&names);
	menv_strvec_clear(&values);
	return rc;
}

int menv_env_vars_load(const char *prefix, struct menv_strvec *names, struct menv_strvec *values,
                       struct menv_error *err)
{
	struct menv_strvec files = MENV_STRVEC_INIT;
	char *dir = menv_xasprintf("%s/etc/conda/env_vars.d", prefix);
	int rc = 0;

	list_dir(dir, ".json", &files);
	for (size_t i = 0; i < files.n; i++) {
		json_t *j = menv_json_load_file(files.v[i], JSON_PRESERVE_ORDER, err);
		if (!j) {
			rc = err->code;
			goto out;
		}
		if (json_is_object(j))
			vars_from_object(j, names, values);
		json_decref(j);
	}
	rc = menv_env_state_vars_load(prefix, names, values, err);
out:
	menv_strvec_clear(&files);
	free(dir);
	return rc;
}

static int state_save(const char *prefix, json_t *st, struct menv_error *err)
{
	char *meta = menv_xasprintf("%s/conda-meta", prefix);
	char *path = menv_xasprintf("%s/state", meta);
	char *dump = NULL;
	int rc = 0;
	struct stat sb;

	if (stat(meta, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
		rc = menv_error_set(err, MENV_ENOTFOUND,
		                    "'%s' is not an environment (no conda-meta)", prefix);
		goto out;
	}
	dump = json_dumps(st, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	size_t len = strlen(dump);
	dump = menv_xrealloc(dump, len + 2);
	dump[len] = '\n';
	dump[len + 1] = '\0';
	rc = menv_write_file_atomic(path, dump, len + 1, err);
out:
	free(dump);
	free(path);
	free(meta);
	return rc;
}

int menv_env_state_vars_set(const char *prefix, const struct menv_strvec *names,
                            const struct menv_strvec *values, struct menv_error *err)
{
	json_t *st = NULL;
	int rc = 0;

	for (size_t i = 0; i < names->n; i++)
		if (!menv_env_var_name_ok(names->v[i]))
			return menv_error_set(err, MENV_EUSAGE, "invalid variable name '%s'",
			                      names->v[i]);
	st = state_load(prefix, err);
	if (!st)
		return err ? err->code : MENV_EPARSE;
	json_t *ev = json_object_get(st, "env_vars");
	if (!json_is_object(ev)) {
		ev = json_object();
		json_object_set_new(st, "env_vars", ev);
	}
	for (size_t i = 0; i < names->n; i++)
		json_object_set_new(ev, names->v[i], json_string(values->v[i]));
	rc = state_save(prefix, st, err);
	json_decref(st);
	return rc;
}

int menv_env_state_vars_unset(const char *prefix, const struct menv_strvec *names,
                              struct menv_error *err)
{
	json_t *st = state_load(prefix, err);
	int rc = 0;

	if (!st)
		return err ? err->code : MENV_EPARSE;
	json_t *ev = json_object_get(st, "env_vars");
	for (size_t i = 0; json_is_object(ev) && i < names->n; i++)
		json_object_del(ev, names->v[i]);
	rc = state_save(prefix, st, err);
	json_decref(st);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Prefixes                                                                                  */

/* Makes `p` absolute (against the working directory) and removes ".", ".." and repeated or
 * trailing slashes, without resolving symlinks (conda's abspath). Caller frees. */
static char *abspath(const char *p, struct menv_error *err)
{
	struct menv_buf b = MENV_BUF_INIT;
	char cwd[PATH_MAX];

	if (p[0] != '/') {
		if (!getcwd(cwd, sizeof(cwd))) {
			menv_error_sys(err, MENV_EIO, "cannot read the current directory");
			return NULL;
		}
		menv_buf_adds(&b, cwd);
	}
	const char *s = p;
	while (*s) {
		while (*s == '/')
			s++;
		size_t n = strcspn(s, "/");
		if (!n)
			break;
		if (n == 1 && s[0] == '.') {
			/* nothing */
		} else if (n == 2 && s[0] == '.' && s[1] == '.') {
			char *slash = strrchr(b.buf ? b.buf : "", '/');
			if (slash) {
				b.len = (size_t)(slash - b.buf);
				b.buf[b.len] = '\0';
			}
		} else {
			menv_buf_addch(&b, '/');
			menv_buf_add(&b, s, n);
		}
		s += n;
	}
	if (!b.len)
		menv_buf_addch(&b, '/');
	return menv_buf_detach(&b);
}

static bool is_dir(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

int menv_env_locate(const char *root_prefix, const struct menv_strvec *envs_dirs,
                    const char *name_or_path, char **out, struct menv_error *err)
{
	char *p = NULL;
	int rc = 0;

	*out = NULL;
	if (!name_or_path || !*name_or_path || !strcmp(name_or_path, "base") ||
	    !strcmp(name_or_path, "root")) {
		p = abspath(root_prefix, err);
		if (!p)
			return err ? err->code : MENV_EIO;
		if (!is_dir(p)) {
			rc = menv_error_set(err, MENV_ENOTFOUND,
			                    "the base environment '%s' does not "
			                    "exist",
			                    p);
			goto out;
		}
		goto out;
	}
	bool is_path = strchr(name_or_path, '/') || !strcmp(name_or_path, ".") ||
	               !strcmp(name_or_path, "..");
	if (is_path ? menv_env_path_check(name_or_path, err)
	            : menv_env_name_check(name_or_path, false, err))
		return err ? err->code : MENV_EUSAGE;
	if (is_path) {
		p = abspath(name_or_path, err);
		if (!p)
			return err ? err->code : MENV_EIO;
	} else {
		/* the first envs dir in order that holds it; none does, the first is named */
		for (size_t i = 0; !p && i < envs_dirs->n; i++) {
			char *q = menv_xasprintf("%s/%s", envs_dirs->v[i], name_or_path);
			char *m = menv_xasprintf("%s/conda-meta", q);
			if (is_dir(m))
				p = q;
			else
				free(q);
			free(m);
		}
		if (!p)
			p = menv_xasprintf("%s/%s", envs_dirs->v[0], name_or_path);
	}
	char *meta = menv_xasprintf("%s/conda-meta", p);
	bool ok = is_dir(meta);
	free(meta);
	if (!ok) {
		bool path = strchr(name_or_path, '/');
		rc = menv_error_set(err, MENV_ENOTFOUND, "environment '%s' not found%s%s",
		                    name_or_path, path ? "" : " in ", path ? "" : envs_dirs->v[0]);
		goto out;
	}
out:
	if (rc)
		free(p);
	else
		*out = p;
	return rc;
}

/* conda's Activator._default_env: "base" for the root prefix, the name for `.../envs/NAME`,
 * else the path. Caller frees. */
static char *default_env(const struct menv_activation *a, const char *prefix)
{
	char *root = a->root_prefix ? abspath(a->root_prefix, NULL) : NULL;
	bool is_root = root && !strcmp(root, prefix);
	free(root);
	if (is_root)
		return menv_xstrdup("base");
	const char *slash = strrchr(prefix, '/');
	if (slash && slash > prefix) {
		const char *pslash = slash - 1;
		while (pslash > prefix && *pslash != '/')
			pslash--;
		if (*pslash == '/' && slash - pslash - 1 == 4 && !strncmp(pslash + 1, "envs", 4))
			return menv_xstrdup(slash + 1);
	}
	return menv_xstrdup(prefix);
}

/* The prompt text put into PS1: the modifier with the characters that bash or zsh would
 * expand in a prompt ($ ` \ %) replaced by '?'. Caller frees. */
static char *ps1_text(const char *modifier)
{
	char *s = menv_xstrdup(modifier ? modifier : "");
	for (char *p = s; *p; p++)
		if (strchr("$`\\%", *p))
			*p = '?';
	return s;
}

static void remove_first(struct menv_buf *b, const char *s, const char *what)
{
	const char *hit = *what ? strstr(s, what) : NULL;
	if (!hit) {
		menv_buf_adds(b, s);
		return;
	}
	menv_buf_add(b, s, (size_t)(hit - s));
	menv_buf_adds(b, hit + strlen(what));
}

/* Sets CONDA_DEFAULT_ENV, CONDA_PROMPT_MODIFIER and (changeps1, not fish) PS1 for `prefix`,
 * or unsets them for prefix NULL (level 0). */
static void em_prompt(const struct menv_activation *a, struct emit *em, const char *prefix)
{
	const char *old_mod = envm_get(em->env, "CONDA_PROMPT_MODIFIER");
	char *old_ps1mod = ps1_text(old_mod);
	char *dflt = prefix ? default_env(a, prefix) : NULL;
	char *mod = prefix && a->changeps1 ? menv_xasprintf("(%s) ", dflt) : menv_xstrdup("");
	char *ps1mod = ps1_text(mod);

	if (prefix) {
		em_export(em, "CONDA_DEFAULT_ENV", dflt);
		em_export(em, "CONDA_PROMPT_MODIFIER", mod);
	} else {
		em_restore(em, "CONDA_DEFAULT_ENV", NULL);
		em_restore(em, "CONDA_PROMPT_MODIFIER", NULL);
	}
	if (em->sh != MENV_SHELL_FISH && (a->changeps1 || *old_ps1mod)) {
		const char *ps1 = envm_get(em->env, "PS1");
		struct menv_buf b = MENV_BUF_INIT;
		menv_buf_adds(&b, ps1mod);
		remove_first(&b, ps1 ? ps1 : "", old_ps1mod);
		menv_buf_adds(em->code, "PS1=");
		menv_shell_quote(em->sh, b.buf, em->code);
		menv_buf_addch(em->code, '\n');
		envm_set(em->env, "PS1", b.buf);
		menv_buf_release(&b);
	}
	free(old_ps1mod);
	free(ps1mod);
	free(mod);
	free(dflt);
}

/* ---------------------------------------------------------------------------------------- */
/* PATH lists                                                                                */

static void path_split(const char *s, struct menv_strvec *out)
{
	for (;;) {
		size_t n = strcspn(s, ":");
		menv_strvec_push_owned(out, menv_xstrndup(s, n));
		if (!s[n])
			break;
		s += n + 1;
	}
}

static char *path_join(const struct menv_strvec *v)
{
	struct menv_buf b = MENV_BUF_INIT;
	for (size_t i = 0; i < v->n; i++) {
		if (i)
			menv_buf_addch(&b, ':');
		menv_buf_adds(&b, v->v[i]);
	}
	if (!b.buf)
		menv_buf_adds(&b, "");
	return menv_buf_detach(&b);
}

static void strvec_remove_at(struct menv_strvec *v, size_t i)
{
	free(v->v[i]);
	memmove(&v->v[i], &v->v[i + 1], (v->n - i - 1) * sizeof(char *));
	v->n--;
}

/* Entries of `post` left over after taking out one occurrence of each entry of `pre`. */
static json_t *path_added(const char *pre, const char *post)
{
	struct menv_strvec a = MENV_STRVEC_INIT, b = MENV_STRVEC_INIT;
	json_t *added = json_array();

	path_split(pre, &a);
	path_split(post, &b);
	for (size_t i = 0; i < a.n; i++) {
		for (size_t k = 0; k < b.n; k++) {
			if (!strcmp(a.v[i], b.v[k])) {
				strvec_remove_at(&b, k);
				break;
			}
		}
	}
	for (size_t k = 0; k < b.n; k++)
		json_array_append_new(added, json_string(b.v[k]));
	menv_strvec_clear(&a);
	menv_strvec_clear(&b);
	return added;
}

/* PATH without one occurrence of each of `remove` (strings). */
static char *path_without(const char *path, const struct menv_strvec *remove)
{
	struct menv_strvec v = MENV_STRVEC_INIT;
	path_split(path, &v);
	for (size_t r = 0; r < remove->n; r++) {
		for (size_t i = 0; i < v.n; i++) {
			if (!strcmp(v.v[i], remove->v[r])) {
				strvec_remove_at(&v, i);
				break;
			}
		}
	}
	char *s = path_join(&v);
	menv_strvec_clear(&v);
	return s;
}

/* ---------------------------------------------------------------------------------------- */
/* Applying and taking off one level                                                         */

static json_t *snapshot(const struct envm *e)
{
	json_t *o = json_object();
	for (size_t i = 0; i < e->names.n; i++)
		if (!bookkeeping(e->names.v[i]))
			json_object_set_new(o, e->names.v[i], json_string(e->values.v[i]));
	return o;
}

static int cmp_var(const void *a, const void *b)
{
	return strcmp(json_string_value(json_array_get(*(json_t *const *)a, 0)),
	              json_string_value(json_array_get(*(json_t *const *)b, 0)));
}

/* Records what changed since `pre` as _MENV_BACKUP_<level> and ends the operation. */
static void em_record(struct emit *em, int level, json_t *pre)
{
	json_t *vars = json_array(), *bk = json_object();
	const char *k;
	json_t *v;
	char name[64];

	json_object_foreach(pre, k, v)
	{
		const char *now = envm_get(em->env, k);
		const char *was = json_string_value(v);
		if (now && !strcmp(now, was))
			continue;
		if (!strcmp(k, "PATH") && now) {
			json_object_set_new(bk, "path_added", path_added(was, now));
			continue;
		}
		json_array_append_new(vars, json_pack("[ss]", k, was));
	}
	for (size_t i = 0; i < em->env->names.n; i++) {
		const char *n = em->env->names.v[i];
		if (bookkeeping(n) || json_object_get(pre, n))
			continue;
		json_array_append_new(vars, json_pack("[sn]", n));
	}
	/* sorted by name, so that equal states give equal records */
	size_t nv = json_array_size(vars);
	json_t **sorted = menv_xcalloc(nv + 1, sizeof(*sorted));
	for (size_t i = 0; i < nv; i++)
		sorted[i] = json_array_get(vars, i);
	if (nv)
		qsort(sorted, nv, sizeof(*sorted), cmp_var);
	json_t *svars = json_array();
	for (size_t i = 0; i < nv; i++)
		json_array_append(svars, sorted[i]);
	free(sorted);
	json_decref(vars);
	json_object_set_new(bk, "vars", svars);
	char *dump = json_dumps(bk, JSON_COMPACT | JSON_PRESERVE_ORDER);
	snprintf(name, sizeof(name), BACKUP_FMT, level);
	em_export(em, name, dump);
	free(dump);
	json_decref(bk);
	if (envm_get(em->env, CONT_VAR))
		em_unset(em, CONT_VAR);
	if (em->sh != MENV_SHELL_FISH)
		menv_buf_adds(em->code, "hash -r 2>/dev/null || true\n");
}

static void list_scripts(const struct menv_activation *a, const char *prefix, const char *which,
                         struct menv_strvec *out)
{
	char *dir = menv_xasprintf("%s/etc/conda/%s", prefix, which);
	list_dir(dir, a->shell == MENV_SHELL_FISH ? ".fish" : ".sh", out);
	free(dir);
}

/* Applies the environment of `prefix` as level `level` (bookkeeping already set): PATH,
 * env_vars.d, conda-meta/state, then the activate.d scripts and the record. */
static int em_apply(const struct menv_activation *a, struct emit *em, const char *prefix, int level,
                    struct menv_error *err)
{
	struct menv_strvec names = MENV_STRVEC_INIT, values = MENV_STRVEC_INIT,
	                   scripts = MENV_STRVEC_INIT;
	json_t *pre = snapshot(em->env);
	int rc;

	rc = menv_env_vars_load(prefix, &names, &values, err);
	if (rc)
		goto out;
	const char *path = envm_get(em->env, "PATH");
	char *bin = menv_xasprintf("%s/bin", prefix);
	char *npath = path ? menv_xasprintf("%s:%s", bin, path) : menv_xstrdup(bin);
	em_export(em, "PATH", npath);
	free(npath);
	free(bin);
	for (size_t i = 0; i < names.n; i++)
		em_export(em, names.v[i], values.v[i]);
	list_scripts(a, prefix, "activate.d", &scripts);
	if (!scripts.n) {
		em_record(em, level, pre);
		goto out;
	}
	for (size_t i = 0; i < scripts.n; i++)
		em_source(em, scripts.v[i]);
	json_t *cont = json_pack("{s:s, s:i, s:O}", "phase", "record", "level", level, "pre", pre);
	char *dump = json_dumps(cont, JSON_COMPACT);
	em_continue(em, a->exe, dump);
	free(dump);
	json_decref(cont);
out:
	json_decref(pre);
	menv_strvec_clear(&names);
	menv_strvec_clear(&values);
	menv_strvec_clear(&scripts);
	return rc;
}

/* Takes level `level` (the environment `prefix`) off: its recorded variables back, its PATH
 * additions out. Without a record (activated by something else) removes `prefix`/bin from
 * PATH and unsets the prefix's own variables, as conda does. */
static void em_unapply(struct emit *em, const char *prefix, int level)
{
	char name[64];
	struct menv_error jerr = {0};
	struct menv_strvec rm = MENV_STRVEC_INIT;

	snprintf(name, sizeof(name), BACKUP_FMT, level);
	const char *rec = envm_get(em->env, name);
	json_t *bk = NULL;
	if (rec)
		menv_json_parse(rec, strlen(rec), 0, name, &bk, &jerr);
	if (bk) {
		json_t *vars = json_object_get(bk, "vars"), *e;
		size_t i;
		json_array_foreach(vars, i, e)
		{
			const char *n = json_string_value(json_array_get(e, 0));
			if (n && menv_env_var_name_ok(n) && !bookkeeping(n))
				em_restore(em, n, json_string_value(json_array_get(e, 1)));
		}
		json_array_foreach(json_object_get(bk, "path_added"), i, e) if (json_is_string(e))
		        menv_strvec_push(&rm, json_string_value(e));
	} else if (prefix) {
		struct menv_strvec names = MENV_STRVEC_INIT, values = MENV_STRVEC_INIT;
		menv_strvec_push_owned(&rm, menv_xasprintf("%s/bin", prefix));
		if (!menv_env_vars_load(prefix, &names, &values, NULL))
			for (size_t i = 0; i < names.n; i++)
				em_restore(em, names.v[i], NULL);
		menv_strvec_clear(&names);
		menv_strvec_clear(&values);
	}
	const char *path = envm_get(em->env, "PATH");
	if (rm.n && path) {
		char *np = path_without(path, &rm);
		if (strcmp(np, path))
			em_export(em, "PATH", np);
		free(np);
	}
	if (rec)
		em_unset(em, name);
	json_decref(bk);
	menv_strvec_clear(&rm);
}

static void em_export_int(struct emit *em, const char *name, int v)
{
	char s[32];
	snprintf(s, sizeof(s), "%d", v);
	em_export(em, name, s);
}

/* The part of an operation after the outgoing environment's deactivate.d scripts ran. */
static int em_mid(const struct menv_activation *a, struct emit *em, bool activate,
                  const char *prefix, bool stack, struct menv_error *err)
{
	int n = envm_level(em->env);
	char name[64];
	char *cur = menv_xstrdup(envm_get(em->env, "CONDA_PREFIX"));
	int rc = 0;

	if (activate) {
		if (n >= 1 && cur && !strcmp(cur, prefix) && !stack) {
			/* conda's reactivate: same level, scripts run again */
			em_unapply(em, cur, n);
			em_prompt(a, em, prefix);
			rc = em_apply(a, em, prefix, n, err);
			goto out;
		}
		if (n >= 1 && !stack)
			em_unapply(em, cur, n);
		if (n >= 1 && cur) {
			snprintf(name, sizeof(name), "CONDA_PREFIX_%d", n);
			em_export(em, name, cur);
		}
		em_export_int(em, "CONDA_SHLVL", n + 1);
		em_export(em, "CONDA_PREFIX", prefix);
		if (stack) {
			snprintf(name, sizeof(name), "CONDA_STACKED_%d", n + 1);
			em_export(em, name, "true");
		}
		em_prompt(a, em, prefix);
		rc = em_apply(a, em, prefix, n + 1, err);
		goto out;
	}
	if (n < 1)
		goto out;
	em_unapply(em, cur, n);
	if (n == 1) {
		em_export(em, "CONDA_SHLVL", "0");
		em_restore(em, "CONDA_PREFIX", NULL);
		em_prompt(a, em, NULL);
		if (em->sh != MENV_SHELL_FISH)
			menv_buf_adds(em->code, "hash -r 2>/dev/null || true\n");
		goto out;
	}
	snprintf(name, sizeof(name), "CONDA_PREFIX_%d", n - 1);
	char *back = menv_xstrdup(envm_get(em->env, name));
	em_restore(em, name, NULL);
	snprintf(name, sizeof(name), "CONDA_STACKED_%d", n);
	bool stacked = envm_get(em->env, name) != NULL;
	em_restore(em, name, NULL);
	em_export_int(em, "CONDA_SHLVL", n - 1);
	if (back)
		em_export(em, "CONDA_PREFIX", back);
	else
		em_restore(em, "CONDA_PREFIX", NULL);
	em_prompt(a, em, back);
	if (back && !stacked)
		rc = em_apply(a, em, back, n - 1, err);
	else if (em->sh != MENV_SHELL_FISH)
		menv_buf_adds(em->code, "hash -r 2>/dev/null || true\n");
	free(back);
out:
	free(cur);
	return rc;
}

/* Starts an operation: the outgoing environment's deactivate.d scripts (reverse order), then
 * the rest now or, after the scripts, in a continuation. */
static int start(const struct menv_activation *a, bool activate, const char *prefix,
                 struct menv_buf *out, struct menv_error *err)
{
	struct envm env = {MENV_STRVEC_INIT, MENV_STRVEC_INIT};
	struct emit em = {a->shell, out, &env};
	struct menv_strvec scripts = MENV_STRVEC_INIT;
	int rc = 0;

	envm_load(&env, a->environ);
	int n = envm_level(&env);
	const char *cur = envm_get(&env, "CONDA_PREFIX");
	bool leaving = n >= 1 && cur && (!activate || !a->stack);
	if (leaving)
		list_scripts(a, cur, "deactivate.d", &scripts);
	if (!scripts.n) {
		rc = em_mid(a, &em, activate, prefix, a->stack, err);
		goto out;
	}
	for (size_t i = scripts.n; i-- > 0;)
		em_source(&em, scripts.v[i]);
	json_t *cont = json_pack("{s:s, s:b, s:s?, s:b}", "phase", "mid", "activate", activate,
	                         "prefix", prefix, "stack", a->stack);
	char *dump = json_dumps(cont, JSON_COMPACT);
	em_continue(&em, a->exe, dump);
	free(dump);
	json_decref(cont);
out:
	menv_strvec_clear(&scripts);
	envm_clear(&env);
	return rc;
}

int menv_activate(const struct menv_activation *a, const char *prefix, struct menv_buf *out,
                  struct menv_error *err)
{
	return start(a, true, prefix, out, err);
}

int menv_deactivate(const struct menv_activation *a, struct menv_buf *out, struct menv_error *err)
{
	return start(a, false, NULL, out, err);
}

int menv_activate_continue(const struct menv_activation *a, struct menv_buf *out,
                           struct menv_error *err)
{
	struct envm env = {MENV_STRVEC_INIT, MENV_STRVEC_INIT};
	struct emit em = {a->shell, out, &env};
	struct menv_error jerr = {0};
	json_t *cont = NULL;
	int rc = 0;

	envm_load(&env, a->environ);
	const char *s = envm_get(&env, CONT_VAR);
	if (!s) {
		rc = menv_error_set(err, MENV_EUSAGE, "no activation in progress (%s is not set)",
		                    CONT_VAR);
		goto out;
	}
	menv_json_parse(s, strlen(s), 0, CONT_VAR, &cont, &jerr);
	const char *phase = json_string_value(json_object_get(cont, "phase"));
	if (!phase) {
		em_unset(&em, CONT_VAR);
		rc = menv_error_set(err, MENV_EPARSE, "malformed %s", CONT_VAR);
		goto out;
	}
	em_unset(&em, CONT_VAR);
	if (!strcmp(phase, "record")) {
		json_t *pre = json_object_get(cont, "pre");
		int level = (int)json_integer_value(json_object_get(cont, "level"));
		if (!json_is_object(pre) || level < 1) {
			rc = menv_error_set(err, MENV_EPARSE, "malformed %s", CONT_VAR);
			goto out;
		}
		em_record(&em, level, pre);
	} else {
		bool act = json_is_true(json_object_get(cont, "activate"));
		const char *prefix = json_string_value(json_object_get(cont, "prefix"));
		struct menv_activation a2 = *a;
		a2.stack = json_is_true(json_object_get(cont, "stack"));
		if (act && !prefix) {
			rc = menv_error_set(err, MENV_EPARSE, "malformed %s", CONT_VAR);
			goto out;
		}
		rc = em_mid(&a2, &em, act, prefix, a2.stack, err);
	}
out:
	json_decref(cont);
	envm_clear(&env);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* menv run                                                                                  */

/* Runs the activate.d scripts of `prefix` in bash (else sh) with environment `e` and replaces
 * `e` with the environment they leave. The shell runs as a child of its own group that dies
 * with menv and stops on Ctrl-C (menv_child_fork; MENV_EINTR). */
static int run_scripts(const struct menv_strvec *scripts, struct envm *e, const char *prefix,
                       struct menv_error *err)
{
	const char *shell = access("/bin/bash", X_OK) == 0 ? "/bin/bash" : "/bin/sh";
	const char *envexe = access("/usr/bin/env", X_OK) == 0 ? "/usr/bin/env" : "/bin/env";
	char **args = menv_xcalloc(scripts->n + 1, sizeof(char *));
	char **envp = menv_xcalloc(e->names.n + 1, sizeof(char *));
	struct menv_buf b = MENV_BUF_INIT;
	size_t nenv = e->names.n;
	int fds[2] = {-1, -1}, status = 0, rc = 0;
	pid_t pid;

	/* $1 is env's path, then the scripts: data, never the script's text */
	args[0] = (char *)envexe;
	for (size_t i = 0; i < scripts->n; i++)
		args[1 + i] = scripts->v[i];
	char **argv = menv_sh_argv(shell,
	                           "__menv_env=$1; shift; for __menv_f do . \"$__menv_f\" >&2; "
	                           "done; exec \"$__menv_env\" -0",
	                           "sh", args, scripts->n + 1);
	for (size_t i = 0; i < e->names.n; i++)
		envp[i] = menv_xasprintf("%s=%s", e->names.v[i], e->values.v[i]);
	if (pipe2(fds, O_CLOEXEC) < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot create a pipe");
		goto out;
	}
	pid = menv_child_fork();
	if (pid < 0) {
		rc = menv_error_sys(err, MENV_EIO, "cannot start '%s'", shell);
		goto out;
	}
	if (pid == 0) {
		/* the scripts never read the stdin of the command `menv run` starts after them */
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(fds[1], 1);
		execve(shell, argv, envp);
		_exit(127);
	}
	close(fds[1]);
	fds[1] = -1;
	rc = menv_child_wait(pid, fds[0], &b, SIZE_MAX, NULL, &status);
	if (rc == MENV_EINTR) {
		rc = menv_error_set(err, MENV_EINTR,
		                    "interrupted in the activation scripts of '%s'", prefix);
		goto out;
	}
	if (rc) {
		rc = menv_error_sys(err, MENV_EIO, "cannot wait for the activation scripts of '%s'",
		                    prefix);
		goto out;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		rc = menv_error_set(err, MENV_EIO, "the activation scripts of '%s' failed (%s %d)",
		                    prefix, WIFEXITED(status) ? "exit status" : "signal",
		                    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		goto out;
	}
	menv_buf_addch(&b, '\0'); /* the last entry ends even when env's output was cut */
	envm_clear(e);
	for (size_t off = 0; off < b.len;) {
		const char *ent = b.buf + off;
		size_t n = strlen(ent);
		const char *eq = strchr(ent, '=');
		if (eq && eq != ent) {
			char *name = menv_xstrndup(ent, (size_t)(eq - ent));
			envm_set(e, name, eq + 1);
			free(name);
		}
		off += n + 1;
	}
out:
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	for (size_t i = 0; i < nenv; i++)
		free(envp[i]);
	free(envp);
	free(argv);
	free(args);
	menv_buf_release(&b);
	return rc;
}

void menv_environ_assign(struct menv_strvec *env, char *const *sets, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t nl = strcspn(sets[i], "=") + 1, k = 0;
		while (k < env->n && strncmp(env->v[k], sets[i], nl))
			k++;
		if (k < env->n) {
			free(env->v[k]);
			env->v[k] = menv_xstrdup(sets[i]);
		} else {
			menv_strvec_push(env, sets[i]);
		}
	}
}

int menv_run_environ(const struct menv_activation *a, const char *prefix, bool clean,
                     struct menv_strvec *out, struct menv_error *err)
{
	static const char *const keep[] = {"HOME",     "USER", "LOGNAME", "SHELL",   "TERM", "LANG",
	                                   "LANGUAGE", "TZ",   "TMPDIR",  "DISPLAY", NULL};
	struct envm env = {MENV_STRVEC_INIT, MENV_STRVEC_INIT}, all = env;
	struct menv_buf code = MENV_BUF_INIT;
	struct menv_strvec scripts = MENV_STRVEC_INIT;
	int rc = 0;

	envm_load(&all, a->environ);
	if (clean) {
		char syspath[1024];
		for (size_t i = 0; i < all.names.n; i++) {
			const char *n = all.names.v[i];
			bool k = !strncmp(n, "LC_", 3);
			for (size_t j = 0; !k && keep[j]; j++)
				k = !strcmp(n, keep[j]);
			if (k)
				envm_set(&env, n, all.values.v[i]);
		}
		size_t len = confstr(_CS_PATH, syspath, sizeof(syspath));
		envm_set(&env, "PATH",
		         len > 0 && len <= sizeof(syspath) ? syspath
		                                           : "/usr/local/bin:/usr/bin:/bin");
	} else {
		env = all;
		all = (struct envm){MENV_STRVEC_INIT, MENV_STRVEC_INIT};
	}
	/* a stacked activation on top of whatever is active; the shell code is discarded */
	struct menv_activation a2 = *a;
	a2.shell = MENV_SHELL_POSIX;
	struct emit em = {MENV_SHELL_POSIX, &code, &env};
	int n = envm_level(&env);
	char name[64];
	const char *cur = envm_get(&env, "CONDA_PREFIX");
	if (n >= 1 && cur) {
		snprintf(name, sizeof(name), "CONDA_PREFIX_%d", n);
		em_export(&em, name, cur);
	}
	em_export_int(&em, "CONDA_SHLVL", n + 1);
	em_export(&em, "CONDA_PREFIX", prefix);
	char *dflt = default_env(&a2, prefix), *mod = menv_xasprintf("(%s) ", dflt);
	em_export(&em, "CONDA_DEFAULT_ENV", dflt);
	em_export(&em, "CONDA_PROMPT_MODIFIER", mod);
	free(dflt);
	free(mod);
	struct menv_strvec names = MENV_STRVEC_INIT, values = MENV_STRVEC_INIT;
	rc = menv_env_vars_load(prefix, &names, &values, err);
	if (!rc) {
		const char *path = envm_get(&env, "PATH");
		char *np = path ? menv_xasprintf("%s/bin:%s", prefix, path)
		                : menv_xasprintf("%s/bin", prefix);
		envm_set(&env, "PATH", np);
		free(np);
		for (size_t i = 0; i < names.n; i++)
			envm_set(&env, names.v[i], values.v[i]);
	}
	menv_strvec_clear(&names);
	menv_strvec_clear(&values);
	if (rc)
		goto out;
	list_scripts(&a2, prefix, "activate.d", &scripts);
	if (scripts.n) {
		rc = run_scripts(&scripts, &env, prefix, err);
		if (rc)
			goto out;
	}
	for (size_t i = 0; i < env.names.n; i++)
		menv_strvec_push_owned(out,
		                       menv_xasprintf("%s=%s", env.names.v[i], env.values.v[i]));
out:
	menv_strvec_clear(&scripts);
	menv_buf_release(&code);
	envm_clear(&env);
	envm_clear(&all);
	return rc;
}
