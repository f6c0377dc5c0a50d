/* Probe a shatranj position from C: its value, then every legal move with its value.
 *
 *   cargo build --release
 *   cc -O2 examples/c/probe.c -Iinclude -Ltarget/release -lshatranj_tb \
 *      -Wl,-rpath,"$PWD/target/release" -o probe
 *   ./probe tables "8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1"
 *
 * The FEN goes to shatranj_tb_probe_fen; the same position as bitboards (what an engine
 * has at hand) goes to shatranj_tb_probe_root, which lists the moves best first. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "shatranj_tb.h"

/* The bitboards of a FEN (bit n = square n, a1 = 0, h8 = 63). The FEN was already
 * accepted by shatranj_tb_probe_fen, so it is well formed. */
static ShatranjTbPosition bitboards_of(const char *fen) {
    ShatranjTbPosition p;
    memset(&p, 0, sizeof p);
    int rank = 7, file = 0;
    const char *c = fen;
    for (; *c && *c != ' '; c++) {
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
            switch (*c | 0x20) { /* lower case */
            case 'k': p.shahs |= bit; break;
            case 'q': case 'f': p.ferzes |= bit; break;
            case 'b': case 'a': case 'e': p.alfils |= bit; break;
            case 'n': p.knights |= bit; break;
            case 'r': p.rooks |= bit; break;
            case 'p': p.pawns |= bit; break;
            }
        }
    }
    p.turn = c[0] == ' ' && c[1] == 'b' ? SHATRANJ_TB_BLACK : SHATRANJ_TB_WHITE;
    return p;
}

static const char *in_words(int wdl) {
    return wdl == SHATRANJ_TB_WIN ? "win" : wdl == SHATRANJ_TB_LOSS ? "loss" : "draw";
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s TABLES_DIR FEN\n", argv[0]);
        return 1;
    }
    ShatranjTb *tb = shatranj_tb_open(argv[1], NULL); /* NULL: the default rules */
    if (!tb) {
        fprintf(stderr, "error: %s\n", shatranj_tb_last_error());
        return 1;
    }
    int wdl, dtm;
    int rc = shatranj_tb_probe_fen(tb, argv[2], &wdl, &dtm);
    if (rc != SHATRANJ_TB_OK) {
        fprintf(stderr, "error %d: %s\n", rc, shatranj_tb_last_error());
        shatranj_tb_close(tb);
        return rc == SHATRANJ_TB_ERR_DAMAGED_TABLE || rc == SHATRANJ_TB_ERR_INTERNAL ? 2 : 1;
    }
    if (wdl == SHATRANJ_TB_DRAW)
        printf("side to move: draw\n");
    else
        printf("side to move: %s in %d plies\n", in_words(wdl), dtm);

    ShatranjTbPosition pos = bitboards_of(argv[2]);
    ShatranjTbMove moves[SHATRANJ_TB_MAX_MOVES];
    size_t n = 0;
    rc = shatranj_tb_probe_root(tb, &pos, moves, SHATRANJ_TB_MAX_MOVES, &n);
    if (rc != SHATRANJ_TB_OK) {
        fprintf(stderr, "error %d: %s\n", rc, shatranj_tb_last_error());
        shatranj_tb_close(tb);
        return 2;
    }
    for (size_t i = 0; i < n; i++) {
        const ShatranjTbMove *m = &moves[i];
        printf("  %c%c%c%c%s  %s", 'a' + m->from % 8, '1' + m->from / 8, 'a' + m->to % 8, '1' + m->to / 8,
               m->promotion ? "q" : " ", in_words(m->wdl));
        if (m->wdl != SHATRANJ_TB_DRAW)
            printf(" in %d plies", m->dtm);
        printf("\n");
    }
    shatranj_tb_close(tb);
    return 0;
}
