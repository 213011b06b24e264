/* wq_manager.c - Work Queue manager side of workqueue_trivial.sh.
 *
 * Usage: wq_manager N PORTFILE NWORKERS TIMEOUT_S [WINDOW]
 * Creates a Work Queue manager on the first free port in
 * WORK_QUEUE_LOW_PORT..WORK_QUEUE_HIGH_PORT, writes the port number
 * to PORTFILE (the shell script then starts the workers on 127.0.0.1), waits
 * until NWORKERS workers are connected, then submits N tasks whose command is
 * ":" (the shell no-op builtin; Work Queue runs every command via /bin/sh -c),
 * keeping at most WINDOW outstanding (WINDOW <= 0: all N submitted up front),
 * waits for all N to come back and prints
 *   workqueue tasks=N seconds=S tasks_per_s=R
 * The timed interval is first submit -> last completed task returned by
 * work_queue_wait; manager creation and worker start/connect are excluded.
 * Built by workqueue_trivial.sh against Debian's coop-computing-tools-dev. */
#include <cctools/work_queue.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
	if (argc < 5) {
		fprintf(stderr, "usage: %s N PORTFILE NWORKERS TIMEOUT_S\n", argv[0]);
		return 2;
	}
	int n = atoi(argv[1]);
	const char *portfile = argv[2];
	int nworkers = atoi(argv[3]);
	double timeout = atof(argv[4]);
	int window = argc > 5 ? atoi(argv[5]) : 0;

	struct work_queue *q = work_queue_create(-1); /* -1: first free port in LOW..HIGH */
	if (!q) { fprintf(stderr, "work_queue_create failed\n"); return 1; }
	FILE *f = fopen(portfile, "w");
	if (!f) { perror("portfile"); return 1; }
	fprintf(f, "%d\n", work_queue_port(q));
	fclose(f);

	double deadline = now() + timeout;
	struct work_queue_stats s;
	for (;;) {
		/* work_queue_wait with nothing submitted still services new connections */
		work_queue_wait(q, 1);
		work_queue_get_stats(q, &s);
		if (s.workers_connected >= nworkers) break;
		if (now() > deadline) { fprintf(stderr, "timeout waiting for workers (%d connected)\n", s.workers_connected); return 1; }
	}

	double t0 = now();
	int submitted = 0, done = 0, failed = 0;
	while (done < n) {
		/* keep at most `window` tasks outstanding (window <= 0: submit all N at once) */
		while (submitted < n && (window <= 0 || submitted - done < window)) {
			struct work_queue_task *t = work_queue_task_create(":");
			work_queue_task_specify_cores(t, 1);
			work_queue_submit(q, t);
			submitted++;
		}
		struct work_queue_task *t = work_queue_wait(q, 5);
		if (t) {
			if (t->result != WORK_QUEUE_RESULT_SUCCESS || t->return_status != 0) failed++;
			work_queue_task_delete(t);
			done++;
		}
		if (now() > deadline) { fprintf(stderr, "timeout: %d/%d tasks done\n", done, n); return 1; }
	}
	double dt = now() - t0;
	if (failed) fprintf(stderr, "warning: %d tasks failed\n", failed);
	printf("workqueue tasks=%d seconds=%.3f tasks_per_s=%.1f\n", n, dt, n / dt);
	fflush(stdout);
	work_queue_delete(q);
	return failed ? 1 : 0;
}
