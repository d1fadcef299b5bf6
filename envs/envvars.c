/*
 * envvars.c - an environment's own variables (conda's `env config vars set/unset` and an
 * environment file's `variables:`): VAR=VALUE arguments checked, the names activation sets
 * itself dropped with a warning, conda-meta/state edited under the prefix lock; and the
 * warnings an environment file's reading left (unknown keys, notes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "activate.h"
#include "txn.h"
#include "txnpriv.h"

void menv_env_vars_drop_reserved(struct menv_strvec *names, struct menv_strvec *values,
                                 struct menv_strvec *dropped)
{
	size_t k = 0;
	for (size_t i = 0; i < names->n; i++) {
		if (menv_env_var_reserved(names->v[i])) {
			menv_strvec_push_owned(dropped, names->v[i]);
			free(values->v[i]);
			continue;
		}
		names->v[k] = names->v[i];
		values->v[k] = values->v[i];
		k++;
	}
	names->n = values->n = k;
}

int menv_env_vars_assignments(char *const *args, size_t n, struct menv_strvec *names,
                              struct menv_strvec *values, struct menv_error *err)
{
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(args[i], '=');
		char *name = eq ? menv_xstrndup(args[i], (size_t)(eq - args[i])) : NULL;
		if (!name || !menv_env_var_name_ok(name)) {
			free(name);
			return menv_error_set(err, MENV_EUSAGE, "expected VAR=VALUE, got '%s'",
			                      args[i]);
		}
		/* split at the first '=' only: the value keeps every later '=' (BR-029) */
		if (names)
			menv_strvec_push_owned(names, name);
		else
			free(name);
		if (values)
			menv_strvec_push(values, eq + 1);
	}
	return 0;
}

int menv_env_config_vars_edit(const char *prefix, bool set, char *const *args, size_t n,
                              menv_env_cb cb, void *ud, struct menv_strvec *warnings,
                              struct menv_error *err)
{
	struct menv_strvec names = MENV_STRVEC_INIT, values = MENV_STRVEC_INIT;
	struct menv_strvec dropped = MENV_STRVEC_INIT;
	int lock_fd = -1;
	/* set and unset read-modify-write conda-meta/state under the prefix lock */
	int rc = menv_env_lock(prefix, false, cb, ud, &lock_fd, err);
	if (!rc && set)
		rc = menv_env_vars_assignments(args, n, &names, &values, err);
	if (!rc && set) {
		menv_env_vars_drop_reserved(&names, &values, &dropped);
		for (size_t i = 0; i < dropped.n; i++)
			menv_strvec_push_owned(warnings,
			                       menv_xasprintf("env config vars set: '%s' is set by "
			                                      "activation itself and is ignored",
			                                      dropped.v[i]));
		rc = menv_env_state_vars_set(prefix, &names, &values, err);
	} else if (!rc) {
		for (size_t i = 0; i < n; i++)
			menv_strvec_push(&names, args[i]);
		rc = menv_env_state_vars_unset(prefix, &names, err);
	}
	menv_env_unlock(lock_fd);
	menv_strvec_clear(&names);
	menv_strvec_clear(&values);
	menv_strvec_clear(&dropped);
	return rc;
}

void menv_envfile_check(struct menv_envfile *ef, struct menv_strvec *warnings)
{
	struct menv_strvec dropped = MENV_STRVEC_INIT;
	const char *where = ef->path ? ef->path : "environment file";
	for (size_t i = 0; i < ef->unknown.n; i++) {
		const char *colon = strchr(ef->unknown.v[i], ':');
		menv_strvec_push_owned(
		        warnings,
		        menv_xasprintf("%s:%.*s: unknown key '%s' is ignored (an environment file "
		                       "has name, channels, dependencies, prefix and variables)",
		                       where, (int)(colon ? colon - ef->unknown.v[i] : 0),
		                       ef->unknown.v[i], colon ? colon + 1 : ef->unknown.v[i]));
	}
	for (size_t i = 0; i < ef->notes.n; i++)
		menv_strvec_push(warnings, ef->notes.v[i]);
	menv_env_vars_drop_reserved(&ef->var_names, &ef->var_values, &dropped);
	for (size_t i = 0; i < dropped.n; i++)
		menv_strvec_push_owned(warnings,
		                       menv_xasprintf("%s: '%s' is set by activation itself and is "
		                                      "ignored",
		                                      where, dropped.v[i]));
	menv_strvec_clear(&dropped);
}
