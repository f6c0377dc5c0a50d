/* The C interface from C (run by tests/c_api.rs).
 *
 *   test_c_api compare TABLES VALUES ROOTS DTZ_ROOTS THREADS
 *       VALUES: one position a line, "W B K Q A N R P TURN WDL DTM DTZ CATEGORY FEN"
 *       (bitboards in hex), as the Rust probe answers. THREADS threads probe every
 *       position at once (each starting at another place), by FEN and by bitboards, WDL,
 *       DTM and DTZ, and compare. ROOTS: "W B K Q A N R P TURN N" then N times
 *       "FROM TO PROMO WDL DTM"; shatranj_tb_probe_root must give exactly these moves in
 *       this order. DTZ_ROOTS: the same with N times "FROM TO PROMO ZEROING CATEGORY
 *       OPTIMAL DTZ", for shatranj_tb_probe_root_dtz.
 *   test_c_api errors TABLES DAMAGED MISSING_DIR
 *       every error path returns its code and a message, and nothing crashes.
 *
 * Exit status 0 if everything agrees, 1 otherwise (with the first mismatches printed). */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shatranj_tb.h"

typedef struct {
    ShatranjTbPosition pos;
    int wdl, dtm, dtz, category;
    char fen[100];
} Expected;

typedef struct {
    ShatranjTbPosition pos;
    size_t n;
    ShatranjTbMove moves[SHATRANJ_TB_MAX_MOVES];
} ExpectedRoot;

typedef struct {
    ShatranjTbPosition pos;
    size_t n;
    ShatranjTbDtzMove moves[SHATRANJ_TB_MAX_MOVES];
} ExpectedDtzRoot;

static const ShatranjTb *tb;
static Expected *values;
static size_t n_values;
static ExpectedRoot *roots;
static size_t n_roots;
static ExpectedDtzRoot *dtz_roots;
static size_t n_dtz_roots;
static int n_threads;

static int read_position(const char *line, ShatranjTbPosition *p, int *used) {
    uint64_t bb[8];
    int turn;
    if (sscanf(line, "%" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64
               " %" SCNx64 " %" SCNx64 " %d%n",
               &bb[0], &bb[1], &bb[2], &bb[3], &bb[4], &bb[5], &bb[6], &bb[7], &turn, used) != 9)
        return 0;
    p->white = bb[0];
    p->black = bb[1];
    p->shahs = bb[2];
    p->ferzes = bb[3];
    p->alfils = bb[4];
    p->knights = bb[5];
    p->rooks = bb[6];
    p->pawns = bb[7];
    p->turn = turn;
    return 1;
}

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)len + 1);
    if (!text || fread(text, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(1);
    }
    text[len] = 0;
    fclose(f);
    return text;
}

static size_t count_lines(const char *text) {
    size_t n = 0;
    for (; *text; text++)
        n += *text == '\n';
    return n;
}

static void load_values(const char *path) {
    char *text = read_file(path);
    values = calloc(count_lines(text), sizeof *values);
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        Expected *e = &values[n_values];
        int used = 0, more = 0;
        if (!read_position(line, &e->pos, &used) ||
            sscanf(line + used, " %d %d %d %d %n", &e->wdl, &e->dtm, &e->dtz, &e->category, &more) != 4) {
            fprintf(stderr, "bad line in %s: %s\n", path, line);
            exit(1);
        }
        snprintf(e->fen, sizeof e->fen, "%s", line + used + more);
        n_values++;
    }
    free(text);
}

static void load_roots(const char *path) {
    char *text = read_file(path);
    roots = calloc(count_lines(text), sizeof *roots);
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        ExpectedRoot *r = &roots[n_roots];
        int used = 0, more = 0;
        if (!read_position(line, &r->pos, &used) || sscanf(line + used, " %zu%n", &r->n, &more) != 1 ||
            r->n > SHATRANJ_TB_MAX_MOVES) {
            fprintf(stderr, "bad line in %s: %s\n", path, line);
            exit(1);
        }
        const char *p = line + used + more;
        for (size_t i = 0; i < r->n; i++) {
            int from, to, promo, wdl, dtm, k = 0;
            if (sscanf(p, " %d %d %d %d %d%n", &from, &to, &promo, &wdl, &dtm, &k) != 5) {
                fprintf(stderr, "bad move list in %s: %s\n", path, line);
                exit(1);
            }
            r->moves[i] = (ShatranjTbMove){(uint8_t)from, (uint8_t)to, (uint8_t)promo, (int8_t)wdl, dtm};
            p += k;
        }
        n_roots++;
    }
    free(text);
}

static void load_dtz_roots(const char *path) {
    char *text = read_file(path);
    dtz_roots = calloc(count_lines(text) + 1, sizeof *dtz_roots);
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        ExpectedDtzRoot *r = &dtz_roots[n_dtz_roots];
        int used = 0, more = 0;
        if (!read_position(line, &r->pos, &used) || sscanf(line + used, " %zu%n", &r->n, &more) != 1 ||
            r->n > SHATRANJ_TB_MAX_MOVES) {
            fprintf(stderr, "bad line in %s: %s\n", path, line);
            exit(1);
        }
        const char *p = line + used + more;
        for (size_t i = 0; i < r->n; i++) {
            int from, to, promo, zeroing, category, optimal, dtz, k = 0;
            if (sscanf(p, " %d %d %d %d %d %d %d%n", &from, &to, &promo, &zeroing, &category, &optimal, &dtz, &k) !=
                7) {
                fprintf(stderr, "bad move list in %s: %s\n", path, line);
                exit(1);
            }
            r->moves[i] = (ShatranjTbDtzMove){(uint8_t)from,    (uint8_t)to,      (uint8_t)promo, (uint8_t)zeroing,
                                              (int8_t)category, (uint8_t)optimal, dtz};
            p += k;
        }
        n_dtz_roots++;
    }
    free(text);
}

/* One thread: every position once, starting at another place than the others. */
static void *compare_thread(void *arg) {
    size_t t = (size_t)arg;
    size_t bad = 0;
    ShatranjTbMove moves[SHATRANJ_TB_MAX_MOVES];
    for (size_t k = 0; k < n_values; k++) {
        const Expected *e = &values[(k + t * n_values / (size_t)n_threads) % n_values];
        int wdl = 99, dtm = 99, wdl2 = 99, dtm2 = 99, wdl3 = 99, dtz = 99, category = 99;
        int rc1 = shatranj_tb_probe_fen(tb, e->fen, &wdl, &dtm);
        int rc2 = shatranj_tb_probe_dtm(tb, &e->pos, &wdl2, &dtm2);
        int rc3 = shatranj_tb_probe_wdl(tb, &e->pos, &wdl3);
        int rc4 = shatranj_tb_probe_dtz(tb, &e->pos, &dtz, &category);
        if (rc1 || rc2 || rc3 || rc4 || wdl != e->wdl || dtm != e->dtm || wdl2 != e->wdl || dtm2 != e->dtm ||
            wdl3 != e->wdl || dtz != e->dtz || category != e->category) {
            if (bad++ < 5)
                fprintf(stderr,
                        "mismatch %s: want wdl %d dtm %d dtz %d category %d; fen: rc %d wdl %d dtm %d; dtm: rc %d "
                        "wdl %d dtm %d; wdl: rc %d wdl %d; dtz: rc %d dtz %d category %d (%s)\n",
                        e->fen, e->wdl, e->dtm, e->dtz, e->category, rc1, wdl, dtm, rc2, wdl2, dtm2, rc3, wdl3, rc4,
                        dtz, category, shatranj_tb_last_error());
        }
    }
    for (size_t k = 0; k < n_roots; k++) {
        const ExpectedRoot *r = &roots[(k + t * n_roots / (size_t)n_threads) % n_roots];
        size_t n = 12345;
        int rc = shatranj_tb_probe_root(tb, &r->pos, moves, SHATRANJ_TB_MAX_MOVES, &n);
        int same = rc == SHATRANJ_TB_OK && n == r->n;
        for (size_t i = 0; same && i < n; i++) {
            const ShatranjTbMove *a = &moves[i], *b = &r->moves[i];
            same = a->from == b->from && a->to == b->to && a->promotion == b->promotion &&
                   a->wdl == b->wdl && a->dtm == b->dtm;
        }
        if (!same && bad++ < 5)
            fprintf(stderr, "root mismatch (rc %d, %zu moves, want %zu): %s\n", rc, n, r->n,
                    shatranj_tb_last_error());
    }
    ShatranjTbDtzMove dtz_moves[SHATRANJ_TB_MAX_MOVES];
    for (size_t k = 0; k < n_dtz_roots; k++) {
        const ExpectedDtzRoot *r = &dtz_roots[(k + t * n_dtz_roots / (size_t)n_threads) % n_dtz_roots];
        size_t n = 12345;
        int rc = shatranj_tb_probe_root_dtz(tb, &r->pos, dtz_moves, SHATRANJ_TB_MAX_MOVES, &n);
        int same = rc == SHATRANJ_TB_OK && n == r->n;
        for (size_t i = 0; same && i < n; i++) {
            const ShatranjTbDtzMove *a = &dtz_moves[i], *b = &r->moves[i];
            same = a->from == b->from && a->to == b->to && a->promotion == b->promotion && a->zeroing == b->zeroing &&
                   a->category == b->category && a->optimal == b->optimal && a->dtz == b->dtz;
        }
        if (!same && bad++ < 5)
            fprintf(stderr, "DTZ root mismatch (rc %d, %zu moves, want %zu): %s\n", rc, n, r->n,
                    shatranj_tb_last_error());
    }
    return (void *)bad;
}

static int compare(const char *dir, const char *values_path, const char *roots_path, const char *dtz_roots_path,
                   int threads) {
    ShatranjTb *handle = shatranj_tb_open(dir, NULL);
    if (!handle) {
        fprintf(stderr, "open %s: %s\n", dir, shatranj_tb_last_error());
        return 1;
    }
    tb = handle;
    load_values(values_path);
    load_roots(roots_path);
    load_dtz_roots(dtz_roots_path);
    n_threads = threads;
    pthread_t th[64];
    size_t bad = 0;
    for (int t = 0; t < threads; t++)
        if (pthread_create(&th[t], NULL, compare_thread, (void *)(size_t)t)) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    for (int t = 0; t < threads; t++) {
        void *b;
        pthread_join(th[t], &b);
        bad += (size_t)b;
    }
    shatranj_tb_close(handle);
    printf("c_api: %zu positions, %zu root move lists and %zu DTZ root move lists on %d threads at once: %zu "
           "mismatches\n",
           n_values, n_roots, n_dtz_roots, threads, bad);
    free(values);
    free(roots);
    free(dtz_roots);
    return bad != 0;
}

/* ---- error paths ---- */

static int failures;

static void expect_code(const char *what, int got, int want, const char *needle) {
    const char *msg = shatranj_tb_last_error();
    if (got != want || (needle && !strstr(msg, needle))) {
        fprintf(stderr, "FAIL %s: code %d (want %d), message \"%s\" (want \"%s\")\n", what, got, want, msg,
                needle ? needle : "");
        failures++;
    }
}

static void *fresh_thread(void *arg) {
    (void)arg;
    /* the last error is per thread: a new thread has none */
    return (void *)(size_t)(strlen(shatranj_tb_last_error()) != 0);
}

/* The bitboards of a position of at most a few men, from a FEN board field. */
static ShatranjTbPosition from_board_field(const char *board, int turn) {
    ShatranjTbPosition p = {0};
    int rank = 7, file = 0;
    for (const char *c = board; *c && *c != ' '; c++) {
        if (*c == '/') {
            rank--;
            file = 0;
        } else if (*c >= '1' && *c <= '8') {
            file += *c - '0';
        } else {
            uint64_t bit = (uint64_t)1 << (rank * 8 + file++);
            if (*c >= 'a')
                p.black |= bit;
            else
                p.white |= bit;
            switch (*c | 0x20) {
            case 'k': p.shahs |= bit; break;
            case 'q': p.ferzes |= bit; break;
            case 'b': p.alfils |= bit; break;
            case 'n': p.knights |= bit; break;
            case 'r': p.rooks |= bit; break;
            case 'p': p.pawns |= bit; break;
            }
        }
    }
    p.turn = turn;
    return p;
}

static int errors(const char *dir, const char *damaged_dir, const char *missing_dir) {
    int wdl = 0, dtm = 0;
    size_t n = 0;
    ShatranjTbMove moves[SHATRANJ_TB_MAX_MOVES];

    if (strlen(shatranj_tb_last_error()) != 0) {
        fprintf(stderr, "FAIL: an error message before any error\n");
        failures++;
    }
    /* opening */
    expect_code("open NULL dir", shatranj_tb_open(NULL, NULL) == NULL ? SHATRANJ_TB_ERR_NULL_ARGUMENT : 0,
                SHATRANJ_TB_ERR_NULL_ARGUMENT, "dir");
    expect_code("open missing dir", shatranj_tb_open(missing_dir, NULL) == NULL ? SHATRANJ_TB_ERR_IO : 0,
                SHATRANJ_TB_ERR_IO, "does not exist");
    expect_code("open bad rules", shatranj_tb_open(dir, "bare-king=never") == NULL ? SHATRANJ_TB_ERR_BAD_ARGUMENT : 0,
                SHATRANJ_TB_ERR_BAD_ARGUMENT, "bare-king");
    ShatranjTb *handle = shatranj_tb_open(dir, "bare-king=counter,stalemate=loss");
    if (!handle) {
        fprintf(stderr, "open %s: %s\n", dir, shatranj_tb_last_error());
        return 1;
    }
    if (shatranj_tb_largest(handle) != 4 || shatranj_tb_largest(NULL) != 0) {
        fprintf(stderr, "FAIL largest: %u\n", shatranj_tb_largest(handle));
        failures++;
    }
    /* another rule set has no tables in this directory */
    ShatranjTb *other = shatranj_tb_open(dir, "bare-king=immediate,stalemate=draw");
    expect_code("other rules", shatranj_tb_probe_fen(other, "8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1", &wdl, &dtm),
                SHATRANJ_TB_ERR_MISSING_TABLE, "--rules bare-king=immediate,stalemate=draw");
    /* ... but positions the rules decide need none */
    expect_code("bare side, other rules", shatranj_tb_probe_fen(other, "8/8/8/4k3/8/8/7R/K7 w - - 0 1", &wdl, &dtm),
                SHATRANJ_TB_OK, NULL);
    if (wdl != SHATRANJ_TB_WIN || dtm != 0) {
        fprintf(stderr, "FAIL bare side: wdl %d dtm %d\n", wdl, dtm);
        failures++;
    }
    shatranj_tb_close(other);

    /* a cache bound: the blocks held stay within it, and with 0 none is kept */
    {
        const char *fens[] = {"8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1", "8/8/8/3k4/8/1KQ5/8/q7 b - - 0 1",
                              "k7/8/8/8/8/8/1Q6/KQ6 w - - 0 1", "8/2k5/8/8/8/8/r7/K6R b - - 0 1"};
        size_t bounds[] = {300000, 0};
        for (int b = 0; b < 2; b++) {
            ShatranjTb *small = shatranj_tb_open_opts(dir, NULL, bounds[b]);
            size_t capacity = 1, resident = 1, peak = 1;
            for (int i = 0; i < 4; i++) {
                int w0, d0, w1, d1;
                int rc0 = shatranj_tb_probe_fen(handle, fens[i], &w0, &d0);
                int rc1 = shatranj_tb_probe_fen(small, fens[i], &w1, &d1);
                if (rc0 != rc1 || w0 != w1 || d0 != d1) {
                    fprintf(stderr, "FAIL cache %zu: %s: %d %d %d vs %d %d %d\n", bounds[b], fens[i], rc0, w0, d0,
                            rc1, w1, d1);
                    failures++;
                }
                expect_code("cache stats", shatranj_tb_cache_stats(small, &capacity, &resident, &peak),
                            SHATRANJ_TB_OK, NULL);
                if (capacity != bounds[b] || resident > capacity || peak > capacity) {
                    fprintf(stderr, "FAIL cache stats: capacity %zu resident %zu peak %zu\n", capacity, resident,
                            peak);
                    failures++;
                }
            }
            if ((bounds[b] > 0) != (peak > 0)) {
                fprintf(stderr, "FAIL cache of %zu bytes: peak %zu\n", bounds[b], peak);
                failures++;
            }
            shatranj_tb_close(small);
        }
        expect_code("cache stats NULL", shatranj_tb_cache_stats(NULL, NULL, NULL, NULL),
                    SHATRANJ_TB_ERR_NULL_ARGUMENT, "tb");
    }

    /* FEN */
    expect_code("bad FEN", shatranj_tb_probe_fen(handle, "not a fen", &wdl, &dtm), SHATRANJ_TB_ERR_BAD_FEN,
                "invalid FEN");
    expect_code("empty FEN", shatranj_tb_probe_fen(handle, "", &wdl, &dtm), SHATRANJ_TB_ERR_BAD_FEN, "empty");
    expect_code("bad UTF-8", shatranj_tb_probe_fen(handle, "8/8/\xff/8 w", &wdl, &dtm), SHATRANJ_TB_ERR_BAD_FEN,
                "UTF-8");
    expect_code("adjacent shahs", shatranj_tb_probe_fen(handle, "8/8/8/3Kk3/8/8/8/8 w - - 0 1", &wdl, &dtm),
                SHATRANJ_TB_ERR_ILLEGAL_POSITION, "adjacent");
    expect_code("5 men, 4-man tables", shatranj_tb_probe_fen(handle, "8/8/8/3k4/8/1KQ5/8/q6R w - - 0 1", &wdl, &dtm),
                SHATRANJ_TB_ERR_MISSING_TABLE, "generate");
    expect_code("7 men", shatranj_tb_probe_fen(handle, "8/8/8/3k4/8/1KQ5/8/qrR4R w - - 0 1", &wdl, &dtm),
                SHATRANJ_TB_ERR_MISSING_TABLE, "at most");
    expect_code("NULL handle", shatranj_tb_probe_fen(NULL, "8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1", &wdl, &dtm),
                SHATRANJ_TB_ERR_NULL_ARGUMENT, "tb");
    expect_code("NULL fen", shatranj_tb_probe_fen(handle, NULL, &wdl, &dtm), SHATRANJ_TB_ERR_NULL_ARGUMENT, "fen");
    expect_code("NULL wdl", shatranj_tb_probe_fen(handle, "8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1", NULL, &dtm),
                SHATRANJ_TB_ERR_NULL_ARGUMENT, "wdl");
    expect_code("NULL dtm", shatranj_tb_probe_fen(handle, "8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1", &wdl, NULL),
                SHATRANJ_TB_ERR_NULL_ARGUMENT, "dtm");
    /* al-Suli's Diamond, by FEN and by bitboards */
    expect_code("diamond", shatranj_tb_probe_fen(handle, "8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1", &wdl, &dtm),
                SHATRANJ_TB_OK, NULL);
    ShatranjTbPosition diamond = from_board_field("8/8/8/3k4/8/1KQ5/8/q7", SHATRANJ_TB_WHITE);
    int wdl2 = 0, dtm2 = 0, wdl3 = 0;
    expect_code("diamond dtm", shatranj_tb_probe_dtm(handle, &diamond, &wdl2, &dtm2), SHATRANJ_TB_OK, NULL);
    expect_code("diamond wdl", shatranj_tb_probe_wdl(handle, &diamond, &wdl3), SHATRANJ_TB_OK, NULL);
    if (wdl != SHATRANJ_TB_WIN || dtm != 39 || wdl2 != SHATRANJ_TB_WIN || dtm2 != 39 || wdl3 != SHATRANJ_TB_WIN) {
        fprintf(stderr, "FAIL diamond: %d %d / %d %d / %d\n", wdl, dtm, wdl2, dtm2, wdl3);
        failures++;
    }
    /* root: too small an array says how many are needed */
    expect_code("root, no room", shatranj_tb_probe_root(handle, &diamond, NULL, 0, &n),
                SHATRANJ_TB_ERR_BUFFER_TOO_SMALL, "do not fit");
    size_t needed = n;
    expect_code("root, 2 entries", shatranj_tb_probe_root(handle, &diamond, moves, 2, &n),
                SHATRANJ_TB_ERR_BUFFER_TOO_SMALL, "do not fit");
    expect_code("root", shatranj_tb_probe_root(handle, &diamond, moves, needed, &n), SHATRANJ_TB_OK, NULL);
    /* b3b4 (17 -> 25) keeps the win in 39 */
    if (n != needed || needed != 9 || moves[0].wdl != SHATRANJ_TB_WIN || moves[0].dtm != 39) {
        fprintf(stderr, "FAIL root: %zu moves (needed %zu), first %d-%d wdl %d dtm %d\n", n, needed, moves[0].from,
                moves[0].to, moves[0].wdl, moves[0].dtm);
        failures++;
    }
    expect_code("root NULL moves", shatranj_tb_probe_root(handle, &diamond, NULL, 5, &n),
                SHATRANJ_TB_ERR_NULL_ARGUMENT, "moves");
    expect_code("root NULL count", shatranj_tb_probe_root(handle, &diamond, moves, 5, NULL),
                SHATRANJ_TB_ERR_NULL_ARGUMENT, "count");
    /* a finished game: bare shah to move, cannot capture: no moves */
    ShatranjTbPosition bare = from_board_field("8/8/8/4k3/8/8/7R/K7", SHATRANJ_TB_BLACK);
    n = 99;
    expect_code("root of a finished game", shatranj_tb_probe_root(handle, &bare, moves, SHATRANJ_TB_MAX_MOVES, &n),
                SHATRANJ_TB_OK, NULL);
    if (n != 0) {
        fprintf(stderr, "FAIL finished game has %zu moves\n", n);
        failures++;
    }

    /* DTZ: the diamond is won within its DTM; the DTZ-optimal moves come first and keep the
       position's DTZ, the others do not */
    {
        ShatranjTbDtzMove dm[SHATRANJ_TB_MAX_MOVES];
        int dz = 99, cat = 99;
        expect_code("diamond dtz", shatranj_tb_probe_dtz(handle, &diamond, &dz, &cat), SHATRANJ_TB_OK, NULL);
        if (dz <= 0 || dz > 39 || cat != SHATRANJ_TB_CATEGORY_WIN) {
            fprintf(stderr, "FAIL diamond dtz %d category %d\n", dz, cat);
            failures++;
        }
        expect_code("root dtz, no room", shatranj_tb_probe_root_dtz(handle, &diamond, NULL, 0, &n),
                    SHATRANJ_TB_ERR_BUFFER_TOO_SMALL, "do not fit");
        size_t dtz_needed = n;
        expect_code("root dtz, 2 entries", shatranj_tb_probe_root_dtz(handle, &diamond, dm, 2, &n),
                    SHATRANJ_TB_ERR_BUFFER_TOO_SMALL, "do not fit");
        expect_code("root dtz", shatranj_tb_probe_root_dtz(handle, &diamond, dm, SHATRANJ_TB_MAX_MOVES, &n),
                    SHATRANJ_TB_OK, NULL);
        if (n != 9 || dtz_needed != 9 || !dm[0].optimal || dm[0].dtz != dz || dm[0].category != cat) {
            fprintf(stderr, "FAIL root dtz: %zu moves (needed %zu), first %d-%d dtz %d category %d optimal %d\n", n,
                    dtz_needed, dm[0].from, dm[0].to, dm[0].dtz, dm[0].category, dm[0].optimal);
            failures++;
        }
        for (size_t i = 0; i < n && i < 9; i++) {
            int keeps = dm[i].dtz == dz && dm[i].category == cat;
            /* the same moves as shatranj_tb_probe_root, in some order */
            int found = 0;
            for (size_t j = 0; j < 9; j++)
                found |= moves[j].from == dm[i].from && moves[j].to == dm[i].to;
            if (dm[i].optimal != keeps || !found || (i > 0 && dm[i].optimal && !dm[i - 1].optimal) ||
                (dm[i].category == SHATRANJ_TB_CATEGORY_WIN) != (dm[i].dtz > 0) || dm[i].zeroing > 1) {
                fprintf(stderr, "FAIL root dtz move %zu: %d-%d dtz %d category %d optimal %d zeroing %d\n", i,
                        dm[i].from, dm[i].to, dm[i].dtz, dm[i].category, dm[i].optimal, dm[i].zeroing);
                failures++;
            }
        }
        expect_code("dtz NULL dtz", shatranj_tb_probe_dtz(handle, &diamond, NULL, &cat), SHATRANJ_TB_ERR_NULL_ARGUMENT,
                    "dtz");
        expect_code("dtz NULL category", shatranj_tb_probe_dtz(handle, &diamond, &dz, NULL),
                    SHATRANJ_TB_ERR_NULL_ARGUMENT, "category");
        expect_code("dtz NULL handle", shatranj_tb_probe_dtz(NULL, &diamond, &dz, &cat), SHATRANJ_TB_ERR_NULL_ARGUMENT,
                    "tb");
        expect_code("dtz NULL position", shatranj_tb_probe_dtz(handle, NULL, &dz, &cat),
                    SHATRANJ_TB_ERR_NULL_ARGUMENT, "pos");
        expect_code("root dtz NULL moves", shatranj_tb_probe_root_dtz(handle, &diamond, NULL, 5, &n),
                    SHATRANJ_TB_ERR_NULL_ARGUMENT, "moves");
        expect_code("root dtz NULL count", shatranj_tb_probe_root_dtz(handle, &diamond, dm, 5, NULL),
                    SHATRANJ_TB_ERR_NULL_ARGUMENT, "count");
        ShatranjTbPosition p2 = diamond;
        p2.turn = 7;
        expect_code("dtz turn 7", shatranj_tb_probe_dtz(handle, &p2, &dz, &cat), SHATRANJ_TB_ERR_BAD_ARGUMENT, "turn");
        /* finished games: 0 plies, the category says who has won; no moves */
        expect_code("dtz of a lost game", shatranj_tb_probe_dtz(handle, &bare, &dz, &cat), SHATRANJ_TB_OK, NULL);
        if (dz != 0 || cat != SHATRANJ_TB_CATEGORY_LOSS) {
            fprintf(stderr, "FAIL lost game: dtz %d category %d\n", dz, cat);
            failures++;
        }
        ShatranjTbPosition won = from_board_field("8/8/8/4k3/8/8/7R/K7", SHATRANJ_TB_WHITE);
        expect_code("dtz of a won game", shatranj_tb_probe_dtz(handle, &won, &dz, &cat), SHATRANJ_TB_OK, NULL);
        if (dz != 0 || cat != SHATRANJ_TB_CATEGORY_WIN) {
            fprintf(stderr, "FAIL won game: dtz %d category %d\n", dz, cat);
            failures++;
        }
        n = 99;
        expect_code("root dtz of a finished game",
                    shatranj_tb_probe_root_dtz(handle, &bare, dm, SHATRANJ_TB_MAX_MOVES, &n), SHATRANJ_TB_OK, NULL);
        if (n != 0) {
            fprintf(stderr, "FAIL finished game has %zu DTZ moves\n", n);
            failures++;
        }
        /* shah against shah: a draw */
        ShatranjTbPosition kk = from_board_field("8/8/8/4k3/8/8/8/K7", SHATRANJ_TB_WHITE);
        expect_code("dtz of KvK", shatranj_tb_probe_dtz(handle, &kk, &dz, &cat), SHATRANJ_TB_OK, NULL);
        if (dz != 0 || cat != SHATRANJ_TB_CATEGORY_DRAW) {
            fprintf(stderr, "FAIL KvK: dtz %d category %d\n", dz, cat);
            failures++;
        }
        /* the 70-move rule: these tables have no DTZ files for it (WDL still answers) */
        ShatranjTb *seventy = shatranj_tb_open(dir, "move-rule=70");
        if (!seventy) {
            fprintf(stderr, "FAIL open move-rule=70: %s\n", shatranj_tb_last_error());
            failures++;
        } else {
            expect_code("move-rule=70 wdl", shatranj_tb_probe_wdl(seventy, &diamond, &wdl), SHATRANJ_TB_OK, NULL);
            expect_code("move-rule=70 dtz", shatranj_tb_probe_dtz(seventy, &diamond, &dz, &cat),
                        SHATRANJ_TB_ERR_MISSING_TABLE, "move-rule=70");
            expect_code("move-rule=70 root dtz",
                        shatranj_tb_probe_root_dtz(seventy, &diamond, dm, SHATRANJ_TB_MAX_MOVES, &n),
                        SHATRANJ_TB_ERR_MISSING_TABLE, "move-rule=70");
            shatranj_tb_close(seventy);
        }
    }
    /* bitboards that do not make a position */
    ShatranjTbPosition p = diamond;
    p.turn = 2;
    expect_code("turn 2", shatranj_tb_probe_wdl(handle, &p, &wdl), SHATRANJ_TB_ERR_BAD_ARGUMENT, "turn");
    p = diamond;
    p.rooks = p.ferzes; /* a square with two roles */
    expect_code("overlap", shatranj_tb_probe_wdl(handle, &p, &wdl), SHATRANJ_TB_ERR_ILLEGAL_POSITION, "overlap");
    p = diamond;
    p.white |= (uint64_t)1 << 63; /* a man of no role */
    expect_code("no role", shatranj_tb_probe_dtm(handle, &p, &wdl, &dtm), SHATRANJ_TB_ERR_ILLEGAL_POSITION,
                "illegal");
    p = diamond;
    p.black = 0; /* no black shah */
    p.white = p.shahs | p.ferzes;
    p.shahs &= p.white;
    p.ferzes &= p.white;
    expect_code("no black shah", shatranj_tb_probe_root(handle, &p, moves, 10, &n),
                SHATRANJ_TB_ERR_ILLEGAL_POSITION, "shah");
    expect_code("NULL position", shatranj_tb_probe_wdl(handle, NULL, &wdl), SHATRANJ_TB_ERR_NULL_ARGUMENT, "pos");
    expect_code("NULL wdl out", shatranj_tb_probe_wdl(handle, &diamond, NULL), SHATRANJ_TB_ERR_NULL_ARGUMENT, "wdl");
    expect_code("NULL handle dtm", shatranj_tb_probe_dtm(NULL, &diamond, &wdl, &dtm), SHATRANJ_TB_ERR_NULL_ARGUMENT,
                "tb");
    expect_code("NULL dtm out", shatranj_tb_probe_dtm(handle, &diamond, &wdl, NULL), SHATRANJ_TB_ERR_NULL_ARGUMENT,
                "dtm");
    /* the last error is per thread */
    pthread_t th;
    void *had_error = NULL;
    pthread_create(&th, NULL, fresh_thread, NULL);
    pthread_join(th, &had_error);
    if (had_error) {
        fprintf(stderr, "FAIL: a new thread sees another thread's error\n");
        failures++;
    }
    shatranj_tb_close(handle);
    shatranj_tb_close(NULL);

    /* damaged files: an error naming the file, by FEN (DTM file) and by bitboards (WDL) */
    ShatranjTb *damaged = shatranj_tb_open(damaged_dir, NULL);
    if (!damaged) {
        fprintf(stderr, "open %s: %s\n", damaged_dir, shatranj_tb_last_error());
        return 1;
    }
    const char *krkq = "8/8/8/3k4/1q6/8/8/R2K4 w - - 0 1";
    ShatranjTbPosition krkq_pos = from_board_field("8/8/8/3k4/1q6/8/8/R2K4", SHATRANJ_TB_WHITE);
    expect_code("damaged DTM file", shatranj_tb_probe_fen(damaged, krkq, &wdl, &dtm), SHATRANJ_TB_ERR_DAMAGED_TABLE,
                "KRvKQ.counter-loss.tbd");
    expect_code("damaged WDL file", shatranj_tb_probe_wdl(damaged, &krkq_pos, &wdl), SHATRANJ_TB_ERR_DAMAGED_TABLE,
                "KRvKQ.counter-loss.tbw");
    expect_code("damaged, root", shatranj_tb_probe_root(damaged, &krkq_pos, moves, SHATRANJ_TB_MAX_MOVES, &n),
                SHATRANJ_TB_ERR_DAMAGED_TABLE, "damaged");
    /* asking again gives the same error, not a crash or a stale answer */
    expect_code("damaged again", shatranj_tb_probe_fen(damaged, krkq, &wdl, &dtm), SHATRANJ_TB_ERR_DAMAGED_TABLE,
                "damaged");
    {
        int dz = 0, cat = 0;
        ShatranjTbDtzMove dm[SHATRANJ_TB_MAX_MOVES];
        expect_code("damaged DTZ file", shatranj_tb_probe_dtz(damaged, &krkq_pos, &dz, &cat),
                    SHATRANJ_TB_ERR_DAMAGED_TABLE, "KRvKQ.counter-loss.tb");
        expect_code("damaged, root dtz", shatranj_tb_probe_root_dtz(damaged, &krkq_pos, dm, SHATRANJ_TB_MAX_MOVES, &n),
                    SHATRANJ_TB_ERR_DAMAGED_TABLE, "damaged");
    }
    shatranj_tb_close(damaged);

    if (failures) {
        fprintf(stderr, "%d error-path checks failed\n", failures);
        return 1;
    }
    printf("c_api error paths: all as documented\n");
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 7 && strcmp(argv[1], "compare") == 0) {
        int threads = atoi(argv[6]);
        if (threads < 1 || threads > 64)
            return 2;
        return compare(argv[2], argv[3], argv[4], argv[5], threads);
    }
    if (argc == 5 && strcmp(argv[1], "errors") == 0)
        return errors(argv[2], argv[3], argv[4]);
    fprintf(stderr, "usage: %s compare TABLES VALUES ROOTS DTZ_ROOTS THREADS | errors TABLES DAMAGED MISSING_DIR\n", argv[0]);
    return 2;
}
