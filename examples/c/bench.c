/* Probes per second through the C interface: random legal positions of the given
 * materials, warm (every position probed once before timing), on 1 and on 2 threads.
 *
 *   cargo build --release
 *   cc -O2 -pthread examples/c/bench.c -Iinclude -Ltarget/release -lshatranj_tb \
 *      -Wl,-rpath,"$PWD/target/release" -o bench
 *   ./bench tables KRvKQ,KQvKR,KNvKB          # 4-man tables
 *   ./bench tables KBBvKN                     # a 5-man table
 *   ./bench --metric=dtz tables KRvKQ         # shatranj_tb_probe_dtz
 *
 * --metric=wdl|dtm|dtz (first, default wdl) picks shatranj_tb_probe_wdl, _dtm or _dtz.
 * Options after the materials: POSITIONS (default 1000000) and SECONDS per run
 * (default 2). Positions are drawn by dropping the men on random squares and keeping
 * those the library accepts (the others are illegal: adjacent shahs, a check on the side
 * not to move, pawns on the back ranks). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shatranj_tb.h"

static const ShatranjTb *tb;
enum Metric { WDL, DTM, DTZ };
static enum Metric metric = WDL;
static const char *const metric_names[] = {"shatranj_tb_probe_wdl", "shatranj_tb_probe_dtm",
                                           "shatranj_tb_probe_dtz"};

/* One probe of the chosen metric: *value is the WDL code, the signed DTM or the signed
 * DTZ; returns the library's code. */
static int probe(const ShatranjTbPosition *p, int *value) {
    int other;
    switch (metric) {
    case DTM: return shatranj_tb_probe_dtm(tb, p, value, &other);
    case DTZ: return shatranj_tb_probe_dtz(tb, p, value, &other);
    default: return shatranj_tb_probe_wdl(tb, p, value);
    }
}
static ShatranjTbPosition *positions;
static size_t n_positions;
static double seconds = 2.0;

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t next_random(void) { /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1du;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Drops the men of `material` ("KRvKQ": White's men, 'v', Black's) on random squares. */
static ShatranjTbPosition random_position(const char *material) {
    ShatranjTbPosition p;
    memset(&p, 0, sizeof p);
    int black = 0;
    for (const char *c = material; *c && *c != ','; c++) {
        if (*c == 'v') {
            black = 1;
            continue;
        }
        uint64_t bit;
        do
            bit = (uint64_t)1 << (next_random() % 64);
        while ((p.white | p.black) & bit);
        if (black)
            p.black |= bit;
        else
            p.white |= bit;
        switch (*c) {
        case 'K': p.shahs |= bit; break;
        case 'Q': p.ferzes |= bit; break;
        case 'B': p.alfils |= bit; break;
        case 'N': p.knights |= bit; break;
        case 'R': p.rooks |= bit; break;
        case 'P': p.pawns |= bit; break;
        default: fprintf(stderr, "bad material letter %c\n", *c); exit(1);
        }
    }
    p.turn = (int)(next_random() & 1);
    return p;
}

typedef struct {
    size_t start;
    uint64_t probes;
    long wins;
} Job;

static void *run(void *arg) {
    Job *job = arg;
    double end = now() + seconds;
    size_t i = job->start;
    while (now() < end) {
        for (int k = 0; k < 4096; k++) { /* the clock is read once every 4096 probes */
            int value;
            if (probe(&positions[i], &value) != SHATRANJ_TB_OK) {
                fprintf(stderr, "probe failed: %s\n", shatranj_tb_last_error());
                exit(1);
            }
            job->wins += value > 0;
            if (++i == n_positions)
                i = 0;
        }
        job->probes += 4096;
    }
    return NULL;
}

static double measure(int threads) {
    pthread_t th[2];
    Job jobs[2];
    double start = now();
    for (int t = 0; t < threads; t++) {
        jobs[t] = (Job){(size_t)t * n_positions / 2, 0, 0};
        pthread_create(&th[t], NULL, run, &jobs[t]);
    }
    uint64_t probes = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(th[t], NULL);
        probes += jobs[t].probes;
    }
    return (double)probes / (now() - start);
}

int main(int argc, char **argv) {
    if (argc > 1 && strncmp(argv[1], "--metric=", 9) == 0) {
        const char *m = argv[1] + 9;
        if (strcmp(m, "wdl") == 0)
            metric = WDL;
        else if (strcmp(m, "dtm") == 0)
            metric = DTM;
        else if (strcmp(m, "dtz") == 0)
            metric = DTZ;
        else {
            fprintf(stderr, "unknown metric '%s' (wdl, dtm or dtz)\n", m);
            return 1;
        }
        argv[1] = argv[0];
        argv++;
        argc--;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: %s [--metric=wdl|dtm|dtz] TABLES_DIR MATERIAL[,MATERIAL..] [POSITIONS] [SECONDS]\n",
                argv[0]);
        return 1;
    }
    size_t wanted = argc > 3 ? strtoul(argv[3], NULL, 10) : 1000000;
    if (argc > 4)
        seconds = atof(argv[4]);
    ShatranjTb *handle = shatranj_tb_open(argv[1], NULL);
    if (!handle) {
        fprintf(stderr, "error: %s\n", shatranj_tb_last_error());
        return 1;
    }
    tb = handle;
    const char *materials[64];
    int n_materials = 0;
    for (const char *m = argv[2]; m && n_materials < 64; m = strchr(m, ',') ? strchr(m, ',') + 1 : NULL)
        materials[n_materials++] = m;
    positions = malloc(wanted * sizeof *positions);
    while (n_positions < wanted) {
        ShatranjTbPosition p = random_position(materials[n_positions % (size_t)n_materials]);
        int value;
        int rc = probe(&p, &value); /* also warms the caches */
        if (rc == SHATRANJ_TB_OK)
            positions[n_positions++] = p;
        else if (rc != SHATRANJ_TB_ERR_ILLEGAL_POSITION) {
            fprintf(stderr, "error %d: %s\n", rc, shatranj_tb_last_error());
            return 1;
        }
    }
    printf("%zu random positions of %s, warm\n", n_positions, argv[2]);
    for (int threads = 1; threads <= 2; threads++)
        printf("%s, %d thread%s: %.2f M probes/s\n", metric_names[metric], threads, threads > 1 ? "s" : "",
               measure(threads) / 1e6);
    shatranj_tb_close(handle);
    free(positions);
    return 0;
}
