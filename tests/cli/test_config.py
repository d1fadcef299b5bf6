"""menv config as conda config: the edits (--add prepends, --append, --prepend, --set with
typed values and map entries, --remove, --remove-key) give the exact file, keeping other keys
and the top comments; --get prints conda's print_config_item lines, --show conda's format_dict,
--show-sources each file read, --describe conda's comment blocks; --file, --env (the active
prefix's .condarc, which every command then reads) and --system (the root prefix's); bad keys,
values and removals are one-line errors that leave the file as it was."""
import json
import os

import menvtest


def body(t):
    rc = t.rc
    menvtest.write_text(rc, "# team settings\n# keep me\nchannels:\n  - conda-forge\n"
                        "always_copy: true\nauto_activate_base: false\n")
    t.menv_ok("config", "--add", "channels", "bioconda")
    t.menv_ok("config", "--append", "channels", "defaults")
    r = t.menv_ok("config", "--prepend", "channels", "conda-forge")
    t.eq(r.err, "Warning: 'conda-forge' already in 'channels' list, moving to the top\n",
         "a value already listed moves, with conda's warning")
    t.menv_ok("config", "--set", "channel_priority", "flexible", "--set", "download_threads",
              "8", "--set", "proxy_servers.http", "http://proxy:3128", "--set", "offline",
              "false")
    t.eq(open(rc).read(),
         "# team settings\n# keep me\n"
         "channels:\n  - conda-forge\n  - bioconda\n  - defaults\n"
         "always_copy: true\nauto_activate_base: false\n"
         "channel_priority: flexible\ndownload_threads: 8\n"
         "proxy_servers:\n  http: http://proxy:3128\noffline: false\n",
         "the edits give the exact file (other keys and the top comments kept)")

    r = t.menv_ok("config", "--get")
    t.eq(r.out,
         "--set always_copy True\n"
         "--set channel_priority flexible\n"
         "--add channels 'defaults'   # lowest priority\n"
         "--add channels 'bioconda'\n"
         "--add channels 'conda-forge'   # highest priority\n"
         "--set download_threads 8\n"
         "--set offline False\n"
         "--set proxy_servers.http http://proxy:3128\n", "--get: conda's lines, keys sorted")
    t.eq(r.err, "unknown key auto_activate_base\n", "--get: a key menv does not know")
    r = t.menv_ok("config", "--get", "download_threads", "proxy_servers")
    t.eq(r.out, "--set download_threads 8\n--set proxy_servers.http http://proxy:3128\n",
         "--get KEY...")
    j = t.menv_ok("config", "--get", "channels", "--json").json()
    t.eq(j, {"get": {"channels": ["conda-forge", "bioconda", "defaults"]}, "rc_path": rc,
             "success": True, "warnings": []}, "--get --json: conda's shape")

    r = t.menv_ok("config", "--show", "channels", "always_copy", "download_threads",
                  "remote_connect_timeout_secs", "proxy_servers", "client_ssl_cert",
                  "pinned_packages")
    t.eq(r.out,
         "channels:\n  - conda-forge\n  - bioconda\n  - defaults\n"
         "always_copy: True\ndownload_threads: 8\nremote_connect_timeout_secs: 9.15\n"
         "proxy_servers:\n  http: http://proxy:3128\nclient_ssl_cert: None\n"
         "pinned_packages: []\n", "--show KEY...: conda's format_dict")
    r = t.menv_ok("config", "--show")
    lines = [l for l in r.out.splitlines() if not l.startswith(" ")]
    keys = [l.split(":")[0] for l in lines]
    t.eq(keys, sorted(keys), "--show: every setting, sorted")
    t.check("channel_priority: flexible" in lines and "always_softlink: False" in lines
            and "pkgs_dirs:" in lines, "--show: the effective values", r.out)
    j = t.menv_ok("config", "--show", "download_threads", "--json").json()
    t.eq(j, {"download_threads": 8}, "--show --json")
    r = t.menv_run("config", "--show", "no_such_key")
    t.one_line_error(r, "--show of an unknown key", ["no_such_key"], nonzero_only=True)

    r = t.menv_ok("config", "--show-sources")
    t.check(r.out.startswith("==> %s <==\nchannels:\n  - conda-forge\n" % rc),
            "--show-sources: each file read, by path", r.out)
    r = t.menv_ok("config", "--show-sources", env={"CONDA_OFFLINE": "true"})
    t.check(r.out.endswith("==> envvars <==\noffline: true\nroot_prefix: %s\n\n" % t.root),
            "--show-sources: envvars (MENV_ and CONDA_ variables)", r.out)

    r = t.menv_ok("config", "--describe", "always_copy", "channels")
    t.eq(r.out,
         "# # always_copy (bool)\n"
         "# #   Register a preference that files be copied into a prefix during\n"
         "# #   install rather than hard-linked.\n"
         "# # \n"
         "# always_copy: false\n\n"
         "# # channels (sequence: str)\n"
         "# #   The list of conda channels to include for relevant operations.\n"
         "# # \n"
         "# channels: []\n\n", "--describe KEY...: conda's blocks")
    r = t.menv_ok("config", "--describe")
    t.check(r.out.count("\n# # ") >= 30, "--describe: every setting", r.out[:500])

    # errors leave the file alone
    before = open(rc).read()
    for args, needles in ((["--set", "channel_priority", "sometimes"], ["sometimes",
                                                                       "strict"]),
                          (["--set", "no_such_key", "1"], ["no_such_key"]),
                          (["--set", "channels", "x"], ["channels"]),
                          (["--add", "always_copy", "x"], ["always_copy", "list"]),
                          (["--remove", "channels", "nope"], ["nope", "channels"]),
                          (["--remove", "pinned_packages", "x"], ["pinned_packages"]),
                          (["--remove-key", "nope"], ["nope"])):
        r = t.menv_run("config", *args)
        t.one_line_error(r, "config %s" % " ".join(args), needles, nonzero_only=True)
    t.eq(open(rc).read(), before, "failed edits leave the file as it was")

    t.menv_ok("config", "--remove", "channels", "bioconda", "--remove-key", "always_copy",
              "--remove-key", "proxy_servers.http")
    t.eq(open(rc).read(),
         "# team settings\n# keep me\n"
         "channels:\n  - conda-forge\n  - defaults\nauto_activate_base: false\n"
         "channel_priority: flexible\ndownload_threads: 8\nproxy_servers: {}\n"
         "offline: false\n", "--remove and --remove-key")

    # --file, --env, --system
    other = os.path.join(t.tmp, "other.yml")
    t.menv_ok("config", "--file", other, "--add", "channels", "x")
    t.eq(open(other).read(), "channels:\n  - x\n  - defaults\n",
         "--file: a new file, channels starting from defaults as conda's")
    act = os.path.join(t.tmp, "active-env")
    os.makedirs(os.path.join(act, "conda-meta"))
    t.menv_ok("config", "--env", "--set", "download_threads", "3", env={"CONDA_PREFIX": act})
    t.eq(open(os.path.join(act, ".condarc")).read(), "download_threads: 3\n",
         "--env writes the active prefix's .condarc")
    j = t.menv_ok("config", "--show", "download_threads", "--json",
                  env={"CONDA_PREFIX": act}).json()
    t.eq(j, {"download_threads": 8}, "$MENVRC (read last) still wins over the env's file")
    menvtest.write_text(rc, "")
    j = t.menv_ok("config", "--show", "download_threads", "--json",
                  env={"CONDA_PREFIX": act}).json()
    t.eq(j, {"download_threads": 3}, "the active environment's .condarc is read")
    os.makedirs(t.root, exist_ok=True)
    t.menv_ok("config", "--system", "--set", "smoke_check", "false")
    t.eq(open(os.path.join(t.root, ".condarc")).read(), "smoke_check: false\n",
         "--system writes the root prefix's .condarc")
    j = t.menv_ok("config", "--show", "smoke_check", "--json").json()
    t.eq(j, {"smoke_check": False}, "the root prefix's .condarc is read")

    # a link to a dotfiles checkout is written through, a 0600 file (tokens, proxy
    # passwords) stays 0600 (the link was replaced by a 0644 copy before)
    dot = os.path.join(t.tmp, "dotfiles", "condarc")
    menvtest.write_text(dot, "# mine\nproxy_servers:\n  https: http://u:secret@127.0.0.1:9\n")
    os.chmod(dot, 0o600)
    link = os.path.join(t.tmp, "linked.condarc")
    os.symlink(dot, link)
    t.menv_ok("config", "--file", link, "--set", "ssl_verify", "false")
    t.eq(os.readlink(link) if os.path.islink(link) else None, dot, "--file LINK: still a link")
    t.eq(open(dot).read(), "# mine\nproxy_servers:\n  https: http://u:secret@127.0.0.1:9\n"
         "ssl_verify: false\n", "--file LINK: the link's target written")
    t.eq(oct(os.stat(dot).st_mode & 0o777), oct(0o600), "--file: a 0600 file stays 0600")

    # --file onto a pipe (as onto /dev/null, which it replaced with a regular file): one line,
    # the pipe is still a pipe (a writer thread feeds it the settings menv reads first)
    import stat
    import threading
    fifo = os.path.join(t.tmp, "pipe.condarc")
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "w") as f:
            f.write("ssl_verify: true\n")

    th = threading.Thread(target=feed, daemon=True)
    th.start()
    r = t.menv_run("config", "--file", fifo, "--set", "ssl_verify", "false", timeout=20)
    th.join(5)
    t.one_line_error(r, "--file onto a pipe", ["is not a regular file"])
    t.check(stat.S_ISFIFO(os.lstat(fifo).st_mode), "--file onto a pipe: still a pipe")


if __name__ == "__main__":
    menvtest.main(body, "config")
