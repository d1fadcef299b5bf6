"""OCI registry channels and `menv mirror` against real servers on 127.0.0.1 (issue 16).

Debian's docker-registry (CNCF distribution 2.8) and nginx, started here on free ports with
their storage and configuration in the test's temp dir, stopped at the end:

- `menv mirror -f LOCK -p linux-64` pushes exactly the lock's packages into a registry and into
  a folder that nginx serves; environments created from `oci://` and from the nginx folder have
  the same records (conda-meta minus time and location fields) and the same file bytes as one
  created from the source channel; the registry holds the CEP's names, media types and digests;
- htpasswd (bcrypt) Basic auth: credentials in the URL or in $NETRC work, none or a wrong
  password is one line naming the registry and the 401;
- a registry over https with htpasswd: an untrusted certificate is one line, trusted with
  ssl_verify: <bundle> it works;
- the registry's Bearer token flow (`auth: token`, tokens from a small issuer of the test's
  own signed with openssl): push and anonymous pull, one token scope per repository;
- the CEP's names (c<name>, `+` as `_P`, `_` as `__`) as pushed, and the "v0" layout of
  conda-oci-mirror/rattler/mamba (`<subdir>/repodata.json:latest`, `__p__`, `zzz_`) read;
- mamba 2's mirrored_channels: a dead mirror, then the registry; nginx's folder first; a
  mirror missing a package file; every mirror dead (one line);
- a registry answering 403, 404, 500 or garbage (nginx in front of it) is one line naming the
  channel and the answer;
- a blob corrupted in the registry's storage (package or repodata) is refused on its digest
  and nothing is cached;
- the registry killed in the middle of a download (behind an nginx that limits the rate) and
  started again: the download continues with a Range request (a 206 in nginx's log) and the
  environment is created;
- a mirror whose package cannot be fetched leaves no index behind (no repodata.json, no
  mrepodata.json manifest): a half copy never looks complete.
Skips (77) when docker-registry, nginx or htpasswd is missing.
"""

import glob
import hashlib
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import tarfile
import time
import urllib.error
import urllib.request

from menvtest import Fatal, Skip, build_conda, main, read_json, sha256_file, write_text

REGISTRY = "/usr/bin/docker-registry"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
HTPASSWD = shutil.which("htpasswd")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_port(port, proc, what):
    deadline = time.time() + 15
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.05)
    raise Fatal("%s did not start on port %d" % (what, port))


class Registry:
    """docker-registry serve CONFIG with filesystem storage under `dir`."""

    def __init__(self, dir, htpasswd=None, port=None, token=None, tls=None):
        self.dir = dir
        self.tls = tls  # (certificate, key): the registry speaks https
        self.token = token  # (realm URL, certificate bundle): Bearer tokens from that realm
        self.data = os.path.join(dir, "data")
        os.makedirs(self.data, exist_ok=True)
        self.port = port or free_port()
        self.htpasswd = htpasswd
        self.start()

    def start(self):
        conf = os.path.join(self.dir, "config.yml")
        token = getattr(self, "token", None)
        text = ("version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: true\n"
                "storage:\n  filesystem:\n    rootdirectory: %s\n"
                "  delete:\n    enabled: true\n"
                "http:\n  addr: 127.0.0.1:%d\n  secret: menv-test\n" % (self.data, self.port))
        if self.tls:
            text += "  tls:\n    certificate: %s\n    key: %s\n" % self.tls
        if self.htpasswd:
            text += "auth:\n  htpasswd:\n    realm: menv-test\n    path: %s\n" % self.htpasswd
        if token:
            text += ("auth:\n  token:\n    realm: %s\n    service: menv-registry\n"
                     "    issuer: menv-test-issuer\n    rootcertbundle: %s\n" % token)
        write_text(conf, text)
        self.log = open(os.path.join(self.dir, "registry.log"), "ab")
        self.proc = subprocess.Popen([REGISTRY, "serve", conf], stdout=self.log,
                                     stderr=self.log)
        wait_port(self.port, self.proc, "docker-registry")
        self.base = "127.0.0.1:%d" % self.port

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.log.close()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if not self.log.closed:
            self.log.close()

    def get(self, path, accept="application/vnd.oci.image.manifest.v1+json", auth=None):
        req = urllib.request.Request("http://%s%s" % (self.base, path),
                                     headers={"Accept": accept})
        if auth:
            import base64
            req.add_header("Authorization", "Basic " + base64.b64encode(auth.encode()).decode())
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.read()

    def blob_path(self, digest):
        hexd = digest.split(":", 1)[1]
        return os.path.join(self.data, "docker/registry/v2/blobs/sha256", hexd[:2], hexd,
                            "data")


class Nginx:
    def __init__(self, dir, root, extra=""):
        os.makedirs(os.path.join(dir, "tmp"), exist_ok=True)
        self.dir = dir
        self.port = free_port()
        self.log = os.path.join(dir, "access.log")
        conf = os.path.join(dir, "nginx.conf")
        write_text(conf, """daemon off; master_process off; worker_processes 1;
error_log %(d)s/error.log warn; pid %(d)s/nginx.pid;
events { worker_connections 64; }
http {
  log_format menv '$request_method $uri $status "$http_range"';
  access_log %(log)s menv;
  client_body_temp_path %(d)s/tmp/body; proxy_temp_path %(d)s/tmp/proxy;
  fastcgi_temp_path %(d)s/tmp/fcgi; uwsgi_temp_path %(d)s/tmp/uwsgi;
  scgi_temp_path %(d)s/tmp/scgi;
  types { application/json json; }
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:%(port)d;
    root %(root)s;
%(extra)s
  }
}
""" % {"d": dir, "log": self.log, "port": self.port, "root": root, "extra": extra})
        self.proc = subprocess.Popen([NGINX, "-p", dir, "-c", conf],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port, self.proc, "nginx")
        self.base = "127.0.0.1:%d" % self.port

    def lines(self):
        with open(self.log) as f:
            return f.read().splitlines()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(5)


# fields that differ between two creates of the same packages from two places
VOLATILE = {"channel", "url", "extracted_package_dir", "package_tarball_full_path", "link",
            "requested_spec", "requested_specs", "_requested_specs", "time", "timestamp"}


def records(prefix):
    out = {}
    for p in sorted(glob.glob(os.path.join(prefix, "conda-meta", "*.json"))):
        r = read_json(p)
        out[os.path.basename(p)] = {k: v for k, v in r.items() if k not in VOLATILE}
    return out


def file_bytes(prefix):
    out = {}
    for top, dirs, files in os.walk(prefix):
        if os.path.relpath(top, prefix).startswith("conda-meta"):
            continue
        for f in files:
            p = os.path.join(top, f)
            if not os.path.islink(p):
                out[os.path.relpath(p, prefix)] = sha256_file(p)
    return out


def body(t):
    for tool in (REGISTRY, NGINX):
        if not os.access(tool, os.X_OK):
            raise Skip("%s is not installed" % tool)
    if not HTPASSWD:
        raise Skip("htpasswd (apache2-utils) is not installed")
    pk = os.path.join(t.corpus, "packages", "conda", "test-recipes", "noarch")
    src = t.make_channel("src", {"noarch": [
        os.path.join(pk, f) for f in ("dependent-2.0-0.conda", "dependency-2.0-0.conda",
                                      "dependency-1.0-0.conda", "small-executable-1.0-0.conda",
                                      "versioned-2.0-0.conda")]})
    servers = []
    try:
        run(t, src, servers)
    finally:
        for s in servers:
            s.stop()


def create(t, root, prefix, channel, *specs, env=None):
    e = {"MENV_ROOT_PREFIX": root}
    e.update(env or {})
    return t.menv_run("create", "-y", "-q", "-p", prefix, "--override-channels", "-c", channel,
                      *specs, env=e)


def run(t, src, servers):
    # ---- a lock of two of the channel's packages (and their dependency)
    write_text(os.path.join(t.tmp, "environment.yml"),
               "channels: [%s, nodefaults]\ndependencies: [dependent, small-executable]\n" % t.url(src))
    lock = os.path.join(t.tmp, "conda-lock.yml")
    t.menv_ok("lock", "-f", os.path.join(t.tmp, "environment.yml"), "--platform", "linux-64",
              "--lockfile", lock)
    want_fns = {"dependent-2.0-0.conda", "dependency-2.0-0.conda",
                "small-executable-1.0-0.conda"}

    reg = Registry(os.path.join(t.tmp, "registry"))
    servers.append(reg)
    mirror_dir = os.path.join(t.tmp, "www", "team")
    ngx = Nginx(os.path.join(t.tmp, "nginx"), os.path.join(t.tmp, "www"))
    servers.append(ngx)

    # ---- menv mirror: the lock's packages, into the registry and into nginx's folder
    chan = "oci://%s/team/env" % reg.base
    r = t.menv_ok("mirror", "-f", lock, "--platform", "linux-64", chan)
    t.check("mirrored 3 packages" in r.out, "mirror to oci: three packages", r.out)
    r = t.menv_ok("mirror", "-f", lock, "--platform", "linux-64", mirror_dir)
    t.check("mirrored 3 packages" in r.out, "mirror to a folder: three packages", r.out)
    rd = read_json(os.path.join(mirror_dir, "noarch", "repodata.json"))
    t.eq(set(rd["packages.conda"]), want_fns, "folder mirror: exactly the lock's packages")
    for fn in want_fns:
        t.eq(sha256_file(os.path.join(mirror_dir, "noarch", fn)),
             sha256_file(os.path.join(src, "noarch", fn)), "folder mirror: bytes of %s" % fn)
        t.eq(rd["packages.conda"][fn]["sha256"], sha256_file(os.path.join(src, "noarch", fn)),
             "folder mirror: sha256 of %s in its repodata" % fn)
    t.check(not os.path.exists(os.path.join(mirror_dir, "noarch", "versioned-2.0-0.conda")),
            "folder mirror: a package the lock does not name is not copied")
    # the registry: the CEP's names, media types and digests
    catalog = json.loads(reg.get("/v2/_catalog", accept="application/json"))["repositories"]
    t.eq(sorted(catalog), ["team/env/noarch/cdependency", "team/env/noarch/cdependent",
                           "team/env/noarch/csmall-executable",
                           "team/env/noarch/mrepodata.json"],
         "registry: the CEP's repositories (c<name>, m<repodata>)")
    m = json.loads(reg.get("/v2/team/env/noarch/cdependent/manifests/2.0-0"))
    layers = {l["mediaType"]: l for l in m["layers"]}
    pkg_layer = layers.get("application/vnd.conda.package.v2", {})
    t.eq(pkg_layer.get("digest"),
         "sha256:" + sha256_file(os.path.join(src, "noarch", "dependent-2.0-0.conda")),
         "registry: the package layer's digest is the file's sha256")
    t.check("application/vnd.conda.info.index.v1+json" in layers,
            "registry: an index.json layer", m)
    t.eq((m.get("annotations") or {}).get("org.conda.package.name"), "dependent",
         "registry: org.conda.package.name annotation")
    t.eq((m.get("annotations") or {}).get("org.conda.oci.schema"), "1",
         "registry: org.conda.oci.schema annotation")
    rm = json.loads(reg.get("/v2/team/env/noarch/mrepodata.json/manifests/latest"))
    t.eq(sorted(l["mediaType"] for l in rm["layers"]),
         ["application/vnd.conda.repodata.v1+json", "application/vnd.conda.repodata.v1+json+zst"],
         "registry: repodata as JSON and .zst layers")

    # ---- create from the source, from oci:// and from nginx: same records, same bytes
    base = {}
    for label, channel in (("src", t.url(src)), ("oci", chan),
                           ("nginx", "http://%s/team" % ngx.base)):
        root = os.path.join(t.tmp, "root-" + label)
        prefix = os.path.join(t.tmp, "env-" + label)
        r = create(t, root, prefix, channel, "dependent", "small-executable")
        if not t.check(r.rc == 0, "create from %s" % label, r):
            continue
        base[label] = (records(prefix), file_bytes(prefix))
        t.eq(sorted(os.path.basename(p) for p in
                    glob.glob(os.path.join(prefix, "conda-meta", "*.json"))),
             ["dependency-2.0-0.json", "dependent-2.0-0.json", "small-executable-1.0-0.json"],
             "create from %s: the three packages" % label)
    if "src" in base:
        for label in ("oci", "nginx"):
            if label in base:
                t.eq(base[label][0], base["src"][0], "%s: same records as the source" % label)
                t.eq(base[label][1], base["src"][1], "%s: same file bytes as the source" % label)
    rec = read_json(os.path.join(t.tmp, "env-oci", "conda-meta", "dependent-2.0-0.json"))
    t.eq(rec.get("channel"), chan + "/noarch", "oci create: the record names the oci channel")
    # a second create revalidates the repodata from the manifest (same blob: the cache)
    r = create(t, os.path.join(t.tmp, "root-oci"), os.path.join(t.tmp, "env-oci2"), chan,
               "dependency=1")
    t.check(r.rc != 0 and "dependency" in r.err,
            "oci: dependency=1 is not in the mirror (only what the lock names)", r)

    # ---- a half copy never looks complete: a lock entry that cannot be fetched
    bad_lock = os.path.join(t.tmp, "bad-lock.yml")
    with open(lock) as f:
        text = f.read()
    write_text(bad_lock, text.replace("small-executable-1.0-0.conda", "missing-1.0-0.conda"))
    half = os.path.join(t.tmp, "www", "half")
    r = t.menv_run("mirror", "-f", bad_lock, "--platform", "linux-64", half)
    t.one_line_error(r, "mirror of a lock with a missing file", ["missing-1.0-0.conda"])
    t.check(not glob.glob(os.path.join(half, "*", "repodata.json")),
            "failed folder mirror: no repodata.json written")
    r = t.menv_run("mirror", "-f", bad_lock, "--platform", "linux-64",
                   "oci://%s/half/env" % reg.base)
    t.one_line_error(r, "oci mirror of a lock with a missing file", ["missing-1.0-0.conda"])
    catalog = json.loads(reg.get("/v2/_catalog", accept="application/json"))["repositories"]
    t.check(not any(c.startswith("half/") for c in catalog),
            "failed oci mirror: nothing pushed, no mrepodata.json", catalog)

    hostile_mirror(t, reg, src, lock, text)
    mirrored(t, reg, chan, ngx, mirror_dir)
    layouts(t, reg, src)
    bad_answers(t, reg, chan, servers)
    auth(t, src, lock, servers)
    bearer(t, lock, servers)
    hostile_uploads(t, lock, servers)
    tls(t, lock, servers)
    corrupt(t, reg, chan, src)
    killed(t, src, servers)


def hostile_mirror(t, reg, src, lock, text):
    """A lock whose URL walks out of its subdir ('noarch/x/../FN': the file fetched, then
    placed in DEST/..) is refused for a folder and for a registry, nothing written outside
    DEST; a mirror by a user whose package cache already holds the packages (extracted and
    as files) copies them (the staging cache was skipped: 'cannot open' before)."""
    fn = "dependent-2.0-0.conda"
    evil = os.path.join(t.tmp, "evil-lock.yml")
    write_text(evil, text.replace("noarch/" + fn, "noarch/x/../" + fn))
    outer = os.path.join(t.tmp, "hostile")
    dest = os.path.join(outer, "dest")
    for label, target in (("folder", dest), ("oci", "oci://%s/hostile/env" % reg.base)):
        r = t.menv_run("mirror", "-f", evil, "--platform", "linux-64", target)
        t.one_line_error(r, "%s mirror of a lock URL with x/../" % label,
                         ["x/../" + fn, "subdir '..'"])
        t.check(not os.path.exists(os.path.join(outer, fn)),
                "%s mirror of x/../: nothing written beside DEST" % label)
    t.check(not glob.glob(os.path.join(dest, "**", fn), recursive=True),
            "x/../: the package not in DEST either")
    root = os.path.join(t.tmp, "root-cached")
    create(t, root, os.path.join(t.tmp, "env-cached"), t.url(src), "dependent",
           "small-executable")
    t.check(os.path.isfile(os.path.join(root, "pkgs", fn)), "the user's cache holds " + fn)
    cached = os.path.join(t.tmp, "cached-mirror")
    r = t.menv_run("mirror", "-f", lock, "--platform", "linux-64", cached,
                   env={"MENV_ROOT_PREFIX": root})
    t.check(r.rc == 0 and "mirrored 3 packages" in r.out,
            "mirror by a user whose cache holds the packages", r)
    t.eq(sha256_file(os.path.join(cached, "noarch", fn)) if r.rc == 0 else None,
         sha256_file(os.path.join(src, "noarch", fn)), "cached mirror: the bytes of " + fn)


def push_v0(reg, repo, tag, blobs):
    """Pushes an artifact as conda-oci-mirror does (the CEP's "v0" layout), through the
    registry's API: blobs [(mediaType, bytes)], then the manifest."""
    def put_blob(data):
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        req = urllib.request.Request("http://%s/v2/%s/blobs/uploads/" % (reg.base, repo),
                                     data=b"", method="POST")
        with urllib.request.urlopen(req, timeout=10) as r:
            loc = r.headers["Location"]
        if loc.startswith("/"):
            loc = "http://%s%s" % (reg.base, loc)
        loc += ("&" if "?" in loc else "?") + "digest=" + digest
        req = urllib.request.Request(loc, data=data, method="PUT",
                                     headers={"Content-Type": "application/octet-stream"})
        urllib.request.urlopen(req, timeout=10).close()
        return digest
    cfg = put_blob(b"{}")
    layers = [{"mediaType": mt, "digest": put_blob(data), "size": len(data)}
              for mt, data in blobs]
    m = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "config": {"mediaType": "application/vnd.oci.empty.v1+json", "digest": cfg,
                               "size": 2}, "layers": layers}).encode()
    req = urllib.request.Request("http://%s/v2/%s/manifests/%s" % (reg.base, repo, tag), data=m,
                                 method="PUT", headers={
                                     "Content-Type": "application/vnd.oci.image.manifest.v1+json"})
    urllib.request.urlopen(req, timeout=10).close()


def layouts(t, reg, src):
    """The CEP's tag and name encoding as menv pushes it, and the "v0" layout of
    conda-oci-mirror, rattler and mamba read."""
    chan = os.path.join(t.tmp, "plus")
    shutil.copytree(src, chan)
    build_conda(os.path.join(chan, "noarch", "_plus_pkg-1.0+abc-0.conda"),
                {"name": "_plus_pkg", "version": "1.0+abc", "build": "0", "build_number": 0,
                 "depends": ["dependent"], "noarch": "generic", "subdir": "noarch"}, [])
    t.index(chan)
    t.menv_ok("mirror", "-c", t.url(chan), "--platform", "linux-64",
              "oci://%s/v1/env" % reg.base)
    tags = json.loads(reg.get("/v2/v1/env/noarch/c_plus_pkg/tags/list",
                              accept="application/json"))
    t.eq(tags.get("tags"), ["1.0_Pabc-0"], "CEP names: c<name>, '+' as _P, '_' as __")
    # v0: <subdir>/repodata.json:latest and <name>:<version>-<build> with __p__ (zzz before _)
    rd = open(os.path.join(chan, "noarch", "repodata.json"), "rb").read()
    for fn, rec in json.loads(rd)["packages.conda"].items():
        name = ("zzz" if rec["name"].startswith("_") else "") + rec["name"]
        tag = ("%s-%s" % (rec["version"], rec["build"])).replace("+", "__p__")
        push_v0(reg, "v0/env/noarch/%s" % name, tag,
                [("application/vnd.conda.package.v2",
                  open(os.path.join(chan, "noarch", fn), "rb").read())])
    push_v0(reg, "v0/env/noarch/repodata.json", "latest",
            [("application/vnd.conda.repodata.v1+json", rd)])
    for label in ("v0", "v1"):
        prefix = os.path.join(t.tmp, "env-layout-" + label)
        r = create(t, os.path.join(t.tmp, "root-layout-" + label), prefix,
                   "oci://%s/%s/env" % (reg.base, label), "_plus_pkg")
        t.check(r.rc == 0, "create from the %s layout" % label, r)
        t.eq(sorted(os.path.basename(p) for p in
                    glob.glob(os.path.join(prefix, "conda-meta", "*.json"))),
             ["_plus_pkg-1.0+abc-0.json", "dependency-2.0-0.json", "dependent-2.0-0.json"],
             "%s layout: the package with '+' and '_' and its dependencies" % label)


def mirrored(t, reg, chan, ngx, mirror_dir):
    """mamba 2's mirrored_channels: a channel name -> mirrors tried in order on failure."""
    dead = "http://127.0.0.1:%d" % free_port()  # nothing listens there
    partial = os.path.join(t.tmp, "www", "partial")
    shutil.copytree(mirror_dir, partial)
    os.unlink(os.path.join(partial, "noarch", "dependency-2.0-0.conda"))
    cases = (
        ("a dead mirror, then the registry", [dead + "/team", chan], 0),
        ("nginx first", ["http://%s/team" % ngx.base, chan], 0),
        ("a mirror missing a package file, then the registry",
         ["http://%s/partial" % ngx.base, chan], 0),
        ("two dead mirrors", [dead + "/a", dead + "/b"], 1),
    )
    for n, (label, mirrors, want_rc) in enumerate(cases):
        rc = write_rc(t, "mirrored_channels:\n  team:\n%sremote_max_retries: 0\n"
                      % "".join("    - %s\n" % m for m in mirrors))
        before = len(ngx.lines())
        root = os.path.join(t.tmp, "root-mirrored-%d" % n)
        prefix = os.path.join(t.tmp, "env-mirrored-%d" % n)
        r = t.menv_run("create", "-y", "-q", "-p", prefix, "-c", "team", "--override-channels",
                       "dependent", env={"MENV_ROOT_PREFIX": root, "MENVRC": rc})
        if want_rc:
            t.one_line_error(r, "mirrored_channels: %s" % label,
                             ["all 2 mirrors of channel 'team' failed"], nonzero_only=True)
            continue
        t.check(r.rc == 0, "mirrored_channels: %s" % label, r)
        t.check(os.path.exists(os.path.join(prefix, "conda-meta", "dependency-2.0-0.json")),
                "mirrored_channels: %s: dependency installed" % label)
        new = ngx.lines()[before:]
        if mirrors[0].startswith("http://%s/team" % ngx.base):
            t.check("GET /team/noarch/dependent-2.0-0.conda 200 \"-\"" in new,
                    "mirrored_channels: the first mirror serves the package", new)
        if "partial" in mirrors[0]:
            t.check("GET /partial/noarch/dependency-2.0-0.conda 404 \"-\"" in new,
                    "mirrored_channels: the first mirror lacked the file", new)
            t.check("GET /partial/noarch/dependent-2.0-0.conda 200 \"-\"" in new,
                    "mirrored_channels: the first mirror served what it has", new)


def bad_answers(t, reg, chan, servers):
    """nginx in front of the registry answering 403, 404, 500 and garbage."""
    extra = """
    location /v2/s403/ { return 403; }
    location /v2/s500/ { return 500; }
    location /v2/garbage/ { default_type application/json; return 200 "<html>hello</html>"; }
    location /v2/ { proxy_pass http://%s; }
    location ~ ^/team/.*[.]zst$ { return 403; }
""" % reg.base
    ngx = Nginx(os.path.join(t.tmp, "nginx-bad"), os.path.join(t.tmp, "www"), extra)
    servers.append(ngx)
    for path, needles in (("s403/env", ["403", "s403"]), ("s500/env", ["500", "s500"]),
                          ("garbage/env", ["not an oci manifest", "garbage"]),
                          ("nothing/here", ["not found", "nothing/here"])):
        ch = "oci://%s/%s" % (ngx.base, path)
        r = create(t, os.path.join(t.tmp, "root-bad"), os.path.join(t.tmp, "env-bad"), ch,
                   "dependent", env={"MENVRC": write_rc(t, "remote_max_retries: 0\n")})
        t.one_line_error(r, "registry answering %s" % path, needles + [ch])
        t.no_prefix_left(os.path.join(t.tmp, "env-bad"), "registry answering %s" % path)
    # issue 16: a channel answering 403 for its missing repodata.json.zst (a bucket) works
    r = create(t, os.path.join(t.tmp, "root-403"), os.path.join(t.tmp, "env-403"),
               "http://%s/team" % ngx.base, "dependent")
    t.check(r.rc == 0, "create from a channel whose .zst is answered 403", r)
    t.check("GET /team/noarch/repodata.json.zst 403 \"-\"" in ngx.lines()
            and "GET /team/noarch/repodata.json 200 \"-\"" in ngx.lines(),
            "403 for the .zst, then repodata.json", ngx.lines())
    # issue 16: subdirs serving only repodata.json.zst (file://) or only repodata.json.bz2
    for tool, ext in (("zstd", ".zst"), ("bzip2", ".bz2")):
        if not shutil.which(tool):
            continue
        d = os.path.join(t.tmp, "only" + ext[1:])
        shutil.copytree(os.path.join(t.tmp, "www", "team"), d)
        for rp in glob.glob(os.path.join(d, "*", "repodata.json")):
            subprocess.run([tool, "-q", rp], check=True)
            if os.path.exists(rp):
                os.unlink(rp)
        t.check(os.path.exists(os.path.join(d, "noarch", "repodata.json" + ext)),
                "only%s: noarch holds repodata.json%s alone" % (ext, ext))
        r = create(t, os.path.join(t.tmp, "root-only" + ext), os.path.join(t.tmp, "env" + ext),
                   t.url(d), "dependent")
        t.check(r.rc == 0 and os.path.exists(os.path.join(t.tmp, "env" + ext, "conda-meta",
                                                          "dependency-2.0-0.json")),
                "create from a file:// channel with repodata.json%s only" % ext, r)
    # through nginx's proxy, the real registry still works
    r = create(t, os.path.join(t.tmp, "root-proxy"), os.path.join(t.tmp, "env-proxy"),
               "oci://%s/team/env" % ngx.base, "dependent")
    t.check(r.rc == 0, "create through nginx's proxy of the registry", r)


def write_rc(t, text):
    p = os.path.join(t.tmp, "rc-%s" % hashlib.sha256(text.encode()).hexdigest()[:12])
    write_text(p, text)
    return p


class TokenService:
    """A token issuer for the registry's `auth: token` (distribution's bearer flow): RS256 JWTs
    signed by openssl with a self-signed certificate the registry trusts (x5c header), granting
    what each request's scope asks for, anonymously. Records the scopes asked for."""

    def __init__(self, dir):
        import http.server
        import threading
        import base64
        self.dir = dir
        os.makedirs(dir, exist_ok=True)
        self.key = os.path.join(dir, "key.pem")
        self.cert = os.path.join(dir, "cert.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                        self.key, "-out", self.cert, "-days", "2", "-subj", "/CN=menv-token"],
                       check=True, capture_output=True)
        der = subprocess.run(["openssl", "x509", "-in", self.cert, "-outform", "DER"],
                             check=True, capture_output=True).stdout
        x5c = base64.b64encode(der).decode()
        self.scopes = []
        svc = self

        def b64u(b):
            return base64.urlsafe_b64encode(b).rstrip(b"=").decode()

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                import urllib.parse
                q = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
                access = []
                for sc in q.get("scope", []):
                    svc.scopes.append(sc)
                    kind, name, actions = sc.split(":")
                    access.append({"type": kind, "name": name, "actions": actions.split(",")})
                now = int(time.time())
                head = b64u(json.dumps({"typ": "JWT", "alg": "RS256", "x5c": [x5c]}).encode())
                body = b64u(json.dumps({"iss": "menv-test-issuer", "sub": "",
                                        "aud": q.get("service", [""])[0], "exp": now + 600,
                                        "nbf": now - 60, "iat": now - 60,
                                        "jti": "%d" % len(svc.scopes),
                                        "access": access}).encode())
                sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", svc.key],
                                     input=("%s.%s" % (head, body)).encode(), check=True,
                                     capture_output=True).stdout
                out = json.dumps({"token": "%s.%s.%s" % (head, body, b64u(sig))}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.port = self.httpd.server_address[1]
        self.realm = "http://127.0.0.1:%d/token" % self.port
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class HostileUploads:
    """A registry of the test's own asking for Basic credentials whose upload answer points
    at another server (another port): every request is logged with its Authorization."""

    def __init__(self):
        import http.server
        import threading
        self.log = []
        srv = self

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def answer(self, code, hdrs=()):
                n = int(self.headers.get("Content-Length") or 0)
                if n:
                    self.rfile.read(n)
                srv.log.append((self.server.server_address[1], self.command, self.path,
                                self.headers.get("Authorization")))
                self.send_response(code)
                for k, v in hdrs:
                    self.send_header(k, v)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_any(self):
                if self.server is srv.other:
                    return self.answer(201)
                if not self.headers.get("Authorization"):
                    return self.answer(401, [("WWW-Authenticate", 'Basic realm="r"')])
                if self.command == "POST":
                    return self.answer(202, [("Location", "http://127.0.0.1:%d/upload/1"
                                              % srv.other.server_address[1])])
                self.answer(404 if self.command == "HEAD" else 201)

            do_HEAD = do_POST = do_PUT = do_GET = do_any

        self.main = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        for h in (self.main, self.other):
            threading.Thread(target=h.serve_forever, daemon=True).start()
        self.base = "127.0.0.1:%d" % self.main.server_address[1]

    def stop(self):
        for h in (self.main, self.other):
            h.shutdown()
            h.server_close()


def hostile_uploads(t, lock, servers):
    """A push whose upload URL is on another server sends it the blob but not the registry's
    credentials (the Basic header went along before)."""
    h = HostileUploads()
    servers.append(h)
    t.menv_ok("mirror", "-f", lock, "--platform", "linux-64",
              "oci://user:s3cret@%s/team/env" % h.base)
    other = h.other.server_address[1]
    puts = [e for e in h.log if e[0] == other]
    t.check(len(puts) >= 4 and all(e[1] == "PUT" for e in puts),
            "hostile uploads: the blobs were PUT to the upload URL's server", puts)
    t.eq([e for e in puts if e[3]], [], "hostile uploads: no Authorization to another server")
    t.check(any(e[3] and e[0] != other for e in h.log),
            "hostile uploads: the registry itself got the credentials", h.log[:4])


def bearer(t, lock, servers):
    """A registry asking for Bearer tokens (its `auth: token`): anonymous tokens from the realm
    its challenge names, with the scope of each repository."""
    if not shutil.which("openssl"):
        t.skip_part("no openssl: the bearer case")
        return
    tok = TokenService(os.path.join(t.tmp, "token"))
    servers.append(tok)
    reg = Registry(os.path.join(t.tmp, "registry-token"), token=(tok.realm, tok.cert))
    servers.append(reg)
    try:
        reg.get("/v2/")
        t.check(False, "bearer registry: /v2/ without a token is refused")
    except urllib.error.HTTPError as e:
        t.eq(e.code, 401, "bearer registry: /v2/ without a token is 401")
        t.check("Bearer realm=" in (e.headers.get("Www-Authenticate") or ""),
                "bearer registry: a Bearer challenge", dict(e.headers))
    chan = "oci://%s/pub/env" % reg.base
    r = t.menv_run("mirror", "-f", lock, "--platform", "linux-64", chan)
    t.check(r.rc == 0 and "mirrored 3 packages" in r.out, "mirror into a bearer registry", r)
    t.check("repository:pub/env/noarch/cdependent:pull,push" in tok.scopes,
            "bearer: push tokens asked for the package's repository", tok.scopes)
    n = len(tok.scopes)
    r = create(t, os.path.join(t.tmp, "root-bearer"), os.path.join(t.tmp, "env-bearer"), chan,
               "dependent", "small-executable")
    t.check(r.rc == 0, "create from a bearer registry, anonymously", r)
    t.check(os.path.exists(os.path.join(t.tmp, "env-bearer", "conda-meta",
                                        "dependency-2.0-0.json")),
            "bearer: the dependency installed")
    pulls = tok.scopes[n:]
    for want in ("repository:pub/env/noarch/mrepodata.json:pull",
                 "repository:pub/env/noarch/cdependent:pull"):
        t.check(want in pulls, "bearer: a pull token for %s" % want, pulls)


def auth(t, src, lock, servers):
    """htpasswd (bcrypt) Basic auth: URL credentials, $NETRC, none, wrong."""
    hp = os.path.join(t.tmp, "htpasswd")
    out = subprocess.run([HTPASSWD, "-Bbn", "alice", "s3cret"], capture_output=True,
                         check=True).stdout
    with open(hp, "wb") as f:
        f.write(out)
    reg = Registry(os.path.join(t.tmp, "registry-auth"), htpasswd=hp)
    servers.append(reg)
    r = t.menv_run("mirror", "-f", lock, "--platform", "linux-64",
                   "oci://alice:s3cret@%s/private/env" % reg.base)
    t.check(r.rc == 0 and "mirrored 3 packages" in r.out, "mirror into an htpasswd registry", r)
    r = create(t, os.path.join(t.tmp, "root-auth"), os.path.join(t.tmp, "env-auth"),
               "oci://alice:s3cret@%s/private/env" % reg.base, "dependent")
    t.check(r.rc == 0, "create with credentials in the oci URL", r)
    t.check("s3cret" not in r.out + r.err, "the password is never printed", r)
    netrc = os.path.join(t.tmp, "netrc")
    write_text(netrc, "machine 127.0.0.1 login alice password s3cret\n")
    os.chmod(netrc, 0o600)
    r = create(t, os.path.join(t.tmp, "root-netrc"), os.path.join(t.tmp, "env-netrc"),
               "oci://%s/private/env" % reg.base, "dependent", env={"NETRC": netrc})
    t.check(r.rc == 0, "create with the credentials in $NETRC", r)
    for label, url in (("no credentials", "oci://%s/private/env" % reg.base),
                       ("a wrong password", "oci://alice:wrong@%s/private/env" % reg.base)):
        r = create(t, os.path.join(t.tmp, "root-noauth"), os.path.join(t.tmp, "env-noauth"),
                   url, "dependent", env={"NETRC": "/nonexistent"})
        t.one_line_error(r, "registry with %s" % label,
                         ["401", "oci://%s/private/env" % reg.base, "credentials"])
        t.check("wrong" not in r.err, "%s: the password is not printed" % label, r.err)


def tls(t, lock, servers):
    """A registry over https (a certificate for 127.0.0.1) with htpasswd: refused until its CA
    is trusted (ssl_verify: <bundle>), then mirror and create work with the URL's password."""
    d = os.path.join(t.tmp, "tls")
    os.makedirs(d, exist_ok=True)
    cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
    p = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                        key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1", "-addext",
                        "subjectAltName=IP:127.0.0.1"], capture_output=True)
    if p.returncode:
        t.skip_part("openssl could not make a certificate: the TLS case")
        return
    hp = os.path.join(d, "htpasswd")
    with open(hp, "wb") as f:
        f.write(subprocess.run([HTPASSWD, "-Bbn", "bob", "pa55"], capture_output=True,
                               check=True).stdout)
    reg = Registry(os.path.join(d, "registry"), htpasswd=hp, tls=(cert, key))
    servers.append(reg)
    chan = "oci://bob:pa55@%s/secure/env" % reg.base
    r = t.menv_run("mirror", "-f", lock, "--platform", "linux-64", chan)
    t.one_line_error(r, "https registry with an untrusted certificate",
                     [("certificate", "tls", "ssl")])
    trust = write_rc(t, "ssl_verify: %s\n" % cert)
    r = t.menv_run("mirror", "-f", lock, "--platform", "linux-64", chan,
                   env={"MENVRC": trust})
    t.check(r.rc == 0 and "mirrored 3 packages" in r.out,
            "mirror into an https + htpasswd registry", r)
    r = create(t, os.path.join(t.tmp, "root-tls"), os.path.join(t.tmp, "env-tls"), chan,
               "dependent", env={"MENVRC": trust})
    t.check(r.rc == 0, "create from an https + htpasswd registry", r)
    t.check(os.path.exists(os.path.join(t.tmp, "env-tls", "conda-meta",
                                        "dependency-2.0-0.json")),
            "https registry: the dependency installed")


def corrupt(t, reg, chan, src):
    """A blob whose bytes no longer match its digest is refused; nothing is cached."""
    m = json.loads(reg.get("/v2/team/env/noarch/cdependency/manifests/2.0-0"))
    digest = [l["digest"] for l in m["layers"]
              if l["mediaType"] == "application/vnd.conda.package.v2"][0]
    path = reg.blob_path(digest)
    good = open(path, "rb").read()
    bad = bytearray(good)
    bad[len(bad) // 2] ^= 0xFF
    with open(path, "wb") as f:
        f.write(bad)
    root = os.path.join(t.tmp, "root-corrupt")
    r = create(t, root, os.path.join(t.tmp, "env-corrupt"), chan, "dependent")
    t.one_line_error(r, "corrupted package blob", ["sha256 mismatch", "dependency-2.0-0.conda"])
    t.no_prefix_left(os.path.join(t.tmp, "env-corrupt"), "corrupted package blob")
    pkgs = os.path.join(root, "pkgs")
    left = [n for n in os.listdir(pkgs) if n.startswith("dependency-2.0-0")] \
        if os.path.isdir(pkgs) else []
    t.eq(left, [], "corrupted package blob: nothing of it in the package cache")
    with open(path, "wb") as f:
        f.write(good)
    # the repodata blobs: a .zst that no longer decodes, and (repodata_use_zst: false) a JSON
    # layer still valid JSON but with other bytes than its digest says
    rm = json.loads(reg.get("/v2/team/env/noarch/mrepodata.json/manifests/latest"))
    for mt, needles, rc in (("+zst", ["corrupt", chan], None),
                            ("+json", ["not its digest", chan], "repodata_use_zst: false\n")):
        digest = [l["digest"] for l in rm["layers"] if l["mediaType"].endswith(mt)][0]
        bpath = reg.blob_path(digest)
        bgood = open(bpath, "rb").read()
        if mt == "+zst":
            bbad = bgood[:-1] + bytes([bgood[-1] ^ 0x01])
        else:
            bbad = bgood.replace(b'"dependent"', b'"dependenu"', 1)
            t.check(bbad != bgood, "the JSON layer names dependent")
        with open(bpath, "wb") as f:
            f.write(bbad)
        root = os.path.join(t.tmp, "root-corrupt-rd")
        shutil.rmtree(root, ignore_errors=True)
        env = {"MENVRC": write_rc(t, rc)} if rc else None
        r = create(t, root, os.path.join(t.tmp, "env-corrupt-rd"), chan, "dependent", env=env)
        t.one_line_error(r, "corrupted repodata blob (%s)" % mt, needles, nonzero_only=True)
        cache = os.path.join(root, "pkgs", "cache")
        t.eq([n for n in (os.listdir(cache) if os.path.isdir(cache) else [])
              if n.endswith(".json")], [],
             "corrupted repodata blob (%s): no repodata cached" % mt)
        with open(bpath, "wb") as f:
            f.write(bgood)


def killed(t, src, servers):
    """The registry killed in the middle of a package download and started again."""
    big = os.path.join(t.tmp, "big", "noarch", "bigdata-1.0-0.conda")
    payload = os.urandom(24 * 1024 * 1024)
    ti = tarfile.TarInfo("share/bigdata.bin")
    ti.size, ti.mode, ti.mtime = len(payload), 0o644, 1700000000
    build_conda(big, {"name": "bigdata", "version": "1.0", "build": "0", "build_number": 0,
                      "depends": [], "noarch": "generic", "subdir": "noarch"},
                [(ti, payload)])
    t.index(os.path.join(t.tmp, "big"))
    reg = Registry(os.path.join(t.tmp, "registry-kill"))
    servers.append(reg)
    t.menv_ok("mirror", "-c", t.url(os.path.join(t.tmp, "big")), "--platform", "linux-64",
              "oci://%s/big/env" % reg.base)
    # nginx in front, 4 MB/s and no buffering: the registry is killed while bytes flow (more
    # of them than the sockets between the two can hold)
    ngx = Nginx(os.path.join(t.tmp, "nginx-kill"), os.path.join(t.tmp, "www"),
                "    location /v2/ { proxy_pass http://%s; proxy_buffering off; "
                "limit_rate 4m; }" % reg.base)
    servers.append(ngx)
    root = os.path.join(t.tmp, "root-kill")
    prefix = os.path.join(t.tmp, "env-kill")
    e = t.environ({"MENV_ROOT_PREFIX": root})
    p = subprocess.Popen([t.menv, "create", "-y", "-q", "-p", prefix, "--override-channels",
                          "-c", "oci://%s/big/env" % ngx.base, "bigdata"], env=e,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    partial = os.path.join(root, "pkgs", "bigdata-1.0-0.conda.partial")
    deadline = time.time() + 30
    seen = 0
    while time.time() < deadline and p.poll() is None:
        seen = os.path.getsize(partial) if os.path.exists(partial) else 0
        if seen > 1024 * 1024:
            break
        time.sleep(0.01)
    t.check(0 < seen < len(payload), "the download was under way when the registry was killed",
            seen)
    reg.kill()
    time.sleep(0.3)
    reg.start()
    out, err = p.communicate(timeout=120)
    t.eq(p.returncode, 0, "create after the registry was killed and started again")
    if p.returncode:
        print(err.decode())
    got = os.path.join(prefix, "share", "bigdata.bin")
    t.check(os.path.exists(got) and hashlib.sha256(open(got, "rb").read()).digest()
            == hashlib.sha256(payload).digest(), "killed registry: the file's bytes intact")
    ranged = [l for l in ngx.lines() if "/blobs/sha256:" in l and " 206 " in l
              and '"bytes=' in l]
    t.check(len(ranged) >= 1, "killed registry: the download continued with a Range request",
            ngx.lines())


if __name__ == "__main__":
    main(body)
