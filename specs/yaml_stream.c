/*
 * yaml_stream.c - a YAML document read straight from libyaml's event stream into JSON, for
 * the files that grow with the user (a 100,000-entry lockfile is 20 MB of YAML): no
 * yaml_document_t between the events and the JSON, and the items of one top-level sequence
 * handed to the caller one at a time, so the file is never held whole (issue 22). It reads
 * the shape such files have; for anything else (anchors and aliases, a bad key, a merge key,
 * an error of any kind) it says so and the caller reads the file with menv_yaml_to_json,
 * which gives the same value (merged) or the error with its FILE:LINE:COL as it always has.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yaml.h>

#include "internal.h"
#include "specs.h"

struct frame {
	json_t *v; /* the mapping or sequence being filled (owned); NULL for `members` */
	struct menv_yaml_members *members; /* a streamed item's members (a mapping), or NULL */
	char *key;                         /* a mapping's key waiting for its value, or NULL */
	bool streamed;                     /* the sequence whose items go to the caller */
	bool sub;     /* `members` are those of a mapping that is an item's member's value */
	size_t items; /* items handed to the caller */
	/* the keys of `members` (borrowed from them) once there are MEMBERS_HASHED of them, so
	 * that a duplicate key is found in O(1) and an entry of n keys is read in O(n) */
	struct menv_strmap keys;
};

enum { MEMBERS_HASHED = 16 };

struct reader {
	struct frame *stack;
	size_t depth, alloc;
	const char *key; /* the root mapping's key whose sequence is streamed */
	int (*item)(void *ud, json_t *json, const struct menv_yaml_members *m, size_t index,
	            size_t line);
	void *ud;
	json_t *root;
	size_t item_line; /* 1-based line where the streamed item being read starts */
};

enum { READ_OK = 0, READ_FALLBACK = 1 };

static void members_free(struct menv_yaml_members *m)
{
	for (size_t i = 0; m && i < m->n; i++) {
		free(m->m[i].key);
		free(m->m[i].text);
		members_free(m->m[i].sub);
		json_decref(m->m[i].v);
	}
	if (m)
		free(m->m);
	free(m);
}

json_t *menv_yaml_members_json(const struct menv_yaml_members *m)
{
	json_t *o = json_object();
	for (size_t i = 0; i < m->n; i++) {
		const struct menv_yaml_member *e = &m->m[i];
		json_object_set_new_nocheck(o, e->key,
		                            e->text  ? menv_yaml_scalar_json(e->text, e->style)
		                            : e->sub ? menv_yaml_members_json(e->sub)
		                                     : json_incref(e->v));
	}
	return o;
}

/* A member of f's mapping: its pending key and `text` or `sub` (taken) or `v` (a new
 * reference). */
static void member_add(struct frame *f, char *text, yaml_scalar_style_t style,
                       struct menv_yaml_members *sub, json_t *v)
{
	struct menv_yaml_members *m = f->members;
	if (m->n == m->alloc) {
		m->alloc = m->alloc ? 2 * m->alloc : 12;
		m->m = menv_xrealloc(m->m, m->alloc * sizeof(*m->m));
	}
	m->m[m->n++] = (struct menv_yaml_member){f->key, text, style, sub, v};
	if (f->keys.cap)
		menv_strmap_add(&f->keys, f->key, m->n - 1);
	f->key = NULL;
}

/* Is `key` one of the keys of f's members already? A look at each while they are few, a hash
 * lookup past MEMBERS_HASHED (the map made then of the keys so far, and kept by member_add). */
static bool member_has(struct frame *f, const char *key)
{
	const struct menv_yaml_members *m = f->members;
	if (!f->keys.cap && m->n >= MEMBERS_HASHED) {
		menv_strmap_borrowing(&f->keys, 2 * m->n);
		for (size_t i = 0; i < m->n; i++)
			menv_strmap_add(&f->keys, m->m[i].key, i);
	}
	if (f->keys.cap)
		return menv_strmap_get(&f->keys, key) != NULL;
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->m[i].key, key))
			return true;
	return false;
}

/* Puts the finished value `v` (a new reference) where it belongs. READ_FALLBACK where the
 * general reader must decide (a non-scalar key, a duplicate key, the caller refusing). */
static int attach(struct reader *r, json_t *v, const char *scalar)
{
	if (!r->depth) {
		r->root = v;
		return READ_OK;
	}
	struct frame *f = &r->stack[r->depth - 1];
	if (f->members) {
		/* a collection as a member's value (a key was refused before it began) */
		member_add(f, NULL, YAML_ANY_SCALAR_STYLE, NULL, v);
		return READ_OK;
	}
	if (json_is_array(f->v)) {
		if (f->streamed)
			return r->item(r->ud, v, NULL, f->items++, r->item_line) ? READ_FALLBACK
			                                                         : READ_OK;
		json_array_append_new(f->v, v);
		return READ_OK;
	}
	if (!f->key) {
		/* a key: its text as written, never typed (yaml.c's reader does the same) */
		json_decref(v);
		if (!scalar || json_object_get(f->v, scalar))
			return READ_FALLBACK;
		f->key = menv_xstrdup(scalar);
		return READ_OK;
	}
	json_object_set_new_nocheck(f->v, f->key, v); /* the key's UTF-8 was checked */
	free(f->key);
	f->key = NULL;
	return READ_OK;
}

static void push(struct reader *r, json_t *v, struct menv_yaml_members *members)
{
	if (r->depth == r->alloc) {
		r->alloc = r->alloc ? 2 * r->alloc : 16;
		r->stack = menv_xrealloc(r->stack, r->alloc * sizeof(*r->stack));
	}
	struct frame *parent = r->depth ? &r->stack[r->depth - 1] : NULL;
	/* the root mapping's `key`, a sequence: its items go to the caller */
	bool streamed = r->depth == 1 && json_is_array(v) && json_is_object(parent->v) &&
	                parent->key && !strcmp(parent->key, r->key);
	r->stack[r->depth++] = (struct frame){.v = v, .members = members, .streamed = streamed};
}

/* Whether the scalar event `ev` is a merge key: `<<` written plain (a quoted '<<' is a key
 * like any other), as yaml_merge.c tells one. */
static bool is_merge_key(const yaml_event_t *ev)
{
	return ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && ev->data.scalar.length == 2 &&
	       !memcmp(ev->data.scalar.value, "<<", 2);
}

/* One event; READ_OK, READ_FALLBACK, or 2 once the document has ended. */
static int event(struct reader *r, yaml_event_t *ev)
{
	if (r->depth && r->stack[r->depth - 1].streamed &&
	    (ev->type == YAML_SCALAR_EVENT || ev->type == YAML_SEQUENCE_START_EVENT ||
	     ev->type == YAML_MAPPING_START_EVENT))
		r->item_line = ev->start_mark.line + 1;
	switch (ev->type) {
	case YAML_STREAM_START_EVENT:
	case YAML_DOCUMENT_START_EVENT: return READ_OK;
	case YAML_DOCUMENT_END_EVENT: return 2;
	case YAML_SCALAR_EVENT: {
		/* a NUL byte: menv_yaml_to_json refuses it with its FILE:LINE:COL */
		if (ev->data.scalar.anchor || ev->data.scalar.length > INT_MAX ||
		    memchr(ev->data.scalar.value, '\0', ev->data.scalar.length))
			return READ_FALLBACK;
		const char *s = (const char *)ev->data.scalar.value;
		struct frame *f = r->depth ? &r->stack[r->depth - 1] : NULL;
		size_t bad;
		if (f && f->members) {
			/* a streamed item's key, or its value: taken from the event as written; a
			 * merge key (`<<: {...}`, in an item or a mapping of its members): the
			 * general reader merges, as it does everywhere else */
			if (!menv_utf8_valid(s, ev->data.scalar.length, &bad) ||
			    (!f->key && (member_has(f, s) || is_merge_key(ev))))
				return READ_FALLBACK;
			if (!f->key)
				f->key = (char *)ev->data.scalar.value;
			else
				member_add(f, (char *)ev->data.scalar.value, ev->data.scalar.style,
				           NULL, NULL);
			ev->data.scalar.value = NULL;
			return READ_OK;
		}
		if (f && json_is_object(f->v) && !f->key) {
			/* a key: its text as written, never typed (yaml.c's reader does the same),
			 * taken from the event rather than copied */
			if (!menv_utf8_valid(s, strlen(s), &bad) || json_object_get(f->v, s))
				return READ_FALLBACK;
			/* a merge key (`<<: {...}`): the general reader merges */
			if (is_merge_key(ev))
				return READ_FALLBACK;
			f->key = (char *)ev->data.scalar.value;
			ev->data.scalar.value = NULL;
			return READ_OK;
		}
		json_t *v = menv_yaml_scalar_json(s, ev->data.scalar.style);
		if (!v)
			return READ_FALLBACK;
		return attach(r, v, s);
	}
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT: {
		bool seq = ev->type == YAML_SEQUENCE_START_EVENT;
		if ((seq ? ev->data.sequence_start.anchor : ev->data.mapping_start.anchor) ||
		    r->depth >= MENV_PARSE_MAX_DEPTH)
			return READ_FALLBACK;
		/* a collection as a key */
		struct frame *top = r->depth ? &r->stack[r->depth - 1] : NULL;
		if (top && (json_is_object(top->v) || top->members) && !top->key)
			return READ_FALLBACK;
		/* a collection in a mapping of an item's member: that mapping is JSON after all */
		if (top && top->sub) {
			top->v = menv_yaml_members_json(top->members);
			members_free(top->members);
			menv_strmap_clear(&top->keys); /* it borrowed their keys */
			top->members = NULL;
			top->sub = false;
		}
		/* a mapping item of the streamed sequence, or a mapping as the value of one of its
		 * members: its members, no JSON object */
		if (!seq && top && (top->streamed || top->members)) {
			push(r, NULL, menv_xcalloc(1, sizeof(struct menv_yaml_members)));
			r->stack[r->depth - 1].sub = !top->streamed;
		} else {
			push(r, seq ? json_array() : json_object(), NULL);
		}
		return READ_OK;
	}
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT: {
		struct frame f = r->stack[--r->depth];
		free(f.key);
		menv_strmap_clear(&f.keys);
		if (f.sub) {
			member_add(&r->stack[r->depth - 1], NULL, YAML_ANY_SCALAR_STYLE, f.members,
			           NULL);
			return READ_OK;
		}
		if (f.members) {
			struct frame *seq = &r->stack[r->depth - 1];
			int rc = r->item(r->ud, NULL, f.members, seq->items++, r->item_line);
			members_free(f.members);
			return rc ? READ_FALLBACK : READ_OK;
		}
		return attach(r, f.v, NULL);
	}
	default: return READ_FALLBACK; /* an alias, the stream's end before a document */
	}
}

/* libyaml's input from a file descriptor (`data`), a read at a time (a read error, or the
 * cancel flag during one, ends the input: the parser reports an error). */
static int fd_read(void *data, unsigned char *buffer, size_t size, size_t *size_read)
{
	for (;;) {
		ssize_t r = read(*(const int *)data, buffer, size);
		if (r < 0 && errno == EINTR && !menv_cancelled())
			continue;
		if (r < 0)
			return 0;
		*size_read = (size_t)r;
		return 1;
	}
}

/* menv_yaml_stream_json of what `parser` (initialized, its input set) reads; deletes it. */
static int stream(yaml_parser_t *parser, const char *src, const char *key,
                  int (*item)(void *ud, json_t *json, const struct menv_yaml_members *m,
                              size_t index, size_t line),
                  void *ud, json_t **out, struct menv_error *err)
{
	struct reader r = {.key = key, .item = item, .ud = ud};
	yaml_event_t ev;
	int rc = READ_OK;

	*out = NULL;
	while (rc == READ_OK) {
		if (menv_cancelled()) {
			rc = menv_error_set(err, MENV_EINTR, "%s: reading interrupted", src);
			break;
		}
		if (!yaml_parser_parse(parser, &ev)) {
			rc = READ_FALLBACK;
			break;
		}
		rc = event(&r, &ev);
		yaml_event_delete(&ev);
	}
	/* one document a file: another one after it (or garbage) is refused */
	if (rc == 2 && r.root) {
		int one = menv_yaml_single(parser, src, "file", err);
		if (one) {
			json_decref(r.root);
			r.root = NULL;
			rc = one;
		}
	}
	while (r.depth) {
		r.depth--;
		json_decref(r.stack[r.depth].v);
		members_free(r.stack[r.depth].members);
		free(r.stack[r.depth].key);
		menv_strmap_clear(&r.stack[r.depth].keys);
	}
	free(r.stack);
	yaml_parser_delete(parser);
	if (rc == 2 && r.root) {
		*out = r.root;
		return 0;
	}
	json_decref(r.root);
	return rc == 2 ? READ_FALLBACK : rc;
}

int menv_yaml_stream_json(const char *bytes, size_t len, const char *src, const char *key,
                          int (*item)(void *ud, json_t *json, const struct menv_yaml_members *m,
                                      size_t index, size_t line),
                          void *ud, json_t **out, struct menv_error *err)
{
	yaml_parser_t parser;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)bytes, len);
	return stream(&parser, src, key, item, ud, out, err);
}

int menv_yaml_stream_json_fd(int fd, const char *src, const char *key,
                             int (*item)(void *ud, json_t *json, const struct menv_yaml_members *m,
                                         size_t index, size_t line),
                             void *ud, json_t **out, struct menv_error *err)
{
	yaml_parser_t parser;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input(&parser, fd_read, &fd);
	return stream(&parser, src, key, item, ud, out, err);
}

size_t menv_yaml_line_at(const char *bytes, size_t len, const char *const *keys,
                         const size_t *index, size_t n, size_t *col)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	struct menv_error ign = {0};
	size_t line = 0;

	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)bytes, len);
	if (menv_yaml_load(&parser, &doc, "", &ign)) {
		yaml_parser_delete(&parser);
		return 0;
	}
	yaml_node_t *node = yaml_document_get_root_node(&doc);
	for (size_t i = 0; i < n && node; i++) {
		yaml_node_t *next = NULL;
		yaml_mark_t mark = {0, 0, 0};
		if (keys[i] && node->type == YAML_MAPPING_NODE) {
			/* a mapping's member: the line of its key (a JSON lock's "FILE": {...}) */
			for (yaml_node_pair_t *p = node->data.mapping.pairs.start;
			     p < node->data.mapping.pairs.top && !next; p++) {
				yaml_node_t *k = yaml_document_get_node(&doc, p->key);
				if (k && k->type == YAML_SCALAR_NODE &&
				    k->data.scalar.length == strlen(keys[i]) &&
				    !memcmp(k->data.scalar.value, keys[i], k->data.scalar.length)) {
					next = yaml_document_get_node(&doc, p->value);
					mark = k->start_mark;
				}
			}
		} else if (!keys[i] && node->type == YAML_SEQUENCE_NODE &&
		           index[i] < (size_t)(node->data.sequence.items.top -
		                               node->data.sequence.items.start)) {
			next = yaml_document_get_node(&doc,
			                              node->data.sequence.items.start[index[i]]);
			if (next)
				mark = next->start_mark;
		}
		node = next;
		if (node && i + 1 == n) {
			line = mark.line + 1;
			if (col)
				*col = mark.column + 1;
		}
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return line;
}

void menv_yaml_item_lines(const char *bytes, size_t len, const char *key, size_t *out, size_t n)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	struct menv_error ign = {0};

	memset(out, 0, n * sizeof(*out));
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)bytes, len);
	if (menv_yaml_load(&parser, &doc, "", &ign)) {
		yaml_parser_delete(&parser);
		return;
	}
	yaml_node_t *root = yaml_document_get_root_node(&doc), *seq = NULL;
	for (yaml_node_pair_t *p = root && root->type == YAML_MAPPING_NODE
	                                   ? root->data.mapping.pairs.start
	                                   : NULL;
	     p && p < root->data.mapping.pairs.top && !seq; p++) {
		yaml_node_t *k = yaml_document_get_node(&doc, p->key);
		if (k && k->type == YAML_SCALAR_NODE &&
		    !strcmp((const char *)k->data.scalar.value, key))
			seq = yaml_document_get_node(&doc, p->value);
	}
	if (seq && seq->type == YAML_SEQUENCE_NODE)
		for (size_t i = 0; i < n && i < (size_t)(seq->data.sequence.items.top -
		                                         seq->data.sequence.items.start);
		     i++) {
			yaml_node_t *it =
			        yaml_document_get_node(&doc, seq->data.sequence.items.start[i]);
			out[i] = it ? it->start_mark.line + 1 : 0;
		}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
}
