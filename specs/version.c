/*
 * version.c - conda versions (CEP-33 ordering) and version specs (CEP-29's version field).
 *
 * A version is split like conda's VersionOrder: lower-cased, `-` read as `_` (when no `_` is
 * present), an epoch before `!`, a local part after `+`, components separated by `.` or `_`,
 * each component split into runs of digits, `*` and other characters. `dev` sorts before
 * everything but `*`, `post` after every number, strings before numbers, and missing atoms
 * are filled with 0 (so 1.1 == 1.1.0). Numbers are kept as digit strings, so any length
 * compares right.
 *
 * A version spec is a tree of `,` (and) and `|` (or) with parentheses, `,` binding tighter;
 * leaves are relations (==, !=, <, <=, >, >=, =, ~=), globs (`1.7*`, `*.7.*`), regexes
 * (`^...$`), `*`, or exact strings.
 */
#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "specs.h"

enum atom_kind { A_STR, A_NUM, A_INF };

struct atom {
	enum atom_kind kind;
	const char *s; /* digits without leading zeros for A_NUM; text for A_STR */
	size_t n;
};

struct part {
	struct atom *atoms;
	size_t n;
};

struct menv_version {
	char *norm;       /* conda's normalised string */
	char *store;      /* backing storage for atom texts */
	struct part *ver; /* epoch first */
	size_t nver;
	struct part *local;
	size_t nlocal;
};

static const struct atom fill = {A_NUM, "", 0};

static int atom_cmp(const struct atom *a, const struct atom *b)
{
	if (a->kind == A_STR || b->kind == A_STR) {
		if (a->kind != A_STR)
			return 1; /* number > string */
		if (b->kind != A_STR)
			return -1;
		size_t n = a->n < b->n ? a->n : b->n;
		int c = memcmp(a->s, b->s, n);
		if (c)
			return c < 0 ? -1 : 1;
		return a->n == b->n ? 0 : a->n < b->n ? -1 : 1;
	}
	if (a->kind == A_INF || b->kind == A_INF)
		return a->kind == b->kind ? 0 : a->kind == A_INF ? 1 : -1;
	if (a->n != b->n)
		return a->n < b->n ? -1 : 1;
	int c = memcmp(a->s, b->s, a->n);
	return c < 0 ? -1 : c > 0 ? 1 : 0;
}

static int parts_cmp(const struct part *p1, size_t n1, const struct part *p2, size_t n2)
{
	size_t n = n1 > n2 ? n1 : n2;
	for (size_t i = 0; i < n; i++) {
		size_t k1 = i < n1 ? p1[i].n : 0, k2 = i < n2 ? p2[i].n : 0;
		size_t k = k1 > k2 ? k1 : k2;
		for (size_t j = 0; j < k; j++) {
			const struct atom *a = j < k1 ? &p1[i].atoms[j] : &fill;
			const struct atom *b = j < k2 ? &p2[i].atoms[j] : &fill;
			int c = atom_cmp(a, b);
			if (c)
				return c;
		}
	}
	return 0;
}

int menv_version_cmp(const struct menv_version *a, const struct menv_version *b)
{
	int c = parts_cmp(a->ver, a->nver, b->ver, b->nver);
	return c ? c : parts_cmp(a->local, a->nlocal, b->local, b->nlocal);
}

const char *menv_version_str(const struct menv_version *v)
{
	return v->norm;
}

/* conda's VersionOrder.startswith */
bool menv_version_startswith(const struct menv_version *v, const struct menv_version *prefix)
{
	const struct part *t1, *t2;
	size_t n1, n2;

	if (prefix->nlocal) {
		if (parts_cmp(v->ver, v->nver, prefix->ver, prefix->nver))
			return false;
		t1 = v->local, n1 = v->nlocal, t2 = prefix->local, n2 = prefix->nlocal;
	} else {
		t1 = v->ver, n1 = v->nver, t2 = prefix->ver, n2 = prefix->nver;
	}
	size_t nt = n2 - 1;
	if (parts_cmp(t1, n1 < nt ? n1 : nt, t2, nt))
		return false;
	struct part empty = {NULL, 0};
	const struct part *v1 = n1 <= nt ? &empty : &t1[nt];
	const struct part *v2 = &t2[nt];
	size_t na = v2->n - 1;
	struct part a = {v1->atoms, v1->n < na ? v1->n : na}, b = {v2->atoms, na};
	if (parts_cmp(&a, 1, &b, 1))
		return false;
	const struct atom *c1 = v1->n <= na ? &fill : &v1->atoms[na];
	const struct atom *c2 = &v2->atoms[na];
	if (c2->kind == A_STR)
		return c1->kind == A_STR && c1->n >= c2->n && !memcmp(c1->s, c2->s, c2->n);
	return atom_cmp(c1, c2) == 0;
}

void menv_version_free(struct menv_version *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->nver; i++)
		free(v->ver[i].atoms);
	for (size_t i = 0; i < v->nlocal; i++)
		free(v->local[i].atoms);
	free(v->ver);
	free(v->local);
	free(v->norm);
	free(v->store);
	free(v);
}

static bool valid_chars(const char *s)
{
	for (; *s; s++)
		if (!(isdigit((unsigned char)*s) || (*s >= 'a' && *s <= 'z') ||
		      strchr("*.+!_", *s)))
			return false;
	return true;
}

/* Splits one component ("1a2", "post", "*") into atoms; text lives in `comp` (kept). */
static int split_component(char *comp, struct part *out, bool prepend_fill)
{
	size_t cap = strlen(comp) + 2;
	out->atoms = menv_xcalloc(cap, sizeof(struct atom));
	out->n = 0;
	if (!*comp)
		return -1;
	if (prepend_fill && !isdigit((unsigned char)comp[0]))
		out->atoms[out->n++] = fill;
	char *p = comp;
	while (*p) {
		char *s = p;
		struct atom a;
		if (isdigit((unsigned char)*p)) {
			while (isdigit((unsigned char)*p))
				p++;
			while (s < p - 1 && *s == '0')
				s++;
			a.kind = A_NUM;
			a.s = s;
			a.n = (size_t)(p - s);
			if (a.n == 1 && *s == '0')
				a.n = 0; /* "0" is the fill value */
		} else if (*p == '*') {
			while (*p == '*')
				p++;
			a.kind = A_STR;
			a.s = s;
			a.n = (size_t)(p - s);
		} else {
			while (*p && !isdigit((unsigned char)*p) && *p != '*')
				p++;
			a.kind = A_STR;
			a.s = s;
			a.n = (size_t)(p - s);
			if (a.n == 4 && !memcmp(s, "post", 4))
				a.kind = A_INF;
			else if (a.n == 3 && !memcmp(s, "dev", 3))
				a.s = "DEV";
		}
		out->atoms[out->n++] = a;
	}
	return 0;
}

/* Splits "a.b_c" into parts; a trailing '_' stays on the last component (openssl-like). */
static int split_parts(char *s, struct part **out, size_t *n)
{
	size_t len = strlen(s), cap = 2;
	bool trailing = len > 0 && s[len - 1] == '_';
	for (char *p = s; *p; p++)
		cap += *p == '.' || *p == '_';
	*out = menv_xcalloc(cap, sizeof(struct part));
	*n = 0;
	if (trailing)
		s[len - 1] = '\0';
	char *save = s;
	for (;;) {
		char *e = save;
		while (*e && *e != '.' && *e != '_')
			e++;
		bool last = !*e;
		*e = '\0';
		if (last && trailing) {
			/* re-append the '_' to the last component: it has room (we cut it) */
			size_t l = strlen(save);
			save[l] = '_';
			save[l + 1] = '\0';
		}
		if (split_component(save, &(*out)[(*n)++], true) < 0)
			return -1;
		if (last)
			break;
		save = e + 1;
	}
	return 0;
}

/* The length of the blank at `p` (n bytes left) that Python's str.strip() takes away: ASCII
 * \t \n \v \f \r and space, U+001C..U+001F, and, in UTF-8, U+0085, U+00A0, U+1680,
 * U+2000..U+200A, U+2028, U+2029, U+202F, U+205F and U+3000 (str.isspace()); 0 if none. */
static size_t blank_len(const unsigned char *p, size_t n)
{
	if (*p == ' ' || (*p >= '\t' && *p <= '\r') || (*p >= 0x1c && *p <= 0x1f))
		return 1;
	if (n >= 2 && p[0] == 0xc2 && (p[1] == 0x85 || p[1] == 0xa0))
		return 2;
	if (n < 3)
		return 0;
	if ((p[0] == 0xe1 && p[1] == 0x9a && p[2] == 0x80) ||
	    (p[0] == 0xe2 && p[1] == 0x80 &&
	     ((p[2] >= 0x80 && p[2] <= 0x8a) || p[2] == 0xa8 || p[2] == 0xa9 || p[2] == 0xaf)) ||
	    (p[0] == 0xe2 && p[1] == 0x81 && p[2] == 0x9f) ||
	    (p[0] == 0xe3 && p[1] == 0x80 && p[2] == 0x80))
		return 3;
	return 0;
}

/* conda's `vstr.strip().lower()`: blanks (blank_len) off both ends, ASCII lower-cased, and
 * U+212A KELVIN SIGN, the one non-ASCII character whose str.lower() is ASCII, made 'k'. Other
 * bytes are kept (the character check refuses them). Returns an owned string. */
static char *strip_lower(const char *in)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t n = strlen(in), b;

	while (n && (b = blank_len(p, n))) {
		p += b;
		n -= b;
	}
	size_t end = 0; /* past the last character that is not a blank */
	for (size_t i = 0; i < n;) {
		size_t k = blank_len(p + i, n - i);
		if (!k) {
			k = p[i] < 0x80 ? 1 : menv_utf8_seq((const char *)p + i, n - i);
			k = k ? k : 1;
			end = i + k;
		}
		i += k;
	}
	char *s = menv_xmalloc(end + 1), *d = s;
	for (size_t i = 0; i < end; i++) {
		if (i + 3 <= end && p[i] == 0xe2 && p[i + 1] == 0x84 && p[i + 2] == 0xaa) {
			*d++ = 'k';
			i += 2;
		} else
			*d++ = (char)(p[i] < 0x80 ? tolower(p[i]) : p[i]);
	}
	*d = '\0';
	return s;
}

int menv_version_parse(const char *in, struct menv_version **out, struct menv_error *err)
{
	struct menv_version *v = menv_xcalloc(1, sizeof(*v));
	const char *why = NULL;
	char why_buf[64];
	char *s, *bang, *plus;

	*out = NULL;
	s = strip_lower(in);
	if (!*s) {
		why = "empty version string";
		goto fail;
	}
	if (!valid_chars(s) && strchr(s, '-') && !strchr(s, '_'))
		for (char *p = s; *p; p++)
			if (*p == '-')
				*p = '_';
	if (!valid_chars(s)) {
		const char *p = s;
		while (*p && (isdigit((unsigned char)*p) || (*p >= 'a' && *p <= 'z') ||
		              strchr("*.+!_", *p)))
			p++;
		size_t cl = menv_utf8_seq(p, strlen(p));
		snprintf(why_buf, sizeof(why_buf), "invalid character '%.*s' at column %d",
		         (int)(cl ? cl : 1), p, (int)(p - s) + 1);
		why = why_buf;
		goto fail;
	}
	v->norm = menv_xstrdup(s);
	/* storage with room for the trailing '_' trick and the epoch */
	v->store = menv_xmalloc(strlen(s) + 4);
	strcpy(v->store, s);
	char *body = v->store;
	bang = strchr(body, '!');
	char *epoch = NULL;
	if (bang) {
		if (strchr(bang + 1, '!')) {
			why = "duplicated epoch separator '!'";
			goto fail;
		}
		*bang = '\0';
		epoch = body;
		body = bang + 1;
		if (!*epoch) {
			why = "epoch must be an integer";
			goto fail;
		}
		for (char *p = epoch; *p; p++)
			if (!isdigit((unsigned char)*p)) {
				why = "epoch must be an integer";
				goto fail;
			}
	}
	plus = strchr(body, '+');
	char *local = NULL;
	if (plus) {
		if (strchr(plus + 1, '+')) {
			why = "duplicated local version separator '+'";
			goto fail;
		}
		*plus = '\0';
		local = plus + 1;
	}
	if (!*body) {
		why = "missing version before local version separator '+'";
		goto fail;
	}
	/* body parts, with the epoch as the first part */
	struct part *parts = NULL;
	size_t np = 0;
	if (split_parts(body, &parts, &np) < 0) {
		v->ver = parts;
		v->nver = np;
		why = "empty version component";
		goto fail;
	}
	v->ver = menv_xcalloc(np + 1, sizeof(struct part));
	v->ver[0].atoms = menv_xcalloc(1, sizeof(struct atom));
	v->ver[0].n = 1;
	v->ver[0].atoms[0] = fill;
	if (epoch) {
		char *e = epoch;
		while (e[0] == '0' && e[1])
			e++;
		v->ver[0].atoms[0].s = e;
		v->ver[0].atoms[0].n = strcmp(e, "0") ? strlen(e) : 0;
	}
	memcpy(v->ver + 1, parts, np * sizeof(struct part));
	v->nver = np + 1;
	free(parts);
	if (local) {
		for (char *p = local; *p; p++)
			if (*p == '_')
				*p = '.';
		/* local: split on '.' only, no trailing '_' rule */
		size_t cap = 2;
		for (char *p = local; *p; p++)
			cap += *p == '.';
		v->local = menv_xcalloc(cap, sizeof(struct part));
		char *q = local;
		for (;;) {
			char *e = q;
			while (*e && *e != '.')
				e++;
			bool last = !*e;
			*e = '\0';
			if (split_component(q, &v->local[v->nlocal++], true) < 0) {
				why = "empty version component";
				goto fail;
			}
			if (last)
				break;
			q = e + 1;
		}
	}
	free(s);
	*out = v;
	return 0;
fail:
	menv_error_set(err, MENV_EPARSE, "invalid version '%s': %s", in, why);
	free(s);
	menv_version_free(v);
	return MENV_EPARSE;
}

/* ---------------------------------------------------------------------------------------- */
/* Version specs                                                                            */

enum vs_kind { VS_AND, VS_OR, VS_ANY, VS_OP, VS_REGEX, VS_EXACT };
enum vs_op { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_STARTS, OP_NOT_STARTS, OP_COMPAT };

struct menv_version_spec {
	enum vs_kind kind;
	enum vs_op op;
	struct menv_version *v;      /* VS_OP */
	struct menv_version *compat; /* ~=: the prefix to start with */
	regex_t re;                  /* VS_REGEX */
	bool re_ok;
	char *text; /* VS_EXACT */
	struct menv_version_spec **kids;
	size_t nkids;
};

void menv_version_spec_free(struct menv_version_spec *vs)
{
	if (!vs)
		return;
	for (size_t i = 0; i < vs->nkids; i++)
		menv_version_spec_free(vs->kids[i]);
	free(vs->kids);
	menv_version_free(vs->v);
	menv_version_free(vs->compat);
	if (vs->re_ok)
		regfree(&vs->re);
	free(vs->text);
	free(vs);
}

static int leaf_error(struct menv_error *err, const char *spec, const char *why)
{
	return menv_error_set(err, MENV_EPARSE, "invalid version spec '%s': %s", spec, why);
}

static int compile_regex(struct menv_version_spec *vs, const char *rx, const char *spec,
                         struct menv_error *err)
{
	if (regcomp(&vs->re, rx, REG_EXTENDED | REG_NOSUB))
		return leaf_error(err, spec, "invalid regular expression");
	vs->re_ok = true;
	vs->kind = VS_REGEX;
	return 0;
}

static int parse_leaf(const char *in, struct menv_version_spec **out, struct menv_error *err)
{
	struct menv_version_spec *vs = menv_xcalloc(1, sizeof(*vs));
	size_t n;
	int rc = 0;

	while (isspace((unsigned char)*in))
		in++;
	n = strlen(in);
	while (n && isspace((unsigned char)in[n - 1]))
		n--;
	char *s = menv_xstrndup(in, n);
	if (!*s) {
		rc = leaf_error(err, in, "empty");
		goto out;
	}
	if (s[0] == '^' || s[n - 1] == '$') {
		if (s[0] != '^' || s[n - 1] != '$') {
			rc = leaf_error(err, s, "a regex must start with '^' and end with '$'");
			goto out;
		}
		rc = compile_regex(vs, s, s, err);
		goto out;
	}
	if (strchr("=<>!~", s[0])) {
		static const struct {
			const char *t;
			enum vs_op op;
		} ops[] = {
		        {"==", OP_EQ},     {"!=", OP_NE}, {"<=", OP_LE}, {">=", OP_GE},
		        {"~=", OP_COMPAT}, {"<", OP_LT},  {">", OP_GT},  {"=", OP_STARTS},
		};
		size_t i, ol = 0;
		for (i = 0; i < sizeof(ops) / sizeof(*ops); i++) {
			ol = strlen(ops[i].t);
			if (!strncmp(s, ops[i].t, ol) && s[ol] != '=' && s[ol])
				break;
		}
		if (i == sizeof(ops) / sizeof(*ops)) {
			rc = leaf_error(err, s, "invalid operator");
			goto out;
		}
		if (isspace((unsigned char)s[ol])) {
			rc = leaf_error(err, s, "a blank after the operator");
			goto out;
		}
		vs->kind = VS_OP;
		vs->op = ops[i].op;
		char *vo = menv_xstrdup(s + ol);
		size_t vl = strlen(vo);
		if (vl >= 2 && !strcmp(vo + vl - 2, ".*")) {
			if (vs->op == OP_COMPAT) {
				free(vo);
				rc = leaf_error(err, s, "'~=' cannot be used with '.*'");
				goto out;
			}
			if (vs->op == OP_NE)
				vs->op = OP_NOT_STARTS;
			vo[vl - 2] = '\0';
		}
		rc = menv_version_parse(vo, &vs->v, err);
		if (!rc && vs->op == OP_COMPAT) {
			/* ~=X.Y: >= X.Y and starts with X */
			char *c = menv_xstrdup(vs->v->norm);
			char *dot = strrchr(c, '.');
			if (dot) { /* with one component nothing can match (conda fails at match time) */
				*dot = '\0';
				rc = menv_version_parse(c, &vs->compat, err);
			}
			free(c);
		}
		free(vo);
		if (rc)
			menv_error_prefix(err, "invalid version spec '%s'", s);
		goto out;
	}
	if (!strcmp(s, "*")) {
		vs->kind = VS_ANY;
		goto out;
	}
	/* a '*' before the end: a glob over the whole version string */
	size_t stars_end = n;
	while (stars_end && s[stars_end - 1] == '*')
		stars_end--;
	if (memchr(s, '*', stars_end)) {
		struct menv_buf rx = MENV_BUF_INIT;
		menv_buf_adds(&rx, "^(");
		for (const char *p = s; *p; p++) {
			if (*p == '*')
				menv_buf_adds(&rx, ".*");
			else if (strchr(".+()[]{}?|\\$^", *p)) {
				menv_buf_addch(&rx, '\\');
				menv_buf_addch(&rx, *p);
			} else
				menv_buf_addch(&rx, *p);
		}
		menv_buf_adds(&rx, ")$");
		rc = compile_regex(vs, rx.buf, s, err);
		menv_buf_release(&rx);
		goto out;
	}
	if (s[n - 1] == '*') {
		/* 1.7* and 1.7.* : starts with 1.7 */
		size_t e = n - 1;
		if (e && s[e - 1] == '.')
			e--;
		char *vo = menv_xstrndup(s, e);
		vs->kind = VS_OP;
		vs->op = OP_STARTS;
		rc = menv_version_parse(vo, &vs->v, err);
		free(vo);
		if (rc)
			menv_error_prefix(err, "invalid version spec '%s'", s);
		goto out;
	}
	if (!strchr(s, '@')) {
		vs->kind = VS_OP;
		vs->op = OP_EQ;
		rc = menv_version_parse(s, &vs->v, err);
		if (rc)
			menv_error_prefix(err, "invalid version spec '%s'", s);
		goto out;
	}
	vs->kind = VS_EXACT;
	vs->text = menv_xstrdup(s);
out:
	free(s);
	if (rc) {
		menv_version_spec_free(vs);
		return rc;
	}
	*out = vs;
	return 0;
}

/* Tokens: `^...$` regexes, `(`, `)`, `|`, `,`, and runs of anything else. */
struct tok {
	const char *s;
	size_t n;
};

static size_t tokenize(const char *s, struct tok *t, size_t max)
{
	size_t n = 0;
	while (*s && n < max) {
		while (isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		if (*s == '^') {
			const char *e = strchr(s, '$');
			e = e ? e + 1 : s + strlen(s);
			t[n++] = (struct tok){s, (size_t)(e - s)};
			s = e;
		} else if (strchr("()|,", *s)) {
			t[n++] = (struct tok){s, 1};
			s++;
		} else {
			const char *e = s;
			while (*e && !strchr("()|,", *e))
				e++;
			t[n++] = (struct tok){s, (size_t)(e - s)};
			s = e;
		}
	}
	return n;
}

struct vs_parser {
	struct tok *t;
	size_t n, i;
	const char *spec;
	struct menv_error *err;
};

static int parse_or(struct vs_parser *p, struct menv_version_spec **out);

static int parse_atom(struct vs_parser *p, struct menv_version_spec **out)
{
	if (p->i >= p->n)
		return leaf_error(p->err, p->spec, "an expression is missing");
	struct tok *t = &p->t[p->i];
	if (t->n == 1 && t->s[0] == '(') {
		p->i++;
		int rc = parse_or(p, out);
		if (rc)
			return rc;
		if (p->i >= p->n || p->t[p->i].s[0] != ')') {
			menv_version_spec_free(*out);
			*out = NULL;
			return leaf_error(p->err, p->spec, "unmatched parenthesis");
		}
		p->i++;
		return 0;
	}
	if (t->n == 1 && strchr(")|,", t->s[0]))
		return leaf_error(p->err, p->spec, "an expression is missing");
	char *leaf = menv_xstrndup(t->s, t->n);
	p->i++;
	int rc = parse_leaf(leaf, out, p->err);
	free(leaf);
	return rc;
}

static int parse_list(struct vs_parser *p, enum vs_kind kind, char sep,
                      int (*sub)(struct vs_parser *, struct menv_version_spec **),
                      struct menv_version_spec **out)
{
	struct menv_version_spec *first = NULL;
	int rc = sub(p, &first);
	if (rc)
		return rc;
	if (p->i >= p->n || p->t[p->i].s[0] != sep || p->t[p->i].n != 1) {
		*out = first;
		return 0;
	}
	struct menv_version_spec *node = menv_xcalloc(1, sizeof(*node));
	node->kind = kind;
	node->kids = menv_xcalloc(p->n + 1, sizeof(*node->kids));
	node->kids[node->nkids++] = first;
	while (p->i < p->n && p->t[p->i].n == 1 && p->t[p->i].s[0] == sep) {
		p->i++;
		rc = sub(p, &node->kids[node->nkids]);
		if (rc) {
			menv_version_spec_free(node);
			return rc;
		}
		node->nkids++;
	}
	*out = node;
	return 0;
}

static int parse_and(struct vs_parser *p, struct menv_version_spec **out)
{
	return parse_list(p, VS_AND, ',', parse_atom, out);
}

static int parse_or(struct vs_parser *p, struct menv_version_spec **out)
{
	return parse_list(p, VS_OR, '|', parse_and, out);
}

int menv_version_spec_parse(const char *s, struct menv_version_spec **out, struct menv_error *err)
{
	size_t len = strlen(s);
	struct tok *t = menv_xcalloc(len + 1, sizeof(*t));
	struct vs_parser p = {t, tokenize(s, t, len + 1), 0, s, err};
	int rc;

	*out = NULL;
	rc = parse_or(&p, out);
	if (!rc && p.i != p.n) {
		menv_version_spec_free(*out);
		*out = NULL;
		rc = leaf_error(err, s,
		                p.t[p.i].s[0] == ')' ? "unmatched parenthesis" : "unexpected text");
	}
	free(t);
	return rc;
}

static bool match_parsed(const struct menv_version_spec *vs, const char *raw,
                         const struct menv_version *v);

/* 1 match, 0 no match, -1 conda would raise while matching (`~=1` on a version >= 1) */
static int eval_parsed(const struct menv_version_spec *vs, const char *raw,
                       const struct menv_version *v)
{
	if (vs->kind == VS_OP && vs->op == OP_COMPAT && !vs->compat)
		return v && menv_version_cmp(v, vs->v) >= 0 ? -1 : 0;
	if (vs->kind == VS_AND || vs->kind == VS_OR) {
		for (size_t i = 0; i < vs->nkids; i++) {
			int r = eval_parsed(vs->kids[i], raw, v);
			if (r < 0)
				return r;
			if (vs->kind == VS_AND && !r)
				return 0;
			if (vs->kind == VS_OR && r)
				return 1;
		}
		return vs->kind == VS_AND;
	}
	return match_parsed(vs, raw, v);
}

int menv_version_spec_eval(const struct menv_version_spec *vs, const char *version)
{
	struct menv_version *v = NULL;
	struct menv_error err;

	if (menv_version_parse(version, &v, &err))
		v = NULL;
	int r = eval_parsed(vs, version, v);
	menv_version_free(v);
	return r;
}

static bool match_parsed(const struct menv_version_spec *vs, const char *raw,
                         const struct menv_version *v)
{
	switch (vs->kind) {
	case VS_ANY: return true;
	case VS_AND:
		for (size_t i = 0; i < vs->nkids; i++)
			if (!match_parsed(vs->kids[i], raw, v))
				return false;
		return true;
	case VS_OR:
		for (size_t i = 0; i < vs->nkids; i++)
			if (match_parsed(vs->kids[i], raw, v))
				return true;
		return false;
	case VS_REGEX: return regexec(&vs->re, raw, 0, NULL, 0) == 0;
	case VS_EXACT: return !strcmp(vs->text, raw);
	case VS_OP:
		if (!v)
			return false;
		switch (vs->op) {
		case OP_EQ: return menv_version_cmp(v, vs->v) == 0;
		case OP_NE: return menv_version_cmp(v, vs->v) != 0;
		case OP_LT: return menv_version_cmp(v, vs->v) < 0;
		case OP_LE: return menv_version_cmp(v, vs->v) <= 0;
		case OP_GT: return menv_version_cmp(v, vs->v) > 0;
		case OP_GE: return menv_version_cmp(v, vs->v) >= 0;
		case OP_STARTS: return menv_version_startswith(v, vs->v);
		case OP_NOT_STARTS: return !menv_version_startswith(v, vs->v);
		case OP_COMPAT:
			return vs->compat && menv_version_cmp(v, vs->v) >= 0 &&
			       menv_version_startswith(v, vs->compat);
		}
	}
	return false;
}

bool menv_version_spec_match_parsed(const struct menv_version_spec *vs,
                                    const struct menv_version *v)
{
	return match_parsed(vs, v->norm, v);
}

bool menv_version_spec_match(const struct menv_version_spec *vs, const char *version)
{
	struct menv_version *v = NULL;
	struct menv_error err;
	bool m;

	if (menv_version_parse(version, &v, &err))
		v = NULL;
	m = match_parsed(vs, version, v);
	menv_version_free(v);
	return m;
}
