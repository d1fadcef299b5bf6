#!/usr/bin/env python3
"""cli.json_shape: the --json output that conda scripts read.

create --dry-run --json: exactly {actions: {LINK, FETCH, PREFIX}, prefix, dry_run, success};
LINK/FETCH records carry name, version, build_string, build_number (int), channel,
subdir, url, fn, md5, sha256, size (int) with the channel's values; FETCH lists only
what is not in the package cache; on an error --json still gives JSON on stdout
with success false; list --json, export --json and info --json parse."""

import os

import menvtest
from menvtest import md5_file, read_json, sha256_file

RECORD_TYPES = {"name": str, "version": str, "build_string": str, "build_number": int,
                "channel": str, "subdir": str, "url": str, "fn": str, "md5": str,
                "sha256": str, "size": int}


def check_record(t, p, repo, what):
    for k, ty in RECORD_TYPES.items():
        v = p.get(k)
        t.check(type(v) is ty, "%s: %s is %s (got %r)" % (what, k, ty.__name__, v))
    fn = p.get("fn")
    if fn in repo:
        path, rec = repo[fn]
        t.eq((p.get("name"), p.get("version"), p.get("build_string"), p.get("build_number")),
             (rec["name"], rec["version"], rec["build"], rec["build_number"]), "%s: identity = repodata" % what)
        t.eq((p.get("md5"), p.get("sha256"), p.get("size")),
             (md5_file(path), sha256_file(path), os.path.getsize(path)), "%s: md5/sha256/size = file" % what)
        t.eq(p.get("subdir"), rec["subdir"], "%s: subdir" % what)


def body(t):
    P = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    files = [os.path.join(P, n) for n in ("dependency-1.0-0.conda", "dependency-2.0-0.conda",
                                           "dependent-1.0-0.conda", "dependent-2.0-0.conda")]
    files.append(os.path.join(t.corpus, "packages", "mamba", "_r-mutex-1.0.1-anacondar_1.tar.bz2"))
    chan = t.make_channel("chan", {"noarch": files, "linux-64": []})
    curl = t.url(chan)
    repo = {}
    rd = read_json(os.path.join(chan, "noarch", "repodata.json"))
    for key in ("packages", "packages.conda"):
        for fn, rec in rd.get(key, {}).items():
            repo[fn] = (os.path.join(chan, "noarch", fn), rec)

    prefix = os.path.join(t.envs, "shape")
    r = t.menv_run("create", "-n", "shape", "--dry-run", "--json", "--override-channels", "-c", curl,
                   "dependent", "_r-mutex")
    j = r.try_json()
    if not t.check(r.rc == 0 and isinstance(j, dict), "dry-run --json: exit 0, a JSON object", r):
        raise menvtest.Fatal("no JSON to check")
    t.eq(sorted(j), ["actions", "dry_run", "prefix", "success"], "top-level keys")
    t.eq(j.get("dry_run"), True, "dry_run is true")
    t.eq(j.get("success"), True, "success is true")
    t.eq(j.get("prefix"), prefix, "prefix")
    acts = j.get("actions", {})
    t.eq(sorted(acts), ["FETCH", "LINK", "PREFIX"], "actions keys")
    t.eq(acts.get("PREFIX"), prefix, "actions.PREFIX")
    link = acts.get("LINK", [])
    t.eq(sorted(p.get("fn") for p in link),
         ["_r-mutex-1.0.1-anacondar_1.tar.bz2", "dependency-2.0-0.conda", "dependent-2.0-0.conda"],
         "LINK = conda's solution")
    for p in link:
        check_record(t, p, repo, "LINK %s" % p.get("fn"))
        t.eq(p.get("channel"), curl, "LINK %s: channel" % p.get("fn"))
        t.eq(p.get("url"), curl + "/noarch/" + p.get("fn", ""), "LINK %s: url" % p.get("fn"))
    t.eq(sorted(p.get("fn") for p in acts.get("FETCH", [])), sorted(p.get("fn") for p in link),
         "FETCH = LINK when the cache is empty")
    for p in acts.get("FETCH", []):
        check_record(t, p, repo, "FETCH %s" % p.get("fn"))
    t.check(not os.path.exists(prefix), "dry-run: no prefix")
    t.check(not os.path.exists(os.path.join(t.pkgs, "dependent-2.0-0")), "dry-run: nothing downloaded")

    # FETCH lists only what the package cache lacks
    t.menv_ok("create", "-n", "real", "-q", "--override-channels", "-c", curl, "dependency=2.0")
    r = t.menv_run("create", "-n", "shape", "--dry-run", "--json", "--override-channels", "-c", curl,
                   "dependent")
    j = r.try_json() or {}
    t.eq(sorted(p.get("fn") for p in j.get("actions", {}).get("LINK", [])),
         ["dependency-2.0-0.conda", "dependent-2.0-0.conda"], "LINK after a real create")
    t.eq(sorted(p.get("fn") for p in j.get("actions", {}).get("FETCH", [])), ["dependent-2.0-0.conda"],
         "FETCH leaves out dependency-2.0-0 (already in the package cache)")

    # changes of an existing environment: the same builder, with UNLINK (conda's shape)
    r = t.menv_run("install", "-n", "real", "--dry-run", "--json", "--override-channels", "-c",
                   curl, "dependency=1.0")
    j = r.try_json() or {}
    t.eq(sorted(j), ["actions", "dry_run", "prefix", "success"], "install --json: top-level keys")
    acts = j.get("actions", {})
    t.eq(sorted(acts), ["FETCH", "LINK", "PREFIX", "UNLINK"], "install --json: actions keys")
    t.eq([p.get("fn") for p in acts.get("LINK", [])], ["dependency-1.0-0.conda"],
         "install --json: LINK the downgrade")
    for p in acts.get("LINK", []):
        check_record(t, p, repo, "install LINK %s" % p.get("fn"))
    u = acts.get("UNLINK", [])
    t.eq([(p.get("name"), p.get("version"), p.get("build_string"), p.get("build"),
           p.get("build_number"), p.get("dist_name"), p.get("fn"), p.get("subdir"))
          for p in u],
         [("dependency", "2.0", "0", "0", 0, "dependency-2.0-0", "dependency-2.0-0.conda",
           "noarch")], "install --json: UNLINK the installed record")
    t.check(all(p.get("channel") == curl + "/noarch" for p in u),
            "install --json: UNLINK channel is the PrefixRecord's", u)
    r = t.menv_run("remove", "-n", "real", "--dry-run", "--json", "dependency")
    j = r.try_json() or {}
    t.eq(([p.get("name") for p in j.get("actions", {}).get("UNLINK", [])],
          j.get("actions", {}).get("LINK"), j.get("dry_run")),
         (["dependency"], [], True), "remove --dry-run --json: UNLINK only")
    r = t.menv_run("install", "-n", "real", "--json", "--override-channels", "-c", curl,
                   "dependency=2.0")
    j = r.try_json() or {}
    t.eq((j.get("success"), j.get("dry_run"), j.get("message"),
          j.get("actions", {}).get("LINK"), j.get("actions", {}).get("UNLINK")),
         (True, False, "All requested packages already installed.", [], []),
         "install --json of what is installed: nothing to do, conda's message")

    # errors with --json: JSON on stdout, success false
    for what, args in (("bad spec", ["foo >="]), ("unknown package", ["nosuchpkg"]),
                       ("unsatisfiable", ["dependent=2.0", "dependency=1.0"])):
        r = t.menv_run("create", "-n", "bad", "--dry-run", "--json", "--override-channels", "-c", curl, *args)
        j = r.try_json()
        t.check(r.rc == 1, "--json error (%s): exit 1" % what, r)
        if t.check(isinstance(j, dict), "--json error (%s): stdout is a JSON object" % what, r.out):
            t.eq(j.get("success"), False, "--json error (%s): success false" % what)
            t.check(isinstance(j.get("message"), str) and j.get("message"),
                    "--json error (%s): a message string" % what, j)
    r = t.menv_run("create", "-n", "bad", "--json", "--override-channels", "-c", t.url(chan + "-missing"), "x")
    j = r.try_json()
    t.check(r.rc == 1 and isinstance(j, dict) and j.get("success") is False,
            "--json error (missing channel): JSON with success false", r)
    t.no_prefix_left(os.path.join(t.envs, "bad"), "--json errors")

    # the other --json outputs parse and agree with the environment
    r = t.menv_ok("list", "-n", "real", "--json")
    j = r.try_json()
    if t.check(isinstance(j, list), "list --json is a JSON list", r.out):
        t.eq([(p.get("name"), p.get("version"), p.get("build_string"), p.get("build_number"))
              for p in j], [("dependency", "2.0", "0", 0)], "list --json record")
        for p in j:
            t.check(type(p.get("build_number")) is int, "list --json: build_number is int")
    r = t.menv_ok("export", "-n", "real", "--json")
    j = r.try_json()
    if t.check(isinstance(j, dict), "export --json is a JSON object", r.out):
        t.eq(j.get("dependencies"), ["dependency=2.0=0"], "export --json dependencies")
        t.eq(j.get("name"), "real", "export --json name")
        t.check(curl in (j.get("channels") or []), "export --json channels include the channel", j)
    t.set_rc("channel_priority: flexible\n")
    r = t.menv_ok("info", "--json")
    j = r.try_json()
    if t.check(isinstance(j, dict), "info --json is a JSON object", r.out):
        t.eq(j.get("root_prefix"), t.root, "info --json root_prefix = MENV_ROOT_PREFIX")
        t.eq(j.get("pkgs_dirs"), [t.pkgs], "info --json pkgs_dirs")
        t.eq(j.get("envs_dirs"), [t.envs], "info --json envs_dirs")
        t.eq(j.get("config_files"), [t.rc], "info --json config_files = [MENVRC]")


if __name__ == "__main__":
    menvtest.main(body, "json_shape")
