"""The package cache repairs itself (BR-030's kind, tryout findings): an extracted package
whose files no longer match its info/paths.json (a file changed through a hard link from
some prefix, or deleted) is extracted again from its verified package file, or fetched
again when that is gone, never linked as it is; and the `.<dist>.tmp-*` folder of an
extraction that a killed menv left is removed under the cache lock."""
import os
import shutil

from insttest import main, pkg


def body(t):
    ch = os.path.join(t.tmp, "chan")
    pkg(ch, "libthing", "1.0", files={"lib/libthing.so": b"\x7fELF thing\n" * 50,
                                      "share/thing/data.txt": "data\n"})
    t.index(ch)
    c = ["-q", "-c", t.url(ch), "--override-channels"]
    t.menv_ok("create", "-p", os.path.join(t.tmp, "a"), *c, "libthing")
    cached = os.path.join(t.pkgs, "libthing-1.0-0")
    so = os.path.join(cached, "lib", "libthing.so")
    good = open(so, "rb").read()

    # 1. a file grown in place (as an editor or a build would through a hard link)
    with open(so, "ab") as f:
        f.write(b"appended\n")
    t.menv_ok("create", "-p", os.path.join(t.tmp, "b"), *c, "libthing")
    t.eq(open(os.path.join(t.tmp, "b", "lib", "libthing.so"), "rb").read(), good,
         "a grown cache file is not linked: the package was extracted again")
    t.eq(open(so, "rb").read(), good, "the cache entry holds the package's bytes again")

    # 2. a file deleted from the cache, and the package file gone too: fetched again
    os.remove(os.path.join(cached, "share", "thing", "data.txt"))
    os.remove(os.path.join(t.pkgs, "libthing-1.0-0.tar.bz2"))
    r = t.menv_run("create", "-p", os.path.join(t.tmp, "c"), *c, "libthing")
    t.check(r.rc == 0, "a deleted cache file: the package is fetched and extracted again", r)
    t.eq(open(os.path.join(t.tmp, "c", "share", "thing", "data.txt")).read(), "data\n",
         "the deleted file is back in the new environment")

    # 3. a half extraction left by a killed menv
    stale = os.path.join(t.pkgs, ".libthing-1.0-0.tmp-AbC123")
    os.makedirs(os.path.join(stale, "lib"))
    with open(os.path.join(stale, "lib", "half"), "w") as f:
        f.write("x" * 1000)
    t.menv_ok("create", "-p", os.path.join(t.tmp, "d"), *c, "libthing")
    t.check(not os.path.exists(stale), "a stale .tmp- extraction folder is removed")
    shutil.rmtree(os.path.join(t.tmp, "d"))


if __name__ == "__main__":
    main(body)
