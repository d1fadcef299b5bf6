/*
 * config.c - menv settings from conda's .condarc files (same keys, same search path, plus
 * $MENVRC) and environment variables. Only the keys menv uses are read; others are ignored so
 * an existing .condarc works unchanged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yaml.h>

#include "specs.h"

#define DEFAULT_ALIAS "https://conda.anaconda.org"

static char *home_dir(void)
{
	const char *h = getenv("HOME");
	return menv_xstrdup(h && *h ? h : "/");
}

static char *expand_user(const char *p)
{
	if (p[0] == '~' && (p[1] == '/' || !p[1])) {
		char *h = home_dir();
		char *r = menv_xasprintf("%s%s", h, p + 1);
		free(h);
		return r;
	}
	return menv_xstrdup(p);
}

static void strip_slash(char *s)
{
	size_t n = strlen(s);
	while (n > 1 && s[n - 1] == '/')
		s[--n] = '\0';
}

static void set_root(struct menv_config *cfg, const char *root)
{
	free(cfg->root_prefix);
	free(cfg->pkgs_dir);
	free(cfg->envs_dir);
	cfg->root_prefix = expand_user(root);
	strip_slash(cfg->root_prefix);
	cfg->pkgs_dir = menv_xasprintf("%s/pkgs", cfg->root_prefix);
	cfg->envs_dir = menv_xasprintf("%s/envs", cfg->root_prefix);
}

/* Moves the root prefix; a pkgs_dir set explicitly (not <root>/pkgs) is kept. */
static void change_root(struct menv_config *cfg, const char *root)
{
	char *def = menv_xasprintf("%s/pkgs", cfg->root_prefix);
	char *keep = strcmp(def, cfg->pkgs_dir) ? menv_xstrdup(cfg->pkgs_dir) : NULL;

	set_root(cfg, root);
	if (keep) {
		free(cfg->pkgs_dir);
		cfg->pkgs_dir = keep;
	}
	free(def);
}

void menv_config_defaults(struct menv_config *cfg)
{
	char *h = home_dir();
	char *root = menv_xasprintf("%s/.menv", h);
	const char *sub = getenv("CONDA_SUBDIR");

	memset(cfg, 0, sizeof(*cfg));
	set_root(cfg, root);
	cfg->channel_alias = menv_xstrdup(DEFAULT_ALIAS);
	menv_strvec_push(&cfg->default_channels, "https://repo.anaconda.com/pkgs/main");
	menv_strvec_push(&cfg->default_channels, "https://repo.anaconda.com/pkgs/r");
	cfg->channel_priority = MENV_PRIORITY_FLEXIBLE;
	cfg->download_threads = 5;
	cfg->subdir = menv_xstrdup(sub && *sub ? sub : menv_platform_subdir());
	free(root);
	free(h);
}

void menv_config_release(struct menv_config *cfg)
{
	free(cfg->root_prefix);
	free(cfg->pkgs_dir);
	free(cfg->envs_dir);
	free(cfg->channel_alias);
	free(cfg->subdir);
	menv_strvec_clear(&cfg->channels);
	menv_strvec_clear(&cfg->default_channels);
	menv_strvec_clear(&cfg->files);
	memset(cfg, 0, sizeof(*cfg));
}

static int node_error(struct menv_error *err, const char *path, yaml_node_t *n, const char *what)
{
	return menv_error_set(err, MENV_EPARSE, "%s:%zu:%zu: %s", path, n->start_mark.line + 1,
			      n->start_mark.column + 1, what);
}

static int scalar_list(yaml_document_t *doc, yaml_node_t *n, const char *path,
		       struct menv_strvec *out, struct menv_error *err)
{
	if (n->type == YAML_SCALAR_NODE && n->data.scalar.length == 0)
		return 0; /* `key:` with nothing: an empty list */
	if (n->type != YAML_SEQUENCE_NODE)
		return node_error(err, path, n, "expected a list");
	menv_strvec_clear(out);
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		yaml_node_t *v = yaml_document_get_node(doc, *it);
		if (!v || v->type != YAML_SCALAR_NODE)
			return node_error(err, path, v ? v : n, "expected a string in the list");
		menv_strvec_push(out, (const char *)v->data.scalar.value);
	}
	return 0;
}

int menv_config_apply_file(struct menv_config *cfg, const char *path, struct menv_error *err)
{
	struct menv_buf b = MENV_BUF_INIT;
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	int rc;

	rc = menv_buf_read_file(&b, path, err);
	if (rc)
		return rc;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)b.buf, b.len);
	if (!yaml_parser_load(&parser, &doc)) {
		rc = menv_error_set(err, MENV_EPARSE, "%s:%zu:%zu: %s", path,
				    parser.problem_mark.line + 1, parser.problem_mark.column + 1,
				    parser.problem ? parser.problem : "invalid YAML");
		yaml_parser_delete(&parser);
		menv_buf_release(&b);
		return rc;
	}
	root = yaml_document_get_root_node(&doc);
	if (!root || (root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0))
		goto out; /* empty file */
	if (root->type != YAML_MAPPING_NODE) {
		rc = node_error(err, path, root, "expected a mapping of settings");
		goto out;
	}
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     p < root->data.mapping.pairs.top && !rc; p++) {
		yaml_node_t *k = yaml_document_get_node(&doc, p->key);
		yaml_node_t *v = yaml_document_get_node(&doc, p->value);
		const char *key, *val;

		if (!k || !v || k->type != YAML_SCALAR_NODE)
			continue;
		key = (const char *)k->data.scalar.value;
		val = v->type == YAML_SCALAR_NODE ? (const char *)v->data.scalar.value : NULL;
		if (!strcmp(key, "channels"))
			rc = scalar_list(&doc, v, path, &cfg->channels, err);
		else if (!strcmp(key, "default_channels"))
			rc = scalar_list(&doc, v, path, &cfg->default_channels, err);
		else if (!strcmp(key, "pkgs_dirs")) {
			struct menv_strvec dirs = MENV_STRVEC_INIT;
			rc = scalar_list(&doc, v, path, &dirs, err);
			if (!rc && dirs.n) {
				free(cfg->pkgs_dir);
				cfg->pkgs_dir = expand_user(dirs.v[0]);
			}
			menv_strvec_clear(&dirs);
		} else if (!strcmp(key, "channel_alias") && val && *val) {
			free(cfg->channel_alias);
			cfg->channel_alias = menv_xstrdup(val);
			strip_slash(cfg->channel_alias);
		} else if (!strcmp(key, "root_prefix") && val && *val) {
			change_root(cfg, val);
		} else if (!strcmp(key, "channel_priority") && val) {
			if (!strcmp(val, "strict"))
				cfg->channel_priority = MENV_PRIORITY_STRICT;
			else if (!strcmp(val, "flexible"))
				cfg->channel_priority = MENV_PRIORITY_FLEXIBLE;
			else if (!strcmp(val, "disabled"))
				cfg->channel_priority = MENV_PRIORITY_DISABLED;
			else
				rc = node_error(err, path, v,
						"channel_priority must be strict, flexible or disabled");
		} else if ((!strcmp(key, "download_threads") || !strcmp(key, "fetch_threads")) &&
			   val) {
			int t = atoi(val);
			if (t < 1 || t > 64)
				rc = node_error(err, path, v, "download_threads must be 1 to 64");
			else
				cfg->download_threads = t;
		}
	}
	if (!rc)
		menv_strvec_push(&cfg->files, path);
out:
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	menv_buf_release(&b);
	return rc;
}

int menv_config_load(struct menv_config *cfg, struct menv_error *err)
{
	char *h = home_dir();
	const char *env;
	char *paths[8];
	size_t np = 0;
	int rc = 0;

	menv_config_defaults(cfg);
	paths[np++] = menv_xstrdup("/etc/conda/.condarc");
	paths[np++] = menv_xstrdup("/etc/conda/condarc");
	paths[np++] = menv_xasprintf("%s/.config/conda/.condarc", h);
	paths[np++] = menv_xasprintf("%s/.condarc", h);
	if ((env = getenv("CONDARC")) && *env)
		paths[np++] = menv_xstrdup(env);
	if ((env = getenv("MENVRC")) && *env)
		paths[np++] = menv_xstrdup(env);
	for (size_t i = 0; i < np && !rc; i++)
		if (access(paths[i], R_OK) == 0)
			rc = menv_config_apply_file(cfg, paths[i], err);
	for (size_t i = 0; i < np; i++)
		free(paths[i]);
	free(h);
	if (rc)
		return rc;
	if ((env = getenv("MENV_ROOT_PREFIX")) && *env)
		change_root(cfg, env);
	if ((env = getenv("CONDA_PKGS_DIRS")) && *env) {
		const char *comma = strchr(env, ',');
		free(cfg->pkgs_dir);
		cfg->pkgs_dir = comma ? menv_xstrndup(env, (size_t)(comma - env)) : menv_xstrdup(env);
	}
	return 0;
}
