/*
 * yaml_merge.c - YAML 1.1 merge keys (`<<: *anchor`, https://yaml.org/type/merge.html) in a
 * libyaml document, resolved as conda's ruamel.yaml and PyYAML resolve them (menv kept a key
 * named "<<", so the merged values were lost): lockfiles (conda-lock reads them with a YAML
 * 1.1 loader) and the mappings inside an environment file (conda 26.7 stores the variables
 * of `variables: {<<: ..., C: '3'}` as C, A, B). Where conda's reader (ruamel.yaml's
 * round-trip loader, whose mappings list no merged key) drops what is merged, menv refuses
 * the merge, naming its line, rather than read what conda does not: the top level of an
 * environment file (`<<: *common` there gave conda an environment without the merged
 * dependencies) and all of .condarc.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "internal.h"
#include "specs.h"

static bool is_merge_key(yaml_node_t *k)
{
	return k && k->type == YAML_SCALAR_NODE &&
	       k->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && k->data.scalar.length == 2 &&
	       !memcmp(k->data.scalar.value, "<<", 2);
}

static const char *key_text(yaml_document_t *doc, int id)
{
	yaml_node_t *k = yaml_document_get_node(doc, id);
	return k && k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : NULL;
}

/* Appends the pairs of mapping `from` whose keys `have` lacks (scalar keys; others kept). */
static void take(yaml_document_t *doc, yaml_node_t *from, struct menv_strset *have,
                 yaml_node_pair_t **v, size_t *n, size_t *cap)
{
	for (yaml_node_pair_t *p = from->data.mapping.pairs.start; p < from->data.mapping.pairs.top;
	     p++) {
		const char *k = key_text(doc, p->key);
		if (k && !menv_strset_add(have, k))
			continue; /* given before: the mapping's own key, or an earlier source's */
		if (*n == *cap) {
			*cap = *cap ? 2 * *cap : 8;
			*v = menv_xrealloc(*v, *cap * sizeof(**v));
		}
		(*v)[(*n)++] = *p;
	}
}

/* Whether the pairs of mapping `from` can be read within the budget: the pairs merges have
 * read in this document (*read, counted here) stay under 32 a node of the document plus a
 * million. A source merged n times, or a chain of anchors each merging the one before, reads
 * n^2 pairs from a file of size n (and keeps them, for the chain): past the budget the file
 * is refused, as aliases expanded past the file's size are (yaml.c). */
static bool within_budget(yaml_document_t *doc, const yaml_node_t *from, size_t *read)
{
	size_t nodes = (size_t)(doc->nodes.top - doc->nodes.start);
	*read += (size_t)(from->data.mapping.pairs.top - from->data.mapping.pairs.start);
	return *read <= 32 * nodes + 1000000;
}

int menv_yaml_merge(yaml_document_t *doc, int id, const char *src, const char *refuse, size_t *read,
                    struct menv_error *err)
{
	yaml_node_t *m = yaml_document_get_node(doc, id);
	yaml_node_pair_t *p;
	bool any = false;

	if (!m || m->type != YAML_MAPPING_NODE)
		return 0;
	for (p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top && !any; p++)
		any = is_merge_key(yaml_document_get_node(doc, p->key));
	if (!any)
		return 0;
	if (refuse) {
		yaml_node_t *k = yaml_document_get_node(doc, (p - 1)->key);
		return menv_error_set(err, MENV_EPARSE,
		                      "%s:%zu:%zu: a merge key ('<<'): %s; write the keys out", src,
		                      k->start_mark.line + 1, k->start_mark.column + 1, refuse);
	}
	/* the mapping's own keys first, then each source's keys not given yet, sources in their
	 * order (an earlier one wins): ruamel.yaml's order and PyYAML's values */
	struct menv_strset have = MENV_STRSET_INIT;
	yaml_node_pair_t *v = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	for (p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		const char *k = key_text(doc, p->key);
		if (is_merge_key(yaml_document_get_node(doc, p->key)))
			continue;
		if (k)
			menv_strset_add(&have, k); /* a duplicate is its reader's to refuse */
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			v = menv_xrealloc(v, cap * sizeof(*v));
		}
		v[n++] = *p;
	}
	for (p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top && !rc; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		if (!is_merge_key(k))
			continue;
		yaml_node_t *val = yaml_document_get_node(doc, p->value), *bad = NULL, *big = NULL;
		if (val && val->type == YAML_MAPPING_NODE) {
			if (within_budget(doc, val, read))
				take(doc, val, &have, &v, &n, &cap);
			else
				big = k;
		} else if (val && val->type == YAML_SEQUENCE_NODE)
			for (yaml_node_item_t *it = val->data.sequence.items.start;
			     it < val->data.sequence.items.top && !bad && !big; it++) {
				yaml_node_t *s = yaml_document_get_node(doc, *it);
				if (s && s->type == YAML_MAPPING_NODE &&
				    !within_budget(doc, s, read))
					big = k;
				else if (s && s->type == YAML_MAPPING_NODE)
					take(doc, s, &have, &v, &n, &cap);
				else
					bad = s ? s : val;
			}
		else
			bad = val ? val : k;
		if (big)
			rc = menv_error_set(err, MENV_EPARSE,
			                    "%s:%zu:%zu: merge keys read more pairs than the file "
			                    "holds",
			                    src, big->start_mark.line + 1,
			                    big->start_mark.column + 1);
		else if (bad)
			rc = menv_error_set(
			        err, MENV_EPARSE,
			        "%s:%zu:%zu: a merge key ('<<') takes a mapping or a list "
			        "of mappings",
			        src, bad->start_mark.line + 1, bad->start_mark.column + 1);
	}
	menv_strset_clear(&have);
	if (rc) {
		free(v);
		return rc;
	}
	/* the document frees its stacks with free() (libyaml's yaml_free) */
	free(m->data.mapping.pairs.start);
	if (!v)
		v = menv_xcalloc(1, sizeof(*v));
	m->data.mapping.pairs.start = v;
	m->data.mapping.pairs.top = v + n;
	m->data.mapping.pairs.end = v + (cap ? cap : 1);
	return 0;
}
