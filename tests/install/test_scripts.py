"""Link scripts (conda's bin/.<name>-<action>.sh) with real corpus packages and a built one:
environment variables, .messages.txt, pre-link messages, activation before post-link, a
failing post-link rolling back an install byte-identically and leaving no prefix on create;
clobbering reported like conda (corpus: conda test-recipes clobber-a/b, rattler clobber-*)."""
import os
import shutil

from insttest import Fatal, main, pkg, records, snapshot, diff, files_of


def channel(t):
    ch = os.path.join(t.tmp, "chan")
    os.makedirs(os.path.join(ch, "noarch"))
    os.makedirs(os.path.join(ch, "linux-64"))
    tr = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    for n in ("failing_post_link-1.0-0", "post_link_run_in_env_package-1.0-0",
              "pre_link_messages_package-1.0-0", "clobber-a-1.0-0", "clobber-b-1.0-0",
              "post_link-d-1.0-0", "post_link-e-1.0-0"):
        shutil.copy(os.path.join(tr, n + ".conda"), os.path.join(ch, "noarch"))
    rl = os.path.join(t.corpus, "packages", "rattler")
    shutil.copy(os.path.join(rl, "link-scripts", "link-scripts-0.1.0-h4616a5c_0.conda"),
                os.path.join(ch, "noarch"))
    for n in ("clobber-1-0.1.0-h4616a5c_0", "clobber-2-0.1.0-h4616a5c_0",
              "clobber-3-0.1.0-h4616a5c_0"):
        shutil.copy(os.path.join(rl, "clobber", n + ".tar.bz2"), os.path.join(ch, "noarch"))
    env_dump = ('printf "%s|%s|%s|%s|%s\\n" "$PREFIX" "$PKG_NAME" "$PKG_VERSION" '
                '"$PKG_BUILDNUM" "$CONDA_PREFIX" > "$PREFIX/share/{what}.env"\n')
    pkg(ch, "scripted", "2.5", build="h1_7", build_number=7, files={
        "share/scripted/data.txt": "data\n",
        # pre-link runs before the files exist (on create, before the prefix does)
        "bin/.scripted-pre-link.sh": 'test "$PKG_NAME|$PKG_VERSION|$PKG_BUILDNUM" = '
                                     '"scripted|2.5|7" && test -n "$PREFIX"\n',
        "bin/.scripted-post-link.sh": env_dump.format(what="post-link") +
        'echo "scripted says hi" >> "$PREFIX/.messages.txt"\n',
        "bin/.scripted-pre-unlink.sh": env_dump.format(what="pre-unlink")})
    pkg(ch, "keeper", "1.0", files={"share/keeper/k.txt": "keep\n"})
    t.index(ch)
    return t.url(ch)


def body(t):
    url = channel(t)
    c = ["-c", url, "--override-channels"]
    # (rattler's link-scripts writes $PREFIX unquoted: a prefix without blanks for it)
    p = os.path.join(t.tmp, "env")

    # rattler's link-scripts: post-link touches a file, pre-unlink removes it
    r = t.menv_ok("create", "-p", p, *c, "link-scripts", "keeper")
    t.check(os.path.exists(os.path.join(p, "i-was-post-linked")), "post-link ran on create")
    t.check("This is a post-link script that just ran" in r.out,
            ".messages.txt shown on stdout", r.out)
    t.check(not os.path.exists(os.path.join(p, ".messages.txt")), ".messages.txt removed")
    t.menv_ok("remove", "-p", p, "link-scripts")
    t.check(not os.path.exists(os.path.join(p, "i-was-post-linked")), "pre-unlink ran on remove")

    # conda's variables; the package's pre-link script lives in the package (not linked)
    r = t.menv_ok("install", "-p", p, *c, "scripted")
    with open(os.path.join(p, "share/post-link.env")) as f:
        t.eq(f.read(), "%s|scripted|2.5|7|%s\n" % (p, p),
             "post-link: PREFIX, PKG_NAME, PKG_VERSION, PKG_BUILDNUM, CONDA_PREFIX")
    t.check("scripted says hi" in r.out, "post-link message shown", r.out)
    t.menv_ok("remove", "-p", p, "scripted")
    with open(os.path.join(p, "share/pre-unlink.env")) as f:
        t.eq(f.read(), "%s|scripted|2.5|7|%s\n" % (p, p), "pre-unlink: variables")
    os.remove(os.path.join(p, "share/pre-unlink.env"))
    os.remove(os.path.join(p, "share/post-link.env"))
    sp = os.path.join(t.tmp, "spaced env", "x")
    t.menv_ok("create", "-p", sp, *c, "scripted")
    with open(os.path.join(sp, "share/post-link.env")) as f:
        t.eq(f.read(), "%s|scripted|2.5|7|%s\n" % (sp, sp), "post-link in a prefix with a blank")

    # post-link runs in the activated environment (activate.d sourced first)
    t.menv_ok("install", "-p", p, *c, "post_link_run_in_env_package")
    # post-link of post_link-d checks bin/file that post_link-e's post-link wrote: order
    t.menv_ok("install", "-p", p, *c, "post_link-d")
    t.check(os.path.exists(os.path.join(p, "bin/file")), "post-link scripts in link order")

    # pre-link messages (info/prelink_messages) are shown
    r = t.menv_ok("install", "-p", p, *c, "pre_link_messages_package")
    t.check("Lorem ipsum" in r.out and "SPAM!" in r.out, "prelink messages shown", r.out)

    # a failing post-link: the install is rolled back, byte-identical
    before = snapshot(p)
    r = t.menv_run("install", "-q", "-p", p, *c, "failing_post_link")
    t.one_line_error(r, "failing post-link", ["post-link", "failing_post_link",
                                              "rolled back"])
    t.eq(snapshot(p), before, "failing post-link: prefix byte-identical to before") or \
        print(diff(before, snapshot(p)))
    # ... and on create: no prefix
    q = os.path.join(t.tmp, "failing")
    r = t.menv_run("create", "-q", "-p", q, *c, "failing_post_link", "keeper")
    t.one_line_error(r, "failing post-link on create", ["post-link", "not created"])
    t.no_prefix_left(q, "failing post-link on create")

    # clobbering: two packages of one transaction share a path
    q = os.path.join(t.tmp, "clob")
    r = t.menv_ok("create", "-p", q, *c, "clobber-a", "clobber-b")
    t.check("ClobberWarning" in r.err and "'bin/clobber-test-file'" in r.err and
            "clobber-a-1.0-0" in r.err and "clobber-b-1.0-0" in r.err,
            "clobber reported like conda (packages and path)", r.err)
    t.check("warning: 1 file was provided by more than one package" in r.out, "clobber count", r.out)
    with open(os.path.join(q, "bin/clobber-test-file")) as f:
        later = f.read()
    order = [x for x in ("clobber-a", "clobber-b") if x in r.out]
    # removing one keeps the path: the other still lists it
    t.menv_ok("remove", "-p", q, "clobber-a")
    t.check(os.path.exists(os.path.join(q, "bin/clobber-test-file")),
            "remove of one clobbering package keeps the shared file")
    t.menv_ok("remove", "-p", q, "clobber-b")
    t.eq(files_of(q), [], "removing both removes the file")
    # rattler's clobber-1/2/3 across transactions, and an untracked file
    t.menv_ok("install", "-p", q, *c, "clobber-1")
    with open(os.path.join(q, "untracked.txt"), "w") as f:
        f.write("mine\n")
    r = t.menv_ok("install", "-p", q, *c, "clobber-2")
    t.check("ClobberWarning" in r.err and "clobber-1-0.1.0" in r.err and
            "clobber-2-0.1.0" in r.err, "clobber with an installed package reported", r.err)
    t.check(os.path.exists(os.path.join(q, "untracked.txt")), "untracked files are left alone")
    t.menv_ok("remove", "-p", q, "clobber-2")
    for fn in records(os.path.join(q))["clobber-1"]["files"]:
        t.check(os.path.exists(os.path.join(q, fn)), "after removing clobber-2, clobber-1's "
                "%s is still there" % fn)


if __name__ == "__main__":
    main(body)
