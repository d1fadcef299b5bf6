#!/usr/bin/env python3
"""cli.attack3_<case>: what a third outside attack (lock reading, the .pyc cache, Ctrl-C around
the commit point, threaded linking, path settings) found, one case each
(python3 test_attack3.py MENV SHARED CASE):

- lock_json_secret: `create --json -f LOCK` (and `--dry-run --json`) of a conda-lock or
  explicit lock whose URLs hold user:password and /t/TOKEN/ printed them in every LINK and
  FETCH entry's `url`: menv_record_json redacts the URLs it shows, for every command.
- lock_hash: a conda entry's md5 or sha256 that cannot be one (too short, too long, not hex,
  a number, a list) passed `create --dry-run` and failed the create's download as a
  mismatch, or (a number, in conda-lock's `hash` or micromamba's JSON) was dropped and the
  package installed unchecked. Every lock format refuses it when read, naming the entry.
- lock_dry_run_agrees: a conda-lock entry whose name, version or build is not its URL's file
  name, or whose url is a path ("/srv/chan/noarch/x.conda", "chan/noarch/x.conda"), passed
  `create --dry-run` and failed the create (the file's index.json; "host not found: chan").
  The plan checks both, so the dry run fails with the create's line.
- yaml_documents: a conda-lock file or .condarc holding a second YAML document ('---') was
  read to its first one's end and the rest dropped silently (a lock's packages in the second
  document never installed; a .condarc's channels there never used); conda's reader refuses
  such a file, environment files were refused already. Now refused with FILE:LINE:COL by
  the streaming lock reader, the general YAML reader and the .condarc reader alike.
- late_sigint: a Ctrl-C (SIGINT, SIGTERM, SIGHUP) that reached `install` after the
  transaction's last look at the flag (its summary, freeing the solver's pool: 3 of 17 random
  moments of an install of 31 packages) exited 0, saying nothing. Every command that took no
  notice of a signal it got exits 130 with one line saying that it finished (the change is
  kept: the environment is the new one). MENV_TEST_GATE_TXN_FREE holds the command there.
- explicit_nul: a NUL byte in an explicit lock cut its line where C reads it: a URL
  "x.conda\\0junk" was read as "x.conda", a line "\\0https://..." skipped as blank (its
  package silently not installed). Refused with FILE:LINE:COL, as in every YAML file.
- lock_misnamed_warm: a lock create from a warm cache takes the cache's record of a package
  (of the lock's hash, name, version and build) without reading its index.json again, as a
  solving create does. A lock naming a package file that holds another package (its own
  hashes, so the download verifies) is refused by the create, and again by every later
  create from the cache that file was extracted into: a lock's extraction of it leaves no
  info/repodata_record.json there to vouch for it.
"""
import json
import os
import re
import shutil
import sys

import menvtest
from menvtest import write_text

NOARCH = ("packages", "conda", "test-recipes", "noarch")
CANARY = "Cnry"


def served_lock(t, http_base):
    """An environment of `dependent` from a served channel, and its conda-lock and explicit
    exports with user:password and a /t/TOKEN/ put into every package URL."""
    src = os.path.join(t.tmp, "src")
    t.menv_ok("create", "-p", src, "-c", http_base + "/chan", "--override-channels", "-y",
              "-q", "dependent")
    cred = http_base.replace("http://", "http://u:%sPw@" % CANARY) + "/t/tk-%sTok/chan" % CANARY
    out = []
    for args, name in ((["export"], "c-lock.yml"), (["list", "--explicit", "--md5"], "ex.txt")):
        text = t.menv_ok(*args, "-p", src).out
        t.check(http_base + "/chan/noarch/" in text, "%s: the export names the channel" % name,
                text)
        f = os.path.join(t.tmp, name)
        write_text(f, text.replace(http_base + "/chan/", cred + "/"))
        out.append(f)
    return out


def case_lock_json_secret(t):
    P = os.path.join(t.corpus, *NOARCH)
    srv = os.path.join(t.tmp, "srv")
    for chan in (os.path.join(srv, "chan"), os.path.join(srv, "t", "tk-%sTok" % CANARY, "chan")):
        os.makedirs(os.path.join(chan, "noarch"))
        for fn in ("dependency-1.0-0.conda", "dependent-1.0-0.conda"):
            shutil.copyfile(os.path.join(P, fn), os.path.join(chan, "noarch", fn))
        t.index(chan)
    http = t.http_server(srv)
    try:
        for lock in served_lock(t, http.base):
            for args in (["--dry-run", "--json"], ["--json"]):
                p = os.path.join(t.tmp, "e")
                shutil.rmtree(t.pkgs, ignore_errors=True)
                r = t.menv_run("create", "-p", p, "-f", lock, "-y", *args)
                what = "create -f %s %s" % (os.path.basename(lock), " ".join(args))
                t.check(r.rc == 0, "%s: succeeds" % what, r)
                t.check(CANARY not in r.out + r.err, "%s: no credentials or token printed"
                        % what, r)
                urls = [x["url"] for x in r.json()["actions"]["LINK"]] if r.rc == 0 else []
                t.eq(urls, [http.base + "/t/<TOKEN>/chan/noarch/%s-1.0-0.conda" % n
                            for n in ("dependency", "dependent")],
                     "%s: LINK names the URLs redacted" % what)
                shutil.rmtree(p, ignore_errors=True)
    finally:
        http.stop()


def local_lock(t):
    """The conda-lock and explicit exports of `dependent` from a file:// channel."""
    P = os.path.join(t.corpus, *NOARCH)
    chan = t.make_channel("chan", {"noarch": [os.path.join(P, "dependency-1.0-0.conda"),
                                              os.path.join(P, "dependent-1.0-0.conda")]})
    src = os.path.join(t.tmp, "src")
    t.menv_ok("create", "-p", src, "-c", t.url(chan), "--override-channels", "-y", "-q",
              "dependent")
    return (t.menv_ok("export", "-p", src).out,
            t.menv_ok("list", "-p", src, "--explicit", "--md5").out)


MD5 = "46ae8016c479559a645bf34aa6f9f27b"
SHA = "df04e0b4bbb159ce69d6996d152b32b61b698bf6f692995a3367d413929343a9"


def case_lock_hash(t):
    lock, explicit = local_lock(t)
    t.check(("md5: %s\n      sha256: %s\n" % (MD5, SHA)) in lock, "the lock's hashes", lock)
    both = "md5: %s\n      sha256: %s\n" % (MD5, SHA)
    cases = [("sha256 short", lock.replace(both, "md5: %s\n      sha256: df04b\n" % MD5),
              "sha256 'df04b' is not 64"),
             ("sha256 long", lock.replace(both, "md5: %s\n      sha256: 00%s\n" % (MD5, SHA)),
              "sha256 '00df04"),
             ("md5 short", lock.replace(both, "md5: 46ae\n"), "md5 '46ae' is not 32"),
             ("md5 not hex", lock.replace(both, "md5: zz%s\n" % MD5[2:]), "md5 'zz"),
             ("sha256 a number", lock.replace(both, "sha256: 12345\n"), "sha256 '12345'"),
             ("md5 a list", lock.replace(both, "md5: [%s]\n" % MD5), "md5 '[\""),
             ("micromamba JSON", json.dumps({
                 "lockVersion": "1.0.0", "platform": "linux-64", "specs": ["dependency"],
                 "channels": ["c"], "channelInfo": {"c": [{"url": "file:///nowhere/c"}]},
                 "packages": {"dependency-1.0-0.conda": {
                     "name": "dependency", "version": "1.0", "build": "0", "subdir": "noarch",
                     "channel": "c", "hash": {"sha256": 12345}}}, "pipPackages": {}}),
              "sha256 '12345'")]
    for what, text, needle in cases:
        t.check(text not in (lock, explicit), "%s: the lock was changed" % what, text)
        f = os.path.join(t.tmp, "bad-lock.yml")
        write_text(f, text)
        for args in (["--dry-run"], []):
            p = os.path.join(t.tmp, "new")
            r = t.menv_run("create", "-p", p, "-f", f, "-y", *args)
            t.one_line_error(r, "%s %s" % (what, args),
                             [f + ":", ": package entry 1 ('dependency'): its " + needle,
                              "hexadecimal digits"])
            # FILE:LINE: the line where the entry starts, in every lock format
            t.check(re.search(re.escape(f) + r":\d+: package entry 1 ", r.err),
                    "%s %s: the error names the entry's line" % (what, args), r.err)
            t.no_prefix_left(p, "%s %s" % (what, args))
    # a hash of the right length in capitals is a hash: the lock installs
    f = os.path.join(t.tmp, "caps-lock.yml")
    write_text(f, lock.replace(SHA, SHA.upper()))
    r = t.menv_run("create", "-p", os.path.join(t.tmp, "caps"), "-f", f, "-y", "-q")
    t.check(r.rc == 0, "a sha256 in capitals installs", r)


def case_lock_dry_run_agrees(t):
    lock, _ = local_lock(t)
    url = re.search(r"url: (file://\S*/)dependency-1.0-0.conda", lock).group(1)
    cases = [("name", lock.replace("name: dependency\n", "name: zzz\n"),
              "lockfile entry 'zzz 1.0 0': the package file 'dependency-1.0-0.conda' is "
              "dependency 1.0 0"),
             ("version", lock.replace('version: "1.0"\n', 'version: "9.0"\n', 1),
              "lockfile entry 'dependency 9.0 0': the package file"),
             ("build", lock.replace('build: "0"\n', 'build: "1"\n', 1),
              "lockfile entry 'dependency 1.0 1': the package file"),
             ("path url", lock.replace("url: " + url, "url: " + url[len("file://"):], 1),
              "its url '%s" % url[len("file://"):]),
             ("relative url", lock.replace("url: " + url, "url: chan/noarch/", 1),
              "its url 'chan/noarch/dependency-1.0-0.conda' is not a URL")]
    for what, text, needle in cases:
        t.check(text != lock, "%s: the lock was changed" % what)
        f = os.path.join(t.tmp, "bad-lock.yml")
        write_text(f, text)
        lines = []
        for args in (["--dry-run"], []):
            p = os.path.join(t.tmp, "new")
            r = t.menv_run("create", "-p", p, "-f", f, "-y", "-q", *args)
            t.one_line_error(r, "%s %s" % (what, args), [needle])
            t.no_prefix_left(p, "%s %s" % (what, args))
            lines.append(r.err)
        t.eq(lines[0], lines[1], "%s: the dry run says what the create says" % what)


def case_yaml_documents(t):
    lock, _ = local_lock(t)
    head, entries = lock.split("package:\n")
    first, second = entries.split("  - name: dependent\n")
    n = lock.count("\n")
    for what, text, line in (
            ("lock of two documents", head + "package:\n" + first + "---\npackage:\n"
             "  - name: dependent\n" + second, lock.split("  - name: dependent")[0].count("\n")
             + 1),
            ("lock then an empty document", lock + "---\n", n + 1),
            ("lock with an anchor (the general reader) then a document",
             lock.replace("    hash:\n", "    hash: &h\n", 1) + "--- {}\n", n + 1)):
        f = os.path.join(t.tmp, "two-lock.yml")
        write_text(f, text)
        for args in (["--dry-run"], []):
            p = os.path.join(t.tmp, "new")
            r = t.menv_run("create", "-p", p, "-f", f, "-y", "-q", *args)
            t.one_line_error(r, "%s %s" % (what, args),
                             ["%s:%d:1: a second YAML document" % (f, line)])
            t.no_prefix_left(p, "%s %s" % (what, args))
    # one document with its markers is one document
    f = os.path.join(t.tmp, "one-lock.yml")
    write_text(f, "---\n" + lock + "...\n")
    r = t.menv_run("create", "-p", os.path.join(t.tmp, "one"), "-f", f, "-y", "-q")
    t.check(r.rc == 0, "a lock between '---' and '...' installs", r)
    write_text(t.rc, "channels:\n  - a\n---\nchannels:\n  - b\n")
    for args in (["config", "--show", "channels"], ["info"],
                 ["config", "--add", "channels", "c"]):
        r = t.menv_run(*args)
        t.one_line_error(r, " ".join(args), [t.rc + ":3:1: a second YAML document"])
    with open(t.rc) as fh:
        t.eq(fh.read(), "channels:\n  - a\n---\nchannels:\n  - b\n",
             "the .condarc is left as it was")


def case_late_sigint(t):
    import signal
    import subprocess
    import time
    P = os.path.join(t.corpus, *NOARCH)
    chan = t.make_channel("chan", {"noarch": [os.path.join(P, "dependency-%s-0.conda" % v)
                                              for v in ("1.0", "2.0")]})
    C = ["-c", t.url(chan), "--override-channels", "-q", "-y"]
    p = os.path.join(t.tmp, "e")
    t.menv_ok("create", "-p", p, *C, "dependency=1.0")
    gate = os.path.join(t.tmp, "gate")
    os.mkfifo(gate)
    for i, sig in enumerate((signal.SIGINT, signal.SIGTERM, signal.SIGHUP)):
        want = ("2.0", "1.0", "2.0")[i]
        proc = subprocess.Popen([t.menv, "install", "-p", p, *C, "dependency=" + want],
                                env=t.environ({"MENV_TEST_GATE_TXN_FREE": gate}),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wchan = "/proc/%d/wchan" % proc.pid
        deadline = time.time() + 60
        while time.time() < deadline and proc.poll() is None:
            try:
                with open(wchan) as f:
                    if f.read().strip() in ("wait_for_partner", "fifo_open"):
                        break
            except OSError:
                pass
            time.sleep(0.02)
        what = "install dependency=%s, %s in the gate" % (want, signal.Signals(sig).name)
        if not t.check(proc.poll() is None, "%s: the install waits in the gate" % what):
            proc.communicate()
            continue
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
        err = err.decode()
        t.eq(proc.returncode, 130, "%s: exit 130" % what)
        t.eq(err, "menv: error: interrupted, but the command finished\n",
             "%s: one line says the command finished" % what)
        r = t.menv_ok("list", "-p", p, "--json")
        t.eq([(x["name"], x["version"]) for x in r.json()], [("dependency", want)],
             "%s: the change is kept" % what)


def case_explicit_nul(t):
    _, explicit = local_lock(t)
    lines = explicit.splitlines(True)
    at = [i for i, x in enumerate(lines) if "dependent-1.0-0.conda" in x][0]
    for what, line, col in (("after the URL", lines[at].replace(".conda#", ".conda\0junk#"),
                             lines[at].index(".conda#") + 7),
                            ("a line starting with one", "\0" + lines[at], 1)):
        f = os.path.join(t.tmp, "nul.txt")
        with open(f, "w") as fh:
            fh.write("".join(lines[:at]) + line + "".join(lines[at + 1:]))
        for args in (["--dry-run"], []):
            p = os.path.join(t.tmp, "new")
            r = t.menv_run("create", "-p", p, "-f", f, "-y", "-q", *args)
            t.one_line_error(r, "%s %s" % (what, args),
                             ["%s:%d:%d: a NUL byte" % (f, at + 1, col)])
            t.no_prefix_left(p, "%s %s" % (what, args))


def case_lock_misnamed_warm(t):
    import hashlib
    lock, _ = local_lock(t)
    t.check(("md5: %s\n      sha256: %s\n" % (MD5, SHA)) in lock, "the lock's hashes", lock)
    # the channel's dependency-1.0-0.conda replaced by the package `dependent`, and the lock's
    # hashes of it made those of the new file: the download verifies, the package is another
    chan_file = os.path.join(t.tmp, "chan", "noarch", "dependency-1.0-0.conda")
    shutil.copyfile(os.path.join(t.corpus, *NOARCH, "dependent-1.0-0.conda"), chan_file)
    data = open(chan_file, "rb").read()
    md5, sha = hashlib.md5(data).hexdigest(), hashlib.sha256(data).hexdigest()
    f = os.path.join(t.tmp, "misnamed-lock.yml")
    write_text(f, lock.replace("md5: %s\n      sha256: %s\n" % (MD5, SHA),
                               "md5: %s\n      sha256: %s\n" % (md5, sha)))
    needle = ("lockfile entry 'dependency 1.0 0': the package file 'dependency-1.0-0.conda' "
              "is dependent 1.0 0")
    dist = os.path.join(t.pkgs, "dependency-1.0-0")
    for attempt in ("cold", "warm", "warm again"):
        p = os.path.join(t.tmp, "new")
        r = t.menv_run("create", "-p", p, "-f", f, "-y", "-q")
        t.one_line_error(r, attempt, [f + ":", needle])
        t.no_prefix_left(p, attempt)
        t.check(os.path.isfile(os.path.join(dist, "info", "index.json")),
                "%s: the package was extracted into the cache" % attempt, dist)
        t.check(not os.path.exists(os.path.join(dist, "info", "repodata_record.json")),
                "%s: no record of the lock's entry vouches for the other package" % attempt,
                dist)


def body(t, case):
    getattr(sys.modules[__name__], "case_" + case)(t)


if __name__ == "__main__":
    menvtest.main(body)
