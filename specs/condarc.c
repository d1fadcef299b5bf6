/*
 * condarc.c - what `menv config` reads and writes (conda/cli/main_config.py): the settings
 * menv knows with their kind and description, their values as JSON, conda's text formats
 * (--show's format_dict, --get's print_config_item, --describe), and one rc file edited as
 * conda edits it (--set, --add/--prepend/--append, --remove, --remove-key), then written
 * back with its other keys in their order. libyaml keeps no comments, so only the comment
 * lines at the top of the file survive a write (conda's ruamel keeps all).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "specs.h"

#define P MENV_PARAM_PRIMITIVE
#define S MENV_PARAM_SEQUENCE
#define M MENV_PARAM_MAP
/* sorted by name */
static const struct menv_param params[] = {
        {"add_pip_as_python_dependency", P, "bool",
         "Add pip, wheel, and setuptools as dependencies of python. This ensures pip, wheel, "
         "and setuptools will always be installed any time python is installed."},
        {"aggressive_update_packages", S, "str",
         "A list of packages that, if installed, are always updated to the latest possible "
         "version."},
        {"allow_softlinks", P, "bool",
         "When allow_softlinks is True, conda uses hard-links when possible, and soft-links "
         "(symlinks) when hard-links are not possible, such as when installing on a "
         "different filesystem than the one that the package cache is on."},
        {"always_copy", P, "bool",
         "Register a preference that files be copied into a prefix during install rather "
         "than hard-linked."},
        {"always_softlink", P, "bool",
         "Register a preference that files be soft-linked (symlinked) into a prefix during "
         "install rather than hard-linked."},
        {"channel_alias", P, "str", "The prepended url location to associate with channel names."},
        {"channel_priority", P, "str",
         "Accepts values of 'strict', 'flexible', and 'disabled'. menv's default is "
         "'strict' (micromamba's)."},
        {"channels", S, "str", "The list of conda channels to include for relevant operations."},
        {"client_ssl_cert", P, "str",
         "A path to a single file containing a private key and certificate (e.g. .pem "
         "file)."},
        {"client_ssl_cert_key", P, "str",
         "Used in conjunction with client_ssl_cert for a matching key file."},
        {"custom_channels", M, "str",
         "A map of key-value pairs where the key is a channel name and the value is a "
         "channel location."},
        {"default_channels", S, "str",
         "The list of channel names and/or urls used for the 'defaults' multichannel."},
        {"download_threads", P, "int",
         "Threads to use when downloading packages (1 to 64; alias fetch_threads)."},
        {"envs_dirs", S, "str",
         "The list of directories to search for named environments (menv creates them in "
         "the first)."},
        {"local_repodata_ttl", P, "bool, int",
         "For a value of False or 0, always fetch remote repodata (HTTP 304 responses "
         "respected). For a value of True or 1, respect the HTTP Cache-Control max-age "
         "header. Any other positive integer values is the number of seconds to locally "
         "cache repodata before checking the remote server for an update."},
        {"migrated_channel_aliases", S, "str", "A list of previously-used channel_alias values."},
        {"migrated_custom_channels", M, "str",
         "A map of key-value pairs where the key is a channel name and the value is the "
         "previous location of the channel."},
        {"offline", P, "bool",
         "Restrict access to the network: only the repodata cache and file:// channels."},
        {"pinned_packages", S, "str",
         "A list of package specs to pin for every environment resolution."},
        {"pkgs_dirs", S, "str",
         "The list of directories where locally-available packages are linked from at "
         "install time (menv uses the first)."},
        {"proxy_servers", M, "str", "A mapping to enable proxy settings (keys http and https)."},
        {"remote_backoff_factor", P, "float",
         "The factor determines the time HTTP connection should wait for attempt."},
        {"remote_connect_timeout_secs", P, "float",
         "The number seconds conda will wait for your client to establish a connection to "
         "a remote url resource."},
        {"remote_max_retries", P, "int",
         "The maximum number of retries each HTTP connection should attempt."},
        {"remote_read_timeout_secs", P, "float",
         "Once conda has connected to a remote resource and sent an HTTP request, the read "
         "timeout is the number of seconds conda will wait for the server to send a "
         "response."},
        {"repodata_max_bytes", P, "int",
         "The largest repodata (decompressed) menv accepts, in bytes."},
        {"repodata_use_shards", P, "bool",
         "Use sharded repodata (CEP-16) where a channel offers it."},
        {"repodata_use_zst", P, "bool", "Try repodata.json.zst before repodata.json."},
        {"root_prefix", P, "str", "menv's root prefix: the base environment, envs/ and pkgs/."},
        {"smoke_check", P, "bool",
         "Run the ops/ smoke check after creating or changing an environment that holds a "
         "CUDA compiler."},
        {"ssl_verify", P, "bool, str",
         "Conda verifies SSL certificates for HTTPS requests, just like a web browser. "
         "Set to False to disable, or to the path of a CA bundle file or directory."},
        {"update_modifier", P, "str",
         "update_specs, freeze_installed, update_deps, update_all or "
         "specs_satisfied_skip_solve."},
};
#undef P
#undef S
#undef M

const struct menv_param *menv_config_params(size_t *n)
{
	*n = sizeof(params) / sizeof(*params);
	return params;
}

const struct menv_param *menv_config_param(const char *name)
{
	for (size_t i = 0; i < sizeof(params) / sizeof(*params); i++)
		if (!strcmp(params[i].name, name))
			return &params[i];
	return NULL;
}

static json_t *strvec(const struct menv_strvec *v)
{
	json_t *a = json_array();
	for (size_t i = 0; i < v->n; i++)
		json_array_append_new(a, json_string(v->v[i]));
	return a;
}

static json_t *strmap(const struct menv_strvec *k, const struct menv_strvec *v)
{
	json_t *o = json_object();
	for (size_t i = 0; i < k->n && i < v->n; i++)
		json_object_set_new(o, k->v[i], json_string(v->v[i]));
	return o;
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *menv_config_json(const struct menv_config *cfg)
{
	static const char *const prio[] = {[MENV_PRIORITY_STRICT] = "strict",
	                                   [MENV_PRIORITY_FLEXIBLE] = "flexible",
	                                   [MENV_PRIORITY_DISABLED] = "disabled"};
	static const char *const mods[] = {
	        [MENV_UPDATE_SPECS] = "update_specs",
	        [MENV_UPDATE_FREEZE_INSTALLED] = "freeze_installed",
	        [MENV_UPDATE_DEPS] = "update_deps",
	        [MENV_UPDATE_ALL] = "update_all",
	        [MENV_UPDATE_SATISFIED_SKIP] = "specs_satisfied_skip_solve",
	};
	json_t *j = json_object(), *proxy = json_object();
	char *alias = menv_url_redact(cfg->channel_alias);

	if (cfg->proxy_http)
		json_object_set_new(proxy, "http", json_string(cfg->proxy_http));
	if (cfg->proxy_https)
		json_object_set_new(proxy, "https", json_string(cfg->proxy_https));
	menv_proxy_json_redact(proxy); /* "user:pw@host:port" has no scheme to find it by */
	json_object_set_new(j, "add_pip_as_python_dependency",
	                    json_boolean(cfg->add_pip_as_python_dependency));
	json_object_set_new(j, "aggressive_update_packages",
	                    strvec(&cfg->aggressive_update_packages));
	json_object_set_new(j, "allow_softlinks", json_boolean(cfg->allow_softlinks));
	json_object_set_new(j, "always_copy", json_boolean(cfg->always_copy));
	json_object_set_new(j, "always_softlink", json_boolean(cfg->always_softlink));
	json_object_set_new(j, "channel_alias", json_string(alias));
	json_object_set_new(j, "channel_priority", json_string(prio[cfg->channel_priority]));
	json_object_set_new(j, "channels", strvec(&cfg->channels));
	json_object_set_new(j, "client_ssl_cert", str_or_null(cfg->client_ssl_cert));
	json_object_set_new(j, "client_ssl_cert_key", str_or_null(cfg->client_ssl_cert_key));
	json_object_set_new(j, "custom_channels",
	                    strmap(&cfg->custom_channel_names, &cfg->custom_channel_urls));
	json_object_set_new(j, "default_channels", strvec(&cfg->default_channels));
	json_object_set_new(j, "download_threads", json_integer(cfg->download_threads));
	json_object_set_new(j, "envs_dirs", strvec(&cfg->envs_dirs));
	json_object_set_new(j, "local_repodata_ttl", json_integer(cfg->local_repodata_ttl));
	json_object_set_new(j, "migrated_channel_aliases", strvec(&cfg->migrated_channel_aliases));
	json_object_set_new(j, "migrated_custom_channels",
	                    strmap(&cfg->migrated_custom_names, &cfg->migrated_custom_urls));
	json_object_set_new(j, "offline", json_boolean(cfg->offline));
	json_object_set_new(j, "pinned_packages", strvec(&cfg->pinned_packages));
	json_object_set_new(j, "pkgs_dirs", strvec(&cfg->pkgs_dirs));
	json_object_set_new(j, "proxy_servers", proxy);
	json_object_set_new(j, "remote_backoff_factor", json_real(cfg->remote_backoff_factor));
	json_object_set_new(j, "remote_connect_timeout_secs",
	                    json_real(cfg->remote_connect_timeout_secs));
	json_object_set_new(j, "remote_max_retries", json_integer(cfg->remote_max_retries));
	json_object_set_new(j, "remote_read_timeout_secs",
	                    json_real(cfg->remote_read_timeout_secs));
	json_object_set_new(j, "repodata_max_bytes", json_integer(cfg->repodata_max_bytes));
	json_object_set_new(j, "repodata_use_shards", json_boolean(cfg->repodata_use_shards));
	json_object_set_new(j, "repodata_use_zst", json_boolean(cfg->repodata_use_zst));
	json_object_set_new(j, "root_prefix", json_string(cfg->root_prefix));
	json_object_set_new(j, "smoke_check", json_boolean(cfg->smoke_check));
	json_object_set_new(j, "ssl_verify",
	                    cfg->ssl_ca_bundle ? json_string(cfg->ssl_ca_bundle)
	                                       : json_boolean(cfg->ssl_verify));
	json_object_set_new(j, "update_modifier", json_string(mods[cfg->update_modifier]));
	free(alias);
	return j;
}

/* A scalar as Python's str() prints it (conda's output): True/False/None, floats with their
 * shortest repr. */
static void py_str(struct menv_buf *o, json_t *v)
{
	if (json_is_string(v)) {
		menv_buf_adds(o, json_string_value(v));
	} else if (json_is_true(v)) {
		menv_buf_adds(o, "True");
	} else if (json_is_false(v)) {
		menv_buf_adds(o, "False");
	} else if (json_is_integer(v)) {
		menv_buf_addf(o, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	} else if (json_is_real(v)) {
		char s[40];
		double d = json_real_value(v);
		snprintf(s, sizeof(s), "%.15g", d);
		if (strtod(s, NULL) != d)
			snprintf(s, sizeof(s), "%.17g", d);
		menv_buf_adds(o, s);
		if (!strpbrk(s, ".en"))
			menv_buf_adds(o, ".0");
	} else {
		menv_buf_adds(o, "None");
	}
}

/* Python's repr() of a string: single quotes unless it holds one and no double quote. */
static void py_repr(struct menv_buf *o, const char *s)
{
	char q = strchr(s, '\'') && !strchr(s, '"') ? '"' : '\'';
	menv_buf_addch(o, q);
	for (const char *p = s; *p; p++) {
		if (*p == q || *p == '\\')
			menv_buf_addch(o, '\\');
		menv_buf_addch(o, *p);
	}
	menv_buf_addch(o, q);
}

void menv_config_format_show(json_t *values, struct menv_buf *out)
{
	const char *k;
	json_t *v;
	json_object_foreach(values, k, v)
	{
		if (json_is_object(v)) {
			if (!json_object_size(v)) {
				menv_buf_addf(out, "%s: {}\n", k);
				continue;
			}
			menv_buf_addf(out, "%s:\n", k);
			const char *mk;
			json_t *mv;
			json_object_foreach(v, mk, mv)
			{
				menv_buf_addf(out, "  %s: ", mk);
				py_str(out, mv);
				menv_buf_addch(out, '\n');
			}
		} else if (json_is_array(v)) {
			if (!json_array_size(v)) {
				menv_buf_addf(out, "%s: []\n", k);
				continue;
			}
			menv_buf_addf(out, "%s:\n", k);
			size_t i;
			json_t *x;
			json_array_foreach(v, i, x)
			{
				menv_buf_adds(out, "  - ");
				py_str(out, x);
				menv_buf_addch(out, '\n');
			}
		} else {
			menv_buf_addf(out, "%s: ", k);
			py_str(out, v);
			menv_buf_addch(out, '\n');
		}
	}
}

void menv_config_format_get(const char *key, json_t *v, struct menv_buf *out)
{
	if (json_is_object(v)) {
		const char *k;
		json_t *x;
		json_object_foreach(v, k, x)
		{
			char *sub = menv_xasprintf("%s.%s", key, k);
			menv_config_format_get(sub, x, out);
			free(sub);
		}
	} else if (json_is_array(v)) {
		/* reversed: --add prepends, so these lines in order make the same list */
		size_t n = json_array_size(v);
		for (size_t q = 0; q < n; q++) {
			json_t *x = json_array_get(v, n - 1 - q);
			char *s = NULL;
			if (!json_is_string(x)) {
				struct menv_buf t = MENV_BUF_INIT;
				py_str(&t, x);
				s = menv_buf_detach(&t);
			}
			menv_buf_addf(out, "--add %s ", key);
			py_repr(out, s ? s : json_string_value(x));
			free(s);
			if (!strcmp(key, "channels") && (q == 0 || q == n - 1))
				menv_buf_adds(out, q == 0 ? "   # lowest priority"
				                          : "   # highest priority");
			menv_buf_addch(out, '\n');
		}
	} else if (!json_is_null(v)) {
		menv_buf_addf(out, "--set %s ", key);
		py_str(out, v);
		menv_buf_addch(out, '\n');
	}
}

/* Appends the words of `s` wrapped at `width` columns, each line led by `lead`. */
static void wrap(struct menv_buf *out, const char *lead, const char *s, size_t width)
{
	while (*s) {
		size_t n = strlen(s);
		if (n > width) {
			n = width;
			while (n && s[n] != ' ')
				n--;
			if (!n)
				n = strcspn(s, " ");
		}
		menv_buf_addf(out, "%s%.*s\n", lead, (int)n, s);
		s += n;
		while (*s == ' ')
			s++;
	}
}

void menv_config_describe(const struct menv_param *p, json_t *dflt, struct menv_buf *out)
{
	static const char *const kinds[] = {[MENV_PARAM_PRIMITIVE] = "",
	                                    [MENV_PARAM_SEQUENCE] = "sequence: ",
	                                    [MENV_PARAM_MAP] = "map: "};
	struct menv_buf y = MENV_BUF_INIT;
	json_t *one = json_object();

	menv_buf_addf(out, "# # %s (%s%s)\n", p->name, kinds[p->kind], p->type);
	wrap(out, "# #   ", p->desc, 70);
	menv_buf_adds(out, "# # \n");
	json_object_set(one, p->name, dflt ? dflt : json_null());
	/* the defaults are jansson's strings, so valid UTF-8: nothing to refuse */
	(void)menv_yaml_write(&y, one, 0, NULL, NULL);
	for (const char *l = y.buf; *l;) {
		size_t n = strcspn(l, "\n");
		menv_buf_addf(out, "# %.*s\n", (int)n, l);
		l += n + (l[n] == '\n');
	}
	menv_buf_adds(out, "\n");
	json_decref(one);
	menv_buf_release(&y);
}

/* ---------------------------------------------------------------------------------------- */
/* One rc file                                                                               */

char *menv_config_user_rc(void)
{
	const char *m = getenv("MENVRC"), *h;
	if (m && *m)
		return menv_xstrdup(m);
	if (menv_home(&h, NULL))
		return NULL; /* never "/.condarc" or "./.condarc" */
	return menv_xasprintf("%s/.condarc", h);
}

int menv_condarc_load(const char *path, struct menv_condarc *rc, struct menv_error *err)
{
	struct menv_buf b = MENV_BUF_INIT;
	int r = 0;

	memset(rc, 0, sizeof(*rc));
	rc->path = menv_xstrdup(path);
	rc->header = menv_xstrdup("");
	if (access(path, F_OK) != 0) {
		rc->doc = json_object();
		return 0;
	}
	r = menv_buf_read_file(&b, path, err);
	if (r)
		goto out;
	/* the comment lines at the top survive a write */
	size_t h = 0;
	while (h < b.len && (b.buf[h] == '#' || b.buf[h] == '\n')) {
		const char *nl = memchr(b.buf + h, '\n', b.len - h);
		h = nl ? (size_t)(nl - b.buf) + 1 : b.len;
	}
	free(rc->header);
	rc->header = menv_xstrndup(b.buf, h);
	if (strspn(b.buf, " \t\r\n") == b.len || h == b.len) {
		rc->doc = json_object();
		goto out;
	}
	r = menv_yaml_to_json_styled(b.buf, b.len, path, &rc->doc, &rc->styles, err);
	if (!r && json_is_null(rc->doc)) {
		json_decref(rc->doc);
		rc->doc = json_object();
	}
	if (!r && !json_is_object(rc->doc))
		r = menv_error_set(err, MENV_EPARSE, "%s: expected a mapping of settings", path);
out:
	menv_buf_release(&b);
	if (r)
		menv_condarc_release(rc);
	return r;
}

int menv_condarc_load_locked(const char *path, struct menv_condarc *rc, struct menv_error *err)
{
	int fd, r;

	memset(rc, 0, sizeof(*rc));
	r = menv_file_lock(path, &fd, err);
	if (r)
		return r;
	r = menv_condarc_load(path, rc, err);
	if (r)
		menv_file_unlock(fd);
	else
		rc->lock = fd + 1;
	return r;
}

void menv_condarc_release(struct menv_condarc *rc)
{
	if (rc->lock)
		menv_file_unlock(rc->lock - 1);
	free(rc->path);
	free(rc->header);
	json_decref(rc->doc);
	menv_yaml_styles_free(rc->styles);
	memset(rc, 0, sizeof(*rc));
}

/* "key.sub" into the parameter and the sub-key (NULL); errors when `want` does not fit. */
static const struct menv_param *lookup(const char *key, char **name, const char **sub,
                                       struct menv_error *err)
{
	const char *dot = strchr(key, '.');
	*name = dot ? menv_xstrndup(key, (size_t)(dot - key)) : menv_xstrdup(key);
	*sub = dot ? dot + 1 : NULL;
	const struct menv_param *p = menv_config_param(*name);
	if (!p)
		menv_error_set(err, MENV_EUSAGE,
		               "unknown setting '%s' (menv config --describe lists them)", *name);
	return p;
}

int menv_condarc_set(struct menv_condarc *rc, const char *key, const char *value,
                     struct menv_error *err)
{
	char *name;
	const char *sub;
	const struct menv_param *p = lookup(key, &name, &sub, err);
	int r = 0;

	if (!p) {
		r = err->code;
	} else if ((r = menv_config_check_url(name, sub, value, err)) != 0) {
		/* refused */
	} else if (p->kind == MENV_PARAM_MAP && sub) {
		json_t *m = json_object_get(rc->doc, name);
		if (!json_is_object(m)) {
			m = json_object();
			json_object_set_new(rc->doc, name, m);
		}
		json_object_set_new(m, sub, json_string(value));
	} else if (p->kind != MENV_PARAM_PRIMITIVE || sub) {
		r = menv_error_set(err, MENV_EUSAGE, "'%s' is not a single-value setting", key);
	} else if ((r = menv_config_check_value(name, value, err)) == 0) {
		/* typed as conda's typify: booleans and integers as themselves */
		json_t *v;
		char *end;
		long l = strtol(value, &end, 10);
		if (!strcasecmp(value, "true") || !strcasecmp(value, "yes"))
			v = json_true();
		else if (!strcasecmp(value, "false") || !strcasecmp(value, "no"))
			v = json_false();
		else if (*value && !*end && strstr(p->type, "int"))
			v = json_integer(l);
		else if (*value && strstr(p->type, "float") && strtod(value, &end) && !*end)
			v = json_real(strtod(value, NULL));
		else
			v = json_string(value);
		json_object_set_new(rc->doc, name, v);
	}
	free(name);
	return r;
}

/* The list `key` names in the file (made, and `channels` starting as [defaults] as conda's,
 * when missing). */
static json_t *rc_list(struct menv_condarc *rc, const struct menv_param *p, const char *name,
                       const char *sub, const char *key, struct menv_error *err)
{
	json_t *parent = rc->doc;
	const char *k = name;
	if (p->kind == MENV_PARAM_MAP) {
		if (!sub) {
			menv_error_set(err, MENV_EUSAGE,
			               "'%s' is a mapping: name an entry (%s.KEY)", name, name);
			return NULL;
		}
		parent = json_object_get(rc->doc, name);
		if (!json_is_object(parent)) {
			parent = json_object();
			json_object_set_new(rc->doc, name, parent);
		}
		k = sub;
	} else if (p->kind != MENV_PARAM_SEQUENCE) {
		menv_error_set(err, MENV_EUSAGE, "'%s' is not a list setting", key);
		return NULL;
	}
	json_t *l = json_object_get(parent, k);
	if (!l) {
		l = !strcmp(key, "channels") ? json_pack("[s]", "defaults") : json_array();
		json_object_set_new(parent, k, l);
	}
	if (!json_is_array(l)) {
		menv_error_set(err, MENV_EPARSE, "%s: key '%s' should be a list", rc->path, key);
		return NULL;
	}
	return l;
}

int menv_condarc_add(struct menv_condarc *rc, const char *key, const char *value, bool prepend,
                     struct menv_strvec *warnings, struct menv_error *err)
{
	char *name;
	const char *sub;
	const struct menv_param *p = lookup(key, &name, &sub, err);
	/* a path list's entry as the reader would take it (no '~nouser/x', no relative path) */
	int r = p && !sub && p->kind == MENV_PARAM_SEQUENCE
	                ? menv_config_check_value(name, value, err)
	                : 0;
	if (p && r >= 0)
		r = menv_config_check_url(name, sub, value, err);
	json_t *l = p && r >= 0 ? rc_list(rc, p, name, sub, key, err) : NULL;
	free(name);
	if (!l)
		return err->code;
	for (size_t i = 0; i < json_array_size(l); i++) {
		const char *s = json_string_value(json_array_get(l, i));
		if (s && !strcmp(s, value)) {
			if (warnings)
				menv_strvec_push_owned(warnings,
				                       menv_xasprintf("'%s' already in '%s' list, "
				                                      "moving to the %s",
				                                      value, key,
				                                      prepend ? "top" : "bottom"));
			json_array_remove(l, i--);
		}
	}
	if (prepend)
		json_array_insert_new(l, 0, json_string(value));
	else
		json_array_append_new(l, json_string(value));
	return 0;
}

int menv_condarc_remove(struct menv_condarc *rc, const char *key, const char *value,
                        struct menv_error *err)
{
	char *name;
	const char *sub;
	const struct menv_param *p = lookup(key, &name, &sub, err);
	int r = 0;
	if (!p) {
		free(name);
		return err->code;
	}
	json_t *parent = p->kind == MENV_PARAM_MAP ? json_object_get(rc->doc, name) : rc->doc;
	const char *k = p->kind == MENV_PARAM_MAP ? sub : name;
	if (!k || !json_is_object(parent) ||
	    (!json_object_get(parent, k) && strcmp(key, "channels"))) {
		r = menv_error_set(err, MENV_ENOTFOUND, "key '%s' is not in the config file '%s'",
		                   key, rc->path);
		goto out;
	}
	json_t *l = rc_list(rc, p, name, sub, key, err);
	if (!l) {
		r = err->code;
		goto out;
	}
	bool found = false;
	for (size_t i = 0; i < json_array_size(l); i++) {
		const char *s = json_string_value(json_array_get(l, i));
		if (s && !strcmp(s, value)) {
			json_array_remove(l, i--);
			found = true;
		}
	}
	if (!found)
		r = menv_error_set(err, MENV_ENOTFOUND,
		                   "'%s' is not in the '%s' key of the config file '%s'", value,
		                   key, rc->path);
out:
	free(name);
	return r;
}

int menv_condarc_remove_key(struct menv_condarc *rc, const char *key, struct menv_error *err)
{
	const char *dot = strchr(key, '.');
	json_t *parent = rc->doc;
	const char *k = key;
	char *name = NULL;
	if (dot) {
		name = menv_xstrndup(key, (size_t)(dot - key));
		parent = json_object_get(rc->doc, name);
		k = dot + 1;
	}
	int r = 0;
	if (!json_is_object(parent) || json_object_del(parent, k))
		r = menv_error_set(err, MENV_ENOTFOUND, "key '%s' is not in the config file '%s'",
		                   key, rc->path);
	free(name);
	return r;
}

json_t *menv_condarc_get(const struct menv_condarc *rc, const char *key)
{
	json_t *v = rc->doc;
	char *copy = menv_xstrdup(key), *save = NULL;
	for (char *part = strtok_r(copy, ".", &save); part && v; part = strtok_r(NULL, ".", &save))
		v = json_is_object(v) ? json_object_get(v, part) : NULL;
	free(copy);
	return v;
}

/* rc's text as menv_condarc_save writes it, into b. Errors: MENV_EPARSE. */
static int render(const struct menv_condarc *rc, struct menv_buf *b, struct menv_error *err)
{
	int r = 0;
	menv_buf_adds(b, rc->header);
	/* values read from the file are written as they were read (30.50 stays a float) */
	if (json_object_size(rc->doc) && (r = menv_yaml_write(b, rc->doc, 0, rc->styles, err)))
		menv_error_prefix(err, "cannot write '%s'", rc->path);
	return r;
}

int menv_condarc_save(const struct menv_condarc *rc, struct menv_error *err)
{
	struct menv_buf b = MENV_BUF_INIT;
	int r = render(rc, &b, err);
	if (r) {
		menv_buf_release(&b);
		return r;
	}
	/* as conda's open(path, "w"): through a link (a dotfiles checkout), keeping the file's
	 * mode (a .condarc holding tokens or proxy passwords stays 0600) */
	char *real = realpath(rc->path, NULL);
	struct stat sb;
	const char *target = real ? real : rc->path;
	bool exists = stat(target, &sb) == 0;
	mode_t mode = exists ? sb.st_mode & 07777 : 0644;
	/* a device, a pipe or a folder is never replaced (--file /dev/null renamed a file over
	 * the device) */
	if (exists && !S_ISREG(sb.st_mode))
		r = menv_error_set(err, MENV_EIO, "'%s' is not a regular file: not written",
		                   rc->path);
	else
		r = menv_write_file_atomic_mode(target, b.buf, b.len, mode, err);
	free(real);
	menv_buf_release(&b);
	return r;
}

/* ---- conda config's views: --show, --show-sources, --describe */

/* Only the names menv knows; the first unknown one is the error. */
static int check_keys(const struct menv_strvec *keys, struct menv_error *err)
{
	for (size_t i = 0; i < keys->n; i++) {
		char *n = menv_xstrndup(keys->v[i], strcspn(keys->v[i], "."));
		bool ok = menv_config_param(n) != NULL;
		free(n);
		if (!ok)
			return menv_error_set(err, MENV_EUSAGE,
			                      "invalid configuration parameter '%s'", keys->v[i]);
	}
	return 0;
}

static json_t *pick(json_t *all, const struct menv_strvec *keys)
{
	if (!keys->n)
		return json_incref(all);
	json_t *j = json_object();
	for (size_t i = 0; i < keys->n; i++)
		json_object_set(j, keys->v[i], json_object_get(all, keys->v[i]));
	return j;
}

static void env_source(json_t *out)
{
	size_t n;
	const struct menv_param *p = menv_config_params(&n);
	for (size_t i = 0; i < n; i++) {
		for (int m = 0; m < 2; m++) {
			char var[80];
			int k = snprintf(var, sizeof(var), "%s", m ? "CONDA_" : "MENV_");
			for (const char *c = p[i].name; *c && k < (int)sizeof(var) - 1; c++)
				var[k++] = (char)toupper((unsigned char)*c);
			var[k] = '\0';
			const char *v = getenv(var);
			if (v && !json_object_get(out, p[i].name))
				json_object_set_new(out, p[i].name, json_string(v));
		}
	}
}

int menv_config_view(enum menv_config_view view, const struct menv_strvec *keys, json_t **out,
                     struct menv_buf *o, struct menv_error *err)
{
	struct menv_config cfg = {0};
	json_t *j = NULL;
	int rc = check_keys(keys, err);

	*out = NULL;
	if (!rc && view != MENV_CONFIG_DESCRIBE)
		rc = menv_config_load(&cfg, err);
	else if (!rc)
		menv_config_defaults(&cfg);
	if (rc)
		goto out;
	json_t *all = menv_config_json(&cfg);
	if (view == MENV_CONFIG_SHOW) {
		j = pick(all, keys);
		if (o)
			menv_config_format_show(j, o);
	} else if (view == MENV_CONFIG_SOURCES) {
		j = json_object();
		for (size_t i = 0; i < cfg.files.n && !rc; i++) {
			struct menv_condarc r;
			rc = menv_condarc_load(cfg.files.v[i], &r, err);
			if (rc)
				break;
			menv_proxy_json_redact(json_object_get(r.doc, "proxy_servers"));
			json_object_set(j, cfg.files.v[i], r.doc);
			menv_condarc_release(&r);
		}
		json_t *ev = json_object();
		env_source(ev);
		if (json_object_size(ev))
			json_object_set(j, "envvars", ev);
		json_decref(ev);
		const char *src;
		json_t *v;
		if (o)
			json_object_foreach(j, src, v)
			{
				menv_buf_addf(o, "==> %s <==\n", src);
				menv_config_format_show(v, o);
				menv_buf_adds(o, "\n");
			}
	} else {
		size_t n;
		const struct menv_param *p = menv_config_params(&n);
		j = json_array();
		for (size_t i = 0; i < n; i++) {
			if (keys->n && !menv_strvec_contains(keys, p[i].name))
				continue;
			json_t *d = json_object_get(all, p[i].name);
			json_array_append_new(
			        j, json_pack("{s:s, s:s, s:s, s:s, s:O}", "name", p[i].name,
			                     "parameter_type",
			                     p[i].kind == MENV_PARAM_PRIMITIVE  ? "primitive"
			                     : p[i].kind == MENV_PARAM_SEQUENCE ? "sequence"
			                                                        : "map",
			                     "element_types", p[i].type, "description", p[i].desc,
			                     "default_value", d));
			if (o)
				menv_config_describe(&p[i], d, o);
		}
	}
	json_decref(all);
out:
	if (rc) {
		json_decref(j);
		j = NULL;
	}
	if (j) /* channels with user:password@ or /t/TOKEN/ are shown without them */
		menv_json_redact(j);
	if (o)
		menv_buf_redact(o);
	*out = j;
	menv_config_release(&cfg);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* --get and the edits of one rc file                                                        */

char *menv_config_rc_path(const char *file, bool system, bool env, struct menv_error *err)
{
	const char *active = getenv("CONDA_PREFIX"), *h;
	char *path = file                       ? menv_xstrdup(file)
	             : system                   ? menv_config_system_rc()
	             : env && active && *active ? menv_xasprintf("%s/.condarc", active)
	                                        : menv_config_user_rc();
	if (!path) { /* the user's file is under HOME, which is unusable */
		menv_home(&h, err);
		menv_error_prefix(err, "no .condarc to use (set MENVRC or use --file FILE)");
	}
	return path;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int menv_config_get_edit(const char *path, const struct menv_strvec *get,
                         const struct menv_strvec edits[MENV_CONFIG_NEDITS], json_t *got,
                         struct menv_buf *text, struct menv_strvec *warnings,
                         struct menv_error *err)
{
	struct menv_condarc rc = {0};
	struct menv_strvec all = MENV_STRVEC_INIT;
	bool edit = false;
	int r;

	for (int k = 0; k < MENV_CONFIG_NEDITS; k++)
		edit |= edits[k].n > 0;
	/* an edit holds the file's lock from reading it to replacing it */
	r = edit ? menv_condarc_load_locked(path, &rc, err) : menv_condarc_load(path, &rc, err);
	/* an edit other than --remove-key (which may take a bad value out) keeps a file that
	 * menv would refuse refused: its values are checked as menv_config_load checks them
	 * (FILE:LINE:COL), and the file is left as it is. --remove and --set (with
	 * --remove-key) may take the refused values out (a channels entry with a space in its
	 * URL, by name; `ssl_verify: ca.pem` by --set ssl_verify false, as conda's --set
	 * replaces it): the edited text is checked again, and the file's own error stands
	 * unless it passes. --add, --append and --prepend only add: refused at once. */
	bool only_remove_key = true, only_removes = true;
	for (int k = 0; k < MENV_CONFIG_NEDITS; k++) {
		only_remove_key &= k == MENV_CONFIG_REMOVE_KEY || !edits[k].n;
		only_removes &= k == MENV_CONFIG_REMOVE_KEY || k == MENV_CONFIG_REMOVE ||
		                k == MENV_CONFIG_SET || !edits[k].n;
	}
	struct menv_error refused = {0};
	if (!r && edit && !only_remove_key && access(path, F_OK) == 0) {
		struct menv_config chk;
		menv_config_defaults(&chk);
		r = menv_config_apply_file(&chk, path, err);
		menv_config_release(&chk);
		if (r && only_removes && err) { /* checked again after the edits */
			refused = *err;
			r = 0;
		}
	}
	if (!r && get && !get->n) {
		const char *k;
		json_t *v;
		json_object_foreach(rc.doc, k, v) menv_strvec_push(&all, k);
		qsort(all.v, all.n, sizeof(*all.v), by_name);
		get = &all;
	}
	for (size_t i = 0; !r && get && i < get->n; i++) {
		char *n = menv_xstrndup(get->v[i], strcspn(get->v[i], "."));
		json_t *v = menv_condarc_get(&rc, get->v[i]);
		if (!menv_config_param(n)) {
			menv_strvec_push_owned(warnings, menv_xasprintf("unknown key %s", n));
		} else if (v) { /* shown without credentials or tokens */
			json_t *safe = json_deep_copy(v);
			if (!strcmp(n, "proxy_servers"))
				menv_proxy_json_redact(safe);
			menv_json_redact(safe);
			json_object_set_new(got, get->v[i], safe);
			if (text)
				menv_config_format_get(get->v[i], safe, text);
		}
		free(n);
	}
	for (int k = 0; !r && k < MENV_CONFIG_NEDITS; k++) {
		size_t nv = k == MENV_CONFIG_REMOVE_KEY ? 1 : 2;
		for (size_t i = 0; !r && i + nv <= edits[k].n; i += nv) {
			const char *key = edits[k].v[i], *val = nv > 1 ? edits[k].v[i + 1] : NULL;
			if (k == MENV_CONFIG_PREPEND || k == MENV_CONFIG_APPEND)
				r = menv_condarc_add(&rc, key, val, k == MENV_CONFIG_PREPEND,
				                     warnings, err);
			else if (k == MENV_CONFIG_SET)
				r = menv_condarc_set(&rc, key, val, err);
			else if (k == MENV_CONFIG_REMOVE)
				r = menv_condarc_remove(&rc, key, val, err);
			else
				r = menv_condarc_remove_key(&rc, key, err);
		}
	}
	if (r && refused.code) { /* an edit that failed: the file's own refusal comes first */
		*err = refused;
		r = refused.code;
	} else if (!r && edit && refused.code) {
		struct menv_buf b = MENV_BUF_INIT;
		struct menv_config chk;
		menv_config_defaults(&chk);
		r = render(&rc, &b, err);
		if (!r && menv_config_apply_text(&chk, path, b.buf ? b.buf : "", b.len, err)) {
			*err = refused;
			r = refused.code;
		}
		menv_config_release(&chk);
		menv_buf_release(&b);
	}
	if (!r && edit)
		r = menv_condarc_save(&rc, err);
	for (size_t i = 0; i < warnings->n; i++) { /* a warning may quote a value */
		char *safe = menv_text_redact(warnings->v[i]);
		free(warnings->v[i]);
		warnings->v[i] = safe;
	}
	menv_condarc_release(&rc);
	menv_strvec_clear(&all);
	return r;
}

json_t *menv_config_get_json(const char *path, json_t *got, const struct menv_strvec *warnings)
{
	json_t *w = json_array();
	for (size_t i = 0; i < warnings->n; i++)
		json_array_append_new(w, json_string(warnings->v[i]));
	return json_pack("{s:s, s:b, s:o, s:O}", "rc_path", path, "success", 1, "warnings", w,
	                 "get", got);
}
