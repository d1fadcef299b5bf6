#!/usr/bin/env python3
"""cli.realworld_BRxxx: the real-world failure cases of shared/cases/realworld.md,
run end to end (python3 test_realworld.py MENV SHARED BR001|BR002|BR003|BR004|BR005|BR007)."""

import ast
import glob
import os
import sys

import menvtest
from menvtest import build_tar_bz2, read_json, write_text


def link_of(t, r, what):
    """name -> LINK record of a create --dry-run --json result."""
    if not t.check(r.rc == 0, "%s: exit 0" % what, r):
        return {}
    try:
        return {p["name"]: p for p in r.json()["actions"]["LINK"]}
    except (ValueError, KeyError, TypeError) as e:
        t.check(False, "%s: JSON with actions.LINK (%s)" % (what, e), r.out)
        return {}


def history_specs(t, prefix, what):
    path = os.path.join(prefix, "conda-meta", "history")
    if not t.check(os.path.isfile(path), "%s: conda-meta/history exists" % what):
        return None
    lines = open(path).read().splitlines()
    t.check(bool(lines) and lines[0].startswith("==> ") and lines[0].endswith(" <=="),
            "%s: history starts with '==> DATE <=='" % what, lines[:1])
    upd = [l[len("# update specs: "):] for l in lines if l.startswith("# update specs: ")]
    if not t.check(len(upd) == 1, "%s: one '# update specs:' line" % what, lines):
        return None
    return ast.literal_eval(upd[0])   # conda writes a Python list literal; JSON is one too


def installed(prefix):
    return sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(prefix, "conda-meta", "*.json")))


def recipes_channel(t, name, *names):
    """A channel of test-recipes noarch packages, indexed by menv. linux-64/ exists (empty) so that
    the platform repodata is there too (a noarch-only channel is checked in cli.corpus_env)."""
    return t.make_channel(name, {"noarch": test_recipes(t, *names), "linux-64": []})


def test_recipes(t, *names):
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    files = [os.path.join(P, n) for n in names]
    for f in files:
        if not os.path.isfile(f):
            raise menvtest.Skip("corpus file missing: %s" % f)
    return files


# ---------------------------------------------------------------------------
def br001(t):
    """Blanks around operators: each spec keeps its constraint; history is normalised."""
    alias = os.path.join(t.tmp, "alias")
    cf = os.path.join(alias, "conda-forge")
    py = ["python >=3.10"]
    t.write_repodata(cf, "linux-64", packages={
        # a parse that drops the operator of `python > 3.10` (-> `python 3.10`, i.e. 3.10.*)
        # picks 3.10.1 (build_number 5)
        "python-3.10.1-h0_5.tar.bz2": dict(name="python", version="3.10.1", build="h0_5", build_number=5),
        "python-3.10.0-h0_0.tar.bz2": dict(name="python", version="3.10.0", build="h0_0"),
        "python-3.11.9-h0_0.tar.bz2": dict(name="python", version="3.11.9", build="h0_0"),
        "python-3.9.18-h0_0.tar.bz2": dict(name="python", version="3.9.18", build="h0_0"),
        # `numpy < 2.0` ignored -> 2.1.0
        "numpy-1.26.4-py_0.tar.bz2": dict(name="numpy", version="1.26.4", build="py_0", depends=py),
        "numpy-1.25.2-py_0.tar.bz2": dict(name="numpy", version="1.25.2", build="py_0", depends=py),
        "numpy-2.1.0-py_0.tar.bz2": dict(name="numpy", version="2.1.0", build="py_0", depends=py),
        # `polars >= 1.0.0` read as version '>=' / build '1.0.0' -> nothing matches
        "polars-0.20.31-py_0.tar.bz2": dict(name="polars", version="0.20.31", build="py_0", depends=py),
        "polars-1.2.1-py_0.tar.bz2": dict(name="polars", version="1.2.1", build="py_0", depends=py),
        # `scipy >=1.10, <1.14`: the blank after the comma must not start a build string
        "scipy-1.9.3-py_0.tar.bz2": dict(name="scipy", version="1.9.3", build="py_0", depends=py),
        "scipy-1.13.1-py_0.tar.bz2": dict(name="scipy", version="1.13.1", build="py_0", depends=py),
        "scipy-1.14.1-py_0.tar.bz2": dict(name="scipy", version="1.14.1", build="py_0", depends=py),
        # `zlib 1.3.*`
        "zlib-1.2.13-h0_0.tar.bz2": dict(name="zlib", version="1.2.13", build="h0_0"),
        "zlib-1.3.1-h0_0.tar.bz2": dict(name="zlib", version="1.3.1", build="h0_0"),
        "zlib-1.4.0-h0_0.tar.bz2": dict(name="zlib", version="1.4.0", build="h0_0"),
    })
    t.write_repodata(cf, "noarch")
    t.set_rc("channel_alias: %s\nchannels: [conda-forge]\n" % t.url(alias))
    want = {"python": "3.11.9", "numpy": "1.26.4", "polars": "1.2.1", "scipy": "1.13.1", "zlib": "1.3.1"}
    env = os.path.join(t.tmp, "env-spaced.yml")
    write_text(env, "name: spaced\nchannels: [conda-forge]\ndependencies:\n"
               "  - python > 3.10\n  - numpy < 2.0\n  - polars >= 1.0.0\n"
               "  - scipy >=1.10, <1.14\n  - zlib 1.3.*\n")
    r = t.menv_run("create", "-f", env, "--dry-run", "--json")
    link = link_of(t, r, "BR-001 env file")
    t.eq({n: p.get("version") for n, p in link.items()}, want, "BR-001 env file: chosen versions")
    for n, p in link.items():
        t.eq(p.get("channel"), "conda-forge", "BR-001: %s from channel conda-forge" % n)
    # the same specs on the command line
    r = t.menv_run("create", "-n", "spaced", "--dry-run", "--json", "-c", "conda-forge",
                   "--override-channels", "python > 3.10", "numpy < 2.0", "polars >= 1.0.0",
                   "scipy >=1.10, <1.14", "zlib 1.3.*")
    link = link_of(t, r, "BR-001 command line")
    t.eq({n: p.get("version") for n, p in link.items()}, want, "BR-001 command line: chosen versions")
    # `zlib 1.3.* h0_0`: a second token without operator is a build string
    r = t.menv_run("create", "-n", "spaced", "--dry-run", "--json", "-c", "conda-forge",
                   "--override-channels", "zlib 1.3.* h0_0")
    link = link_of(t, r, "BR-001 'zlib 1.3.* h0_0'")
    t.eq([(p.get("version"), p.get("build_string")) for p in link.values()], [("1.3.1", "h0_0")],
         "BR-001: 'zlib 1.3.* h0_0' -> zlib 1.3.1 h0_0")
    r = t.menv_run("create", "-n", "spaced", "--dry-run", "-q", "-c", "conda-forge",
                   "--override-channels", "zlib 1.3.* nope_1")
    t.one_line_error(r, "BR-001: 'zlib 1.3.* nope_1' (build string that no record has)", ["zlib"],
                     one_line=False)

    # a real create against corpus packages: spaced specs are written normalised
    chan = recipes_channel(t, "chan", "dependency-1.0-0.conda", "dependency-2.0-0.conda",
                           "dependent-1.0-0.conda", "dependent-2.0-0.conda")
    # (normalised as conda 26.7.1's str(MatchSpec) writes them)
    cases = [("dependent >= 2.0", "dependent[version='>=2.0']", ["dependency-2.0-0", "dependent-2.0-0"]),
             ("dependent < 2.0", "dependent[version='<2.0']", ["dependency-1.0-0", "dependent-1.0-0"]),
             ("dependent >=1.0, <2.0", "dependent[version='>=1.0,<2.0']",
              ["dependency-1.0-0", "dependent-1.0-0"])]
    for i, (spec, norm, dists) in enumerate(cases):
        env = os.path.join(t.tmp, "real%d.yml" % i)
        write_text(env, "name: real%d\nchannels:\n  - %s\n  - nodefaults\ndependencies:\n  - %s\n"
                   % (i, t.url(chan), spec))
        r = t.menv_run("create", "-f", env)
        prefix = os.path.join(t.envs, "real%d" % i)
        if not t.check(r.rc == 0, "BR-001: create with %r" % spec, r):
            continue
        t.eq(installed(prefix), dists, "BR-001: %r installs" % spec)
        t.eq(history_specs(t, prefix, "BR-001 %r" % spec), [norm],
             "BR-001: history update specs for %r" % spec)
        rec = read_json(os.path.join(prefix, "conda-meta", dists[1] + ".json"))
        t.check(rec.get("requested_spec") in (norm, spec), "BR-001: requested_spec of %r" % spec,
                rec.get("requested_spec"))

    # an existing prefix whose history was written with blanks stays usable
    old = os.path.join(t.tmp, "old-prefix")
    write_text(os.path.join(old, "conda-meta", "history"),
               "==> 2023-01-01 00:00:00 <==\n# cmd: conda create -p %s polars python\n"
               "# update specs: [\"polars >= 1.0.0\", \"python > 3.10\"]\n" % old)
    r = t.menv_run("list", "-p", old)
    t.check(r.rc == 0, "BR-001: menv list on a prefix with spaced history specs", r)
    r = t.menv_run("export", "-p", old)
    t.check(r.rc == 0, "BR-001: menv export on a prefix with spaced history specs", r)


# ---------------------------------------------------------------------------
def br002(t):
    """Empty, null or missing `dependencies`: an empty env, no solve, no download."""
    alias = os.path.join(t.tmp, "no-such-alias")      # c1 resolves under here: does not exist
    t.set_rc("channel_alias: %s\nchannels: [c1]\ndefault_channels: [%s]\n"
             % (t.url(alias), t.url(os.path.join(t.tmp, "no-such-default"))))
    files = {"a": "name: blank\nchannels: [c1]\ndependencies:\n",
             "b": "name: blank\nchannels: [c1]\ndependencies: []\n",
             "c": "name: blank\nchannels: [c1]\n"}
    for k, text in files.items():
        path = os.path.join(t.tmp, "%s.yml" % k)
        write_text(path, text)
        r = t.menv_run("create", "-f", path, "-n", "blank-" + k)
        prefix = os.path.join(t.envs, "blank-" + k)
        if not t.check(r.rc == 0, "BR-002 %s.yml: exit 0" % k, r):
            continue
        t.check(os.path.isdir(os.path.join(prefix, "conda-meta")), "BR-002 %s.yml: conda-meta/" % k)
        t.eq(installed(prefix), [], "BR-002 %s.yml: no packages" % k)
        t.eq(history_specs(t, prefix, "BR-002 %s.yml" % k), [], "BR-002 %s.yml: history, no specs" % k)
        r = t.menv_run("list", "-n", "blank-" + k, "--json")
        t.check(r.rc == 0 and r.try_json() == [], "BR-002 %s.yml: list --json is []" % k, r)
    # and without -n: the file's name
    r = t.menv_run("create", "-f", os.path.join(t.tmp, "a.yml"))
    t.check(r.rc == 0 and os.path.isdir(os.path.join(t.envs, "blank", "conda-meta")),
            "BR-002: create -f a.yml makes envs/blank", r)
    t.check(not os.path.exists(os.path.join(t.pkgs, "cache")) or
            not [f for f in os.listdir(os.path.join(t.pkgs, "cache")) if "c1" in f],
            "BR-002: no repodata cached for c1")


# ---------------------------------------------------------------------------
def no_yaml_error(t, r, what):
    bad = ("yaml", "scalar", "expected a string", "type error", "sequence", "duplicate")
    t.check(not any(b in r.err.lower() for b in bad),
            "%s: not a YAML/type/duplicate error" % what, r.err)


def br003(t):
    """A dependency list with only a `pip:` mapping."""
    chan = recipes_channel(t, "chan", "pip-99.99.99-py399_0.conda", "python-3.99.99-0.conda")
    env = os.path.join(t.tmp, "pip-only.yml")
    write_text(env, "name: pip-only\nchannels:\n  - %s\n  - nodefaults\ndependencies:\n"
               "  - pip:\n      - requests==2.31.0\n" % t.url(chan))
    r = t.menv_run("create", "-q", "-f", env)
    if r.rc == 0:
        # pip sections supported: conda adds `pip`, which pulls python in
        t.eq(installed(os.path.join(t.envs, "pip-only")), ["pip-99.99.99-py399_0", "python-3.99.99-0"],
             "BR-003: conda side is pip (+ python)")
    else:
        t.one_line_error(r, "BR-003 pip-only", ["pip"])
        t.check("pip:" in r.err or "pip section" in r.err.lower(), "BR-003: error names the pip section",
                r.err)
        no_yaml_error(t, r, "BR-003")
        t.no_prefix_left(os.path.join(t.envs, "pip-only"), "BR-003")


def br004(t):
    """A plain `pip` spec next to the `pip:` mapping; an empty `pip:`."""
    chan = recipes_channel(t, "chan", "pip-99.99.99-py399_0.conda", "python-3.99.99-0.conda")
    head = ("name: both-pip\nchannels:\n  - %s\n  - nodefaults\ndependencies:\n"
            "  - python=3.99\n  # the conda-side pip\n  - pip\n" % t.url(chan))
    env = os.path.join(t.tmp, "both-pip.yml")
    write_text(env, head + "  - pip:\n      - tqdm\n")
    r = t.menv_run("create", "-q", "-f", env)
    if r.rc == 0:
        t.eq(installed(os.path.join(t.envs, "both-pip")), ["pip-99.99.99-py399_0", "python-3.99.99-0"],
             "BR-004: conda side python + pip")
    else:
        t.one_line_error(r, "BR-004 pip + pip: [tqdm]", ["pip"])
        t.check("pip:" in r.err or "pip section" in r.err.lower(), "BR-004: error names the pip section",
                r.err)
        no_yaml_error(t, r, "BR-004")
        t.no_prefix_left(os.path.join(t.envs, "both-pip"), "BR-004")
    # variant: `- pip:` with nothing under it -> the env is created
    for k, tail in (("empty", "  - pip:\n"), ("emptylist", "  - pip: []\n")):
        env = os.path.join(t.tmp, "both-pip-%s.yml" % k)
        write_text(env, head + tail)
        r = t.menv_run("create", "-f", env, "-n", "both-pip-" + k)
        if t.check(r.rc == 0, "BR-004 variant %s: empty pip section creates the env" % k, r):
            prefix = os.path.join(t.envs, "both-pip-" + k)
            t.eq(installed(prefix), ["pip-99.99.99-py399_0", "python-3.99.99-0"],
                 "BR-004 variant %s: python + pip installed" % k)
            specs = sorted(history_specs(t, prefix, "BR-004 %s" % k) or [])
            # conda writes `python=3.99`; the equivalent spellings of "3.99.*" are accepted
            t.check(len(specs) == 2 and specs[0] == "pip" and
                    specs[1] in ("python=3.99", "python=3.99.*", "python 3.99.*", "python 3.99*"),
                    "BR-004 variant %s: specs [python=3.99, pip], pip counted once" % k, specs)
        no_yaml_error(t, r, "BR-004 variant %s" % k)


# ---------------------------------------------------------------------------
def widget_channel(t, base, name, pkgs):
    """Real (tiny) .tar.bz2 packages, indexed by menv."""
    chan = os.path.join(base, name)
    for (pname, ver, build) in pkgs:
        build_tar_bz2(os.path.join(chan, "linux-64", "%s-%s-%s.tar.bz2" % (pname, ver, build)),
                      {"name": pname, "version": ver, "build": build, "build_number": 0,
                       "depends": [], "subdir": "linux-64"},
                      files={"share/%s/VERSION" % pname: ("%s %s from %s\n" % (pname, ver, name)).encode()})
    os.makedirs(os.path.join(chan, "noarch"), exist_ok=True)
    t.index(chan)
    return chan


def br005(t):
    """`channel::package` for a channel that is not in `channels:`."""
    base = os.path.join(t.tmp, "srvchan")
    main = widget_channel(t, base, "main", [("python", "3.11.9", "h0_0"), ("widget-lib", "2.1.0", "h0_0")])
    extra = widget_channel(t, base, "extra", [("widget-lib", "2.0.3", "h0_0")])
    t.set_rc("channels: [%s]\n" % t.url(main))     # the configured channels: main only
    env = os.path.join(t.tmp, "chanspec.yml")
    write_text(env, "name: chanspec\nchannels: [%s]\ndependencies:\n  - python=3.11\n  - %s::widget-lib==2.0.3\n"
               % (t.url(main), t.url(extra)))
    r = t.menv_run("create", "-f", env, "--dry-run", "--json")
    link = link_of(t, r, "BR-005 URL form")
    w = link.get("widget-lib", {})
    t.eq((w.get("version"), w.get("channel")), ("2.0.3", t.url(extra)),
         "BR-005 URL form: widget-lib 2.0.3 from extra")
    t.eq(w.get("url"), t.url(extra) + "/linux-64/widget-lib-2.0.3-h0_0.tar.bz2", "BR-005: url under extra")
    t.eq((link.get("python", {}).get("version"), link.get("python", {}).get("channel")),
         ("3.11.9", t.url(main)), "BR-005: python from main")
    # the real create: PrefixRecord and export name extra
    r = t.menv_run("create", "-f", env)
    prefix = os.path.join(t.envs, "chanspec")
    if t.check(r.rc == 0, "BR-005: create", r):
        rec = read_json(os.path.join(prefix, "conda-meta", "widget-lib-2.0.3-h0_0.json"))
        t.eq(rec.get("channel"), t.url(extra) + "/linux-64", "BR-005: PrefixRecord channel is extra")
        with open(os.path.join(prefix, "share", "widget-lib", "VERSION")) as f:
            t.eq(f.read(), "widget-lib 2.0.3 from extra\n", "BR-005: installed file comes from extra")
        r = t.menv_run("export", "-n", "chanspec")
        t.check(t.url(extra) in r.out, "BR-005: export names extra", r.out)
        exported = os.path.join(t.tmp, "chanspec-export.yml")
        write_text(exported, r.out)
        r = t.menv_run("create", "-f", exported, "-n", "chanspec2", "--dry-run", "--json")
        link = link_of(t, r, "BR-005 re-create from export")
        t.eq((link.get("widget-lib", {}).get("version"), link.get("widget-lib", {}).get("channel")),
             ("2.0.3", t.url(extra)), "BR-005: export re-creates widget-lib 2.0.3 from extra")

    # short form through channel_alias
    t.set_rc("channel_alias: %s\nchannels: [main]\n" % t.url(base))
    env = os.path.join(t.tmp, "chanspec-short.yml")
    write_text(env, "name: chanspec\nchannels: [main]\ndependencies:\n  - python=3.11\n  - extra::widget-lib==2.0.3\n")
    r = t.menv_run("create", "-f", env, "-n", "short", "--dry-run", "--json")
    link = link_of(t, r, "BR-005 short form")
    w = link.get("widget-lib", {})
    t.eq((w.get("version"), w.get("channel")), ("2.0.3", "extra"), "BR-005 short form: widget-lib 2.0.3 from 'extra'")
    t.eq(w.get("url"), t.url(extra) + "/linux-64/widget-lib-2.0.3-h0_0.tar.bz2", "BR-005 short form: url")
    t.eq(link.get("python", {}).get("channel"), "main", "BR-005 short form: python from 'main'")
    # without the channel prefix main's 2.1.0 does not satisfy ==2.0.3
    write_text(env, "name: chanspec\nchannels: [main]\ndependencies:\n  - widget-lib==2.0.3\n")
    r = t.menv_run("create", "-f", env, "-n", "short", "--dry-run", "-q")
    t.one_line_error(r, "BR-005: widget-lib==2.0.3 without extra", ["widget-lib"], one_line=False)


# ---------------------------------------------------------------------------
def br007(t):
    """`nodefaults` is an instruction, not a channel."""
    srv = os.path.join(t.tmp, "srv")
    cf = os.path.join(srv, "conda", "conda-forge")
    t.write_repodata(cf, "linux-64", packages={
        "zlib-1.3.1-h4ab18f5_1.tar.bz2": dict(name="zlib", version="1.3.1", build="h4ab18f5_1", build_number=1),
        "zlib-1.2.13-hd590300_5.tar.bz2": dict(name="zlib", version="1.2.13", build="hd590300_5", build_number=5)})
    t.write_repodata(cf, "noarch")
    server = t.http_server(srv)
    try:
        t.set_rc("channel_alias: %s/conda\nchannels: [defaults]\ndefault_channels: [%s/pkgs/main]\n"
                 % (server.base, server.base))
        env = os.path.join(t.tmp, "environment.yml")
        write_text(env, "name: nodef\nchannels: [conda-forge, nodefaults]\ndependencies: [zlib]\n")
        r = t.menv_run("create", "-f", env, "--dry-run", "--json", timeout=60)
        link = link_of(t, r, "BR-007")
        z = link.get("zlib", {})
        t.eq((z.get("version"), z.get("build_string"), z.get("channel")), ("1.3.1", "h4ab18f5_1", "conda-forge"),
             "BR-007: zlib 1.3.1 from conda-forge")
        t.eq(z.get("url"), server.base + "/conda/conda-forge/linux-64/zlib-1.3.1-h4ab18f5_1.tar.bz2",
             "BR-007: zlib url under the alias")
        reqs = server.requests()
        t.note("BR-007 requests: %s" % reqs)
        t.check(any(p.startswith("/conda/conda-forge/linux-64/repodata.json") for p in reqs),
                "BR-007: conda-forge's linux-64 repodata was requested", reqs)
        t.eq([p for p in reqs if "nodefaults" in p], [], "BR-007: no request for 'nodefaults'")
        t.eq([p for p in reqs if p.startswith("/pkgs/main")], [], "BR-007: pkgs/main never requested")
        t.eq([p for p in reqs if not p.startswith("/conda/conda-forge/")], [],
             "BR-007: only conda-forge requested")
        # the same with nodefaults first in the list
        write_text(env, "name: nodef\nchannels: [nodefaults, conda-forge]\ndependencies: [zlib]\n")
        r = t.menv_run("create", "-f", env, "-n", "nodef2", "--dry-run", "--json", timeout=60)
        link = link_of(t, r, "BR-007 nodefaults first")
        t.eq(link.get("zlib", {}).get("channel"), "conda-forge", "BR-007 nodefaults first: conda-forge")
        reqs = server.requests()
        t.eq([p for p in reqs if "nodefaults" in p or p.startswith("/pkgs/main")], [],
             "BR-007 nodefaults first: no nodefaults / pkgs/main request")
        # control: without nodefaults, defaults (pkgs/main) is a channel and gets requested
        write_text(env, "name: nodef\nchannels: [conda-forge]\ndependencies: [zlib]\n")
        r = t.menv_run("create", "-f", env, "-n", "nodef3", "--dry-run", "--json", timeout=60)
        reqs = server.requests()
        t.check(any(p.startswith("/pkgs/main/") for p in reqs),
                "BR-007 control: without nodefaults the default channel pkgs/main is requested", reqs)
    finally:
        server.stop()


CASES = {"BR001": br001, "BR002": br002, "BR003": br003, "BR004": br004, "BR005": br005, "BR007": br007}


def body(t, case=None):
    if case not in CASES:
        raise menvtest.Fatal("unknown case %r (one of %s)" % (case, ", ".join(CASES)))
    CASES[case](t)


if __name__ == "__main__":
    menvtest.main(body, "realworld_%s" % (sys.argv[3] if len(sys.argv) > 3 else ""))
