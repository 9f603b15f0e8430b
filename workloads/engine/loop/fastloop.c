/* The micro suite's event loop in C: draw the values, run the event's prepared statements,
 * time it, count it into the shared counters, until the stop flag is set; what sysbench's
 * event loop does, at its client cost. A statement that fails returns to Python, which says
 * why and goes on (or not) as the Python loop does.
 *
 * Built on the host by fastloop.py with `cc -O2 -shared -fPIC`. The client library's
 * functions arrive as pointers from the library the connection was opened with, so no
 * header is needed and the loop calls exactly what the Python client would. The struct
 * layouts mirror fastloop.py's ctypes structures. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FASTLOOP_ABI 2

enum { P_ID, P_LO_PLUS, P_C, P_PAD, P_FIXED, P_SAVED };   /* program.py's */
enum { F_RESULTS = 1, F_COUNT = 2, F_SAVE = 4 };
enum { ENG_PG, ENG_MYSQL };
enum { D_UNIFORM, D_SPECIAL, D_ZIPF };
enum { MAX_STEPS = 32 };
enum { NO_DRAW = -2 };                /* a step on no table (BEGIN, COMMIT) */

typedef struct { int32_t kind, arg; int64_t fixed; } vparam;
/* one table's statement: PostgreSQL's statement name, or MySQL's MYSQL_STMT* with the
 * address of each parameter's bound buffer (and length, for strings) */
typedef struct { void *h; void **buf; unsigned long **len; } vstmt;
typedef struct {
    int32_t nparams, repeat, table_from, count_slot, flags, unused;
    vparam *params;
    vstmt *stmts;                      /* one per table */
} vstep;

typedef void *(*pq_exec_prepared_f)(void *, const char *, int, const char *const *,
                                    const int *, const int *, int);
typedef int (*pq_status_f)(const void *);
typedef void (*pq_clear_f)(void *);
typedef char *(*pq_cmd_tuples_f)(void *);
typedef int (*pq_ntuples_f)(const void *);
typedef int (*my_execute_f)(void *);
typedef int (*my_store_f)(void *);
typedef unsigned long long (*my_rows_f)(void *);
typedef char (*my_free_f)(void *);

typedef struct {
    int32_t engine, nsteps, tables, dist;
    vstep *steps;
    void *conn;                        /* PGconn* (PostgreSQL) */
    /* PostgreSQL: PQexecPrepared, PQresultStatus, PQclear, PQcmdTuples, PQntuples;
     * MySQL: mysql_stmt_execute, mysql_stmt_store_result, mysql_stmt_num_rows,
     * mysql_stmt_affected_rows, mysql_stmt_free_result */
    void *fn[5];
    int32_t result_format;
    int64_t size;
    double z_e, z_s, z_top, z_span;    /* zipfian: values.py's constants */
    uint64_t rng[4];
    const char *cpool; int64_t cn, cstride, clen;
    const char *padpool; int64_t padn, padstride, padlen;
    volatile int8_t *stop;
    uint64_t *arr; int64_t base;       /* ops at base, errors at base+1, histogram at +2 */
    uint64_t *carr; int64_t cs;        /* statements at carr[cs] */
    const uint16_t *lut; int64_t lut_us;
    int64_t sub_bits, max_us, n_buckets;
    const char **values; char *nums;   /* PostgreSQL scratch: maxp pointers, 24 bytes each */
    /* out, when a statement failed */
    int32_t failed_step, failed_table;
    int64_t sent;                      /* statements the event sent, the failed one included */
    void *pgres;                       /* its PGresult (PostgreSQL), for Python to read */
} vjob;

int fastloop_abi(void) { return FASTLOOP_ABI; }
int64_t fastloop_job_size(void) { return (int64_t)sizeof(vjob); }

/* The layout and constants the Python side mirrors (fastloop.py's structures, program.py's
 * parameter kinds), for a test to compare: name=value pairs, one string. */
#define OFF(s, f) #s "." #f "=%ld "
const char *fastloop_layout(void) {
    static char buf[2048];
    static const char *fmt =
        "sizeof.vparam=%ld sizeof.vstmt=%ld sizeof.vstep=%ld sizeof.vjob=%ld "
        OFF(vparam, fixed) OFF(vstmt, len) OFF(vstep, flags) OFF(vstep, params)
        OFF(vstep, stmts) OFF(vjob, steps) OFF(vjob, conn) OFF(vjob, fn)
        OFF(vjob, result_format) OFF(vjob, size) OFF(vjob, z_e) OFF(vjob, rng) OFF(vjob, cpool)
        OFF(vjob, padpool) OFF(vjob, stop) OFF(vjob, arr) OFF(vjob, base) OFF(vjob, carr)
        OFF(vjob, cs) OFF(vjob, lut) OFF(vjob, lut_us) OFF(vjob, sub_bits) OFF(vjob, max_us)
        OFF(vjob, n_buckets) OFF(vjob, values) OFF(vjob, nums) OFF(vjob, failed_step)
        OFF(vjob, sent) OFF(vjob, pgres)
        "P_ID=%d P_LO_PLUS=%d P_C=%d P_PAD=%d P_FIXED=%d P_SAVED=%d NO_DRAW=%d "
        "F_RESULTS=%d F_COUNT=%d F_SAVE=%d ENG_PG=%d ENG_MYSQL=%d "
        "D_UNIFORM=%d D_SPECIAL=%d D_ZIPF=%d ABI=%d";
    snprintf(buf, sizeof buf, fmt,
             (long)sizeof(vparam), (long)sizeof(vstmt), (long)sizeof(vstep), (long)sizeof(vjob),
             (long)offsetof(vparam, fixed), (long)offsetof(vstmt, len),
             (long)offsetof(vstep, flags), (long)offsetof(vstep, params),
             (long)offsetof(vstep, stmts), (long)offsetof(vjob, steps),
             (long)offsetof(vjob, conn), (long)offsetof(vjob, fn),
             (long)offsetof(vjob, result_format), (long)offsetof(vjob, size),
             (long)offsetof(vjob, z_e), (long)offsetof(vjob, rng), (long)offsetof(vjob, cpool),
             (long)offsetof(vjob, padpool), (long)offsetof(vjob, stop), (long)offsetof(vjob, arr),
             (long)offsetof(vjob, base), (long)offsetof(vjob, carr), (long)offsetof(vjob, cs),
             (long)offsetof(vjob, lut), (long)offsetof(vjob, lut_us),
             (long)offsetof(vjob, sub_bits), (long)offsetof(vjob, max_us),
             (long)offsetof(vjob, n_buckets), (long)offsetof(vjob, values),
             (long)offsetof(vjob, nums), (long)offsetof(vjob, failed_step),
             (long)offsetof(vjob, sent), (long)offsetof(vjob, pgres),
             P_ID, P_LO_PLUS, P_C, P_PAD, P_FIXED, P_SAVED, NO_DRAW,
             F_RESULTS, F_COUNT, F_SAVE, ENG_PG, ENG_MYSQL, D_UNIFORM, D_SPECIAL, D_ZIPF,
             FASTLOOP_ABI);
    return buf;
}

/* xoshiro256** */
static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static inline double rr(vjob *j) {
    uint64_t *s = j->rng;
    uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t; s[3] = rotl(s[3], 45);
    return (double)(r >> 11) * 0x1.0p-53;
}

static double helper1(double x) {      /* log(1 + x) / x */
    return fabs(x) > 1e-8 ? log1p(x) / x : 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x));
}
static double helper2(double x) {      /* (exp(x) - 1) / x */
    return fabs(x) > 1e-8 ? expm1(x) / x : 1 + x * 0.5 * (1 + x / 3 * (1 + 0.25 * x));
}
static double h_integral(double x, double e) {
    double lx = log(x);
    return helper2((1 - e) * lx) * lx;
}
static double h_integral_inverse(double x, double e) {
    double t = x * (1 - e);
    if (t < -1.0) t = -1.0;
    return exp(helper1(t) * x);
}

/* values.py's id_picker, draw for draw */
static int64_t pick(vjob *j) {
    int64_t n = j->size;
    if (j->dist == D_UNIFORM)
        return (int64_t)(rr(j) * (double)n) + 1;
    if (j->dist == D_SPECIAL) {
        int64_t t = n - 1, hot = t / 100, hot_base = t / 2 - t / 200;
        if (hot < 1) hot = 1;
        int64_t res = t ? (int64_t)(rr(j) * 4 * (double)t) : 0;
        if (res < t) {
            double s = 0;
            for (int i = 0; i < 12; i++) s += rr(j);
            return 1 + (int64_t)(s * (double)t / 12);
        }
        return 1 + hot_base + res % hot;
    }
    double e = j->z_e;
    for (;;) {
        double u = j->z_top + rr(j) * j->z_span;
        double x = h_integral_inverse(u, e);
        int64_t k = (int64_t)(x + 0.5);
        k = k < 1 ? 1 : k > n ? n : k;
        if ((double)k - x <= j->z_s || u >= h_integral((double)k + 0.5, e) - exp(-e * log((double)k)))
            return k;
    }
}

static inline int64_t bucket(const vjob *j, uint64_t us) {
    int64_t b;
    if (us < (uint64_t)j->lut_us) {
        b = j->lut[us];
    } else if (us >= (uint64_t)j->max_us) {
        b = j->n_buckets - 1;
    } else {
        int64_t half = (int64_t)1 << (j->sub_bits - 1);
        int64_t exp2 = (64 - __builtin_clzll(us)) - j->sub_bits;
        b = ((int64_t)1 << j->sub_bits) + (exp2 - 1) * half + ((int64_t)(us >> exp2) - half);
    }
    return b;
}

static inline void hist_add(vjob *j, uint64_t us) { j->arr[j->base + 2 + bucket(j, us)] += 1; }

/* For the test against events.bucket_of: the histogram bucket of each of n latencies. */
void fastloop_buckets(const vjob *j, int64_t n, const uint64_t *us, int64_t *out) {
    for (int64_t i = 0; i < n; i++) out[i] = bucket(j, us[i]);
}

static inline char *format_int(char *p, int64_t v) {
    char tmp[24];
    int n = 0, neg = v < 0;
    uint64_t u = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do { tmp[n++] = (char)('0' + u % 10); u /= 10; } while (u);
    if (neg) *p++ = '-';
    while (n) *p++ = tmp[--n];
    *p = 0;
    return p;
}

/* One event: every step's statement, `repeat` times each. Statements sent into *k. */
static int event(vjob *j, int64_t *k) {
    int32_t tabs[MAX_STEPS];
    int64_t saved = 0, sent = 0;
    for (int32_t s = 0; s < j->nsteps; s++) {
        vstep *st = &j->steps[s];
        int32_t t = st->table_from >= 0 ? tabs[st->table_from]
                  : st->table_from == NO_DRAW || j->tables == 1 ? 0
                  : (int32_t)(rr(j) * j->tables);
        tabs[s] = t;
        vstmt *sm = &st->stmts[t];
        for (int32_t r = 0; r < st->repeat; r++) {
            int64_t first = 0;
            for (int32_t p = 0; p < st->nparams; p++) {
                vparam *vp = &st->params[p];
                int64_t iv = 0;
                const char *sv = NULL;
                int64_t sl = 0;
                switch (vp->kind) {
                case P_ID: iv = pick(j); if (p == 0) first = iv; break;
                case P_LO_PLUS: iv = first + vp->arg; break;
                case P_FIXED: iv = vp->fixed; break;
                case P_SAVED: iv = saved; break;
                case P_C:
                    sv = j->cpool + (int64_t)(rr(j) * (double)j->cn) * j->cstride; sl = j->clen;
                    break;
                default:
                    sv = j->padpool + (int64_t)(rr(j) * (double)j->padn) * j->padstride;
                    sl = j->padlen;
                }
                if (j->engine == ENG_PG) {
                    if (sv) {
                        j->values[p] = sv;               /* pool entries end in NUL */
                    } else {
                        char *q = j->nums + 24 * p;
                        format_int(q, iv);
                        j->values[p] = q;
                    }
                } else if (sv) {
                    memcpy(sm->buf[p], sv, (size_t)sl);
                    *sm->len[p] = (unsigned long)sl;
                } else {
                    *(int64_t *)sm->buf[p] = iv;
                }
            }
            if (st->flags & F_SAVE) saved = first;
            int64_t rows = 0;
            if (j->engine == ENG_PG) {
                void *res = ((pq_exec_prepared_f)j->fn[0])(j->conn, (const char *)sm->h,
                                                           st->nparams, j->values, NULL, NULL,
                                                           j->result_format);
                int status = ((pq_status_f)j->fn[1])(res);
                if (status != 1 && status != 2) {      /* PGRES_COMMAND_OK, PGRES_TUPLES_OK */
                    j->pgres = res;
                    j->failed_step = s; j->failed_table = t; j->sent = sent + 1;
                    return 1;
                }
                if (st->flags & F_COUNT)
                    rows = status == 2 ? ((pq_ntuples_f)j->fn[4])(res)
                                       : atoll(((pq_cmd_tuples_f)j->fn[3])(res));
                ((pq_clear_f)j->fn[2])(res);
            } else {
                void *h = sm->h;
                if (((my_execute_f)j->fn[0])(h)) goto my_failed;
                if (st->flags & F_RESULTS) {
                    if (st->flags & F_COUNT) {
                        if (((my_store_f)j->fn[1])(h)) goto my_failed;
                        rows = (int64_t)((my_rows_f)j->fn[2])(h);
                    }
                    ((my_free_f)j->fn[4])(h);          /* reads the rows off the wire */
                } else if (st->flags & F_COUNT) {
                    rows = (int64_t)((my_rows_f)j->fn[3])(h);
                }
            }
            if (st->count_slot >= 0) j->carr[st->count_slot] += (uint64_t)rows;
            sent++;
            continue;
        my_failed:
            j->failed_step = s; j->failed_table = t; j->sent = sent + 1;
            return 1;
        }
    }
    *k = sent;
    return 0;
}

/* Run events until the stop flag is set (0) or a statement fails (1: see the out fields). */
int fastloop_run(vjob *j) {
    struct timespec a, b;
    int64_t k;
    if (j->nsteps > MAX_STEPS) return -1;
    while (!*j->stop) {
        clock_gettime(CLOCK_MONOTONIC, &a);
        if (event(j, &k)) return 1;
        clock_gettime(CLOCK_MONOTONIC, &b);
        int64_t ns = (int64_t)(b.tv_sec - a.tv_sec) * 1000000000 + (b.tv_nsec - a.tv_nsec);
        hist_add(j, (uint64_t)(ns / 1000));
        j->arr[j->base] += 1;
        j->carr[j->cs] += (uint64_t)k;
    }
    return 0;
}

/* n ids as the loop draws them (for the tests that hold them against values.py's) */
void fastloop_draw(vjob *j, int64_t n, int64_t *out) {
    for (int64_t i = 0; i < n; i++) out[i] = pick(j);
}
