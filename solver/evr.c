/*
 * evr.c - conda's order of openssl-like versions in libsolv. conda's VersionOrder keeps a
 * trailing underscore as a string part of the last component ("1.1_" is [[1], [1, "_"]]),
 * so 1.1dev1 < 1.1_ < 1.1a1 < 1.1 (conda/models/version.py, the documented order).
 * libsolv's solv_vercmp_conda skips every '_' as a separator: "1.1_" compares as "1.1",
 * above 1.1a1, and a depends "x >=1.1_" meant >=1.1. libsolv cannot be patched here, so its
 * strings are: a trailing '_' of a version (of a solvable, or of a version literal in a
 * REL_CONDA dependency) becomes '^', which libsolv reads as a string part and compares as
 * conda compares "_": below every letter (strncasecmp: '^' < 'a'), above "dev" (libsolv's
 * special case) and below a missing part, as conda's str < int. '^' is never in a conda
 * version (conda refuses it), so nothing else reads it. Records keep their JSON (what menv
 * prints); only libsolv's comparison strings change.
 */
#include <stdlib.h>
#include <string.h>

#include <solv/conda.h>

#include "internal.h"

static bool version_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* A copy of the n bytes of v with each trailing underscore of a version literal ('_' after a
 * letter or digit, before the end, '+' (a local version), ',', '|', ')', '*' or ".*") as '^', or NULL
 * when there is none. `upto` stops at the first blank (a REL_CONDA's build part). */
static char *canon(const char *v, size_t n, bool upto_blank)
{
	char *out = NULL;
	for (size_t i = 1; i < n; i++) {
		if (upto_blank && v[i] == ' ')
			break;
		if (v[i] != '_' || !version_char(v[i - 1]))
			continue;
		char next = i + 1 < n ? v[i + 1] : '\0';
		/* a glob's startswith ("1.1_*", "1.1_.*") ends the version there too */
		bool glob = next == '*' || (next == '.' && i + 2 < n && v[i + 2] == '*');
		if (next && !glob && next != '+' && next != ',' && next != '|' && next != ')' &&
		    !(upto_blank && next == ' '))
			continue;
		if (!out)
			out = menv_xstrndup(v, n);
		out[i] = '^';
	}
	return out;
}

/* The Id of the canonical form of string id, or id itself. */
static Id canon_id(Pool *pool, Id id, bool upto_blank)
{
	const char *str = pool_id2str(pool, id);
	char *c = canon(str, strlen(str), upto_blank);
	if (!c)
		return id;
	Id out = pool_str2id(pool, c, 1);
	free(c);
	return out;
}

void menv_solv_conda_underscores(struct menv_solver *s)
{
	Pool *pool = s->pool;
	bool changed = false;

	/* the solvables' versions and their `name = version` provides */
	for (Id p = s->canon_solvables > 2 ? s->canon_solvables : 2; p < pool->nsolvables; p++) {
		Solvable *sv = pool_id2solvable(pool, p);
		if (!sv->repo || !sv->evr)
			continue;
		Id evr = canon_id(pool, sv->evr, false);
		if (evr == sv->evr)
			continue;
		for (Id *dp = sv->provides ? sv->repo->idarraydata + sv->provides : NULL; dp && *dp;
		     dp++) {
			if (!ISRELDEP(*dp))
				continue;
			Reldep *rd = GETRELDEP(pool, *dp);
			if (rd->name == sv->name && rd->evr == sv->evr && rd->flags == REL_EQ)
				*dp = pool_rel2id(pool, sv->name, evr, REL_EQ, 1);
		}
		sv->evr = evr;
		changed = true;
	}
	s->canon_solvables = pool->nsolvables;
	/* the version literals of conda dependencies, in place: each REL_CONDA reldep holds
	 * "version[ build]"; solvables' requires and repodata's constrains keep their Ids */
	Id nrels = pool->nrels;
	Id *fix = NULL;
	size_t nfix = 0;
	for (Id i = s->canon_rels > 1 ? s->canon_rels : 1; i < nrels; i++) {
		Reldep *rd = pool->rels + i;
		if (rd->flags != REL_CONDA || ISRELDEP(rd->evr))
			continue;
		Id evr = canon_id(pool, rd->evr, true);
		if (evr == rd->evr)
			continue;
		fix = menv_xrealloc(fix, (nfix + 1) * 2 * sizeof(*fix));
		fix[2 * nfix] = i;
		fix[2 * nfix + 1] = evr;
		nfix++;
	}
	/* new strings first (their hash is untouched), then the reldeps, whose hash is
	 * dropped: libsolv rebuilds it on the next lookup */
	for (size_t k = 0; k < nfix; k++)
		pool->rels[fix[2 * k]].evr = fix[2 * k + 1];
	free(fix);
	s->canon_rels = pool->nrels;
	if (changed || nfix) {
		pool_freeidhashes(pool);
		if (pool->whatprovides)
			pool_createwhatprovides(pool);
	}
}

Id menv_solv_matchspec(Pool *pool, const char *str)
{
	Id dep = pool_conda_matchspec(pool, str);
	if (!dep || !ISRELDEP(dep))
		return dep;
	Reldep *rd = GETRELDEP(pool, dep);
	if (rd->flags != REL_CONDA || ISRELDEP(rd->evr))
		return dep;
	Id evr = canon_id(pool, rd->evr, true);
	return evr == rd->evr ? dep : pool_rel2id(pool, rd->name, evr, REL_CONDA, 1);
}

void menv_solv_conda_display(char *text)
{
	/* only what canon() wrote: a '^' after a letter or digit (a regex's '^' starts a
	 * version, "ossl ^1\\.5$", or follows '[' in a class) */
	for (char *p = text ? strchr(text, '^') : NULL; p; p = strchr(p + 1, '^'))
		if (p > text && version_char(p[-1]))
			*p = '_';
}

void menv_solv_conda_display_json(json_t *j)
{
	size_t i;
	const char *k;
	json_t *v;
	if (json_is_string(j) && strchr(json_string_value(j), '^')) {
		char *c = menv_xstrdup(json_string_value(j));
		menv_solv_conda_display(c);
		json_string_set(j, c);
		free(c);
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v) menv_solv_conda_display_json(v);
	} else if (json_is_object(j)) {
		json_object_foreach(j, k, v) menv_solv_conda_display_json(v);
	}
}
