/*
 * condarc_types.c - a .condarc value is checked against its key's type when it is read, as
 * conda's typed parameters do: `channel_alias: 42` is an int where a str belongs, refused
 * with FILE:LINE:COL instead of being used as a host name. Plain scalars are typed by YAML
 * 1.2's core schema (null, true/false, integers, floats); quoted ones are strings.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The core schema type of a scalar node: "null", "bool", "int", "float" or "str". */
static const char *scalar_type(const yaml_node_t *n)
{
	const char *v = (const char *)n->data.scalar.value;
	const char *p = v;
	size_t digits = 0;

	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return "str";
	if (!*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
	    !strcmp(v, "NULL"))
		return "null";
	if (!strcmp(v, "true") || !strcmp(v, "True") || !strcmp(v, "TRUE") || !strcmp(v, "false") ||
	    !strcmp(v, "False") || !strcmp(v, "FALSE"))
		return "bool";
	if ((!strncmp(v, "0x", 2) && v[2] &&
	     strspn(v + 2, "0123456789abcdefABCDEF") == strlen(v + 2)) ||
	    (!strncmp(v, "0o", 2) && v[2] && strspn(v + 2, "01234567") == strlen(v + 2)))
		return "int";
	if (*p == '-' || *p == '+')
		p++;
	if (!strcmp(p, ".inf") || !strcmp(p, ".Inf") || !strcmp(p, ".INF") || !strcmp(v, ".nan") ||
	    !strcmp(v, ".NaN") || !strcmp(v, ".NAN"))
		return "float";
	digits = strspn(p, "0123456789");
	if (digits && !p[digits])
		return "int";
	p += digits;
	if (*p == '.') {
		size_t frac = strspn(p + 1, "0123456789");
		if (!digits && !frac)
			return "str";
		digits += frac;
		p += 1 + frac;
	}
	if (!digits)
		return "str";
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '-' || *p == '+')
			p++;
		size_t e = strspn(p, "0123456789");
		if (!e)
			return "str";
		p += e;
	}
	return *p ? "str" : "float";
}

/* Whether the comma-separated type list `types` ("bool, int") admits `t`. */
static bool admits(const char *types, const char *t)
{
	size_t n = strlen(t);
	for (const char *p = types; (p = strstr(p, t)) != NULL; p += n)
		if ((p == types || p[-1] == ' ' || p[-1] == ',') && (!p[n] || p[n] == ','))
			return true;
	return false;
}

/* What is wrong with `val` as a value of the channel setting `key` (entry `sub` of a map, or
 * NULL): a control character anywhere (it would reach URLs, history and plans), a space in a
 * URL (channel_alias, a custom channel's or a proxy's location, anything with "://"; a local
 * path of a channels list may hold one); NULL when nothing is, or key is no channel setting. */
static const char *url_flaw(const char *key, const char *val)
{
	static const char *const keys[] = {"channel_alias",
	                                   "channels",
	                                   "default_channels",
	                                   "custom_channels",
	                                   "custom_multichannels",
	                                   "migrated_channel_aliases",
	                                   "migrated_custom_channels",
	                                   "proxy_servers",
	                                   "allowlist_channels",
	                                   "denylist_channels"};
	bool known = false;
	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys) && !known; i++)
		known = !strcmp(key, keys[i]);
	if (!known || !val)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)val; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return "a control character";
	bool url = strstr(val, "://") || !strcmp(key, "channel_alias") ||
	           !strcmp(key, "custom_channels") || !strcmp(key, "migrated_custom_channels") ||
	           !strcmp(key, "proxy_servers") || !strcmp(key, "migrated_channel_aliases");
	if (url && strchr(val, ' '))
		return "a space";
	return NULL;
}

int menv_config_check_url(const char *key, const char *sub, const char *val, struct menv_error *err)
{
	const char *why = url_flaw(key, val);
	if (!why)
		return 0;
	return menv_error_set(err, MENV_EUSAGE,
	                      "invalid value for %s%s%s: '%s' holds %s (a URL "
	                      "holds none; write a space as %%20)",
	                      key, sub ? "." : "", sub ? sub : "", val, why);
}

/* The same for a scalar node of a file: PATH:LINE:COL (proxy_servers' values are curl's to
 * judge there, as before). */
static int node_url(const char *path, const char *key, const char *sub, const yaml_node_t *v,
                    struct menv_error *err)
{
	const char *val = (const char *)v->data.scalar.value;
	const char *why = strcmp(key, "proxy_servers") ? url_flaw(key, val) : NULL;
	if (!why)
		return 0;
	return menv_error_set(err, MENV_EPARSE,
	                      "%s:%zu:%zu: %s%s%s: '%s' holds %s (a URL holds "
	                      "none; write a space as %%20)",
	                      path, (size_t)v->start_mark.line + 1,
	                      (size_t)v->start_mark.column + 1, key, sub ? "." : "", sub ? sub : "",
	                      val, why);
}

bool menv_config_node_null(const yaml_node_t *v)
{
	return v->type == YAML_SCALAR_NODE && !strcmp(scalar_type(v), "null");
}

int menv_config_check_type(const char *path, const char *key, const yaml_node_t *v,
                           struct menv_error *err)
{
	const struct menv_param *p = menv_config_param(key);
	const char *t;

	if (!p || v->type != YAML_SCALAR_NODE)
		return 0;
	t = scalar_type(v);
	if (!strcmp(t, "str") && node_url(path, key, NULL, v, err))
		return err->code;
	if (!strcmp(t, "null") || admits(p->type, t))
		return 0;
	if (admits(p->type, "bool"))
		return 0; /* yes/no/1/0: the bool parser's to judge (conda's YAML 1.1 habits) */
	if (!strcmp(t, "str"))
		return 0; /* text for a number: the number parser names what it wants */
	if (!strcmp(t, "int") && admits(p->type, "float"))
		return 0; /* conda: an int is a fine float */
	if (!strcmp(t, "bool") && !strcmp(key, "channel_priority"))
		return 0; /* conda's legacy true/false (flexible/disabled) */
	return menv_error_set(
	        err, MENV_EPARSE, "%s:%zu:%zu: %s must be %s %s, not %s %s '%s'%s", path,
	        (size_t)v->start_mark.line + 1, (size_t)v->start_mark.column + 1, key,
	        strchr(p->type, ',') ? "one of"
	        : p->type[0] == 'i'  ? "an"
	                             : "a",
	        p->type, !strcmp(t, "int") ? "an" : "a", t, (const char *)v->data.scalar.value,
	        admits(p->type, "str") ? " (quote it to mean the text)" : "");
}

int menv_config_check_item(const char *path, const char *key, const yaml_node_t *v,
                           struct menv_error *err)
{
	const char *t = v->type == YAML_SCALAR_NODE     ? scalar_type(v)
	                : v->type == YAML_SEQUENCE_NODE ? "list"
	                : v->type == YAML_MAPPING_NODE  ? "mapping"
	                                                : "null";

	if (!strcmp(t, "str"))
		return node_url(path, key, NULL, v, err);
	if (v->type != YAML_SCALAR_NODE)
		return menv_error_set(err, MENV_EPARSE,
		                      "%s:%zu:%zu: %s must be a list of strings, not a %s in it",
		                      path, (size_t)v->start_mark.line + 1,
		                      (size_t)v->start_mark.column + 1, key, t);
	return menv_error_set(err, MENV_EPARSE,
	                      "%s:%zu:%zu: %s must be a list of strings, not %s %s '%s' in it%s",
	                      path, (size_t)v->start_mark.line + 1,
	                      (size_t)v->start_mark.column + 1, key, !strcmp(t, "int") ? "an" : "a",
	                      t, (const char *)v->data.scalar.value,
	                      strcmp(t, "null") ? " (quote it to mean the text)" : "");
}

int menv_config_check_map_value(const char *path, const char *key, const char *sub,
                                const yaml_node_t *v, struct menv_error *err)
{
	const char *t = v->type == YAML_SCALAR_NODE     ? scalar_type(v)
	                : v->type == YAML_SEQUENCE_NODE ? "list"
	                : v->type == YAML_MAPPING_NODE  ? "mapping"
	                                                : "alias";
	bool scalar = v->type == YAML_SCALAR_NODE;

	if (!strcmp(t, "str"))
		return node_url(path, key, sub, v, err);
	if (scalar && !strcmp(t, "null") && !strcmp(key, "proxy_servers"))
		return 0; /* conda's (str, NoneType): None, no proxy for that scheme */
	if (scalar && !strcmp(t, "null"))
		/* conda's str: typify makes the text "None" of it, no location */
		return menv_error_set(err, MENV_EPARSE,
		                      "%s:%zu:%zu: %s.%s must be a str, not a null '%s' (YAML's "
		                      "null, no location: quote it to mean the text)",
		                      path, (size_t)v->start_mark.line + 1,
		                      (size_t)v->start_mark.column + 1, key, sub,
		                      (const char *)v->data.scalar.value);
	return menv_error_set(err, MENV_EPARSE,
	                      "%s:%zu:%zu: %s.%s must be a str, not %s %s%s%s%s%s", path,
	                      (size_t)v->start_mark.line + 1, (size_t)v->start_mark.column + 1, key,
	                      sub, !strcmp(t, "int") ? "an" : "a", t, scalar ? " '" : "",
	                      scalar ? (const char *)v->data.scalar.value : "", scalar ? "'" : "",
	                      scalar ? " (quote it to mean the text)" : "");
}
