"""Changes on an environment whose conda-meta/ records are odd (hand edits, other tools,
hostile files): a record without depends, with depends that is not a list or holds
non-strings, without a channel, two records of one name, a self dependency, a cycle. Each
of install, remove, update and --revision orders its links and unlinks (linkorder.c) without
crashing: it succeeds or fails with one clear line, and the prefix stays consistent (its
conda-meta and its files agree)."""
import json
import os

from insttest import main, pkg


def meta(prefix):
    d = os.path.join(prefix, "conda-meta")
    return {f: json.load(open(os.path.join(d, f))) for f in sorted(os.listdir(d))
            if f.endswith(".json")}


def edit(prefix, name, fn):
    d = os.path.join(prefix, "conda-meta")
    f = next(f for f in os.listdir(d) if f.startswith(name + "-") and f.endswith(".json"))
    p = os.path.join(d, f)
    r = json.load(open(p))
    fn(r)
    with open(p, "w") as g:
        json.dump(r, g)
    return p


def consistent(t, prefix, what):
    for f, r in meta(prefix).items():
        for p in r.get("files", []) if isinstance(r.get("files"), list) else []:
            t.check(os.path.lexists(os.path.join(prefix, p)), "%s: %s's file %s is there"
                    % (what, f, p))


def body(t):
    ch = os.path.join(t.tmp, "chan")
    pkg(ch, "a", "1.0", depends=["b"], files={"share/a.txt": "a1\n"})
    pkg(ch, "a", "2.0", depends=["b"], files={"share/a.txt": "a2\n"})
    pkg(ch, "b", "1.0", depends=["a"], files={"share/b.txt": "b\n"})
    pkg(ch, "c", "1.0", depends=["c", "d"], files={"share/c.txt": "c\n"})
    pkg(ch, "d", "1.0", files={"share/d.txt": "d\n"})
    pkg(ch, "e", "1.0", depends=["d"], files={"share/e.txt": "e\n"})
    t.index(ch)
    c = ["-y", "-q", "-c", t.url(ch), "--override-channels"]
    oddities = [
        ("no depends", "c", lambda r: r.pop("depends")),
        ("depends null", "c", lambda r: r.update(depends=None)),
        ("depends a string", "c", lambda r: r.update(depends="d")),
        ("depends of non-strings", "c", lambda r: r.update(depends=[1, None, {}, ["d"], "d"])),
        ("a long name", "c", lambda r: r.update(depends=["x" * 300, "ch::" + "y" * 200, "d"])),
        ("no channel", "c", lambda r: r.pop("channel")),
        ("a channel not a string", "c", lambda r: r.update(channel=5)),
        ("no name", "c", lambda r: r.pop("name")),
    ]
    for i, (what, name, fn) in enumerate(oddities):
        p = os.path.join(t.tmp, "e%d" % i)
        t.menv_ok("create", "-p", p, *c, "a=1", "c")
        edit(p, name, fn)
        for cmd in (["install", "-p", p, *c, "e"], ["update", "-p", p, *c, "a"],
                    ["remove", "-p", p, "-y", "-q", "e"],
                    ["install", "-p", p, *c, "--revision", "0"]):
            r = t.menv_run(*cmd)
            if r.rc != 0:
                t.one_line_error(r, "%s: %s" % (what, cmd[0]))
            else:
                t.check(True, "%s: %s exits 0" % (what, cmd[0]))
            consistent(t, p, "%s: %s" % (what, cmd[0]))
    # two records of one name, both installed: a (1.0) and a copy named a (2.0)
    p = os.path.join(t.tmp, "dup")
    t.menv_ok("create", "-p", p, *c, "a=1", "e")
    d = os.path.join(p, "conda-meta")
    f = next(f for f in os.listdir(d) if f.startswith("a-"))
    r = json.load(open(os.path.join(d, f)))
    r.update(version="0.5", build="x", files=[], paths_data={"paths": [], "paths_version": 1})
    with open(os.path.join(d, "a-0.5-x.json"), "w") as g:
        json.dump(r, g)
    for cmd in (["install", "-p", p, *c, "c"], ["update", "-p", p, *c, "a"],
                ["remove", "-p", p, "-y", "-q", "b", "--force"],
                ["install", "-p", p, *c, "--revision", "0"]):
        r = t.menv_run(*cmd)
        if r.rc != 0:
            t.one_line_error(r, "two of a name: %s" % cmd[0])
        consistent(t, p, "two of a name: %s" % cmd[0])


if __name__ == "__main__":
    main(body)
