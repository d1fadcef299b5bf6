/*
 * servers.h - loopback HTTP servers for the fetch tests: a real nginx (Debian's package)
 * started by the test on 127.0.0.1 and a free port, with its configuration, logs and
 * temporary files in a test directory, stopped at the end; and a small fault-injecting
 * server of the tests' own (cut connections, 500 then 200, stalls, wrong bytes, lying
 * lengths, slow bodies) that records each request it served.
 */
#ifndef MENV_HTTP_SERVERS_H
#define MENV_HTTP_SERVERS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* ---- nginx ---- */

struct nginx {
	pid_t pid;
	int port;
	char *dir; /* configuration, logs, pid, temp paths */
	char *log; /* access log: "METHOD URI STATUS RANGE IF-NONE-MATCH" per line */
	bool ssl;
};

/* Whether an nginx binary is there (tests skip, exit 77, when not). */
const char *ngx_binary(void);
/* Starts nginx serving `root` on 127.0.0.1 (TLS with `cert`/`key` when not NULL); `extra`
 * goes inside the server block. Returns 0 once it accepts connections, -1 on failure. */
int ngx_start(struct nginx *n, const char *dir, const char *root, const char *extra,
              const char *cert, const char *key);
void ngx_stop(struct nginx *n);
/* The number of access-log lines containing `needle` (all lines when NULL). */
int ngx_count(const struct nginx *n, const char *needle);

/* ---- fault server ---- */

#define FS_MAX_REQ 256

struct faultsrv {
	int fd, port;
	pthread_t tid;
	const char *root; /* files served, by path after the behaviour prefix */
	pthread_mutex_t lock;
	int nreq;
	char paths[FS_MAX_REQ][256];
	char ranges[FS_MAX_REQ][64];
	int stall_ms; /* how long /stall/ waits (default 3000) */
	volatile int stopping;
};

/* Behaviours by path prefix (the rest of the path names a file under root):
 *   /ok/F          serves F (honours Range)
 *   /flaky500/F    first request of each F: 500; later: as /ok/
 *   /cut/F         first request: full Content-Length, half the body, connection closed;
 *                  later: as /ok/ (so a Range request continues)
 *   /stall/F       first request: headers and 16 bytes, then silence for stall_ms; later: /ok/
 *   /liar/F        always announces 100 bytes more than it sends, then closes
 *   /wrong/F       serves F with its middle byte flipped
 *   /slow/F        sends 1 KiB every 50 ms
 * Unknown paths: 404. */
int fs_start(struct faultsrv *s, const char *root);
void fs_stop(struct faultsrv *s);
int fs_count(struct faultsrv *s, const char *needle);

#endif
