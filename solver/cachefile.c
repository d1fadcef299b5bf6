/*
 * cachefile.c - the solve caches beside a repodata.json (`.solv`, `.solv.names`, `.solv.subN`,
 * `.solv.walkN`) as files: each ends in a trailer, a magic and a checksum of every byte before
 * it, checked before the bytes are used, so that a file that changed in place (a flipped byte,
 * one torn by a full disk, another version's) counts as no cache and is built again from the
 * JSON, as a missing one is. A file is written under a name of its own (mkstemp, never through
 * a link) and renamed over the old one: readers see the old file or the new one, whole, also
 * with several writers at once. Best effort: a cache that cannot be written costs only time.
 *
 * The checksum is no signature, and libsolv's .solv reader is not hardened against crafted
 * bytes: the trust boundary is the folder. A cache is read only from a folder that belongs to
 * this user (or root) and that neither group nor others can write, and only when the file
 * belongs to this user and neither group nor others can write it (ssh's StrictModes): a file
 * someone else could have written counts as no cache. A group of one, the owner's own (a user
 * private group, the usual set-up with umask 002: no other member listed, no other user's
 * primary group), writing counts as the owner's. The .solv bytes also pass the header
 * checks below before libsolv reads them. Whoever runs as this user can still craft a file
 * that passes (README, "Not yet").
 */
#include <errno.h>
#include <libgen.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define SUMMAGIC "menvsum1"
struct trailer {
	char magic[8];
	uint64_t sum;
};

/* The checksum: Fletcher's two running sums over 64-bit words (a += w; b += a, modulo 2^64), in
 * eight lanes of words side by side, the tail and the length mixed in at the end. A change
 * inside one word always changes its lane's first sum; words moved change the second. Not a
 * defence against whoever can write the cache (they can write a matching sum): a check that
 * the bytes are the ones written. About a quarter of an instruction a byte (two SSE2 adds per
 * 16 bytes): warm solves read the index of a 200 MB repodata (9 MB) on every run. */
typedef uint64_t v2u64 __attribute__((vector_size(16)));
typedef uint64_t v2u64_unaligned __attribute__((vector_size(16), aligned(1), may_alias));
#define BLOCK 64
struct sum {
	v2u64 a[4], b[4];
	uint64_t len;
	unsigned char tail[BLOCK];
	size_t ntail;
};
#define K1 0x9E3779B97F4A7C15ull
#define K2 0xC2B2AE3D27D4EB4Full

static void sum_init(struct sum *s)
{
	memset(s, 0, sizeof(*s));
}

static void sum_blocks(struct sum *s, const unsigned char *p, size_t nblocks)
{
	v2u64 a0 = s->a[0], a1 = s->a[1], a2 = s->a[2], a3 = s->a[3];
	v2u64 b0 = s->b[0], b1 = s->b[1], b2 = s->b[2], b3 = s->b[3];
	for (; nblocks; nblocks--, p += BLOCK) {
		const v2u64_unaligned *w = (const v2u64_unaligned *)p;
		a0 += w[0];
		a1 += w[1];
		a2 += w[2];
		a3 += w[3];
		b0 += a0;
		b1 += a1;
		b2 += a2;
		b3 += a3;
	}
	s->a[0] = a0, s->a[1] = a1, s->a[2] = a2, s->a[3] = a3;
	s->b[0] = b0, s->b[1] = b1, s->b[2] = b2, s->b[3] = b3;
}

static void sum_add(struct sum *s, const void *data, size_t n)
{
	const unsigned char *p = data;
	s->len += n;
	if (s->ntail) {
		size_t k = BLOCK - s->ntail < n ? BLOCK - s->ntail : n;
		memcpy(s->tail + s->ntail, p, k);
		s->ntail += k;
		p += k;
		n -= k;
		if (s->ntail < BLOCK)
			return;
		sum_blocks(s, s->tail, 1);
		s->ntail = 0;
	}
	sum_blocks(s, p, n / BLOCK);
	p += n / BLOCK * BLOCK;
	n %= BLOCK;
	memcpy(s->tail, p, n);
	s->ntail = n;
}

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= K2;
	h ^= h >> 29;
	h *= K1;
	return h ^ (h >> 32);
}

static uint64_t sum_end(struct sum *s)
{
	memset(s->tail + s->ntail, 0, BLOCK - s->ntail);
	sum_blocks(s, s->tail, 1);
	uint64_t h = mix(s->len ^ K1);
	for (int i = 0; i < 4; i++)
		for (int k = 0; k < 2; k++)
			h = mix(h ^ mix(s->a[i][k] + K2 * (uint64_t)(2 * i + k)) ^
			        mix(s->b[i][k] ^ K1));
	return h;
}

static bool write_all(int fd, const void *data, size_t n, volatile int *cancel)
{
	const char *p = data;
	while (n && !menv_solv_cancelled(cancel)) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return !n;
}

void menv_solv_cache_write(const char *path, const struct menv_solv_part *parts, size_t n,
                           volatile int *cancel)
{
	char *tmp = menv_xasprintf("%s.tmp-XXXXXX", path);
	int fd = mkostemp(tmp, O_CLOEXEC);
	struct sum s;
	/* never writable to others (the trust rule), never more readable than the umask lets */
	bool ok = fd >= 0 && fchmod(fd, 0644 & ~menv_umask()) == 0;

	sum_init(&s);
	for (size_t i = 0; ok && i < n; i++) {
		sum_add(&s, parts[i].data, parts[i].len);
		ok = write_all(fd, parts[i].data, parts[i].len, cancel);
	}
	struct trailer t = {.sum = sum_end(&s)};
	memcpy(t.magic, SUMMAGIC, sizeof(t.magic));
	ok = ok && write_all(fd, &t, sizeof(t), cancel);
	ok = fd >= 0 && close(fd) == 0 && ok && !menv_solv_cancelled(cancel);
	if (ok && rename(tmp, path) == 0) {
		free(tmp);
		return;
	}
	if (fd >= 0)
		unlink(tmp);
	free(tmp);
}

/* Whether group gid has one member, the user `owner`: that user's own group (its name the
 * user's, the user's primary group) with no other user listed in it, and no other user's
 * primary group (a member the group's list does not name: every passwd entry is read, on
 * this road only, taken by a group-writable file or folder). Debian's OpenSSH
 * (secure_permissions, its user-group-modes patch) lets such a group write ~/.ssh. */
static bool group_is_owners(gid_t gid, uid_t owner)
{
	struct group gr, *g = NULL;
	struct passwd pw, *u = NULL;
	char gbuf[4096], pbuf[4096];

	if (getgrgid_r(gid, &gr, gbuf, sizeof(gbuf), &g) || !g ||
	    getpwnam_r(g->gr_name, &pw, pbuf, sizeof(pbuf), &u) || !u)
		return false;
	if (u->pw_uid != owner || u->pw_gid != gid)
		return false;
	if (g->gr_mem[0] && (strcmp(g->gr_mem[0], u->pw_name) || g->gr_mem[1]))
		return false;
	/* an entry that cannot be read (ERANGE, an NSS error) proves nothing: not the owner's */
	bool alone = true;
	int rc = 0;
	setpwent();
	while (alone && !(rc = getpwent_r(&pw, pbuf, sizeof(pbuf), &u)) && u)
		alone = u->pw_gid != gid || u->pw_uid == owner;
	endpwent();
	return alone && (rc == 0 || rc == ENOENT);
}

/* Whether only st's owner can write it: neither others nor a group but the owner's own. */
static bool owner_writes_only(const struct stat *st)
{
	return !(st->st_mode & S_IWOTH) &&
	       (!(st->st_mode & S_IWGRP) || group_is_owners(st->st_gid, st->st_uid));
}

/* Whether the folder that holds path belongs to this user or root and only they can write it. */
static bool folder_trusted(const char *path)
{
	char *copy = menv_xstrdup(path);
	struct stat st;
	bool ok = stat(dirname(copy), &st) == 0 && S_ISDIR(st.st_mode) &&
	          (st.st_uid == geteuid() || st.st_uid == 0) && owner_writes_only(&st);
	free(copy);
	return ok;
}

bool menv_solv_cache_map(const char *path, const char **bytes, size_t *len)
{
	int fd = path && folder_trusted(path)
	                 ? open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
	                 : -1;
	struct stat st;
	if (fd < 0)
		return false;
	void *m = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	                          owner_writes_only(&st) &&
	                          (size_t)st.st_size > sizeof(struct trailer)
	                  ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)
	                  : MAP_FAILED;
	close(fd);
	if (m == MAP_FAILED)
		return false;
	size_t n = (size_t)st.st_size - sizeof(struct trailer);
	struct trailer t;
	struct sum s;
	memcpy(&t, (const char *)m + n, sizeof(t));
	sum_init(&s);
	sum_add(&s, m, n);
	if (memcmp(t.magic, SUMMAGIC, sizeof(t.magic)) || t.sum != sum_end(&s)) {
		munmap(m, (size_t)st.st_size);
		return false;
	}
	*bytes = m;
	*len = n;
	return true;
}

void menv_solv_cache_unmap(const char *bytes, size_t len)
{
	if (bytes)
		munmap((void *)bytes, len + sizeof(struct trailer));
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

#define SOLV_PREFIX_POOL 4u /* libsolv's pooltypes.h: SOLV_FLAG_PREFIX_POOL */
#define SOLV_USERDATA    16u

bool menv_solv_bytes_plausible(const char *bytes, size_t len)
{
	const unsigned char *p = (const unsigned char *)bytes, *end = p + len;
	/* "SOLV", version 8 or 9, six counts and the flags (big-endian u32s) */
	if (len < 36 || memcmp(p, "SOLV", 4) || (be32(p + 4) != 8 && be32(p + 4) != 9))
		return false;
	/* ids, rels, dirs, solvables, keys, schemata: each takes a byte of the file at least
	 * (libsolv allocates by these counts before it reads what they count) */
	for (int i = 0; i < 6; i++)
		if (be32(p + 8 + 4 * i) > len || be32(p + 8 + 4 * i) >= 0x20000000u)
			return false;
	uint32_t numid = be32(p + 8), flags = be32(p + 32);
	p += 36;
	if (flags & SOLV_USERDATA) {
		if (end - p < 4 || be32(p) >= 65536 || be32(p) > (size_t)(end - p - 4))
			return false;
		p += 4 + be32(p);
	}
	if (end - p < 4)
		return false;
	uint32_t sizeid = be32(p);
	p += 4;
	if (!(flags & SOLV_PREFIX_POOL))
		return sizeid < 0xf0000000u && sizeid <= (size_t)(end - p);
	/* the strings, prefix-compressed: numid - 1 entries of a byte (how much of the string
	 * before to keep, at most all of it) and a NUL-terminated rest, inside the section's
	 * size, that expand to exactly sizeid bytes (libsolv walks them without a bound) */
	if (end - p < 4 || be32(p) > (size_t)(end - p - 4))
		return false;
	const unsigned char *q = p + 4, *qend = q + be32(p);
	uint64_t total = 0;
	size_t prev = 0;
	for (uint32_t i = 1; i < numid; i++) {
		const unsigned char *nul =
		        q < qend ? memchr(q + 1, 0, (size_t)(qend - q - 1)) : NULL;
		if (!nul || *q > prev)
			return false;
		prev = *q + (size_t)(nul - q - 1);
		total += prev + 1;
		q = nul + 1;
	}
	return q == qend && total == sizeid;
}
