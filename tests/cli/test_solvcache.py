#!/usr/bin/env python3
"""cli.solvcache_<case>: the solve caches read back (issue 22: no half state, no wrong results),
one case each (python3 test_solvcache.py MENV SHARED CASE). Each crafted file carries a valid
checksum (test_attack7's helper: solver/cachefile.c's), so it passes the check a flipped byte
fails; the rule: a cache that cannot be read back consistently counts as no cache, the
command gives exactly the cold run's answer and writes the cache again. Each crafted file is
read by every command that loads channels (menvtest.channel_commands: create --dry-run, lock,
search, repoquery depends/whoneeds), its exit code and standard output compared byte for byte
with its cold run's (menvtest.cache_craft).

- cache_inbounds: damage that stays inside every bound: a `.solv.names` whose two group
  names of the same length are swapped (the index sends `dependent` to versioned's records:
  "nothing provides" before), whose record offsets are each a byte late (a parse error
  before), a `.solv.subN` whose .solv bytes hold records the request did not want (the whole
  channel's: its answer from records beyond the closure), a `.solv.walkN` whose closure names
  no record (the solve saw no package before). Each: the cold answer, the file rewritten.
- cache_foreign: the trust boundary (ssh's StrictModes): cache files writable by group or
  others, owned by another user (as root: chown), or in a folder writable by group or
  others (sticky or not) are not read: the cold answer, each written again (a new file,
  this user's, 0644); this user's 0644 files in a 0755 folder are read, none written, and
  so are 0664 files in a 0775 folder when the group is the user's own (umask 002's user
  private group: Debian's OpenSSH lets such a group write ~/.ssh).
- cache_group_primary: the owner's own group is not the owner's alone when another user
  has it as primary group (a passwd with such a user, bind-mounted over /etc/passwd in a
  mount namespace: root only, else skipped): group-writable caches then count as none.
- solv_header: a `.solv` (full load) whose prefix-compressed string section says more
  strings than its bytes hold (libsolv walks them without a bound), and one whose id count
  is larger than the file: the cold answer, the file rewritten.
"""
import glob
import grp
import os
import pwd
import struct
import sys

import menvtest
from menvtest import cache_craft, cache_files, clear_cache, seal, unseal
from test_attack7 import COLD, HEAD, SGROUP, dry_run, names_fields, rec_at, test_channel


def group_names(body):
    """[(offset of the group's entry, name)] of a .solv.names body."""
    nrecs, ngroups, nnames = names_fields(body)
    groups = HEAD + 48 + nrecs * 32
    names = groups + ngroups * SGROUP
    out = []
    for g in range(ngroups):
        off, ln = struct.unpack_from("<QI", body, groups + g * SGROUP)
        out.append((groups + g * SGROUP, bytes(body[names + off:names + off + ln])))
    return out


def swap_names(body):
    """the name entries (offset, length) of `dependent` and `versioned` swapped."""
    at = {n: o for o, n in group_names(body)}
    a, b = at.get(b"dependent"), at.get(b"versioned")
    if a is None or b is None:
        return False
    ea, eb = bytes(body[a:a + 12]), bytes(body[b:b + 12])
    body[a:a + 12], body[b:b + 12] = eb, ea
    return True


def shift_records(body):
    """every record's value a byte later and a byte shorter (in bounds, in file order)."""
    for i in range(names_fields(body)[0]):
        off, = struct.unpack_from("<Q", body, rec_at(i) + 8)
        ln, = struct.unpack_from("<I", body, rec_at(i) + 20)
        struct.pack_into("<Q", body, rec_at(i) + 8, off + 1)
        struct.pack_into("<I", body, rec_at(i) + 20, ln - 1)
    return True


# a closure's or a subset's cache would spare reading the index
SPARE_INDEX = ("*.solv.walk*", "*.solv.sub*")


def inbounds_swap(t, chan, cold):
    cache_craft(t, chan, "two group names swapped", "*.solv.names", swap_names,
                drop=SPARE_INDEX, cold=cold)


def inbounds_shift(t, chan, cold):
    cache_craft(t, chan, "record offsets a byte late", "*.solv.names", shift_records,
                drop=SPARE_INDEX, cold=cold)


def inbounds_subset(t, chan, cold):
    """a .subN holding every record of the channel (its full .solv's bytes)"""
    clear_cache(t)
    t.eq(dry_run(t, chan, "full", "the full .solv"), COLD, "the full answer")
    solv = cache_files(t, "*.solv")
    full = unseal(solv[0]) if len(solv) == 1 else None
    if not t.check(full is not None, "one .solv"):
        return

    def all_records(body):
        nwant, solvlen = struct.unpack_from("<2Q", body, HEAD)
        if not t.check(len(full) > solvlen, "the full .solv holds more"):
            return False
        del body[len(body) - solvlen:]
        body.extend(full)
        struct.pack_into("<Q", body, HEAD + 8, len(full))
    cache_craft(t, chan, "a subset holding records not wanted", "*.solv.sub*", all_records,
                cold=cold)


def inbounds_walk(t, chan, cold):
    """a .walkN that wants no record: every count 0 after the key"""
    def no_record(body):
        subs = cache_files(t, "*.solv.sub*")
        sub = unseal(subs[0]) if len(subs) == 1 else None
        # the closure ends with the noarch file's wanted records, a count and the indexes
        # the subset lists too: want none
        nwant = struct.unpack_from("<Q", sub, HEAD)[0] if sub else 0
        tail = struct.pack("<I", nwant) + bytes(sub[HEAD + 16:HEAD + 16 + 4 * nwant]) \
            if sub else b"?"
        if not t.check(nwant > 0 and bytes(body).endswith(tail), "the closure's layout"):
            return False
        del body[len(body) - len(tail):]
        body.extend(struct.pack("<I", 0))
    cache_craft(t, chan, "a closure of no record", "*.solv.walk*", no_record,
                drop=("*.solv.sub*",), cold=cold)


INBOUNDS = {"swap": inbounds_swap, "shift": inbounds_shift, "subset": inbounds_subset,
            "walk": inbounds_walk}


def case_cache_inbounds(t, which=None):
    chan = test_channel(t)
    cold = {}
    for name in [which] if which else INBOUNDS:
        INBOUNDS[name](t, chan, cold)


def case_cache_foreign(t):
    chan = test_channel(t)
    cache = os.path.join(t.pkgs, "cache")
    clear_cache(t)
    t.eq(dry_run(t, chan, "full", "cold, full"), COLD, "the cold answer (full)")
    t.eq(dry_run(t, chan, "sparse", "cold, sparse"), COLD, "the cold answer (sparse)")
    files = cache_files(t, "*.solv*")
    kinds = sorted(os.path.basename(f).split(".solv")[1] for f in files)
    t.eq([k.rstrip("0123456789") for k in kinds], ["", ".names", ".sub", ".walk"],
         "a .solv, an index, a subset and a closure")

    def inodes():
        return {f: os.stat(f).st_ino for f in cache_files(t, "*.solv*")}

    def warm(what):
        t.eq(dry_run(t, chan, "full", "%s, full" % what), COLD, "%s: the cold answer" % what)
        t.eq(dry_run(t, chan, "sparse", "%s, sparse" % what), COLD,
             "%s: the cold answer (sparse)" % what)

    # this user's files, 0644, in a 0755 folder: read as they are, none written again
    before = inodes()
    warm("trusted")
    t.eq(inodes(), before, "trusted caches are read, not written again")
    # a group of several users ("users", gid 100 in Debian's base; else a gid no group has):
    # its members could write
    shared = next((g.gr_gid for g in grp.getgrall() if g.gr_name == "users"), 54321)
    me_gid = os.stat(cache).st_gid

    def group_writable(p, mode):
        os.chown(p, -1, shared)
        os.chmod(p, mode)
    cases = [("group-writable files", lambda p: group_writable(p, 0o664), None),
             ("world-writable files", lambda p: os.chmod(p, 0o646), None),
             ("a group-writable folder", None, 0o775),
             ("a world-writable sticky folder", None, 0o1777)]
    if os.geteuid() == 0:
        cases.append(("files of another user", lambda p: os.chown(p, 65534, 65534), None))
    for what, on_file, dir_mode in cases:
        for f in cache_files(t, "*.solv*"):
            if on_file:
                on_file(f)
        if dir_mode:
            group_writable(cache, dir_mode)
        before = inodes()
        warm(what)
        after = inodes()
        os.chown(cache, -1, me_gid)
        os.chmod(cache, 0o755)
        t.check(all(after.get(f) != ino for f, ino in before.items()),
                "%s: not read, every cache written again" % what, (before, after))
        for f in cache_files(t, "*.solv*"):
            st = os.stat(f)
            t.check(st.st_uid == os.geteuid() and st.st_mode & 0o777 == 0o644,
                    "%s: %s written as this user's, 0644" % (what, os.path.basename(f)))

    # the owner's own group (a user private group: its name the user's, no other member, as
    # root's "root" in Debian's base), umask 002's files and folders: read as this user's
    me = pwd.getpwuid(os.geteuid())
    own = grp.getgrgid(me.pw_gid)
    if own.gr_name == me.pw_name and set(own.gr_mem) <= {me.pw_name}:
        own_group_writable(t, cache, me.pw_gid)
        before = inodes()
        warm("the owner's own group")
        t.eq(inodes(), before, "files and folder its own group can write: read, not written")
        os.chmod(cache, 0o755)
    else:
        t.check(False, "this user (%s) has a group of its own" % me.pw_name, own)


def own_group_writable(t, cache, gid):
    """Gives the solve cache's files and folder to group `gid`, writable by it (umask 002)."""
    for f in cache_files(t, "*.solv*"):
        os.chown(f, -1, gid)
        os.chmod(f, 0o664)
    os.chown(cache, -1, gid)
    os.chmod(cache, 0o775)


def case_cache_group_primary(t):
    """The owner's own group writing counts as the owner's only when no other user has it
    as primary group (a member its group entry does not list): a passwd with such a user
    (bind-mounted over /etc/passwd in a mount namespace of menv's own) makes the group's
    files and folder another writer's."""
    import shutil
    import subprocess
    me = pwd.getpwuid(os.geteuid())
    own = grp.getgrgid(me.pw_gid)
    unshare = shutil.which("unshare")
    if os.geteuid() != 0 or not unshare or \
            subprocess.run([unshare, "-m", "true"], capture_output=True).returncode:
        t.skip_part("a mount namespace (unshare -m as root) to give menv another passwd")
        return
    if not t.check(own.gr_name == me.pw_name and set(own.gr_mem) <= {me.pw_name},
                   "this user (%s) has a group of its own" % me.pw_name, own):
        return
    chan = test_channel(t)
    cache = os.path.join(t.pkgs, "cache")
    fake = os.path.join(t.tmp, "passwd")
    with open("/etc/passwd") as fh:
        entries = fh.read()
    uid = max(p.pw_uid for p in pwd.getpwall()) + 1
    menvtest.write_text(fake, entries.rstrip("\n") + "\nprimary:x:%d:%d::/nonexistent:"
                        "/usr/sbin/nologin\n" % (uid, me.pw_gid))
    wrapper = os.path.join(t.tmp, "menv-other-passwd")
    menvtest.write_text(wrapper, '#!/bin/sh\nexec %s -m sh -c \'mount --bind "$0" /etc/passwd '
                        '&& exec "$@"\' %s %s "$@"\n' % (unshare, fake, t.menv))
    os.chmod(wrapper, 0o755)

    def warm(what):
        t.eq(dry_run(t, chan, "full", "%s, full" % what), COLD, "%s: the cold answer" % what)
        t.eq(dry_run(t, chan, "sparse", "%s, sparse" % what), COLD,
             "%s: the cold answer (sparse)" % what)

    def inodes():
        return {f: os.stat(f).st_ino for f in cache_files(t, "*.solv*")}
    clear_cache(t)
    warm("cold")
    own_group_writable(t, cache, me.pw_gid)
    before = inodes()
    warm("the own group, no other user in it")
    t.eq(inodes(), before, "files and folder the owner's own group can write: read")
    real = t.menv
    t.menv = wrapper
    try:
        r = t.menv_run("--version")
        t.check(r.rc == 0, "menv runs under the other passwd", r)
        warm("the own group, another user's primary group")
    finally:
        t.menv = real
    after = inodes()
    os.chmod(cache, 0o755)
    t.check(all(after.get(f) != ino for f, ino in before.items()),
            "another user's primary group: not read, every cache written again",
            (before, after))


def more_strings(body):
    # header: SOLV, version, numid, numrel, numdir, numsolv, numkeys, numschemata, flags
    numid, = struct.unpack_from(">I", body, 8)
    flags, = struct.unpack_from(">I", body, 32)
    t_at = 36 + (4 + struct.unpack_from(">I", body, 36)[0] if flags & 16 else 0)
    # the prefix section's size cut to 2 bytes: numid - 1 entries cannot fit
    struct.pack_into(">I", body, t_at + 4, 2)
    struct.pack_into(">I", body, 8, numid + 1000)


def huge_ids(body):
    struct.pack_into(">I", body, 8, len(body) + 1)


def case_solv_header(t):
    chan = test_channel(t)
    cold = {}
    cache_craft(t, chan, "a string section shorter than its entries", "*.solv", more_strings,
                load="full", cold=cold)
    cache_craft(t, chan, "an id count larger than the file", "*.solv", huge_ids, load="full",
                cold=cold)


def body(t, case, *rest):
    getattr(sys.modules[__name__], "case_" + case)(t, *rest)


if __name__ == "__main__":
    menvtest.main(body)
