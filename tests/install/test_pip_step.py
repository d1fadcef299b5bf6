"""The pip step as part of the transaction (issue 22), with a stand-in `python -m pip` (a shell
script shipped as the environment's python; it writes a package folder, then its dist-info):
- a failing pip step in `env update` removes everything pip wrote, dist-info or not (before:
  `site-packages/agood/__init__.py` stayed without dist-info): the FULL prefix is as before;
- `create -f` killed at every crash point (the link steps and inside the pip step) leaves no
  environment (not in `env list`, not registered, nothing left in the envs folder) or the
  complete one, and the next command says which."""
import os
import shutil

from insttest import main, pkg
from insttest import snapshot_undated as snapshot
from menvtest import write_text

FAKE = r'''#!/bin/sh
# a stand-in for `python -m pip`: install -r FILE writes NAME/__init__.py then its dist-info;
# a name ending in -half writes the folder and fails before its dist-info; uninstall NAME...
P="$(cd "$(dirname "$0")/.." && pwd)"
SP="$P/lib/python3.9/site-packages"
[ "$1" = "-m" ] && [ "$2" = "pip" ] || exit 0
cmd="$3"; shift 3
case "$cmd" in
uninstall)
	for a; do case "$a" in -*) ;; *) rm -rf "$SP/$a" "$SP/$a"-*.dist-info ;; esac; done
	exit 0 ;;
install)
	while [ $# -gt 0 ]; do [ "$1" = "-r" ] && R="$2"; shift; done
	mkdir -p "$SP"
	while read -r name; do
		base="${name%-half}"
		mkdir -p "$SP/$base"; echo "x = 1" > "$SP/$base/__init__.py"
		[ "$base" != "$name" ] && exit 1
		d="$SP/$base-1.0.dist-info"; mkdir -p "$d"
		printf 'Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n' "$base" > "$d/METADATA"
		echo pip > "$d/INSTALLER"
		printf '%s/__init__.py,,\n' "$base" > "$d/RECORD"
	done < "$R"
	exit 0 ;;
esac
exit 0
'''


def body(t):
    ch = os.path.join(t.tmp, "chan")
    pkg(ch, "python", "3.9.2", files={"bin/python": {"data": FAKE, "mode": 0o755},
                                      "lib/python3.9/os.py": "# os\n"})
    pkg(ch, "pip", "23.0", depends=["python"], files={"share/pip.txt": "pip\n"})
    t.index(ch)
    reg = os.path.join(t.home, ".conda", "environments.txt")

    def envfile(name, pip=None):
        f = os.path.join(t.tmp, name + ".yml")
        text = "channels: [%s, nodefaults]\ndependencies:\n  - python\n" % t.url(ch)
        if pip:
            text += "  - pip:\n" + "".join("      - %s\n" % p for p in pip)
        write_text(f, text)
        return f

    # ---- env update whose pip step fails half-way
    e = os.path.join(t.envs, "e")
    t.menv_ok("create", "-q", "-n", "e", "-f", envfile("plain"))
    t.menv_ok("env", "update", "-q", "-n", "e", "-f", envfile("one", ["aone"]))
    before = snapshot(e)
    t.check("lib/python3.9/site-packages/aone-1.0.dist-info/METADATA" in before,
            "(the stand-in pip installs)")
    r = t.menv_run("env", "update", "-q", "-n", "e", "-f", envfile("half", ["aone", "agood-half"]))
    t.check(r.rc != 0, "env update with a failing pip step fails", r)
    got = snapshot(e)
    t.eq(sorted(k for k in got if k not in before), [],
         "a failed pip step leaves no file it wrote (agood/__init__.py without dist-info)")
    t.eq(got, before, "the prefix is exactly as before the failed env update")

    # ---- create -f killed at every crash point
    c = os.path.join(t.envs, "c")
    f = envfile("withpip", ["agood"])
    t.menv_ok("create", "-q", "-n", "c", "-f", f)
    after = snapshot(c)
    t.check("lib/python3.9/site-packages/agood-1.0.dist-info/METADATA" in after,
            "(create ran the pip step)")
    t.menv_ok("env", "remove", "-y", "-q", "-n", "c")
    reg_before = open(reg).read()
    n, seen = 1, []
    while n < 200:
        r = t.menv_run("create", "-q", "-n", "c", "-f", f, env={"MENV_TEST_CRASH_AFTER": str(n)})
        if r.rc == 0:
            t.eq(snapshot(c), after, "create not killed (N=%d) is the complete environment" % n)
            break
        if not t.check(r.rc == -9, "create -f killed at point %d" % n, r):
            break
        nxt = t.menv_run("list", "-n", "c")
        envs = t.menv_ok("env", "list", "--json").json()["envs"]
        if os.path.exists(c):
            t.eq(snapshot(c), after, "point %d: the environment left is the complete one" % n)
            seen.append("%d:a" % n)
            t.check(c in envs, "point %d: env list shows the complete environment" % n)
            shutil.rmtree(c)
            with open(reg, "w") as g:
                g.write(reg_before)
        else:
            seen.append("%d:b" % n)
            t.check(c not in envs, "point %d: env list does not show it" % n, envs)
            t.eq(open(reg).read() if os.path.exists(reg) else "", reg_before,
                 "point %d: the registry does not name it" % n)
            t.eq([x for x in os.listdir(t.envs) if x.startswith(".c.")], [],
                 "point %d: nothing left in the envs folder" % n)
            t.check(nxt.rc != 0, "point %d: the next command finds no environment" % n, nxt)
        n += 1
    t.note("create -f with pip: %d crash points: %s" % (n - 1, " ".join(seen)))


if __name__ == "__main__":
    main(body, "pip_step")
