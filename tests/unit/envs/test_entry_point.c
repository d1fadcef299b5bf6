/* Entry points and .pyc paths of noarch python packages as conda 26.7.1 writes them. Every
 * expected value below is conda's own answer, produced by running conda (tag 26.7.1, never
 * committed here) with Debian 12's /usr/bin/python3 (3.11.2) and python3-boltons,
 * -ruamel.yaml, -pluggy, -platformdirs, -requests, -tqdm, -zstandard, -packaging, plus a
 * dict-subclass stand-in for frozendict:
 *   git archive 26.7.1 conda | tar -x -C /tmp/conda-oracle
 *   cd /tmp/conda-oracle && PYTHONPATH=.:/tmp/conda-stubs /usr/bin/python3 ep.py cases.json
 * where ep.py calls, for each case, conda.gateways.disk.create.create_python_entry_point(
 * target, join(prefix, conda.common.path.get_python_short_path(pyver)), module, func) and
 * prints the bytes written (mode 0755 under umask 022), and
 *   python3 -c 'from conda.common.path import pyc_path; print(pyc_path(path, pyver))'
 * for the .pyc paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "link.h"

struct ep_case {
	const char *prefix, *pyver, *module, *func, *want;
};

static const struct ep_case conda_eps[] = {
        {"/opt/envs/ops", "3.9", "pip._internal.cli.main", "main",
         "#!/opt/envs/ops/bin/python3.9\n"
         "# -*- coding: utf-8 -*-\n"
         "import re\n"
         "import sys\n"
         "\n"
         "from pip._internal.cli.main import main\n"
         "\n"
         "if __name__ == '__main__':\n"
         "    sys.argv[0] = re.sub(r'(-script\\.pyw?|\\.exe)?$', '', sys.argv[0])"
         "\n"
         "    sys.exit(main())\n"},
        {"/opt/envs/ops", "3.11", "flask.cli", "main",
         "#!/opt/envs/ops/bin/python3.11\n"
         "# -*- coding: utf-8 -*-\n"
         "import re\n"
         "import sys\n"
         "\n"
         "from flask.cli import main\n"
         "\n"
         "if __name__ == '__main__':\n"
         "    sys.argv[0] = re.sub(r'(-script\\.pyw?|\\.exe)?$', '', sys.argv[0])"
         "\n"
         "    sys.exit(main())\n"},
        {"/opt/envs/ops", "3.9", "IPython", "start_ipython",
         "#!/opt/envs/ops/bin/python3.9\n"
         "# -*- coding: utf-8 -*-\n"
         "import re\n"
         "import sys\n"
         "\n"
         "from IPython import start_ipython\n"
         "\n"
         "if __name__ == '__main__':\n"
         "    sys.argv[0] = re.sub(r'(-script\\.pyw?|\\.exe)?$', '', sys.argv[0])"
         "\n"
         "    sys.exit(start_ipython())\n"},
        {"/opt/envs/ops", "3.9", "jupyter_core.command", "main",
         "#!/opt/envs/ops/bin/python3.9\n"
         "# -*- coding: utf-8 -*-\n"
         "import re\n"
         "import sys\n"
         "\n"
         "from jupyter_core.command import main\n"
         "\n"
         "if __name__ == '__main__':\n"
         "    sys.argv[0] = re.sub(r'(-script\\.pyw?|\\.exe)?$', '', sys.argv[0])"
         "\n"
         "    sys.exit(main())\n"},
        {"/opt/envs/ops", "3.9", "pkg.mod", "Klass.method",
         "#!/opt/envs/ops/bin/python3.9\n"
         "# -*- coding: utf-8 -*-\n"
         "import re\n"
         "import sys\n"
         "\n"
         "from pkg.mod import Klass\n"
         "\n"
         "if __name__ == '__main__':\n"
         "    sys.argv[0] = re.sub(r'(-script\\.pyw?|\\.exe)?$', '', sys.argv[0])"
         "\n"
         "    sys.exit(Klass.method())\n"},
        {"/opt/env with space/x", "3.9", "pip._internal.cli.main", "main",
         "#!/bin/sh\n"
         "'''exec' \"/opt/env with space/x/bin/python3.9\" \"$0\" \"$@\" #'''\n"
         "# -*- coding: utf-8 -*-\n"
         "import re\n"
         "import sys\n"
         "\n"
         "from pip._internal.cli.main import main\n"
         "\n"
         "if __name__ == '__main__':\n"
         "    sys.argv[0] = re.sub(r'(-script\\.pyw?|\\.exe)?$', '', sys.argv[0])"
         "\n"
         "    sys.exit(main())\n"},
        {"/opt/pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp"
         "ppppppppppppppppppppppppppppppppppppppp",
         "3.9", "pip._internal.cli.main", "main",
         "#!/opt/pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp"
         "ppppppppppppppppppppppppppppppppppppppppp/bin/python3.9\n"
         "# -*- coding: utf-8 -*-\n"
         "import re\n"
         "import sys\n"
         "\n"
         "from pip._internal.cli.main import main\n"
         "\n"
         "if __name__ == '__main__':\n"
         "    sys.argv[0] = re.sub(r'(-script\\.pyw?|\\.exe)?$', '', sys.argv[0])"
         "\n"
         "    sys.exit(main())\n"},
        {"/opt/pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp"
         "pppppppppppppppppppppppppppppppppppppppp",
         "3.9", "pip._internal.cli.main", "main",
         "#!/bin/sh\n"
         "'''exec' \"/opt/ppppppppppppppppppppppppppppppppppppppppppppppppppppppp"
         "ppppppppppppppppppppppppppppppppppppppppppppppppppp/bin/python3.9\" \"$"
         "0\" \"$@\" #'''\n"
         "# -*- coding: utf-8 -*-\n"
         "import re\n"
         "import sys\n"
         "\n"
         "from pip._internal.cli.main import main\n"
         "\n"
         "if __name__ == '__main__':\n"
         "    sys.argv[0] = re.sub(r'(-script\\.pyw?|\\.exe)?$', '', sys.argv[0])"
         "\n"
         "    sys.exit(main())\n"},
        {"/opt/qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq"
         "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq"
         "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq",
         "3.10", "pip._internal.cli.main", "main",
         "#!/bin/sh\n"
         "'''exec' \"/opt/qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq"
         "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq"
         "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq"
         "qqq/bin/python3.10\" \"$0\" \"$@\" #'''\n"
         "# -*- coding: utf-8 -*-\n"
         "import re\n"
         "import sys\n"
         "\n"
         "from pip._internal.cli.main import main\n"
         "\n"
         "if __name__ == '__main__':\n"
         "    sys.argv[0] = re.sub(r'(-script\\.pyw?|\\.exe)?$', '', sys.argv[0])"
         "\n"
         "    sys.exit(main())\n"},
        {"/home/u/d\xc3\xa9mo/env", "3.9", "pip._internal.cli.main", "main",
         "#!/home/u/d\xc3\xa9mo/env/bin/python3.9\n"
         "# -*- coding: utf-8 -*-\n"
         "import re\n"
         "import sys\n"
         "\n"
         "from pip._internal.cli.main import main\n"
         "\n"
         "if __name__ == '__main__':\n"
         "    sys.argv[0] = re.sub(r'(-script\\.pyw?|\\.exe)?$', '', sys.argv[0])"
         "\n"
         "    sys.exit(main())\n"},
        {"/opt/py2env", "2.7", "greetpkg.cli", "main",
         "#!/opt/py2env/bin/python2.7\n"
         "# -*- coding: utf-8 -*-\n"
         "import re\n"
         "import sys\n"
         "\n"
         "from greetpkg.cli import main\n"
         "\n"
         "if __name__ == '__main__':\n"
         "    sys.argv[0] = re.sub(r'(-script\\.pyw?|\\.exe)?$', '', sys.argv[0])"
         "\n"
         "    sys.exit(main())\n"},
        {"/opt/\xc3\xa9pppppppppppppppppppppppppppppppppppppppppppppppppppppppppp"
         "pppppppppppppppppppppppppppppppppppppppppppppp",
         "3.9", "pip._internal.cli.main", "main",
         "#!/opt/\xc3\xa9pppppppppppppppppppppppppppppppppppppppppppppppppppppppp"
         "pppppppppppppppppppppppppppppppppppppppppppppppp/bin/python3.9\n"
         "# -*- coding: utf-8 -*-\n"
         "import re\n"
         "import sys\n"
         "\n"
         "from pip._internal.cli.main import main\n"
         "\n"
         "if __name__ == '__main__':\n"
         "    sys.argv[0] = re.sub(r'(-script\\.pyw?|\\.exe)?$', '', sys.argv[0])"
         "\n"
         "    sys.exit(main())\n"},
        {"/opt/\xc3\xa9pppppppppppppppppppppppppppppppppppppppppppppppppppppppppp"
         "ppppppppppppppppppppppppppppppppppppppppppppppp",
         "3.9", "pip._internal.cli.main", "main",
         "#!/bin/sh\n"
         "'''exec' \"/opt/\xc3\xa9ppppppppppppppppppppppppppppppppppppppppppppppp"
         "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppp/bin/python3."
         "9\" \"$0\" \"$@\" #'''\n"
         "# -*- coding: utf-8 -*-\n"
         "import re\n"
         "import sys\n"
         "\n"
         "from pip._internal.cli.main import main\n"
         "\n"
         "if __name__ == '__main__':\n"
         "    sys.argv[0] = re.sub(r'(-script\\.pyw?|\\.exe)?$', '', sys.argv[0])"
         "\n"
         "    sys.exit(main())\n"},
};

static void test_conda_entry_points(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(conda_eps) / sizeof(conda_eps[0]); i++) {
		const struct ep_case *c = &conda_eps[i];
		char *got = menv_python_entry_point(c->prefix, c->pyver, c->module, c->func);
		if (strcmp(got, c->want))
			print_error("case %zu (prefix of %zu bytes):\n%s\n--- conda:\n%s\n", i,
			            strlen(c->prefix), got, c->want);
		assert_string_equal(got, c->want);
		free(got);
	}
}

/* Where conda's bytes would not run, menv's differ (link.h): a tab in the prefix takes the
 * sh form, and the characters sh would expand inside double quotes are escaped. */
static void test_menv_differs(void **state)
{
	(void)state;
	char *got = menv_python_shebang("/opt/a\tb", "3.9");
	assert_string_equal(got,
	                    "#!/bin/sh\n'''exec' \"/opt/a\tb/bin/python3.9\" \"$0\" \"$@\" #'''\n");
	free(got);
	got = menv_python_shebang("/opt/s p/$HOME/`x`/\"q\"/b\\s", "3.9");
	assert_string_equal(got, "#!/bin/sh\n'''exec' \"/opt/s "
	                         "p/\\$HOME/\\`x\\`/\\\"q\\\"/b\\\\s/bin/python3.9\" "
	                         "\"$0\" \"$@\" #'''\n");
	free(got);
}

static const char *const conda_pyc[][3] = {
        {"lib/python3.9/site-packages/pip/__init__.py", "3.9",
         "lib/python3.9/site-packages/pip/__pycache__/__init__.cpython-39.pyc"},
        {"lib/python3.10/site-packages/a/b/mod.py", "3.10",
         "lib/python3.10/site-packages/a/b/__pycache__/mod.cpython-310.pyc"},
        {"mod.py", "3.9", "__pycache__/mod.cpython-39.pyc"},
        {"lib/python2.7/site-packages/six.py", "2.7", "lib/python2.7/site-packages/six.pyc"},
        {"lib/python3.9/site-packages/x/.hidden.py", "3.9",
         "lib/python3.9/site-packages/x/__pycache__/.hidden.cpython-39.pyc"},
        {"lib/python3.9/site-packages/x/a.b.py", "3.9",
         "lib/python3.9/site-packages/x/__pycache__/a.b.cpython-39.pyc"},
};

static void test_conda_pyc_path(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(conda_pyc) / sizeof(conda_pyc[0]); i++) {
		char *got = menv_pyc_path(conda_pyc[i][0], conda_pyc[i][1]);
		assert_string_equal(got, conda_pyc[i][2]);
		free(got);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_conda_entry_points),
	        cmocka_unit_test(test_menv_differs),
	        cmocka_unit_test(test_conda_pyc_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
