"""install / update / remove / env update --prune / --revision round trips with exact file
sets and hashes, conda-meta records and conda-meta/history in conda's format."""
import json
import os
import re

from insttest import PH, Fatal, files_of, main, payload, pkg, records, snapshot, diff


def channel(t):
    ch = os.path.join(t.tmp, "chan")
    pkg(ch, "base", "1.0", files={"share/base/a.txt": "base one\n",
                                 "share/base/old-only.txt": "gone in 2.0\n",
                                 "bin/base-tool": {"data": "#!/bin/sh\necho base 1\n",
                                                   "mode": 0o755}})
    pkg(ch, "base", "2.0", files={"share/base/a.txt": "base two\n",
                                 "share/base/new.txt": "new in 2.0\n",
                                 "bin/base-tool": {"data": "#!/bin/sh\necho base 2\n",
                                                   "mode": 0o755}})
    pkg(ch, "app", "1.0", depends=["base"], files={"share/app/app.txt": "app\n",
                                                  "etc/app.conf": {"data": "prefix=%s\n" % PH,
                                                                   "placeholder": PH}})
    pkg(ch, "other", "1.0", files={"share/other/o.txt": "other\n"},
        extra_index={"license": "Caf\u00e9 \u221e \"q\" \\u00C9 \x7f"})
    pkg(ch, "lonely", "1.0", files={"share/lonely/l.txt": "lonely\n"})
    t.index(ch)
    return t.url(ch)


def body(t):
    url = channel(t)
    c = ["-c", url, "--override-channels"]
    p = os.path.join(t.tmp, "env")

    t.menv_ok("create", "-p", p, *c, "base=1.0")
    rev0 = snapshot(p)
    t.eq(files_of(p), ["bin/base-tool", "share/base/a.txt", "share/base/old-only.txt"],
         "create: file set")

    # install: adds app, keeps base 1.0
    r = t.menv_ok("install", "-p", p, *c, "app")
    t.eq(files_of(p), ["bin/base-tool", "etc/app.conf", "share/app/app.txt",
                       "share/base/a.txt", "share/base/old-only.txt"], "install app: file set")
    with open(os.path.join(p, "etc/app.conf")) as f:
        t.eq(f.read(), "prefix=%s\n" % p, "install app: placeholder replaced")
    recs = records(p)
    t.eq(sorted(recs), ["app", "base"], "install app: records")
    t.eq(recs["app"]["requested_spec"], "app", "install app: requested_spec")
    t.eq(recs["base"]["version"], "1.0", "install app: base untouched")
    conf = [e for e in recs["app"]["paths_data"]["paths"] if e["_path"] == "etc/app.conf"][0]
    t.eq(conf.get("sha256_in_prefix"), menv_sha(os.path.join(p, "etc/app.conf")),
         "paths_data: sha256_in_prefix of a relocated file")
    plain = [e for e in recs["app"]["paths_data"]["paths"] if e["_path"] == "share/app/app.txt"][0]
    t.eq(plain.get("sha256_in_prefix"), plain.get("sha256"),
         "paths_data: an unchanged file's sha256_in_prefix is its sha256 (conda 26 writes both)")
    rev1 = snapshot(p)

    # conda-meta/*.json byte for byte as conda's json.dump(record, indent=2) writes it: ASCII,
    # Python's lower-case \u escapes, no final newline (a license with non-ASCII, quotes and a
    # literal backslash-u)
    q = os.path.join(t.tmp, "ascii")
    t.menv_ok("create", "-p", q, *c, "other")
    raw = open(os.path.join(q, "conda-meta", "other-1.0-0.json"), "rb").read()
    t.eq(raw, json.dumps(json.loads(raw), indent=2).encode(),
         "PrefixRecord bytes: Python's json.dumps(indent=2) of its own content")
    t.eq(json.loads(raw)["license"], "Caf\u00e9 \u221e \"q\" \\u00C9 \x7f", "PrefixRecord: license kept")

    # a second install of the same thing changes nothing
    r = t.menv_ok("install", "-p", p, *c, "app", "--json")
    j = r.json()
    t.eq((j["actions"]["LINK"], j["actions"]["UNLINK"]), ([], []), "install again: no actions")
    t.eq(payload(snapshot(p)), payload(rev1), "install again: prefix unchanged")

    # update base: 1.0 -> 2.0, old-only.txt goes, new.txt comes
    r = t.menv_ok("update", "-p", p, *c, "base", "--json")
    j = r.json()
    t.eq([(x["name"], x["version"]) for x in j["actions"]["UNLINK"]], [("base", "1.0")],
         "update: UNLINK")
    t.eq([(x["name"], x["version"]) for x in j["actions"]["LINK"]], [("base", "2.0")],
         "update: LINK")
    t.eq(files_of(p), ["bin/base-tool", "etc/app.conf", "share/app/app.txt",
                       "share/base/a.txt", "share/base/new.txt"], "update: file set")
    with open(os.path.join(p, "share/base/a.txt")) as f:
        t.eq(f.read(), "base two\n", "update: new content")
    t.check(not os.path.exists(os.path.join(p, "conda-meta/base-1.0-0.json")),
            "update: old record gone")
    t.eq(records(p)["base"]["requested_spec"], "base", "update: requested_spec of the update")
    # updating what is already newest changes nothing (libsolv's update job picks the
    # channel's copy of the installed package: no relink, no new revision)
    rev2, hist = snapshot(p), open(os.path.join(p, "conda-meta", "history")).read()
    for args in (["base"], ["--all"]):
        r = t.menv_ok("update", "-p", p, *c, *args, "--json")
        j = r.json()
        t.eq((j["actions"]["LINK"], j["actions"]["UNLINK"]), ([], []),
             "update %s when current: no actions" % args[0])
        t.eq(payload(snapshot(p)), payload(rev2), "update %s when current: unchanged" % args[0])
    t.eq(open(os.path.join(p, "conda-meta", "history")).read(), hist,
         "update when current: no new revision")

    # remove app: its files and record go, empty dirs too; base stays
    t.menv_ok("remove", "-p", p, "app")
    t.eq(files_of(p), ["bin/base-tool", "share/base/a.txt", "share/base/new.txt"],
         "remove app: file set")
    t.check(not os.path.exists(os.path.join(p, "share/app")), "remove app: empty dir removed")
    t.check(not os.path.exists(os.path.join(p, "etc")), "remove app: empty etc/ removed")
    t.check(not os.path.exists(os.path.join(p, "conda-meta/.menv-txn")), "no journal left")

    # removing something not installed is an error and changes nothing
    before = snapshot(p)
    r = t.menv_run("remove", "-p", p, "nothere")
    t.one_line_error(r, "remove of a package that is not installed", ["nothere"])
    t.eq(snapshot(p), before, "failed remove: prefix unchanged")

    # history in conda's format
    with open(os.path.join(p, "conda-meta/history")) as f:
        hist = f.read()
    blocks = re.findall(r"^==> (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) <==$", hist, re.M)
    t.eq(len(blocks), 4, "history: one block per change (create, install, update, remove)")
    t.check("# cmd: menv install -p %s" % p in hist, "history: # cmd: line", hist)
    t.check(re.search(r"^-.*::base-1\.0-0$", hist, re.M) is not None, "history: -base-1.0-0")
    t.check(re.search(r"^\+.*::base-2\.0-0$", hist, re.M) is not None, "history: +base-2.0-0")
    t.check("# update specs: ['base']" in hist, "history: # update specs", hist)
    t.check("# remove specs: ['app']" in hist, "history: # remove specs", hist)

    # list --revisions
    r = t.menv_ok("list", "-p", p, "--revisions")
    t.check("(rev 0)" in r.out and "(rev 3)" in r.out, "list --revisions: revisions 0..3", r.out)
    t.check("base  {1.0-0 -> 2.0-0}" in r.out, "list --revisions: the update shown", r.out)
    j = t.menv_ok("list", "-p", p, "--revisions", "--json").json()
    t.eq([x["rev"] for x in j], [0, 1, 2, 3], "list --revisions --json: revs")
    t.eq(j[2]["upgrade"], ["base-1.0-0 -> 2.0-0"], "list --revisions --json: upgrade")
    t.eq([x.split("::")[1] for x in j[3]["remove"]], ["app-1.0-0"], "revisions: removal")

    # back to revision 1 (base 1.0 + app), then revision 0: byte-identical payloads
    t.menv_ok("install", "-p", p, "--revision", "1", *c)
    t.eq(payload(snapshot(p)), payload(rev1), "install --revision 1: files as at revision 1",
         ) or print(diff(payload(rev1), payload(snapshot(p))))
    t.menv_ok("install", "-p", p, "--revision", "0", *c)
    t.eq(payload(snapshot(p)), payload(rev0), "install --revision 0: files as at revision 0")
    t.eq(sorted(records(p)), ["base"], "install --revision 0: records")
    r = t.menv_run("install", "-q", "-p", p, "--revision", "99", *c)
    t.one_line_error(r, "a revision that does not exist", ["revision 99"])

    # env update --prune: removes only what the file no longer asks for
    q = os.path.join(t.tmp, "env2")
    t.menv_ok("create", "-p", q, *c, "app", "other", "lonely")
    ef = os.path.join(t.tmp, "env.yml")
    with open(ef, "w") as f:
        f.write("name: x\nchannels:\n  - %s\n  - nodefaults\ndependencies:\n  - app\n"
                "  - other\n" % url)
    before = snapshot(q)
    t.menv_ok("env", "update", "-p", q, "-f", ef)
    t.eq(sorted(records(q)), ["app", "base", "lonely", "other"],
         "env update without --prune keeps what the file does not list")
    t.eq(payload(snapshot(q)), payload(before), "env update without --prune: files unchanged")
    r = t.menv_ok("env", "update", "-p", q, "-f", ef, "--prune", "--json")
    t.eq(sorted(x["name"] for x in r.json()["actions"]["UNLINK"]), ["lonely"],
         "env update --prune: UNLINK only what the file no longer asks for")
    t.eq(sorted(records(q)), ["app", "base", "other"],
         "env update --prune: base stays (app needs it), lonely goes")
    t.check(not os.path.exists(os.path.join(q, "share/lonely")), "--prune: lonely's files gone")
    with open(ef, "w") as f:
        f.write("channels:\n  - %s\n  - nodefaults\ndependencies:\n  - other\n" % url)
    t.menv_ok("env", "update", "-p", q, "-f", ef, "--prune")
    t.eq(sorted(records(q)), ["other"], "--prune: app and base go once nothing asks for them")
    t.eq(files_of(q), ["share/other/o.txt"], "--prune: file set")

    # remove --all removes the environment
    t.menv_ok("remove", "-p", q, "--all")
    t.check(not os.path.exists(q), "remove --all: prefix gone")
    # update of a name that is not installed
    r = t.menv_run("update", "-q", "-p", p, *c, "other")
    t.one_line_error(r, "update of a package that is not installed", ["other", "not installed"])


def menv_sha(path):
    import hashlib
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


if __name__ == "__main__":
    main(body)
