"""Exports are valid UTF-8 (issue 22): an unowned dist-info whose METADATA names the package
with bytes that are not UTF-8 is skipped with one warning naming it, and `menv export`
(environment and conda-lock, to stdout or --file) writes valid UTF-8 without it. A value
that is not UTF-8 and reaches the YAML writer is refused by libyaml's emitter
(unit.test_yaml_out)."""
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
    # the dist-info cannot be read as text: it is skipped with one warning naming it (the
    # rule of issue 22 for unreadable dist-info), and the export stays valid UTF-8; a
    # non-UTF-8 value that reaches the writer itself is refused (unit.test_yaml_out)
    out = os.path.join(t.tmp, "export.yml")
    warn = ("menv: warning: skipped 'lib/python3.11/site-packages/bad-1.0.dist-info' (no conda "
            "package owns it): its METADATA has a Name that is not a PEP 508 name")
    for fmt in ("environment", "conda-lock"):
        r = t.menv_ok("export", "-n", "e", "--format", fmt)
        t.eq(r.err.splitlines(), [warn], "export --format %s: one warning naming the dist-info" % fmt)
        t.check("six" in r.out and "bad" not in r.out,
                "export --format %s: six exported, the unreadable one left out" % fmt, r.out)
        r = t.menv_ok("export", "-n", "e", "--format", fmt, "--file", out)
        with open(out, "rb") as f:
            data = f.read()
        try:
            data.decode("utf-8")
            ok = True
        except UnicodeDecodeError:
            ok = False
        t.check(ok and b"\xff" not in data and b"bad" not in data,
                "export --format %s --file: valid UTF-8 without the unreadable package" % fmt)
        os.unlink(out)

if __name__ == "__main__":
    menvtest.main(body, "export_utf8")
