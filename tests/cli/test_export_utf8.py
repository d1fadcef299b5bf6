"""Exports are valid UTF-8 or refused (issue 22): an unowned dist-info whose METADATA names
the package with bytes that are not UTF-8 makes `menv export` (environment and conda-lock,
to stdout or --file) fail with one line naming the package, writing nothing; libyaml's
emitter, which writes every scalar, is what refuses the bytes. Without it the export is
written as before."""
import os

import menvtest


def body(t):
    t.menv_ok("create", "-q", "-n", "e")
    prefix = os.path.join(t.envs, "e")
    sp = os.path.join(prefix, "lib", "python3.11", "site-packages")
    good = os.path.join(sp, "six-1.16.0.dist-info")
    os.makedirs(good)
    menvtest.write_text(os.path.join(good, "METADATA"),
                        "Metadata-Version: 2.1\nName: six\nVersion: 1.16.0\n\n")
    r = t.menv_ok("export", "-n", "e", "--format", "environment")
    t.check("      - six==1.16.0\n" in r.out, "a valid pip package is exported", r.out)

    bad = os.path.join(sp, "bad-1.0.dist-info")
    os.makedirs(bad)
    with open(os.path.join(bad, "METADATA"), "wb") as f:
        f.write(b"Metadata-Version: 2.1\nName: bad\xff\nVersion: 1.0\n\n")
    out = os.path.join(t.tmp, "export.yml")
    for fmt, needle in (("environment", "pip dependency: 'bad\\xff==1.0' is not valid UTF-8"),
                        ("conda-lock", "package 'bad\\xff' 1.0 (pip): 'bad\\xff' is not valid")):
        r = t.menv_run("export", "-n", "e", "--format", fmt)
        t.one_line_error(r, "export --format %s of a non-UTF-8 pip name" % fmt, [needle])
        t.eq(r.out, "", "export --format %s: nothing on stdout" % fmt)
        r = t.menv_run("export", "-n", "e", "--format", fmt, "--file", out)
        t.one_line_error(r, "export --format %s --file" % fmt, [needle])
        t.check(not os.path.exists(out), "export --format %s --file: no file written" % fmt)


if __name__ == "__main__":
    menvtest.main(body, "export_utf8")
