/*
 * hash.c - checksums of package files: sha256 and md5 in one streaming pass (OpenSSL EVP),
 * as repodata.json records them (CEP-36: lowercase hex). Downloads feed the same hasher
 * block by block so a package is verified without being read twice.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "internal.h"

static void to_hex(const unsigned char *d, unsigned int n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (unsigned int i = 0; i < n; i++) {
		out[2 * i] = digits[d[i] >> 4];
		out[2 * i + 1] = digits[d[i] & 0xf];
	}
	out[2 * n] = '\0';
}

static EVP_MD_CTX *digest_new(const EVP_MD *md)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	if (!c) {
		fprintf(stderr, "menv: out of memory allocating a digest\n");
		abort();
	}
	if (!EVP_DigestInit_ex(c, md, NULL)) {
		EVP_MD_CTX_free(c);
		return NULL;
	}
	return c;
}

void menv_hasher_init(struct menv_hasher *h)
{
	h->sha256 = digest_new(EVP_sha256());
	h->md5 = digest_new(EVP_md5());
	h->size = 0;
}

void menv_hasher_init_md5(struct menv_hasher *h, bool md5)
{
	h->sha256 = digest_new(EVP_sha256());
	h->md5 = md5 ? digest_new(EVP_md5()) : NULL;
	h->size = 0;
}

void menv_hasher_update(struct menv_hasher *h, const void *data, size_t len)
{
	if (h->sha256)
		EVP_DigestUpdate(h->sha256, data, len);
	if (h->md5)
		EVP_DigestUpdate(h->md5, data, len);
	h->size += (int64_t)len;
}

void menv_hasher_final(struct menv_hasher *h, struct menv_hashes *out)
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	out->sha256[0] = out->md5[0] = '\0';
	if (h->sha256 && EVP_DigestFinal_ex(h->sha256, d, &n) && n == 32)
		to_hex(d, n, out->sha256);
	if (h->md5 && EVP_DigestFinal_ex(h->md5, d, &n) && n == 16)
		to_hex(d, n, out->md5);
	out->size = h->size;
	menv_hasher_release(h);
}

void menv_hasher_release(struct menv_hasher *h)
{
	EVP_MD_CTX_free(h->sha256);
	EVP_MD_CTX_free(h->md5);
	h->sha256 = h->md5 = NULL;
}

int menv_hash_file(const char *path, struct menv_hashes *out, struct menv_error *err)
{
	struct menv_hasher h;
	unsigned char *buf = NULL;
	int rc = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return menv_error_sys(err, errno == ENOENT ? MENV_ENOTFOUND : MENV_EIO,
		                      "cannot open '%s'", path);
	buf = menv_xmalloc(1 << 16);
	menv_hasher_init(&h);
	for (;;) {
		if (menv_cancelled()) {
			rc = menv_error_set(err, MENV_EINTR, "hashing '%s' interrupted", path);
			menv_hasher_release(&h);
			goto out;
		}
		ssize_t r = read(fd, buf, 1 << 16);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = menv_error_sys(err, MENV_EIO, "cannot read '%s'", path);
			menv_hasher_release(&h);
			goto out;
		}
		if (r == 0)
			break;
		menv_hasher_update(&h, buf, (size_t)r);
	}
	menv_hasher_final(&h, out);
out:
	free(buf);
	close(fd);
	return rc;
}

void menv_hash_mem(const void *data, size_t len, struct menv_hashes *out)
{
	struct menv_hasher h;

	menv_hasher_init(&h);
	menv_hasher_update(&h, data, len);
	menv_hasher_final(&h, out);
}
