/* The link and unlink order: menv_conda_order and menv_plan_conda_order give conda 26.7.1's
 * answers (linkorder_cases.json, made by linkorder_oracle.py with conda's PrefixGraph and
 * diff_for_unlink_link_precs): random sets with cycles, self and duplicate dependencies,
 * python/pip and menuinst, records of two channels and subdirs; changes (installed and final
 * sets); the toolchain and torch environments' records. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "txnpriv.h"

static json_t *cases;

static char *dist_of(json_t *r)
{
	return menv_xasprintf("%s-%s-%s", json_string_value(json_object_get(r, "name")),
	                      json_string_value(json_object_get(r, "version")),
	                      json_string_value(json_object_get(r, "build")));
}

/* Whether the dists of `got` (n records' JSON) are the strings of `want`, in order; prints the
 * first difference. */
static bool same_order(const char *what, json_t *const *got, size_t n, json_t *want)
{
	if (n != json_array_size(want)) {
		print_error("%s: %zu records, conda %zu\n", what, n, json_array_size(want));
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		char *d = dist_of(got[i]);
		bool ok = strcmp(d, json_string_value(json_array_get(want, i))) == 0;
		if (!ok)
			print_error("%s: place %zu: menv %s, conda %s\n", what, i, d,
			            json_string_value(json_array_get(want, i)));
		free(d);
		if (!ok)
			return false;
	}
	return true;
}

static void test_create_orders(void **state)
{
	(void)state;
	size_t i, ncases = 0;
	json_t *c;
	json_array_foreach(json_object_get(cases, "cases"), i, c)
	{
		json_t *recs = json_object_get(c, "records");
		if (!recs)
			continue;
		size_t n = json_array_size(recs);
		struct menv_order_node *nd = menv_xcalloc(n + 1, sizeof(*nd));
		size_t *pos = menv_xcalloc(n + 1, sizeof(*pos));
		json_t **got = menv_xcalloc(n + 1, sizeof(*got));
		for (size_t k = 0; k < n; k++) {
			json_t *r = json_array_get(recs, k);
			nd[k].name = json_string_value(json_object_get(r, "name"));
			nd[k].depends = json_object_get(r, "depends");
			char *d = dist_of(r);
			nd[k].key = menv_xasprintf(
			        "%s::%s", json_string_value(json_object_get(r, "channel")), d);
			free(d);
		}
		menv_conda_order(nd, n, pos);
		for (size_t k = 0; k < n; k++)
			got[k] = json_array_get(recs, pos[k]);
		assert_true(same_order(json_string_value(json_object_get(c, "name")), got, n,
		                       json_object_get(c, "order")));
		for (size_t k = 0; k < n; k++)
			free((char *)nd[k].key);
		free(nd);
		free(pos);
		free(got);
		ncases++;
	}
	assert_true(ncases >= 100);
}

/* The records of `set` as a prefix's (inst) or as records to link. */
static void load_installed(json_t *set, struct menv_prefix_record **out, size_t *n)
{
	*n = json_array_size(set);
	*out = menv_xcalloc(*n + 1, sizeof(**out));
	for (size_t k = 0; k < *n; k++) {
		json_t *r = json_array_get(set, k);
		(*out)[k].json = r;
		(*out)[k].name = json_string_value(json_object_get(r, "name"));
		(*out)[k].version = json_string_value(json_object_get(r, "version"));
		(*out)[k].build = json_string_value(json_object_get(r, "build"));
		(*out)[k].channel = json_string_value(json_object_get(r, "channel"));
	}
}

static bool in_set(json_t *set, const char *dist)
{
	size_t i;
	json_t *r;
	json_array_foreach(set, i, r)
	{
		char *d = dist_of(r);
		bool eq = strcmp(d, dist) == 0;
		free(d);
		if (eq)
			return true;
	}
	return false;
}

static void test_change_orders(void **state)
{
	(void)state;
	size_t i, ncases = 0;
	json_t *c;
	json_array_foreach(json_object_get(cases, "cases"), i, c)
	{
		json_t *instset = json_object_get(c, "installed"),
		       *final = json_object_get(c, "final");
		if (!instset)
			continue;
		const char *name = json_string_value(json_object_get(c, "name"));
		struct menv_prefix_record *inst;
		size_t ninst, nf = json_array_size(final), nunlink = 0, nlink = 0;
		load_installed(instset, &inst, &ninst);
		/* what leaves (in the installed order) and what comes (in the final set's order):
		 * menv_plan_conda_order puts them in conda's */
		json_t **unlink = menv_xcalloc(ninst + 1, sizeof(*unlink));
		for (size_t k = 0; k < ninst; k++) {
			char *d = dist_of(inst[k].json);
			if (!in_set(final, d))
				unlink[nunlink++] = inst[k].json;
			free(d);
		}
		struct menv_record *recs = menv_xcalloc(nf + 1, sizeof(*recs));
		const struct menv_record **link = menv_xcalloc(nf + 1, sizeof(*link));
		for (size_t k = 0; k < nf; k++) {
			json_t *r = json_array_get(final, k);
			char *d = dist_of(r);
			if (!in_set(instset, d)) {
				char *fn = menv_xasprintf("%s.conda", d);
				struct menv_error err = {0};
				assert_int_equal(
				        menv_record_from_json(
				                &recs[nlink], r, fn,
				                json_string_value(json_object_get(r, "channel")),
				                NULL, &err),
				        0);
				link[nlink] = &recs[nlink];
				nlink++;
				free(fn);
			}
			free(d);
		}
		menv_plan_conda_order(inst, ninst, link, nlink, unlink, nunlink);
		char *what = menv_xasprintf("%s unlink", name);
		assert_true(same_order(what, unlink, nunlink, json_object_get(c, "unlink")));
		free(what);
		json_t **got = menv_xcalloc(nlink + 1, sizeof(*got));
		for (size_t k = 0; k < nlink; k++)
			got[k] = link[k]->json;
		what = menv_xasprintf("%s link", name);
		assert_true(same_order(what, got, nlink, json_object_get(c, "link")));
		free(what);
		for (size_t k = 0; k < nlink; k++)
			menv_record_release(&recs[k]);
		free(got);
		free(recs);
		free(link);
		free(unlink);
		free(inst);
		ncases++;
	}
	assert_true(ncases >= 40);
}

/* The order of the records of `recs` (a JSON text: [{name, depends, key}...]) is `want`
 * (names, space-separated). */
static bool orders_as(const char *recs, const char *want)
{
	json_error_t je;
	json_t *a = json_loads(recs, 0, &je);
	assert_non_null(a);
	size_t n = json_array_size(a);
	struct menv_order_node *nd = menv_xcalloc(n + 1, sizeof(*nd));
	size_t *pos = menv_xcalloc(n + 1, sizeof(*pos));
	for (size_t k = 0; k < n; k++) {
		json_t *r = json_array_get(a, k);
		nd[k].name = json_string_value(json_object_get(r, "name"));
		nd[k].depends = json_object_get(r, "depends");
		nd[k].key = json_string_value(json_object_get(r, "key"));
	}
	menv_conda_order(nd, n, pos);
	char *got = menv_xstrdup("");
	for (size_t k = 0; k < n; k++) {
		char *g = menv_xasprintf("%s%s%s", got, k ? " " : "", nd[pos[k]].name);
		free(got);
		got = g;
	}
	bool ok = strcmp(got, want) == 0;
	if (!ok)
		print_error("menv %s, conda %s\n", got, want);
	free(got);
	free(nd);
	free(pos);
	json_decref(a);
	return ok;
}

/* Hostile sets, each with conda 26.7.1's order (PrefixGraph(records).graph). */
static void test_odd_sets(void **state)
{
	(void)state;
	/* python depending on itself: conda's menuinst case runs before self edges go, so
	 * python is among its own parents and gets menuinst as a parent */
	assert_true(orders_as(
	        "[{\"name\": \"a\", \"depends\": [\"python\"], \"key\": \"c::a-1-0\"},"
	        " {\"name\": \"python\", \"depends\": [\"python\"], \"key\": \"c::python-3-0\"},"
	        " {\"name\": \"menuinst\", \"depends\": [\"zz\"], \"key\": \"c::menuinst-2-0\"},"
	        " {\"name\": \"zz\", \"depends\": [], \"key\": \"c::zz-1-0\"}]",
	        "zz menuinst python a"));
}

/* A chain of 100,000 records and 50,000 two-record cycles order in well under a second (the
 * cycle breaker is a heap, not a scan of what is left per break). */
static void test_linear(void **state)
{
	(void)state;
	size_t n = 100000;
	struct menv_order_node *nd = menv_xcalloc(n + 1, sizeof(*nd));
	size_t *pos = menv_xcalloc(n + 1, sizeof(*pos));
	char **names = menv_xcalloc(n + 1, sizeof(*names));
	for (size_t k = 0; k < n; k++)
		names[k] = menv_xasprintf("p%06zu", k);
	for (int shape = 0; shape < 2; shape++) {
		for (size_t k = 0; k < n; k++) {
			/* chain: p(k) depends on p(k+1); pairs: p(2j) and p(2j+1) on each other */
			size_t to = shape == 0 ? k + 1 : (k ^ 1);
			nd[k].name = names[k];
			nd[k].key = names[k];
			nd[k].depends = to < n ? json_pack("[s]", names[to]) : json_array();
		}
		menv_conda_order(nd, n, pos);
		if (shape == 0) {
			for (size_t k = 0; k < n; k++)
				assert_int_equal(pos[k], n - 1 - k);
		} else {
			/* each pair: the lesser dist_str first (the same parents left) */
			for (size_t k = 0; k < n; k++)
				assert_int_equal(pos[k], k);
		}
		for (size_t k = 0; k < n; k++)
			json_decref(nd[k].depends);
	}
	for (size_t k = 0; k < n; k++)
		free(names[k]);
	free(names);
	free(nd);
	free(pos);
}

int main(void)
{
	json_error_t je;
	cases = json_load_file(MENV_SOURCE "/tests/unit/envs/linkorder_cases.json", 0, &je);
	if (!cases) {
		fprintf(stderr, "linkorder_cases.json: %s\n", je.text);
		return 1;
	}
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_create_orders),
	        cmocka_unit_test(test_change_orders),
	        cmocka_unit_test(test_odd_sets),
	        cmocka_unit_test(test_linear),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	json_decref(cases);
	return rc;
}
