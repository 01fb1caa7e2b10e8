// SPDX-License-Identifier: MIT
/*
 * loadgen: a bounded load on tests/targets/evloop.c over 127.0.0.1, for the
 * server keys of make bench (tools/bench/server.py).
 *
 *	loadgen PORT CONNS REQUESTS
 *
 * Opens CONNS connections, then each of CONNS threads sends REQUESTS
 * requests "GET k<j>" on its connection, one at a time, each after the reply
 * to the one before (keep-alive, as wrk does), and checks every reply's key.
 * Then it prints one line, "requests N seconds S", S from the first request
 * to the last reply, and exits 0; on any error, 1 with the reason on stderr.
 * It never sends anywhere but 127.0.0.1, and stops by itself: every read
 * waits 30 s at most.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "bench_time.h"

#define MAX_CONNS 64

struct conn {
	int fd;
	unsigned long requests;
	pthread_barrier_t *start;
	const char *err;
};

static int dial(unsigned port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct timeval tv = { .tv_sec = 30 };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One request and its reply line; 0, or why not in c->err. */
static int request(struct conn *c, unsigned long j, char *buf, size_t size)
{
	char req[48], want[48];
	size_t len = 0;
	int n = snprintf(req, sizeof(req), "GET k%lu\n", j);
	int w = snprintf(want, sizeof(want), "VALUE k%lu ", j);

	if (write(c->fd, req, (size_t)n) != n) {
		c->err = "a write failed";
		return -1;
	}
	while (!len || buf[len - 1] != '\n') {
		ssize_t got = read(c->fd, buf + len, size - len - 1);

		if (got <= 0) {
			c->err = got ? "a read failed or timed out"
				     : "the server closed a connection";
			return -1;
		}
		len += (size_t)got;
		if (len >= size - 1) {
			c->err = "a reply too long";
			return -1;
		}
	}
	buf[len] = '\0';
	if (strncmp(buf, want, (size_t)w)) {
		c->err = "a reply for another key";
		return -1;
	}
	return 0;
}

static void *run(void *arg)
{
	struct conn *c = arg;
	char buf[256];

	pthread_barrier_wait(c->start);
	for (unsigned long j = 0; j < c->requests; j++)
		if (request(c, j, buf, sizeof(buf)))
			break;
	return NULL;
}

int main(int argc, char **argv)
{
	struct conn conns[MAX_CONNS] = { 0 };
	pthread_t th[MAX_CONNS];
	pthread_barrier_t start;
	unsigned long port, nconns, requests;
	uint64_t t0, t1;

	if (argc != 4 || !(port = strtoul(argv[1], NULL, 10)) || port > 65535 ||
	    !(nconns = strtoul(argv[2], NULL, 10)) || nconns > MAX_CONNS ||
	    !(requests = strtoul(argv[3], NULL, 10))) {
		fprintf(stderr, "usage: loadgen PORT CONNS(1-%d) REQUESTS\n", MAX_CONNS);
		return 2;
	}
	pthread_barrier_init(&start, NULL, (unsigned)nconns + 1);
	for (unsigned long i = 0; i < nconns; i++) {
		conns[i].fd = dial((unsigned)port);
		if (conns[i].fd < 0) {
			fprintf(stderr, "loadgen: cannot connect to 127.0.0.1:%lu: %s\n", port,
				strerror(errno));
			return 1;
		}
		conns[i].requests = requests;
		conns[i].start = &start;
		if (pthread_create(&th[i], NULL, run, &conns[i])) {
			fprintf(stderr, "loadgen: cannot start a thread\n");
			return 1;
		}
	}
	t0 = now_ns();
	pthread_barrier_wait(&start);
	for (unsigned long i = 0; i < nconns; i++)
		pthread_join(th[i], NULL);
	t1 = now_ns();
	for (unsigned long i = 0; i < nconns; i++) {
		if (conns[i].err) {
			fprintf(stderr, "loadgen: connection %lu: %s\n", i, conns[i].err);
			return 1;
		}
		close(conns[i].fd);
	}
	printf("requests %lu seconds %.6f\n", nconns * requests, (double)(t1 - t0) / 1e9);
	return 0;
}
