"""menv config edits keep each value's YAML type (issue 22): a value read plain is written back
plain with its text (a float 30.50, an int, True, ~, an empty null, 0x1F under a key menv
does not know: proxy_servers refuses a number), a quoted one quoted (a "1.0" that looks
like a number, a string that needs quotes), a flow list as a block list of the same scalars
(a plain 2.0 in a key menv does not know: default_channels refuses a number); the file
after `config --add channels x` is compared byte for byte."""
import menvtest


def body(t):
    before = ("# mine\n"
              "remote_read_timeout_secs: 30.50\n"
              "remote_max_retries: 3\n"
              "offline: True\n"
              "client_ssl_cert: ~\n"
              "client_ssl_cert_key:\n"
              "channel_alias: \"1.0\"\n"
              "root_prefix: '/opt/a: b'\n"
              "proxy_servers:\n  http: \"http://p:3128 #x\"\n"
              "x_hex: 0x1F\n"
              "default_channels: [a, \"b\", '1.5']\n"
              "x_unknown: [2.0, c]\n"
              "channels:\n  - conda-forge\n")
    menvtest.write_text(t.rc, before)
    t.menv_ok("config", "--add", "channels", "x")
    t.eq(open(t.rc).read(),
         "# mine\n"
         "remote_read_timeout_secs: 30.50\n"
         "remote_max_retries: 3\n"
         "offline: True\n"
         "client_ssl_cert: ~\n"
         "client_ssl_cert_key:\n"
         "channel_alias: \"1.0\"\n"
         "root_prefix: '/opt/a: b'\n"
         "proxy_servers:\n  http: \"http://p:3128 #x\"\n"
         "x_hex: 0x1F\n"
         "default_channels:\n  - a\n  - \"b\"\n  - '1.5'\n"
         "x_unknown:\n  - 2.0\n  - c\n"
         "channels:\n  - x\n  - conda-forge\n",
         "--add keeps every other value as it was written (type and text)")
    j = t.menv_ok("config", "--show", "remote_read_timeout_secs", "--json").json()
    t.eq(j.get("remote_read_timeout_secs"), 30.5, "30.50 is still read as the float 30.5")
    # a value --set replaces is written from its new type
    t.menv_ok("config", "--set", "remote_read_timeout_secs", "12.5")
    t.check("remote_read_timeout_secs: 12.5\n" in open(t.rc).read(), "--set writes 12.5 plain")


if __name__ == "__main__":
    menvtest.main(body, "config_types")
