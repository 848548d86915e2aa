/*
 * bench_native.c - the native peer of the mha-wasm benchmark (tests/bench/bench.mjs builds and
 * starts it; not a test). The same C as web/mha.wasm, built with the host compiler:
 *   cc -O3 -std=c11 -ffp-contract=off -DNDEBUG -Ic c/{kernels,mha,npmath,rng,train}.c \
 *      tests/bench/bench_native.c -lm \
 *      -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc -o build/bench/bench_native
 * One train step is mha_train(steps = 1): zero_grad, forward, MSE loss, backward, SGD update.
 * The --wrap options count the library's allocations, to show that a warm step allocates nothing.
 *
 * Protocol (one command per line on stdin, one reply per line on stdout, prefixed with "@@ "):
 *   load NAME B T C H LR DIR        reads DIR/NAME.{X,target,W}.f64 (raw float64), creates the layer
 *   run NAME MIN_SECONDS MIN_REPS   resets the weights, 1 untimed step (its loss is the "first
 *                                   loss"), then timed steps until both minimums are met:
 *                                   {"first_loss", "last_loss", "allocs", "cpu", "times": [s, ...]}
 *                                   (cpu: process CPU seconds over the timed steps)
 *   quit
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mha.h"

/* ---------------------------------------------------------------------------------------------- */
/* allocation counters (linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc) */

static unsigned long n_allocs;

void *__real_malloc(size_t n);
void *__real_calloc(size_t m, size_t n);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n)
{
    n_allocs++;
    return __real_malloc(n);
}
void *__wrap_calloc(size_t m, size_t n)
{
    n_allocs++;
    return __real_calloc(m, n);
}
void *__wrap_realloc(void *p, size_t n)
{
    n_allocs++;
    return __real_realloc(p, n);
}

/* ---------------------------------------------------------------------------------------------- */

enum { MAX_CASES = 8 };

typedef struct {
    char name[32];
    int B, T, C, h;
    double lr;
    double *X, *target, *W0;
    mha_layer *layer;
} bench_case;

static bench_case cases[MAX_CASES];
static int n_cases;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time of the process (all threads), to tell the machine's load from the step's own cost */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void reply_error(const char *msg, const char *detail)
{
    printf("@@ {\"error\": \"%s%s%s\"}\n", msg, detail ? ": " : "", detail ? detail : "");
    fflush(stdout);
}

static double *read_f64(const char *dir, const char *name, const char *what, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%s.f64", dir, name, what);
    FILE *f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    double *a = malloc(n * sizeof *a);
    size_t got = a ? fread(a, sizeof *a, n, f) : 0;
    int extra = fgetc(f) != EOF;
    fclose(f);
    if (got != n || extra) {
        free(a);
        return NULL;
    }
    return a;
}

static bench_case *find(const char *name)
{
    for (int i = 0; i < n_cases; i++) {
        if (strcmp(cases[i].name, name) == 0) {
            return &cases[i];
        }
    }
    return NULL;
}

static void cmd_load(const char *args)
{
    bench_case c;
    char dir[4096];
    memset(&c, 0, sizeof c);
    if (sscanf(args, "%31s %d %d %d %d %lf %4095s", c.name, &c.B, &c.T, &c.C, &c.h, &c.lr, dir) !=
        7) {
        reply_error("load: bad arguments", NULL);
        return;
    }
    if (find(c.name) || n_cases == MAX_CASES) {
        reply_error("load: case already loaded or too many cases", c.name);
        return;
    }
    const size_t n = (size_t)c.B * (size_t)c.T * (size_t)c.C, cc = (size_t)c.C * (size_t)c.C;
    c.X = read_f64(dir, c.name, "X", n);
    c.target = read_f64(dir, c.name, "target", n);
    c.W0 = read_f64(dir, c.name, "W", 4 * cc);
    if (!c.X || !c.target || !c.W0) {
        reply_error("load: cannot read the input files (or wrong size)", c.name);
        return;
    }
    int rc = mha_create(c.C, c.h, &c.layer);
    if (rc != MHA_OK) {
        reply_error("load: mha_create", mha_strerror(rc));
        return;
    }
    cases[n_cases++] = c;
    printf("@@ {\"ok\": true}\n");
    fflush(stdout);
}

static void cmd_run(const char *args)
{
    char name[32];
    double min_time;
    int min_reps;
    if (sscanf(args, "%31s %lf %d", name, &min_time, &min_reps) != 3) {
        reply_error("run: bad arguments", NULL);
        return;
    }
    bench_case *c = find(name);
    if (!c) {
        reply_error("run: unknown case", name);
        return;
    }
    memcpy(mha_params(c->layer), c->W0, mha_num_params(c->layer) * sizeof(double));
    double first, loss;
    int rc = mha_train(c->layer, c->X, c->target, c->B, c->T, 0, c->lr, 1, &first); /* warm-up */
    if (rc != MHA_OK) {
        reply_error("run: mha_train", mha_strerror(rc));
        return;
    }
    /* the timings, kept in a buffer allocated before counting */
    size_t cap = 1024, reps = 0;
    double *times = malloc(cap * sizeof *times);
    if (!times) {
        reply_error("run: out of memory", NULL);
        return;
    }
    double total = 0.0;
    unsigned long allocs = 0;
    const double cpu0 = cpu_now();
    while (total < min_time || reps < (size_t)min_reps) {
        const unsigned long a0 = n_allocs;
        const double t0 = now();
        rc = mha_train(c->layer, c->X, c->target, c->B, c->T, 0, c->lr, 1, &loss);
        const double dt = now() - t0;
        allocs += n_allocs - a0;
        if (rc != MHA_OK) {
            free(times);
            reply_error("run: mha_train", mha_strerror(rc));
            return;
        }
        if (reps == cap) {
            double *t = realloc(times, 2 * cap * sizeof *t);
            if (!t) {
                free(times);
                reply_error("run: out of memory", NULL);
                return;
            }
            times = t;
            cap *= 2;
        }
        times[reps++] = dt;
        total += dt;
    }
    const double cpu = cpu_now() - cpu0;
    printf("@@ {\"first_loss\": %.17g, \"last_loss\": %.17g, \"allocs\": %lu, \"cpu\": %.9g, "
           "\"times\": [",
           first, loss, allocs, cpu);
    for (size_t i = 0; i < reps; i++) {
        printf("%s%.9g", i ? ", " : "", times[i]);
    }
    printf("]}\n");
    fflush(stdout);
    free(times);
}

int main(void)
{
    char line[8192];
    while (fgets(line, sizeof line, stdin)) {
        char cmd[16] = "";
        int used = 0;
        if (sscanf(line, "%15s %n", cmd, &used) < 1) {
            continue;
        }
        if (strcmp(cmd, "quit") == 0) {
            break;
        } else if (strcmp(cmd, "info") == 0) {
            printf("@@ {\"mha_version\": \"%s\"}\n", mha_version());
            fflush(stdout);
        } else if (strcmp(cmd, "load") == 0) {
            cmd_load(line + used);
        } else if (strcmp(cmd, "run") == 0) {
            cmd_run(line + used);
        } else {
            reply_error("unknown command", cmd);
        }
    }
    for (int i = 0; i < n_cases; i++) {
        mha_free(cases[i].layer);
        free(cases[i].X);
        free(cases[i].target);
        free(cases[i].W0);
    }
    return 0;
}
