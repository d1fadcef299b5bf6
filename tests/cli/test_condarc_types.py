#!/usr/bin/env python3
"""cli.condarc_types: a .condarc value is checked against its key's type when read (conda's
typed parameters): a number or a bool where a string belongs (`channel_alias: 42`, once
used as a host name), a bool or a float where an int belongs, is refused with one line
FILE:LINE:COL naming the key; quoted, the same text is a string and works; an int is a
fine float. A null is no text (cli.attack11_yaml_null_path has conda 26.7.1's rule for each kind
of key): `channel_alias:` is refused, as conda refuses its 'None' ("must have scheme").

Every bool key (offline, always_copy, always_softlink, allow_softlinks,
add_pip_as_python_dependency, repodata_use_zst, repodata_use_shards, smoke_check, changeps1:
every bool key menv reads; changeps1 was read by a line grep that took any text as the
default and CONDA_CHANGEPS1=bogus as true), the enum keys
channel_priority and update_modifier, and the number keys remote_connect_timeout_secs,
remote_read_timeout_secs, remote_backoff_factor, remote_max_retries, repodata_max_bytes,
local_repodata_ttl, download_threads, with a value conda refuses too ('bogus' cannot be
boolified, 'x' is no number, a list or a mapping for any of them): one line, FILE:LINE:COL
and the key from .condarc, $CONDA_KEY and the key from the environment (conda 26.7.1 says
"cannot be boolified", "invalid literal for int()", "has type <class 'str'>", "is not a valid
ChannelPriority" for these). (conda takes `offline: 5` as true, boolify's number rule; menv
refuses it; not asserted here.)
"""
import menvtest


def body(t):
    refused = [
        ("channel_alias: 42\n", 1, 16, "channel_alias must be a str, not an int '42'"),
        ("offline: false\nchannel_alias: 4.2e1\n", 2, 16, "not a float '4.2e1'"),
        ("channel_alias: true\n", 1, 16, "not a bool 'true'"),
        ("client_ssl_cert: 0x1f\n", 1, 18, "client_ssl_cert must be a str"),
        ("download_threads: 2.5\n", 1, 19, "download_threads must be an int, not a float"),
        ("remote_max_retries: true\n", 1, 21, "remote_max_retries must be an int"),
        ("remote_read_timeout_secs: yes\n", 1, 27, "remote_read_timeout_secs"),
        ("channel_alias:\n", 1, 15, "channel_alias has no value (YAML's null)"),
    ]
    for text, line, col, needle in refused:
        t.set_rc(text)
        for cmd in (("info",), ("config", "--show")):
            r = t.menv_run(*cmd)
            t.one_line_error(r, "%r: menv %s" % (text, cmd[0]),
                             ["%s:%d:%d:" % (t.rc, line, col), needle])
    accepted = [
        ("channel_alias: '42'\n", "channel_alias", "42"),
        ("remote_read_timeout_secs: 30\n", "remote_read_timeout_secs", 30.0),
        ("remote_read_timeout_secs: 30.50\n", "remote_read_timeout_secs", 30.5),
        ("download_threads: 3\n", "download_threads", 3),
    ]
    for text, key, want in accepted:
        t.set_rc(text)
        r = t.menv_run("config", "--show", "--json")
        t.eq(r.rc, 0, "%r is accepted" % text)
        if r.rc == 0:
            t.eq(r.json().get(key), want, "%r: config --show --json %s" % (text, key))


    # ---- every list-of-strings key: a non-string item is refused with FILE:LINE:COL and the
    # key (`channels: [1]` was taken, `pkgs_dirs: [42]` made ./42), as conda's
    # SequenceParameter(str) refuses an "invalid element"
    import os
    cwd = os.path.join(t.tmp, "cwd")
    os.makedirs(cwd)
    list_keys = ("channels", "default_channels", "migrated_channel_aliases", "pkgs_dirs",
                 "envs_dirs", "pinned_packages", "aggressive_update_packages")
    items = [("42", "an int '42'"), ("4.2", "a float '4.2'"), ("true", "a bool 'true'"),
             ("~", "a null '~'"), ("[a]", "a list"), ("{a: b}", "a mapping")]
    for key in list_keys:
        for item, what in items:
            text = "offline: false\n%s:\n  - x\n  - %s\n" % (key, item)
            t.set_rc(text)
            cmds = (("info",), ("config", "--show"), ("env", "list")) if item == "42" \
                else (("info",),)
            for cmd in cmds:
                r = t.menv_run(*cmd, cwd=cwd)
                t.one_line_error(r, "%s item %s: menv %s" % (key, item, cmd[0]),
                                 ["%s:4:5:" % t.rc, "%s must be a list of strings, not %s"
                                  % (key, what)])
        t.set_rc("%s: [1]\n" % key)  # flow style: the item's own column
        t.one_line_error(t.menv_run("info", cwd=cwd), "%s: [1]" % key,
                         ["%s:1:%d:" % (t.rc, len(key) + 4), key])
    t.set_rc("mirrored_channels:\n  conda-forge: [https://m.example/cf, 7]\n")
    t.one_line_error(t.menv_run("info", cwd=cwd), "mirrored_channels item 7",
                     ["%s:2:39:" % t.rc, "mirrored_channels must be a list of strings, not an "
                      "int '7'"])
    t.set_rc("pkgs_dirs: [42]\nenvs_dirs: [43]\n")
    r = t.menv_run("create", "-n", "e", "-c", t.url(t.tmp), "--override-channels", "-y", "x",
                   cwd=cwd)
    t.one_line_error(r, "pkgs_dirs: [42]: create", ["%s:1:13:" % t.rc, "pkgs_dirs"])
    t.eq(os.listdir(cwd), [], "pkgs_dirs: [42], envs_dirs: [43]: no ./42 or ./43 made")
    # quoted, the same text is a string
    t.set_rc("channels: ['1', \"2\"]\npinned_packages: ['42']\n")
    r = t.menv_run("config", "--show", "--json", cwd=cwd)
    t.eq((r.rc, (r.try_json() or {}).get("channels")), (0, ["1", "2"]),
         "quoted list items are strings")

    # ---- ~ and $VAR entries of pkgs_dirs/envs_dirs are expanded as conda's context does
    # (os.path.expanduser(expandvars(p))); a relative entry (also one left relative by an
    # unset $VAR) is refused with FILE:LINE:COL: conda's abspath would take it from whatever
    # directory the command runs in (issue 22, "Kinds, not instances")
    t.set_rc("pkgs_dirs:\n  - $KINDS_T/pk3\n  - ${KINDS_T}/pk4/\n  - ~/pk6\n"
             "envs_dirs:\n  - /e/./envs/\n")
    # (MENV_ROOT_PREFIX, which the harness sets, would move envs_dirs under it: left empty)
    r = t.menv_run("info", "--json", cwd=cwd, env={"KINDS_T": "/kt", "MENV_ROOT_PREFIX": ""})
    j = r.try_json() or {}
    t.eq(j.get("pkgs_dirs"), ["/kt/pk3", "/kt/pk4", os.path.join(t.home, "pk6")],
         "pkgs_dirs: ~ and $VAR expanded (as conda)")
    t.eq(j.get("envs_dirs"), ["/e/envs"], "envs_dirs: '.' resolved")
    for key in ("pkgs_dirs", "envs_dirs"):
        for entry, col in (("rel/pk", 5), ("./a/../b/pk2/", 5), ("$KINDS_UNSET_9/pk5", 5),
                           ("''", 5)):
            text = "%s:\n  - /ok\n  - %s\n" % (key, entry)
            t.set_rc(text)
            for cmd in (("info",), ("config", "--show"), ("create", "-n", "x", "--dry-run")):
                r = t.menv_run(*cmd, cwd=cwd, env={"MENV_ROOT_PREFIX": ""})
                t.one_line_error(r, "%s entry %s: menv %s" % (key, entry, cmd[0]),
                                 ["%s:3:%d: %s entry " % (t.rc, col, key),
                                  "is empty" if entry == "''" else "is a relative path"])
            t.eq(os.listdir(cwd), [], "%s entry %s: nothing made in the cwd" % (key, entry))

    # ---- every typed key, from a file and from its CONDA_ variable
    bools = ("offline", "always_copy", "always_softlink", "allow_softlinks",
             "add_pip_as_python_dependency", "repodata_use_zst", "repodata_use_shards",
             "smoke_check", "changeps1")
    numbers = ("remote_connect_timeout_secs", "remote_read_timeout_secs", "remote_backoff_factor",
               "remote_max_retries", "repodata_max_bytes", "local_repodata_ttl",
               "download_threads")
    typed = [(k, "bogus") for k in bools] + [(k, "x") for k in numbers] + \
        [("channel_priority", "bogus"), ("update_modifier", "bogus")]
    t.set_rc("")
    for key, bad in typed:
        for val in (bad, "[a]", "{a: b}"):
            t.set_rc("%s: %s\n" % (key, val))
            r = t.menv_run("config", "--show", cwd=cwd)
            t.one_line_error(r, "%s: %s" % (key, val), ["%s:1:%d:" % (t.rc, len(key) + 3), key])
        t.set_rc("")
        var = "CONDA_" + key.upper()
        r = t.menv_run("config", "--show", cwd=cwd, env={var: bad})
        t.one_line_error(r, "%s=%s" % (var, bad), ["$" + var, key])


if __name__ == "__main__":
    menvtest.main(body)
