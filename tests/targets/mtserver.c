/* SPDX-License-Identifier: MIT */
/*
 * mtserver.c: a multi-threaded event-loop server under its own load, shaped
 * like memcached (issue 35): WORKERS worker threads, each with an epoll loop,
 * CONNS connections spread over them, one recording per connection, and per
 * request a "command" span with "lookup" inside it and, for a set,
 * "store_item". The load comes from CONNS client threads of the same process
 * (uninstrumented), one per connection, each sending a request and waiting
 * for its answer, over a socketpair.
 *
 *	mtserver
 *	  -> "pid N", "ready"
 *	  SIGUSR2: starts a burst of load (BURST_MS at most: 30000, env
 *	    MTSERVER_BURST_MS) -> "load N"; the next SIGUSR2 ends it
 *	    -> "idle N" once every request of it has been answered (no span of
 *	       a request is open then)
 *	  SIGUSR1: the next request of connection 0, in this burst or the
 *	    next, is slow: its "lookup" sleeps SLOW_MS (1200; env MTSERVER_SLOW_MS)
 *	    -> "slow N" once the slow request has been answered
 *	  SIGTERM or SIGINT: stops -> "served N", exit 0
 *
 * Exit status: 0 stopped, 1 errors.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <recorder.h>

#define WORKERS 4
#define CONNS 8
/* What a client asks for, one byte; the answer is one byte back. */
#define OP_GET 'g'
#define OP_SET 's'
#define OP_SLOW 'S'
#define OP_STOP 'q'

struct conn {
	int id;
	int server_fd; /* the worker's end */
	int client_fd; /* the client thread's end */
	struct rec_recording *rec;
	struct rec_span span; /* the recording span, entered around each request */
	char subject[32];
};

static struct rec_recorder *recorder;
static struct conn conns[CONNS];
static int epfds[WORKERS];
static long burst_ms = 30000, slow_ms = 1200;

/* The current burst: clients send while now < burst_end (CLOCK_MONOTONIC ms). */
static atomic_ullong burst_end;
static atomic_int burst_no;
static atomic_int slow_pending;
/* Requests of a burst still unanswered, and the burst's clients still sending. */
static atomic_int in_flight, sending;
static atomic_ullong served;
static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t burst_cond = PTHREAD_COND_INITIALIZER;
static int stopping;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void nap_us(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* One request of connection c, op, inside c's recording span. */
static void serve(struct conn *c, char op)
{
	struct rec_span command, lookup, store;

	REC_SPAN_INIT(&command, INFO, "command");
	rec_span_enter(&command);
	REC_DEBUG("command", REC_I64(op, op), REC_I64(conn, c->id));
	REC_SPAN_INIT(&lookup, DEBUG, "lookup");
	rec_span_enter(&lookup);
	REC_DEBUG("lookup", REC_STR(key, "k"));
	if (op == OP_SLOW) {
		REC_WARN("slow lookup", REC_I64(ms, slow_ms));
		nap_us(slow_ms * 1000);
	}
	rec_span_exit(&lookup);
	if (op == OP_SET) {
		REC_SPAN_INIT(&store, DEBUG, "store_item");
		rec_span_enter(&store);
		REC_DEBUG("stored", REC_U64(bytes, 64));
		rec_span_exit(&store);
	}
	rec_span_exit(&command);
}

static void *worker(void *arg)
{
	int epfd = epfds[(intptr_t)arg];

	for (;;) {
		struct epoll_event evs[CONNS];
		int n = epoll_wait(epfd, evs, CONNS, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return NULL;
		for (int i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;
			char op;

			if (read(c->server_fd, &op, 1) != 1)
				continue;
			if (op == OP_STOP)
				return NULL;
			rec_span_enter(&c->span);
			serve(c, op);
			rec_span_exit(&c->span);
			atomic_fetch_add(&served, 1);
			if (write(c->server_fd, &op, 1) != 1)
				return NULL;
		}
	}
}

/* Signals that a burst's last request has been answered. */
static void request_done(void)
{
	if (atomic_fetch_sub(&in_flight, 1) == 1) {
		pthread_mutex_lock(&idle_lock);
		pthread_cond_broadcast(&idle_cond);
		pthread_mutex_unlock(&idle_lock);
	}
}

/* A client: requests while a burst lasts, one at a time, get and set in turn. */
static void *client(void *arg)
{
	struct conn *c = arg;
	int last = 0;

	for (;;) {
		uint64_t i = 0;
		int b;

		pthread_mutex_lock(&idle_lock);
		while (!stopping && atomic_load(&burst_no) == last)
			pthread_cond_wait(&burst_cond, &idle_lock);
		b = atomic_load(&burst_no);
		pthread_mutex_unlock(&idle_lock);
		if (stopping)
			return NULL;
		last = b;
		while (now_ms() < atomic_load(&burst_end)) {
			char op = (i++ & 1) ? OP_SET : OP_GET, got;
			int one = 1;

			if (c->id == 0 && atomic_compare_exchange_strong(&slow_pending, &one, 0))
				op = OP_SLOW;
			atomic_fetch_add(&in_flight, 1);
			if (write(c->client_fd, &op, 1) != 1 || read(c->client_fd, &got, 1) != 1) {
				request_done();
				return NULL;
			}
			request_done();
			if (op == OP_SLOW)
				printf("slow %d\n", b);
			/* A short think time: busy, and room left for the tracer on 2 cores. */
			nap_us(100);
		}
		if (atomic_fetch_sub(&sending, 1) == 1) {
			pthread_mutex_lock(&idle_lock);
			pthread_cond_broadcast(&idle_cond);
			pthread_mutex_unlock(&idle_lock);
		}
	}
}

/* SIGUSR1, on whichever thread: the next request of connection 0 is slow. */
static void on_usr1(int sig)
{
	(void)sig;
	atomic_store(&slow_pending, 1);
}

static long env_ms(const char *name, long def)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	v = strtol(s, &end, 10);
	return (*end || v <= 0) ? def : v;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	pthread_t workers[WORKERS], clients[CONNS];
	sigset_t sigs;
	int sfd, burst = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	burst_ms = env_ms("MTSERVER_BURST_MS", burst_ms);
	slow_ms = env_ms("MTSERVER_SLOW_MS", slow_ms);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	recorder = rec_recorder_new();
	if (sfd < 0 || !recorder)
		return 1;
	for (int w = 0; w < WORKERS; w++) {
		epfds[w] = epoll_create1(EPOLL_CLOEXEC);
		if (epfds[w] < 0)
			return 1;
	}
	for (int i = 0; i < CONNS; i++) {
		struct conn *c = &conns[i];
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
		int sv[2];

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
			return 1;
		c->id = i;
		c->server_fd = sv[0];
		c->client_fd = sv[1];
		snprintf(c->subject, sizeof(c->subject), "conn#%d", i);
		c->rec = rec_recording_new(recorder, 64);
		if (!c->rec || epoll_ctl(epfds[i % WORKERS], EPOLL_CTL_ADD, c->server_fd, &ev))
			return 1;
		rec_recording_span(&c->span, c->rec, c->subject);
	}
	for (int w = 0; w < WORKERS; w++)
		pthread_create(&workers[w], NULL, worker, (void *)(intptr_t)w);
	for (int i = 0; i < CONNS; i++)
		pthread_create(&clients[i], NULL, client, &conns[i]);
	printf("pid %d\nready\n", (int)getpid());

	for (;;) {
		struct signalfd_siginfo si;

		if (read(sfd, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo == SIGUSR2 && !burst) {
			pthread_mutex_lock(&idle_lock);
			atomic_store(&sending, CONNS);
			atomic_store(&burst_end, now_ms() + (uint64_t)burst_ms);
			burst = atomic_fetch_add(&burst_no, 1) + 1;
			pthread_cond_broadcast(&burst_cond);
			pthread_mutex_unlock(&idle_lock);
			printf("load %d\n", burst);
		} else if (si.ssi_signo == SIGUSR2) {
			/* Idle once every client has stopped sending and been answered. */
			atomic_store(&burst_end, 0);
			pthread_mutex_lock(&idle_lock);
			while (atomic_load(&sending) || atomic_load(&in_flight))
				pthread_cond_wait(&idle_cond, &idle_lock);
			pthread_mutex_unlock(&idle_lock);
			printf("idle %d\n", burst);
			burst = 0;
		} else {
			break;
		}
	}
	pthread_mutex_lock(&idle_lock);
	stopping = 1;
	pthread_cond_broadcast(&burst_cond);
	pthread_mutex_unlock(&idle_lock);
	for (int i = 0; i < CONNS; i++)
		pthread_join(clients[i], NULL);
	for (int i = 0; i < CONNS; i++) {
		char op = OP_STOP;

		if (i < WORKERS && write(conns[i].client_fd, &op, 1) != 1)
			return 1;
	}
	for (int w = 0; w < WORKERS; w++)
		pthread_join(workers[w], NULL);
	for (int i = 0; i < CONNS; i++)
		rec_recording_free(conns[i].rec);
	rec_recorder_free(recorder);
	printf("served %llu\n", (unsigned long long)atomic_load(&served));
	return 0;
}
