/*
 * envfile.c - environment.yml (CEP-24): name, prefix, channels, dependencies with an
 * optional `pip:` section, variables, and menv's `virtual-packages:` (the virtual packages
 * `menv lock` solves against; conda ignores the key). YAML errors carry the file, line and column; a key
 * present with no value (YAML null) reads as "no items", as conda reads it (BR-002).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "internal.h"
#include "specs.h"

struct ctx {
	yaml_document_t *doc;
	const char *src;
	struct menv_error *err;
};

__attribute__((format(printf, 3, 4))) static int fail(struct ctx *c, yaml_node_t *n,
                                                      const char *fmt, ...)
{
	char m[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	return menv_error_set(c->err, MENV_EPARSE, "%s:%zu:%zu: %s", c->src, n->start_mark.line + 1,
	                      n->start_mark.column + 1, m);
}

static bool is_null(yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE)
		return false;
	const char *v = (const char *)n->data.scalar.value;
	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	return !*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
	       !strcmp(v, "NULL");
}

static const char *scalar(yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A dependency is a MatchSpec and a channel a channel: a bad one is refused here, where the
 * file's line and column are known ("numpy>>1" named no line when the plan parsed it). The
 * channel is resolved with the default settings: what it would name is the plan's business
 * (custom_channels and the alias come from .condarc), only whether it can name one is asked. */
static int check_value(struct ctx *c, yaml_node_t *v, bool channel)
{
	struct menv_error e = {0};
	int rc;

	if (channel) {
		struct menv_config cfg;
		struct menv_channel **chans = NULL;
		size_t n = 0;
		if (!strcmp(scalar(v), "nodefaults"))
			return 0;
		menv_config_defaults(&cfg);
		rc = menv_channel_resolve(scalar(v), &cfg, &chans, &n, &e);
		menv_channels_free(chans, n);
		menv_config_release(&cfg);
	} else {
		struct menv_matchspec *ms = NULL;
		rc = menv_matchspec_parse(scalar(v), &ms, &e);
		menv_matchspec_free(ms);
	}
	return rc ? fail(c, v, "%s", e.msg) : 0;
}

static int string_list(struct ctx *c, yaml_node_t *n, const char *key, struct menv_strvec *out)
{
	if (is_null(n))
		return 0;
	if (n->type == YAML_SCALAR_NODE) {
		/* a single string where a list is expected: accepted like conda */
		if (!strcmp(key, "channels") && check_value(c, n, true))
			return c->err->code;
		menv_strvec_push(out, scalar(n));
		return 0;
	}
	if (n->type != YAML_SEQUENCE_NODE)
		return fail(c, n, "'%s' must be a list", key);
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		yaml_node_t *v = yaml_document_get_node(c->doc, *it);
		if (!v || v->type != YAML_SCALAR_NODE)
			return fail(c, v ? v : n, "items of '%s' must be strings", key);
		/* conda refuses it ("`channels` key must only contain strings", then fails;
		 * pip would be run with "None") */
		if (is_null(v))
			return fail(c, v,
			            "an item of '%s' is empty (null): give %s or drop the line",
			            key, strcmp(key, "channels") ? "a requirement" : "a channel");
		if (!strcmp(key, "channels") && check_value(c, v, true))
			return c->err->code;
		menv_strvec_push(out, scalar(v));
	}
	return 0;
}

static int dependencies(struct ctx *c, yaml_node_t *n, struct menv_envfile *ef)
{
	if (is_null(n)) {
		/* conda: "Invalid type for 'dependencies', expected a list" as a FutureWarning, then
		 * no dependencies */
		menv_strvec_push_owned(
		        &ef->notes,
		        menv_xasprintf("%s:%zu:%zu: 'dependencies' has no value: read as no "
		                       "dependencies (conda warns that it will refuse this; give "
		                       "a list, [] for none)",
		                       c->src, n->start_mark.line + 1, n->start_mark.column + 1));
		return 0;
	}
	if (n->type != YAML_SEQUENCE_NODE)
		return fail(c, n, "'%s' must be a list", "dependencies");
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		yaml_node_t *v = yaml_document_get_node(c->doc, *it);
		if (!v)
			continue;
		if (v->type == YAML_SCALAR_NODE) {
			/* conda's EnvironmentFileInvalid: "'None' is an invalid type for a
			 * 'dependency'" */
			if (is_null(v))
				return fail(
				        c, v,
				        "a dependency is empty (null): give a package spec or drop "
				        "the line");
			int rc = check_value(c, v, false);
			if (rc)
				return rc;
			/* "" and "*" would match every package: refused here, where the line is
			 * known (the solve refused them naming no file) */
			const char *d = scalar(v) + strspn(scalar(v), " \t");
			if (!d[strspn(d, "* \t")])
				return fail(c, v, "the dependency '%s' would match every package",
				            scalar(v));
			menv_strvec_push(&ef->deps, scalar(v));
			continue;
		}
		if (v->type != YAML_MAPPING_NODE)
			return fail(c, v, "a dependency must be a string or a '%s:' section",
			            "pip");
		for (yaml_node_pair_t *p = v->data.mapping.pairs.start;
		     p < v->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
			yaml_node_t *val = yaml_document_get_node(c->doc, p->value);
			const char *ks = scalar(k);
			if (!ks || strcmp(ks, "pip"))
				return fail(c, k ? k : v, "unknown dependency section '%s'",
				            ks ? ks : "?");
			ef->has_pip_section = true;
			int rc = string_list(c, val, "pip", &ef->pip);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* A variable name activation can export: a letter or '_', then letters, digits and '_' (what
 * envs/activate.c's menv_env_var_name_ok takes when the variables are stored). */
static bool var_name_ok(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

static int variables(struct ctx *c, yaml_node_t *n, struct menv_envfile *ef)
{
	if (is_null(n))
		return 0;
	if (n->type != YAML_MAPPING_NODE)
		return fail(c, n, "'%s' must be a mapping of names to values", "variables");
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
		if (!scalar(k) || !v || v->type != YAML_SCALAR_NODE)
			return fail(c, k ? k : n, "variable values must be %s", "strings");
		/* refused here, so that --dry-run refuses what the create would (it stored them) */
		if (!var_name_ok(scalar(k)))
			return fail(c, k,
			            "invalid variable name '%s' (letters, digits and '_', not "
			            "starting with a digit)",
			            scalar(k));
		menv_strvec_push(&ef->var_names, scalar(k));
		menv_strvec_push(&ef->var_values, is_null(v) ? "" : scalar(v));
	}
	return 0;
}

bool menv_virtual_decl_ok(const char *decl)
{
	const char *colon = strncmp(decl, "__", 2) ? strchr(decl, ':') : NULL;
	const char *nm = colon ? colon + 1 : decl;
	return !strncmp(nm, "__", 2) && nm[2] && nm[2] != '=' && strchr(nm, '=') &&
	       strchr(nm, '=')[1] && strchr(nm, '=')[1] != '=';
}

static int virtual_packages(struct ctx *c, yaml_node_t *n, struct menv_envfile *ef)
{
	const char *key = "virtual-packages";
	if (is_null(n))
		return 0;
	if (n->type != YAML_SEQUENCE_NODE)
		return fail(c, n, "'%s' must be a list", key);
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		yaml_node_t *v = yaml_document_get_node(c->doc, *it);
		if (!v || v->type != YAML_SCALAR_NODE || is_null(v) ||
		    !menv_virtual_decl_ok(scalar(v)))
			return fail(c, v ? v : n,
			            "items of '%s' must be [PLATFORM:]__NAME=VERSION[=BUILD]", key);
		menv_strvec_push(&ef->virtual_packages, scalar(v));
	}
	return 0;
}

int menv_envfile_parse(const char *bytes, size_t len, const char *src, struct menv_envfile **out,
                       struct menv_error *err)
{
	struct menv_envfile *ef = menv_xcalloc(1, sizeof(*ef));
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	struct ctx c = {&doc, src, err};
	struct menv_strset keys = MENV_STRSET_INIT;
	int rc = 0;

	*out = NULL;
	ef->path = menv_xstrdup(src);
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)bytes, len);
	rc = menv_yaml_load_refusing(&parser, &doc, src, true,
	                             "conda's environment file reader drops what is merged at its "
	                             "top level",
	                             err);
	if (rc) {
		yaml_parser_delete(&parser);
		menv_envfile_free(ef);
		return rc;
	}
	root = yaml_document_get_root_node(&doc);
	if (!root) {
		rc = menv_error_set(err, MENV_EPARSE, "%s: the environment file is empty", src);
		goto out;
	}
	/* a NUL byte ("A\0B", "\x00") would cut the text where C reads it: a variable name "A"
	 * exported instead of the "A\0B" refused, a spec shortened; refused wherever it is */
	for (yaml_node_t *n = doc.nodes.start; n < doc.nodes.top; n++)
		if (n->type == YAML_SCALAR_NODE &&
		    memchr(n->data.scalar.value, '\0', n->data.scalar.length)) {
			rc = fail(&c, n, "a NUL byte in the text after '%s' (text cannot hold one)",
			          (const char *)n->data.scalar.value);
			goto out;
		}
	if (root->type != YAML_MAPPING_NODE) {
		rc = fail(&c, root, "expected a mapping with '%s' and other keys", "dependencies");
		goto out;
	}
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     p < root->data.mapping.pairs.top && !rc; p++) {
		yaml_node_t *k = yaml_document_get_node(&doc, p->key);
		yaml_node_t *v = yaml_document_get_node(&doc, p->value);
		const char *key = scalar(k);
		if (!key || !v)
			continue;
		/* a key given twice: YAML forbids it, and which one wins is a guess */
		if (!menv_strset_add(&keys, key)) {
			rc = fail(&c, k, "'%s' is given twice", key);
			break;
		}
		if (!strcmp(key, "name") || !strcmp(key, "prefix")) {
			if (is_null(v))
				continue;
			if (v->type != YAML_SCALAR_NODE) {
				rc = fail(&c, v, "'%s' must be a string", key);
				continue;
			}
			char **slot = key[0] == 'n' ? &ef->name : &ef->prefix;
			free(*slot);
			*slot = menv_xstrdup(scalar(v));
		} else if (!strcmp(key, "channels")) {
			rc = string_list(&c, v, "channels", &ef->channels);
		} else if (!strcmp(key, "dependencies")) {
			rc = dependencies(&c, v, ef);
		} else if (!strcmp(key, "variables")) {
			rc = variables(&c, v, ef);
		} else if (!strcmp(key, "virtual-packages")) {
			rc = virtual_packages(&c, v, ef);
		} else if (strcmp(key, "platforms")) { /* conda-lock's key: known, not ours */
			menv_strvec_push_owned(
			        &ef->unknown,
			        menv_xasprintf("%zu:%s", k->start_mark.line + 1, key));
		}
	}
	/* one environment a file: a second YAML document would be silently ignored */
	if (!rc)
		rc = menv_yaml_single(&parser, src, "environment file", err);
out:
	menv_strset_clear(&keys);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (rc) {
		menv_envfile_free(ef);
		return rc;
	}
	*out = ef;
	return 0;
}

int menv_envfile_load(const char *path, struct menv_envfile **out, struct menv_error *err)
{
	struct menv_buf b = MENV_BUF_INIT;
	int rc = menv_buf_read_stream(&b, path, err);
	if (!rc)
		rc = menv_envfile_parse(b.buf, b.len, path, out, err);
	menv_buf_release(&b);
	return rc;
}

void menv_envfile_free(struct menv_envfile *ef)
{
	if (!ef)
		return;
	free(ef->path);
	free(ef->name);
	free(ef->prefix);
	menv_strvec_clear(&ef->channels);
	menv_strvec_clear(&ef->deps);
	menv_strvec_clear(&ef->pip);
	menv_strvec_clear(&ef->var_names);
	menv_strvec_clear(&ef->var_values);
	menv_strvec_clear(&ef->virtual_packages);
	menv_strvec_clear(&ef->unknown);
	menv_strvec_clear(&ef->notes);
	free(ef);
}

/* ---------------------------------------------------------------------------------------- */
/* environment.yml writing (CEP-24)                                                         */

/* "LEAD" then `s` as a YAML value then a newline; `what` names `s` in an error. */
static int line(struct menv_buf *out, const char *lead, const char *s, const char *what,
                struct menv_error *err)
{
	menv_buf_adds(out, lead);
	if (menv_yaml_write_str(out, s, err))
		return menv_error_prefix(err, "cannot write the environment file's %s", what);
	menv_buf_addch(out, '\n');
	return 0;
}

int menv_envfile_write(const struct menv_envfile *ef, struct menv_buf *out, struct menv_error *err)
{
	int rc = 0;
	if (ef->name && (rc = line(out, "name: ", ef->name, "name", err)))
		return rc;
	menv_buf_adds(out, "channels:\n");
	for (size_t i = 0; i < ef->channels.n; i++)
		if ((rc = line(out, "  - ", ef->channels.v[i], "channel", err)))
			return rc;
	menv_buf_adds(out, "dependencies:\n");
	for (size_t i = 0; i < ef->deps.n; i++)
		if ((rc = line(out, "  - ", ef->deps.v[i], "dependency", err)))
			return rc;
	if (ef->pip.n || ef->has_pip_section) {
		menv_buf_adds(out, "  - pip:\n");
		for (size_t i = 0; i < ef->pip.n; i++)
			if ((rc = line(out, "      - ", ef->pip.v[i], "pip dependency", err)))
				return rc;
	}
	if (ef->var_names.n) {
		menv_buf_adds(out, "variables:\n");
		for (size_t i = 0; i < ef->var_names.n; i++) {
			menv_buf_adds(out, "  ");
			if ((rc = menv_yaml_write_key(out, ef->var_names.v[i], 2, err)))
				return menv_error_prefix(err, "cannot write the environment file's "
				                              "variable name");
			if ((rc = line(out, " ", i < ef->var_values.n ? ef->var_values.v[i] : "",
			               "variable value", err)))
				return rc;
		}
	}
	if (ef->prefix && (rc = line(out, "prefix: ", ef->prefix, "prefix", err)))
		return rc;
	return 0;
}
