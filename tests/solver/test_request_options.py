#!/usr/bin/env python3
"""conda's request options and virtual packages through `menv create|install --dry-run --json`
on small file:// channels (each expected answer is conda's, as its docs and solver state it):

- a version-constrained request for a virtual package (`__glibc >=2.17`) holds or fails on
  the override's version, as the plain name always did;
- a foreign target subdir (CONDA_SUBDIR) gets that platform's virtual packages: __osx from
  CONDA_OVERRIDE_OSX and __unix for osx-64, __win for win-64, never this machine's
  __linux/__glibc;
- `.condarc` pinned_packages as a list, and CONDA_PINNED_PACKAGES split at '&' (conda's
  delimiter for it);
- a request naming several missing packages names them all;
- add_pip_as_python_dependency (default true): python brings pip; false: it does not;
- a track_features request matches the record's features as a set;
- update_modifier: the default keeps installed packages (an older app that fits), while
  --update-deps and `.condarc` update_modifier: update_deps move the dependency too;
  --freeze-installed never moves it.
Usage: test_request_options.py MENV
"""
import json
import os
import subprocess
import sys
import tempfile

FAILS = []


def check(cond, what, detail=""):
    print(("ok   " if cond else "FAIL ") + what + ("" if cond else f"\n     {detail}"))
    if not cond:
        FAILS.append(what)


def rec(name, version, build="0", depends=(), **extra):
    r = {"name": name, "version": version, "build": build, "build_number": 0,
         "depends": list(depends)}
    r.update(extra)
    return f"{name}-{version}-{build}.tar.bz2", r


def channel(root, name, subdir, records):
    for sd in (subdir, "noarch"):
        d = os.path.join(root, name, sd)
        os.makedirs(d, exist_ok=True)
        pkgs = dict(records) if sd == subdir else {}
        for r in pkgs.values():
            r["subdir"] = sd
        with open(os.path.join(d, "repodata.json"), "w") as f:
            json.dump({"info": {"subdir": sd}, "packages": pkgs}, f)


class Menv:
    def __init__(self, menv, tmp):
        self.menv, self.tmp = menv, tmp
        self.chans = os.path.join(tmp, "channels")

    def rc(self, extra=""):
        with open(os.path.join(self.tmp, "condarc"), "w") as f:
            f.write(f"channel_alias: file://{self.chans}\nchannel_priority: flexible\n{extra}")

    def run(self, verb, chan, specs, env=None, flags=(), prefix=None):
        e = {k: v for k, v in os.environ.items() if not k.startswith(("CONDA_", "MENV"))}
        e.update(HOME=self.tmp, MENVRC=os.path.join(self.tmp, "condarc"),
                 MENV_ROOT_PREFIX=os.path.join(self.tmp, "root"), CONDA_OVERRIDE_CUDA="")
        e.update(env or {})
        prefix = prefix or os.path.join(self.tmp, "env-new")
        cmd = [self.menv, verb, "--dry-run", "--json", "-p", prefix, "--override-channels",
               "-c", chan, *flags, *specs]
        p = subprocess.run(cmd, env=e, capture_output=True, text=True)
        try:
            out = json.loads(p.stdout)
        except ValueError:
            out = {}
        return p, out


def linked(out):
    return sorted(f"{r['name']}-{r['version']}" for r in out.get("actions", {}).get("LINK", []))


def unlinked(out):
    return sorted(f"{r['name']}-{r['version']}" for r in out.get("actions", {}).get("UNLINK", []))


def installed_prefix(tmp, name, chan_url, records):
    prefix = os.path.join(tmp, name)
    meta = os.path.join(prefix, "conda-meta")
    os.makedirs(meta)
    for fn, r in records:
        d = fn[: -len(".tar.bz2")]
        pr = dict(r, fn=fn, channel=chan_url, url=f"{chan_url}/{fn}", files=[],
                  paths_data={"paths": [], "paths_version": 1}, subdir="linux-64")
        with open(os.path.join(meta, d + ".json"), "w") as f:
            json.dump(pr, f)
    return prefix


def main():
    menv = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        m = Menv(menv, tmp)
        m.rc()
        lin = dict([
            rec("needs-glibc", "1.0", depends=["__glibc >=2.17"]),
            rec("foo", "1.0"), rec("foo", "2.0"), rec("bar", "1.0"), rec("bar", "2.5"),
            rec("python", "3.8.10", depends=[]), rec("pip", "23.0", depends=["python >=3.7"]),
            rec("mkl-thing", "1.0", build="a", track_features="b,a"),
            rec("mkl-thing", "1.0", build="plain"),
            rec("libfoo", "1.0"), rec("libfoo", "2.0"),
            rec("app", "1.0", depends=["libfoo 1.*"]), rec("app", "2.0", depends=["libfoo 2.*"]),
            rec("sqlite", "3.20"), rec("sqlite", "3.24"),
            rec("python", "2.7.15", depends=["sqlite"]), rec("python", "3.7.0", depends=["sqlite"]),
        ])
        channel(m.chans, "lin", "linux-64", lin)
        channel(m.chans, "nopip", "linux-64", dict([rec("python", "3.8.10")]))
        channel(m.chans, "mac", "osx-64", dict([
            rec("macpkg", "1.0", depends=["__osx >=10.13", "__unix"]),
            rec("linpkg", "1.0", depends=["__glibc"])]))
        channel(m.chans, "win", "win-64", dict([
            rec("winpkg", "1.0", depends=["__win"]),
            rec("unixpkg", "1.0", depends=["__unix"])]))

        # virtual packages with a version constraint
        p, out = m.run("create", "lin", ["__glibc >=2.17"], {"CONDA_OVERRIDE_GLIBC": "2.28"})
        check(p.returncode == 0 and out.get("success"), "__glibc >=2.17 holds on glibc 2.28",
              p.stderr)
        p, out = m.run("create", "lin", ["__glibc >=2.17"], {"CONDA_OVERRIDE_GLIBC": "2.12"})
        check(p.returncode != 0 and "__glibc" in p.stderr, "__glibc >=2.17 fails on 2.12",
              p.stderr)
        p, out = m.run("create", "lin", ["__glibc <2.17"], {"CONDA_OVERRIDE_GLIBC": "2.12"})
        check(p.returncode == 0, "__glibc <2.17 holds on 2.12", p.stderr)

        # a foreign target subdir's virtual packages
        osx = {"CONDA_SUBDIR": "osx-64", "CONDA_OVERRIDE_OSX": "10.15"}
        p, out = m.run("create", "mac", ["macpkg"], osx)
        check(p.returncode == 0 and linked(out) == ["macpkg-1.0"],
              "osx-64: __osx from CONDA_OVERRIDE_OSX and __unix", p.stderr)
        p, out = m.run("create", "mac", ["linpkg"], osx)
        check(p.returncode != 0 and "__glibc" in p.stderr, "osx-64: no __glibc", p.stderr)
        p, out = m.run("create", "mac", ["__osx >=11"], osx)
        check(p.returncode != 0, "osx-64: __osx is CONDA_OVERRIDE_OSX's 10.15", p.stdout)
        p, out = m.run("create", "mac", ["macpkg"], {"CONDA_SUBDIR": "osx-64"})
        check(p.returncode != 0 and "__osx" in p.stderr,
              "osx-64 without CONDA_OVERRIDE_OSX: no __osx on this machine", p.stderr)
        win = {"CONDA_SUBDIR": "win-64"}
        p, out = m.run("create", "win", ["winpkg"], win)
        check(p.returncode == 0 and linked(out) == ["winpkg-1.0"], "win-64: __win", p.stderr)
        p, out = m.run("create", "win", ["unixpkg"], win)
        check(p.returncode != 0 and "__unix" in p.stderr, "win-64: no __unix", p.stderr)
        p, out = m.run("create", "win", ["__linux"], win)
        check(p.returncode != 0, "win-64: no __linux", p.stdout)

        # pinned_packages
        m.rc("pinned_packages:\n  - foo=1.0\n  - bar<2\n")
        p, out = m.run("create", "lin", ["foo", "bar"])
        check(linked(out) == ["bar-1.0", "foo-1.0"], ".condarc pinned_packages list holds",
              (p.stderr, linked(out)))
        m.rc()
        p, out = m.run("create", "lin", ["foo", "bar"], {"CONDA_PINNED_PACKAGES": "foo=1.0&bar<2"})
        check(linked(out) == ["bar-1.0", "foo-1.0"], "CONDA_PINNED_PACKAGES split at '&'",
              (p.stderr, linked(out)))

        # every missing name
        p, out = m.run("create", "lin", ["nosuch1", "foo", "nosuch2"])
        check(p.returncode != 0 and "'nosuch1'" in p.stderr and "'nosuch2'" in p.stderr,
              "every missing package is named", p.stderr)

        # add_pip_as_python_dependency
        p, out = m.run("create", "lin", ["python"])
        check(linked(out) == ["pip-23.0", "python-3.8.10"], "python brings pip by default",
              (p.stderr, linked(out)))
        m.rc("add_pip_as_python_dependency: false\n")
        p, out = m.run("create", "lin", ["python"])
        check(linked(out) == ["python-3.8.10"], "add_pip_as_python_dependency: false",
              (p.stderr, linked(out)))
        m.rc()
        p, out = m.run("create", "nopip", ["python"])
        check(linked(out) == ["python-3.8.10"], "a channel without pip still gives python",
              (p.stderr, linked(out)))

        # track_features as a set
        p, out = m.run("create", "lin", ["mkl-thing[track_features='a b']"])
        builds = [r["build_string"] for r in out.get("actions", {}).get("LINK", [])]
        check(builds == ["a"], "track_features 'a b' matches the record's 'b,a'",
              (p.stderr, builds))

        # update modifiers: installed libfoo 1.0, then `install app`
        url = f"file://{m.chans}/lin/linux-64"
        prefix = installed_prefix(tmp, "env-app", url, [rec("libfoo", "1.0")])
        p, out = m.run("install", "lin", ["app"], prefix=prefix)
        check(linked(out) == ["app-1.0"] and unlinked(out) == [],
              "default (update_specs): libfoo stays, app 1.0 fits it", (p.stderr, linked(out)))
        p, out = m.run("install", "lin", ["app"], prefix=prefix, flags=["--update-deps"])
        check(linked(out) == ["app-2.0", "libfoo-2.0"] and unlinked(out) == ["libfoo-1.0"],
              "--update-deps: app's dependency updates", (p.stderr, linked(out)))
        m.rc("update_modifier: update_deps\n")
        p, out = m.run("install", "lin", ["app"], prefix=prefix)
        check(linked(out) == ["app-2.0", "libfoo-2.0"], ".condarc update_modifier: update_deps",
              (p.stderr, linked(out)))
        m.rc()
        p, out = m.run("install", "lin", ["app=2"], prefix=prefix, flags=["--freeze-installed"])
        check(p.returncode != 0 and "the installed libfoo-1.0-0 (--freeze-installed)" in p.stderr,
              "--freeze-installed: app=2 cannot move libfoo, and the error says why",
              (p.stdout, p.stderr))
        p, out = m.run("install", "lin", ["app=2"], prefix=prefix)
        check(linked(out) == ["app-2.0", "libfoo-2.0"],
              "default: app=2 moves libfoo because it must", (p.stderr, linked(out)))
        # the history's specs hold: `update sqlite` in a python=2 environment keeps python 2.7
        prefix3 = installed_prefix(tmp, "env-py2", url, [
            rec("python", "2.7.15", depends=["sqlite"]), rec("sqlite", "3.20")])
        with open(os.path.join(prefix3, "conda-meta", "history"), "w") as f:
            f.write("==> 2024-01-01 00:00:00 <==\n# cmd: conda create -n py2 python=2\n"
                    "# conda version: 4.12.0\n+lin/linux-64::python-2.7.15-0\n"
                    "+lin/linux-64::sqlite-3.20-0\n# update specs: ['python=2']\n")
        p, out = m.run("update", "lin", ["sqlite"], prefix=prefix3)
        check(linked(out) == ["sqlite-3.24"] and unlinked(out) == ["sqlite-3.20"],
              "update sqlite keeps python=2 from conda-meta/history", (p.stderr, linked(out)))
        p, out = m.run("install", "lin", ["python=3"], prefix=prefix3)
        # sqlite, which only python 2.7.15 needed, goes as an orphan (conda's pruning)
        check(linked(out) == ["pip-23.0", "python-3.8.10"] and
              unlinked(out) == ["python-2.7.15", "sqlite-3.20"],
              "an explicit python=3 overrides the history's python=2 (and brings pip)",
              (p.stderr, linked(out), unlinked(out)))
        # a history spec that blocks the request is named in the error
        prefix4 = installed_prefix(tmp, "env-hist", url, [rec("libfoo", "1.0")])
        with open(os.path.join(prefix4, "conda-meta", "history"), "w") as f:
            f.write("==> 2024-01-01 00:00:00 <==\n# cmd: conda create -n h libfoo=1.0\n"
                    "+lin/linux-64::libfoo-1.0-0\n# update specs: ['libfoo=1.0']\n")
        p, out = m.run("install", "lin", ["app=2"], prefix=prefix4)
        check(p.returncode != 0 and "libfoo 1.0*" in p.stderr and
              "asked for before, in conda-meta/history" in p.stderr,
              "app=2 against the history's libfoo=1.0 fails naming it", p.stderr)
        # install X of an installed X updates it
        prefix2 = installed_prefix(tmp, "env-foo", url, [rec("foo", "1.0")])
        p, out = m.run("install", "lin", ["foo"], prefix=prefix2)
        check(linked(out) == ["foo-2.0"] and unlinked(out) == ["foo-1.0"],
              "install foo of an installed foo 1.0 updates it", (p.stderr, linked(out)))
        p, out = m.run("install", "lin", ["foo"], prefix=prefix2, flags=["--satisfied-skip-solve"])
        check(linked(out) == [] and p.returncode == 0,
              "--satisfied-skip-solve keeps foo 1.0", (p.stderr, linked(out)))
    print(f"request options: {len(FAILS)} failed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
