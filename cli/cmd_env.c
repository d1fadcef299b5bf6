/*
 * cmd_env.c - `menv env list` (the root prefix, the named environments under envs_dirs, the
 * prefixes of conda's registry ~/.conda/environments.txt that still are environments, and any
 * active prefix; each once, the active one marked like conda) and `menv env config vars
 * list|set|unset` (the `env_vars` of conda-meta/state).
 */
#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "envs.h"

static int strcmp_p(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has_meta(const char *prefix)
{
	char *m = menv_xasprintf("%s/conda-meta", prefix);
	struct stat sb;
	bool ok = stat(m, &sb) == 0 && S_ISDIR(sb.st_mode);
	free(m);
	return ok;
}

/* Lists `p` unless it is listed already (compared normalized: "/a//b/" is "/a/b"). */
static void add_env(struct menv_strvec *envs, struct menv_strvec *seen, const char *p)
{
	char *norm = p[0] == '/' ? menv_cli_envreg_normalize(p) : menv_xstrdup(p);
	if (menv_strvec_contains(seen, norm)) {
		free(norm);
		return;
	}
	menv_strvec_push_owned(seen, norm);
	menv_strvec_push(envs, p);
}

void menv_cli_envfile_warnings(const struct menv_envfile *ef)
{
	for (size_t i = 0; ef && i < ef->unknown.n; i++) {
		const char *colon = strchr(ef->unknown.v[i], ':');
		fprintf(stderr,
		        "menv: warning: %s:%.*s: unknown key '%s' is ignored (an environment file "
		        "has name, channels, dependencies, prefix and variables)\n",
		        ef->path ? ef->path : "environment file",
		        (int)(colon ? colon - ef->unknown.v[i] : 0), ef->unknown.v[i],
		        colon ? colon + 1 : ef->unknown.v[i]);
	}
}

void menv_cli_drop_reserved_vars(struct menv_strvec *names, struct menv_strvec *values,
                                 const char *where)
{
	size_t k = 0;
	for (size_t i = 0; i < names->n; i++) {
		if (menv_env_var_reserved(names->v[i])) {
			fprintf(stderr,
			        "menv: warning: %s: '%s' is set by activation itself and is "
			        "ignored\n",
			        where, names->v[i]);
			free(names->v[i]);
			free(values->v[i]);
			continue;
		}
		names->v[k] = names->v[i];
		values->v[k] = values->v[i];
		k++;
	}
	names->n = values->n = k;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: menv env list [--json]\n"
	           "       menv env update (-n NAME | -p PREFIX) -f environment.yml\n"
	           "       menv env config vars list [-n NAME | -p PREFIX] [--json]\n"
	           "       menv env config vars set [-n NAME | -p PREFIX] VAR=VALUE...\n"
	           "       menv env config vars unset [-n NAME | -p PREFIX] VAR...\n");
}

static int env_list(int argc, char **argv)
{
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_strvec envs = MENV_STRVEC_INIT, named = MENV_STRVEC_INIT;
	struct menv_strvec registered = MENV_STRVEC_INIT, seen = MENV_STRVEC_INIT;
	bool json = false;
	const char *active = getenv("CONDA_PREFIX");

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else {
			usage(stderr);
			return MENV_EXIT_USAGE;
		}
	}
	if (menv_config_load(&cfg, &err))
		return menv_cli_fail(&err);
	add_env(&envs, &seen, cfg.root_prefix);
	DIR *d = opendir(cfg.envs_dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *p = menv_xasprintf("%s/%s", cfg.envs_dir, de->d_name);
		if (has_meta(p))
			menv_strvec_push_owned(&named, p);
		else
			free(p);
	}
	if (d)
		closedir(d);
	if (named.n)
		qsort(named.v, named.n, sizeof(*named.v), strcmp_p);
	for (size_t i = 0; i < named.n; i++)
		add_env(&envs, &seen, named.v[i]);
	/* registered prefixes (created with -p, or by conda), in the order they were made;
	 * those removed by hand are skipped, as conda skips them */
	if (menv_cli_envreg_load(&registered, &err))
		fprintf(stderr, "menv: warning: %s\n", err.msg);
	for (size_t i = 0; i < registered.n; i++)
		if (has_meta(registered.v[i]))
			add_env(&envs, &seen, registered.v[i]);
	/* active prefixes outside the envs directory (created with -p) */
	for (int lvl = 0; lvl <= 64; lvl++) {
		char var[32];
		snprintf(var, sizeof(var), "CONDA_PREFIX_%d", lvl);
		const char *p = lvl == 0 ? active : getenv(var);
		if (p && *p && has_meta(p))
			add_env(&envs, &seen, p);
	}
	if (json) {
		json_t *j = json_object(), *a = json_array();
		for (size_t i = 0; i < envs.n; i++)
			json_array_append_new(a, json_string(envs.v[i]));
		json_object_set_new(j, "envs", a);
		char *s = json_dumps(j, JSON_INDENT(2));
		printf("%s\n", s);
		free(s);
		json_decref(j);
	} else {
		size_t dl = strlen(cfg.envs_dir);
		char *act = !active || !*active ? NULL
		            : active[0] == '/'  ? menv_cli_envreg_normalize(active)
		                                : menv_xstrdup(active);
		printf("# menv environments:\n#\n");
		for (size_t i = 0; i < envs.n; i++) {
			const char *p = envs.v[i], *nm = "";
			if (i == 0)
				nm = "base";
			else if (!strncmp(p, cfg.envs_dir, dl) && p[dl] == '/' &&
			         !strchr(p + dl + 1, '/'))
				nm = p + dl + 1;
			/* seen.v[i] is envs.v[i] normalized */
			printf("%-20s  %s  %s\n", nm, act && !strcmp(act, seen.v[i]) ? "*" : " ",
			       p);
		}
		free(act);
	}
	menv_strvec_clear(&envs);
	menv_strvec_clear(&named);
	menv_strvec_clear(&registered);
	menv_strvec_clear(&seen);
	menv_config_release(&cfg);
	return 0;
}

static int config_vars(int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"name", required_argument, NULL, 'n'},
	        {"prefix", required_argument, NULL, 'p'},
	        {"json", no_argument, NULL, 'j'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	struct menv_config cfg = {0};
	struct menv_error err = {0};
	struct menv_strvec names = MENV_STRVEC_INIT, values = MENV_STRVEC_INIT;
	const char *name = NULL, *path = NULL, *sub = argc > 1 ? argv[1] : "";
	char *prefix = NULL;
	bool json = false;
	int c, rc = 0, exit_code = 0;

	optind = 1;
	while ((c = getopt_long(argc - 1, argv + 1, "n:p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': name = optarg; break;
		case 'p': path = optarg; break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return MENV_EXIT_USAGE;
		}
	}
	int nargs = argc - 1 - optind;
	char **args = argv + 1 + optind;
	if (strcmp(sub, "list") && strcmp(sub, "set") && strcmp(sub, "unset")) {
		rc = menv_error_set(&err, MENV_EUSAGE,
		                    "unknown 'env config vars' command '%s' (use "
		                    "list, set or unset)",
		                    sub);
		goto out;
	}
	if (!strcmp(sub, "list") ? nargs != 0 : nargs == 0) {
		rc = menv_error_set(&err, MENV_EUSAGE, "'env config vars %s' takes %s", sub,
		                    !strcmp(sub, "list")  ? "no arguments"
		                    : !strcmp(sub, "set") ? "VAR=VALUE arguments"
		                                          : "VAR arguments");
		goto out;
	}
	rc = menv_config_load(&cfg, &err);
	if (rc)
		goto out;
	prefix = menv_cli_env_prefix(&cfg, name, path, &err);
	if (!prefix) {
		rc = err.code;
		goto out;
	}
	if (!strcmp(sub, "list")) {
		rc = menv_env_state_vars_load(prefix, &names, &values, &err);
		if (rc)
			goto out;
		if (json) {
			json_t *j = json_object();
			for (size_t i = 0; i < names.n; i++)
				json_object_set_new(j, names.v[i], json_string(values.v[i]));
			char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
			printf("%s\n", s);
			free(s);
			json_decref(j);
		} else {
			for (size_t i = 0; i < names.n; i++)
				printf("%s = %s\n", names.v[i], values.v[i]);
		}
	} else if (!strcmp(sub, "set")) {
		for (int i = 0; i < nargs; i++) {
			const char *eq = strchr(args[i], '=');
			if (!eq || eq == args[i]) {
				rc = menv_error_set(&err, MENV_EUSAGE,
				                    "expected VAR=VALUE, got '%s'", args[i]);
				goto out;
			}
			/* split at the first '=' only: the value keeps every later '=' (BR-029) */
			menv_strvec_push_owned(&names,
			                       menv_xstrndup(args[i], (size_t)(eq - args[i])));
			menv_strvec_push(&values, eq + 1);
		}
		menv_cli_drop_reserved_vars(&names, &values, "env config vars set");
		rc = menv_env_state_vars_set(prefix, &names, &values, &err);
		if (!rc && !json)
			fprintf(stderr,
			        "reactivate the environment for the change to take effect\n");
	} else {
		for (int i = 0; i < nargs; i++)
			menv_strvec_push(&names, args[i]);
		rc = menv_env_state_vars_unset(prefix, &names, &err);
		if (!rc && !json)
			fprintf(stderr,
			        "reactivate the environment for the change to take effect\n");
	}
out:
	if (rc)
		exit_code = menv_cli_fail(&err);
	menv_strvec_clear(&names);
	menv_strvec_clear(&values);
	free(prefix);
	menv_config_release(&cfg);
	return exit_code;
}

int menv_cmd_env(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? MENV_EXIT_USAGE : 0;
	}
	if (!strcmp(argv[1], "list"))
		return env_list(argc - 1, argv + 1);
	if (!strcmp(argv[1], "update"))
		return menv_cmd_env_update(argc - 1, argv + 1);
	if (!strcmp(argv[1], "config") && argc > 2 && !strcmp(argv[2], "vars"))
		return config_vars(argc - 2, argv + 2);
	fprintf(stderr, "menv: error: unknown env command '%s'\n", argv[1]);
	usage(stderr);
	return MENV_EXIT_USAGE;
}
