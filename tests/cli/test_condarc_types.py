#!/usr/bin/env python3
"""cli.condarc_types: a .condarc value is checked against its key's type when read (conda's
typed parameters): a number or a bool where a string belongs (`channel_alias: 42`, once
used as a host name), a bool or a float where an int belongs, is refused with one line
FILE:LINE:COL naming the key; quoted, the same text is a string and works; an int is a
fine float; null leaves the default.
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
        ("channel_alias:\n", "channel_alias", "https://conda.anaconda.org"),
    ]
    for text, key, want in accepted:
        t.set_rc(text)
        r = t.menv_run("config", "--show", "--json")
        t.eq(r.rc, 0, "%r is accepted" % text)
        if r.rc == 0:
            t.eq(r.json().get(key), want, "%r: config --show --json %s" % (text, key))


if __name__ == "__main__":
    menvtest.main(body)
