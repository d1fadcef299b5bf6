"""Nothing a package does can write outside the prefix (issue 14, linking part).

Each package here is lexically clean and passes the archive checks of fetch/ on its own (its
links stay inside its own extracted directory); together they chain links out of the prefix:
A ships `s/t/u/v/w/L -> ../../../../..` (the prefix itself), B ships `s/t/u/v/w/L/M ->
../VICTIM` (linked through L it lands at <prefix>/M, which points beside the prefix), C ships
`s/t/u/v/w/L/M/data.txt` (through L and M: <area>/VICTIM/data.txt, a user's file). Chains of
2, 3 and 4 packages, for create, install, update, remove (of records that list such paths,
as another tool may have left them), rollback after a failing post-link, and the rollback of
an interrupted journal whose records point through links. Every time the whole area beside
the prefix (a victim directory with a file, a victim file, an empty victim directory) keeps
its names, bytes, modes and mtimes, the prefix is left as it was (or not created), and
conda-meta/ holds only menv's own files. Packages shipping conda-meta/ payloads (a fake
PrefixRecord, `pinned`, `history`) or top-level `.menv*` names are refused with one line
naming the package and the path, before anything changes.

Run twice: with openat2 (the kernel's RESOLVE_BENEATH) and with MENV_TEST_NO_OPENAT2=1 (the
component-by-component walk of kernels without it)."""
import hashlib
import json
import os
import stat

from insttest import main, pkg, snapshot, diff

L5 = "s/t/u/v/w/L"


def area_snapshot(area, skip):
    """name -> (kind, mode, mtime_ns, sha256 / link target) of everything under `area` except
    the names in `skip` (the prefix, its staging directories)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(area):
        rel_dir = os.path.relpath(dirpath, area)
        if rel_dir == ".":
            dirnames[:] = [d for d in dirnames if d not in skip and ".menv-tmp-" not in d]
            filenames = [f for f in filenames if f not in skip]
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, area)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("l", 0, st.st_mtime_ns, os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("d", stat.S_IMODE(st.st_mode), st.st_mtime_ns, None)
            else:
                with open(p, "rb") as f:
                    out[rel] = ("f", stat.S_IMODE(st.st_mode), st.st_mtime_ns,
                                hashlib.sha256(f.read()).hexdigest())
    return out


def make_area(t, name):
    """<tmp>/<name>/ with the victims; returns (area, prefix)."""
    area = os.path.join(t.tmp, name)
    os.makedirs(os.path.join(area, "VICTIM"))
    os.makedirs(os.path.join(area, "EMPTY"))
    os.makedirs(os.path.join(area, "VICTIM", "sub"))
    with open(os.path.join(area, "VICTIM", "sub", "deep.txt"), "w") as f:
        f.write("deep\n")
    with open(os.path.join(area, "VICTIM", "data.txt"), "w") as f:
        f.write("the user's data\n")
    with open(os.path.join(area, "VICTIM", "keep.txt"), "w") as f:
        f.write("keep me\n")
    with open(os.path.join(area, "victim.txt"), "w") as f:
        f.write("a user's file\n")
    # mtimes in the past: a write would move them
    for p in ("VICTIM/data.txt", "VICTIM/keep.txt", "victim.txt", "VICTIM", "EMPTY"):
        os.utime(os.path.join(area, p), ns=(1600000000 * 10**9, 1600000000 * 10**9))
    return area, os.path.join(area, "env")


class Area:
    def __init__(self, t, name):
        self.t = t
        self.area, self.prefix = make_area(t, name)
        self.before = area_snapshot(self.area, {"env"})
        self.listing = sorted(os.listdir(self.area))

    def untouched(self, what):
        t = self.t
        now = area_snapshot(self.area, {"env"})
        t.check(now == self.before,
                "%s: nothing outside the prefix created, changed or removed" % what,
                diff(self.before, now))
        names = sorted(n for n in os.listdir(self.area) if ".menv-tmp-" not in n)
        t.eq(names, sorted(set(self.listing) | ({"env"} if os.path.lexists(self.prefix)
                                                 else set())),
             "%s: the area beside the prefix lists the same names" % what)
        t.eq(os.listdir(os.path.join(self.area, "EMPTY")), [], "%s: EMPTY stays empty" % what)
        try:
            with open(os.path.join(self.area, "VICTIM", "data.txt"), "rb") as f:
                data = f.read()
        except OSError as e:
            data = str(e)
        t.eq(data, b"the user's data\n", "%s: VICTIM/data.txt keeps its bytes" % what)


def meta_only_menv(t, prefix, names, what):
    """conda-meta/ holds the records of `names`, history, the lock and the request menv keeps
    (.menv-request), nothing else."""
    meta = os.path.join(prefix, "conda-meta")
    got = sorted(os.listdir(meta))
    recs = []
    for n in got:
        if n.endswith(".json"):
            with open(os.path.join(meta, n)) as f:
                recs.append(json.load(f)["name"])
    t.eq(sorted(recs), sorted(names), "%s: conda-meta/ records only what menv linked" % what)
    t.eq(sorted(n for n in got if not n.endswith(".json")),
         [".menv-request", ".menv.lock", "created_at", "history"],
         "%s: conda-meta/ has no other file" % what)


def refused(t, r, what, needles):
    t.one_line_error(r, what, needles, nonzero_only=True, one_line=False)
    first = r.err_lines()[0] if r.err_lines() else ""
    t.check(all(n.lower() in first.lower() for n in needles),
            "%s: the first error line names %s" % (what, needles), r.err)


def chain_packages(ch):
    """The chains. 2: a2 + b2; 3: a + b + c (the issue's); 4: a + p4 + q4 + d4."""
    pkg(ch, "base", "1.0", files={"share/base.txt": "base\n"})
    # 2 packages: B's second path runs through A's link twice
    pkg(ch, "a2", "1.0", files={"s/L": {"symlink": ".."}})
    pkg(ch, "b2", "1.0", depends=["a2"], files={"s/L/M": {"symlink": "../VICTIM"},
                                "s/L/s/L/M/data.txt": "overwritten\n"})
    # 3 packages
    pkg(ch, "a", "1.0", files={L5: {"symlink": "../../../../.."}})
    pkg(ch, "b", "1.0", depends=["a"], files={L5 + "/M": {"symlink": "../VICTIM"}})
    pkg(ch, "c", "1.0", depends=["b"], files={L5 + "/M/data.txt": "overwritten\n",
                               L5 + "/M/new.txt": "created outside\n"})
    # b3: as b, after a package linked in the same transaction (rolled back with it)
    pkg(ch, "bpre", "1.0", files={"share/bpre/a.txt": "bpre\n", "share/bpre/b.txt": "bpre\n"})
    pkg(ch, "b3", "1.0", depends=["a", "bpre"], files={L5 + "/M": {"symlink": "../VICTIM"}})
    # 4 packages
    pkg(ch, "p4", "1.0", depends=["a"], files={L5 + "/P": {"symlink": "q"}})
    pkg(ch, "q4", "1.0", depends=["p4"], files={L5 + "/q": {"symlink": "../VICTIM"}})
    pkg(ch, "d4", "1.0", depends=["q4"], files={L5 + "/P/data.txt": "overwritten\n"})
    # links out as data: accepted, nothing written through them
    pkg(ch, "outlinks", "1.0", files={"x/V": {"symlink": "../VICTIM"},
                                      "x/F": {"symlink": "../victim.txt"},
                                      "x/real.txt": "inside\n"})
    # update: 1.0 plain, 2.0 the chain
    for n, dep, f2 in (("ua", None, {L5: {"symlink": "../../../../.."}}),
                       ("ub", "ua", {L5 + "/M": {"symlink": "../VICTIM"}}),
                       ("uc", "ub", {L5 + "/M/data.txt": "overwritten\n"})):
        pkg(ch, n, "1.0", files={"u/%s.txt" % n: "1.0\n"})
        pkg(ch, n, "2.0", depends=[dep + " 2.0"] if dep else [], files=f2)
    pkg(ch, "failpost", "1.0", files={"bin/.failpost-post-link.sh": "exit 3\n"})
    # a pre-link script that moves a directory an earlier package of the transaction linked
    # into out of the prefix and leaves a link to it there (issue 25: each package opens the
    # prefix's directories again, none is kept from one package to the next)
    pkg(ch, "pdir", "1.0", files={"share/pd/a.txt": "a\n"})
    pkg(ch, "pswap", "1.0", depends=["pdir"], files={
        "bin/.pswap-pre-link.sh": 'mv "$PREFIX/share/pd" "$PREFIX/../MOVED" && '
                                  'ln -s ../../MOVED "$PREFIX/share/pd"\n',
        "share/pd/b.txt": "b\n"})
    # conda-meta payloads and menv's own names
    fake = json.dumps({"name": "fake", "version": "6.6.6", "build": "0", "build_number": 0,
                       "files": [], "channel": "x", "subdir": "linux-64"})
    pkg(ch, "fakerec", "1.0", files={"conda-meta/fake-6.6.6-0.json": fake,
                                     "share/fakerec.txt": "x\n"})
    pkg(ch, "pinner", "1.0", files={"conda-meta/pinned": "base 9.9\n"})
    pkg(ch, "historian", "1.0", files={"conda-meta/history": "==> forged <==\n"})
    pkg(ch, "locker", "1.0", files={".menv-txn/journal": "U\0"})
    pkg(ch, "metalink", "1.0", files={"conda-meta": {"symlink": "share"}})


def body(t):
    ch = os.path.join(t.tmp, "chan")
    chain_packages(ch)
    t.index(ch)
    c = ["-q", "-y", "-c", t.url(ch), "--override-channels"]
    mode = "walk" if os.environ.get("MENV_TEST_NO_OPENAT2") else "openat2"
    t.note("resolution: %s" % mode)
    if mode == "walk":  # T.environ drops MENV_* variables: hand this one to menv again
        plain = t.environ
        t.environ = lambda extra=None: dict(plain(extra), MENV_TEST_NO_OPENAT2="1")

    # --- create: each chain in one transaction; no prefix, no staging left
    for i, (specs, bad, path) in enumerate((
            (["a2", "b2"], "b2", "s/L/M"),
            (["a", "b", "c"], "b", L5 + "/M"),
            (["a", "p4", "q4", "d4"], "p4", L5 + "/P"))):
        what = "create %s" % "+".join(specs)
        ar = Area(t, "create%d" % i)
        r = t.menv_run("create", "-p", ar.prefix, *c, *specs)
        refused(t, r, what, [bad, path, L5 if bad != "b2" else "s/L", "symbolic link"])
        t.no_prefix_left(ar.prefix, what)
        ar.untouched(what)

    # --- install: the chain into an existing environment, all at once and one by one
    for i, steps in enumerate(([["a", "b", "c"]], [["a"], ["b"], ["c"]], [["a2"], ["b2"]],
                               [["a"], ["p4", "q4", "d4"]], [["a"], ["b3"]])):
        what = "install %s" % " then ".join("+".join(s) for s in steps)
        ar = Area(t, "install%d" % i)
        t.menv_ok("create", "-p", ar.prefix, *c, "base")
        installed = ["base"]
        for s in steps:
            pre = snapshot(ar.prefix)
            r = t.menv_run("install", "-p", ar.prefix, *c, *s)
            if r.rc == 0:
                installed += s
                t.check(s in (["a"], ["a2"]), "%s: only the first link is accepted (%s)"
                        % (what, s), r)
                continue
            # a link of the same transaction: refused by the check, before anything changes;
            # one installed before: met when linking, and the install is rolled back
            refused(t, r, what, ["symbolic link"])
            if s in (["b"], ["b2"], ["b3"]):
                t.check("rolled back" in r.err, "%s: met when linking, rolled back" % what,
                        r.err)
            else:
                t.check("rolled back" not in r.err and " of '" in r.err,
                        "%s: refused by the check, naming the package of the link" % what,
                        r.err)
            t.check(any(n in r.err_lines()[0] for n in s), "%s: the package is named" % what,
                    r.err)
            now = snapshot(ar.prefix)
            t.check(now == pre, "%s: the prefix is rolled back byte-identically" % what,
                    diff(pre, now))
            break
        ar.untouched(what)
        meta_only_menv(t, ar.prefix, installed, what)
        t.check(not os.path.lexists(os.path.join(ar.prefix, "M")),
                "%s: no link M planted in the prefix" % what)

    # --- update: 1.0 plain -> 2.0 the chain; rolled back to 1.0
    ar = Area(t, "update")
    t.menv_ok("create", "-p", ar.prefix, *c, "ua=1.0", "ub=1.0", "uc=1.0")
    pre = snapshot(ar.prefix)
    r = t.menv_run("update", "-p", ar.prefix, *c, "--all")
    refused(t, r, "update --all to the chain", ["ub", L5 + "/M", "symbolic link"])
    now = snapshot(ar.prefix)
    t.check(now == pre, "update: the prefix is rolled back byte-identically", diff(pre, now))
    meta_only_menv(t, ar.prefix, ["ua", "ub", "uc"], "update")
    ar.untouched("update")

    # --- rollback after a failing post-link: links out are data, removed as links
    ar = Area(t, "rollback")
    t.menv_ok("create", "-p", ar.prefix, *c, "base")
    pre = snapshot(ar.prefix)
    r = t.menv_run("install", "-p", ar.prefix, *c, "a", "outlinks", "failpost")
    t.check(r.rc != 0 and "post-link" in r.err and "rolled back" in r.err,
            "rollback: the failing post-link rolls the install back", r)
    now = snapshot(ar.prefix)
    t.check(now == pre, "rollback: the prefix is byte-identical", diff(pre, now))
    ar.untouched("rollback after a failing post-link")
    # and committed: the links are there, pointing out, nothing written through them
    t.menv_ok("install", "-p", ar.prefix, *c, "a", "outlinks")
    t.eq(os.readlink(os.path.join(ar.prefix, "x/V")), "../VICTIM", "outlinks: x/V kept as data")
    t.eq(os.readlink(os.path.join(ar.prefix, L5)), "../../../../..", "a: L kept as data")
    t.menv_ok("remove", "-p", ar.prefix, "-q", "-y", "a", "outlinks")
    t.check(not os.path.lexists(os.path.join(ar.prefix, "x")) and
            not os.path.lexists(os.path.join(ar.prefix, "s")),
            "remove: the links and their directories are gone", os.listdir(ar.prefix))
    ar.untouched("remove of links pointing out")

    # --- a directory swapped for a link out by a pre-link script between two packages
    ar = Area(t, "prelink")
    t.menv_ok("create", "-p", ar.prefix, *c, "base")
    pre = snapshot(ar.prefix)
    r = t.menv_run("install", "-p", ar.prefix, *c, "pdir", "pswap")
    refused(t, r, "pre-link swap", ["pswap", "share/pd", "symbolic link"])
    moved = os.path.join(ar.area, "MOVED")
    t.eq(sorted(os.listdir(moved)) if os.path.isdir(moved) else None, ["a.txt"],
         "pre-link swap: the script moved pdir's directory out; menv wrote nothing into it")
    now = snapshot(ar.prefix)
    t.check(now == pre, "pre-link swap: the prefix is rolled back (the script's link removed "
            "as a link)", diff(pre, now))

    # --- remove: records (as another tool left them) listing paths through the chain
    ar = Area(t, "remove")
    t.menv_ok("create", "-p", ar.prefix, *c, "base", "a")
    os.symlink("../VICTIM", os.path.join(ar.prefix, "M"))   # what B's link did through L
    meta = os.path.join(ar.prefix, "conda-meta")
    with open(os.path.join(meta, "base-1.0-0.json")) as f:
        tmpl = json.load(f)
    for n, files in (("b", [L5 + "/M"]), ("c", [L5 + "/M/data.txt", L5 + "/M/keep.txt"])):
        rec = dict(tmpl, name=n, files=files, paths_data={"paths": [], "paths_version": 1})
        rec["fn"] = "%s-1.0-0.tar.bz2" % n
        with open(os.path.join(meta, "%s-1.0-0.json" % n), "w") as f:
            json.dump(rec, f)
    ar.before = area_snapshot(ar.area, {"env"})
    r = t.menv_run("remove", "-p", ar.prefix, "-q", "-y", "c")
    t.check(r.rc == 0, "remove c: its files behind a link are left alone", r)
    t.check("'%s/M/data.txt' is not removed: '%s' is a symbolic link" % (L5, L5) in r.err,
            "remove c: a warning names the file left and the link", r.err)
    ar.untouched("remove c (paths through L and M)")
    r = t.menv_run("remove", "-p", ar.prefix, "-q", "-y", "b", "a")
    t.check(r.rc == 0, "remove b a", r)
    ar.untouched("remove b and a")
    r = t.menv_run("remove", "-p", ar.prefix, "-q", "-y", "--all")
    t.check(r.rc == 0 and not os.path.lexists(ar.prefix), "remove --all: the prefix is gone", r)
    ar.untouched("remove --all")

    # --- recovery: an interrupted journal whose records point through links
    ar = Area(t, "recover")
    t.menv_ok("create", "-p", ar.prefix, *c, "base", "a")
    os.symlink("../VICTIM", os.path.join(ar.prefix, "M"))
    txn = os.path.join(ar.prefix, "conda-meta", ".menv-txn")
    os.makedirs(os.path.join(txn, "backup"))
    with open(os.path.join(txn, "backup", "1"), "w") as f:
        f.write("restored through a link\n")
    recs = ["U", "D" + L5 + "/M/sub", "C" + L5 + "/M/data.txt", "M1\t" + L5 + "/M/keep.txt",
            "R" + L5 + "/M/made"]
    with open(os.path.join(txn, "journal"), "wb") as f:
        f.write(b"".join(x.encode() + b"\0" for x in recs))
    ar.before = area_snapshot(ar.area, {"env"})
    r = t.menv_run("list", "-p", ar.prefix)
    t.check(r.rc == 0, "list after a hostile journal: recovered", r)
    t.check(not os.path.exists(txn), "the journal is gone after the recovery")
    ar.untouched("recovery of a journal through links")

    # --- conda-meta/ payloads and menv's names: refused before anything changes
    ar = Area(t, "meta")
    t.menv_ok("create", "-p", ar.prefix, *c, "base")
    pre = snapshot(ar.prefix)
    for n, path in (("fakerec", "conda-meta/fake-6.6.6-0.json"), ("pinner", "conda-meta/pinned"),
                    ("historian", "conda-meta/history"), ("locker", ".menv-txn/journal"),
                    ("metalink", "conda-meta")):
        r = t.menv_run("install", "-p", ar.prefix, *c, n)
        t.one_line_error(r, "install %s" % n, [n, path, "reserved"], nonzero_only=True)
        now = snapshot(ar.prefix)
        t.check(now == pre, "install %s: nothing changed in the prefix" % n, diff(pre, now))
        q = os.path.join(t.tmp, "meta-create-" + n)
        r = t.menv_run("create", "-p", q, *c, "base", n)
        t.one_line_error(r, "create with %s" % n, [n, path, "reserved"], nonzero_only=True)
        t.no_prefix_left(q, "create with %s" % n)
    r = t.menv_ok("list", "-p", ar.prefix)
    t.check("fake" not in r.out, "menv list shows no planted record", r.out)
    meta_only_menv(t, ar.prefix, ["base"], "conda-meta payloads")
    with open(os.path.join(ar.prefix, "conda-meta", "history")) as f:
        t.check("forged" not in f.read(), "history is menv's own")
    r = t.menv_run("install", "-p", ar.prefix, *c, "a")
    t.check(r.rc == 0, "no pinned file blocks a later install", r)
    ar.untouched("conda-meta payloads")


if __name__ == "__main__":
    main(body)
