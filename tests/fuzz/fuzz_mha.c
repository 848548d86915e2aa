/*
 * fuzz_mha.c - libFuzzer harness for the C API of mha-wasm (c/mha.h), built natively with clang
 * under AddressSanitizer + UndefinedBehaviorSanitizer (see tests/fuzz/README.md).
 *
 * Each input is a small program. Byte 0 and 1 choose C and h of the layer created in slot 0;
 * then every opcode byte (op = byte % OP_COUNT) is followed by its operands, read from the same
 * stream (zeros once the input is exhausted; the program ends there). Opcodes cover the whole API:
 * create/free (two layer slots, handles tracked, never freed twice), init_weights, forward,
 * backward (also before any forward), zero_grad, sgd_step, train, gradcheck,
 * gradcheck_prepare/slice, forward_from, tensor/tensor_shape/tensor_name (every returned length
 * is read in full), writes into tensors and parameters, split/merge heads, single-head
 * attention, MSE loss, random generators (two slots), strerror and the name tables. Sizes, flags,
 * seeds, step counts and reals are mostly valid and small, sometimes zero, negative, huge
 * (overflowing or impossible to allocate), NaN or infinite; data is generated, raw bytes, or
 * special values (NaN, +-Inf, subnormals, +-DBL_MAX, -0).
 *
 * The harness keeps a model of every layer (sizes of the last forward, whether a forward,
 * backward or gradient-check preparation exists, the cache capacity) and after every call aborts
 * (so libFuzzer reports it) when an invariant of c/mha.h is violated:
 *   - the return code is MHA_OK or one of the codes documented for that function, and it is the
 *     error the arguments call for (MHA_OK when they are valid);
 *   - a failed call changes nothing: every tensor, parameter and gradient is bit-identical,
 *     output buffers are untouched, *out is NULL after a failed create;
 *   - X may be any of the layer's own tensors (also while the cache grows); train's target or
 *     gradcheck's aux inside the cache is refused with MHA_EALIAS; pointers from mha_tensor stay
 *     readable after a forward whose B*T is no larger than any seen before;
 *   - tensors exist exactly when the model says so; mha_tensor's length equals the product of
 *     mha_tensor_shape's dims, which equal the model's (B,T,C), (B,h,T,hs), (B,h,T,T) or (C,C);
 *   - outputs are finite when inputs are finite and of moderate size; attention rows sum to 1
 *     within 1e-12 and masked entries are exactly 0 (causal);
 *   - split_heads/merge_heads place every element as documented and round-trip exactly;
 *   - differential checks against a fresh layer with the same weights: forward, backward,
 *     gradcheck_prepare, train (= the documented loop of zero_grad, forward, loss, backward,
 *     sgd_step) and gradcheck (= prepare + slices in arbitrary chunks) give the same bits;
 *     single-head attention with the columns of one head equals that head of the layer;
 *     init_weights equals scale times the generator's standard normals; split random draws
 *     equal one draw; rng normal equals loc + scale * standard_normal;
 *   - gradcheck and every gradcheck_slice leave the weights bit-identical (and the whole cache,
 *     when it was consistent); gradcheck on smooth moderate data agrees to 1e-6 absolute.
 * Work per input is bounded by a budget (estimated flops), so one input takes 1-2 ms of CPU.
 *
 * FUZZ_MHA_TRACE=1 in the environment prints every call with its arguments and return code
 * (use it on a crashing input to get a readable reproducer).
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mha.h"

/* Huge requests must fail cleanly (MHA_ENOMEM), so a failed allocation must not be fatal. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1:detect_leaks=1";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* ---------------------------------------------------------------------------------------------- */
/* reporting */

static int g_trace;
static const char *g_op = "header";

__attribute__((noreturn, format(printf, 3, 4))) static void fail(int line, const char *cond,
                                                                 const char *fmt, ...)
{
    fprintf(stderr, "\nfuzz_mha: INVARIANT VIOLATED in op %s (fuzz_mha.c:%d): %s\n  ", g_op, line,
            cond);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

#define REQUIRE(cond, ...)                                                                         \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fail(__LINE__, #cond, __VA_ARGS__);                                                    \
        }                                                                                          \
    } while (0)

#define TRACE(...)                                                                                 \
    do {                                                                                           \
        if (g_trace) {                                                                             \
            fprintf(stderr, __VA_ARGS__);                                                          \
        }                                                                                          \
    } while (0)

/* ---------------------------------------------------------------------------------------------- */
/* the byte stream */

typedef struct {
    const uint8_t *p;
    size_t n, i;
} rd_t;

static uint8_t u8(rd_t *r)
{
    return r->i < r->n ? r->p[r->i++] : 0;
}
static uint16_t u16(rd_t *r)
{
    uint16_t lo = u8(r);
    return (uint16_t)(lo | (uint16_t)(u8(r) << 8));
}
static uint32_t u32(rd_t *r)
{
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) {
        v |= (uint32_t)u8(r) << (8 * k);
    }
    return v;
}
static uint64_t u64(rd_t *r)
{
    uint64_t lo = u32(r);
    return lo | (uint64_t)u32(r) << 32;
}
static double f64raw(rd_t *r)
{
    uint64_t v = u64(r);
    double d;
    memcpy(&d, &v, sizeof d);
    return d;
}

/* ---------------------------------------------------------------------------------------------- */
/* helpers */

static uint64_t bits(double d)
{
    uint64_t v;
    memcpy(&v, &d, sizeof v);
    return v;
}
/* bit-identical, or both NaN (NaN payloads may differ between vectorised and scalar code) */
static int same(double a, double b)
{
    return bits(a) == bits(b) || (isnan(a) && isnan(b));
}

static const double CANARY = -1.2345678912345678e-299; /* an unlikely pattern, not NaN */

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "fuzz_mha: harness allocation of %zu bytes failed\n", bytes);
        abort();
    }
    return p;
}
static double *dalloc(size_t n)
{
    return xmalloc(n * sizeof(double));
}
static double *ddup(const double *x, size_t n)
{
    double *d = dalloc(n);
    if (n) {
        memcpy(d, x, n * sizeof(double));
    }
    return d;
}
static double *canaries(size_t n)
{
    double *d = dalloc(n);
    for (size_t i = 0; i < n; i++) {
        d[i] = CANARY;
    }
    return d;
}
static void require_canaries(const double *d, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        REQUIRE(bits(d[i]) == bits(CANARY), "%s[%zu] was written by a call that failed", what, i);
    }
}
/* index of the first difference, or n */
static size_t diff_at(const double *a, const double *b, size_t n, int nan_eq)
{
    for (size_t i = 0; i < n; i++) {
        if (nan_eq ? !same(a[i], b[i]) : bits(a[i]) != bits(b[i])) {
            return i;
        }
    }
    return n;
}
static int within(const double *x, size_t n, double bound)
{
    for (size_t i = 0; i < n; i++) {
        if (!(fabs(x[i]) <= bound)) {
            return 0;
        }
    }
    return 1;
}
static int all_finite(const double *x, size_t n)
{
    return within(x, n, DBL_MAX);
}

static volatile uint64_t g_sink;
static void read_all(const double *p, size_t n)
{
    uint64_t acc = 0;
    for (size_t i = 0; i < n; i++) {
        acc ^= bits(p[i]);
    }
    g_sink ^= acc;
}

/* the harness's own data generator: splitmix64 and an approximately normal variate */
static uint64_t sm_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double sm_unif(uint64_t *s)
{
    return (double)(sm_next(s) >> 11) * 0x1p-53;
}
static double sm_normal(uint64_t *s)
{
    double a = sm_unif(s) + sm_unif(s) + sm_unif(s) + sm_unif(s);
    return (a - 2.0) * 1.7320508075688772;
}

static const double SPECIAL[16] = {0.0,      -0.0,      1.0,      -1.0,
                                   0.5,      -2.0,      NAN,      -(double)NAN,
                                   INFINITY, -INFINITY, DBL_MIN,  4.9406564584124654e-324,
                                   -1e-310,  DBL_MAX,   -DBL_MAX, 1e-300};

/* ---------------------------------------------------------------------------------------------- */
/* choices */

static int pick_special_int(rd_t *r, int near)
{
    switch (u8(r) % 12) {
    case 0: return 0;
    case 1: return -1;
    case 2: return -(int)(1 + u8(r));
    case 3: return INT_MIN;
    case 4: return INT_MAX;
    case 5: return 1 << 30;
    case 6: return 1 << 20;
    case 7: return 65536;
    case 8: return 46341;
    case 9: return near < INT_MAX ? near + 1 : near;
    case 10: return 1 << 24;
    default: return (int)u32(r);
    }
}
/* batch / tokens: mostly 1..8, sometimes up to 16, sometimes special */
static int pick_bt(rd_t *r)
{
    uint8_t b = u8(r);
    if (b < 200) {
        return 1 + b % 8;
    }
    if (b < 232) {
        return 1 + b % 16;
    }
    return pick_special_int(r, 8);
}
/* channels: mostly small, up to 64, sometimes special */
static int pick_C(rd_t *r)
{
    uint8_t b = u8(r);
    if (b < 128) {
        return 1 + b % 8;
    }
    if (b < 192) {
        return 1 + b % 16;
    }
    if (b < 232) {
        return 1 + u8(r) % 64;
    }
    return pick_special_int(r, 64);
}
/* heads: mostly a divisor of C, sometimes any small number, sometimes special */
static int pick_h(rd_t *r, int C)
{
    uint8_t b = u8(r);
    if (b < 160 && C > 0 && C <= 4096) {
        int divs[64], nd = 0;
        for (int d = 1; d <= C && nd < 64; d++) {
            if (C % d == 0) {
                divs[nd++] = d;
            }
        }
        return divs[b % nd];
    }
    if (b < 228) {
        return 1 + b % 16;
    }
    return pick_special_int(r, C);
}
static int pick_flags(rd_t *r)
{
    uint8_t b = u8(r);
    if (b < 224) {
        return b & 1;
    }
    switch (b % 6) {
    case 0: return 2;
    case 1: return 3;
    case 2: return -1;
    case 3: return INT_MIN;
    case 4: return 0x100;
    default: return (int)u32(r);
    }
}
static int pick_kind(rd_t *r) /* rng kind / loss kind */
{
    uint8_t b = u8(r);
    if (b < 224) {
        return b & 1;
    }
    switch (b % 5) {
    case 0: return 2;
    case 1: return -1;
    case 2: return INT_MAX;
    case 3: return INT_MIN;
    default: return (int)u32(r);
    }
}
static double pick_real(rd_t *r)
{
    static const double NICE[16] = {
        0.1,  1e-3, 1.0, 0.5, 0.35355339059327373, 0.01, 1e-6, 2.0, 0.0, -0.1, 3.0, 0.125,
        0.25, 10.0, 1e3, 1e-4};
    uint8_t b = u8(r);
    if (b < 144) {
        return NICE[b % 16];
    }
    if (b < 216) {
        return SPECIAL[b % 16];
    }
    return f64raw(r);
}
static double pick_eps(rd_t *r)
{
    uint8_t b = u8(r);
    if (b < 160) {
        return MHA_GRADCHECK_EPS;
    }
    if (b < 176) {
        return 1e-4;
    }
    return pick_real(r);
}
static int pick_samples(rd_t *r)
{
    uint8_t b = u8(r);
    if (b < 96) {
        return 0;
    }
    if (b < 224) {
        return 1 + b % 6;
    }
    switch (b % 6) {
    case 0: return -1;
    case 1: return INT_MIN;
    case 2: return INT_MAX;
    case 3: return 1000;
    case 4: return 7;
    default: return (int)u32(r);
    }
}
static uint32_t pick_seed_hi(rd_t *r)
{
    uint8_t b = u8(r);
    if (b < 160) {
        return 0;
    }
    if (b < 200) {
        return 1;
    }
    if (b < 224) {
        return 0xFFFFFFFFu;
    }
    return u32(r);
}

/* Fill x[0..n-1]: generated normals, raw doubles, special values, constants, or a mix. */
static void fill(rd_t *r, double *x, size_t n)
{
    static const double SCALE[8] = {1.0, 0.5, 0.1, 2.0, 1e-3, 3.0, 1.0, 0.25};
    static const double WILD[4] = {1e-300, 1e150, 1e300, 1e-320};
    uint8_t b = u8(r);
    uint64_t s = 0;
    switch (b % 10) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4: {
        s = u16(r);
        const double sc = SCALE[(b / 10) % 8];
        for (size_t i = 0; i < n; i++) {
            x[i] = sc * sm_normal(&s);
        }
        break;
    }
    case 5: { /* raw doubles from the input, cycled */
        double v[16];
        const size_t k = n < 16 ? n : 16;
        for (size_t i = 0; i < k; i++) {
            v[i] = f64raw(r);
        }
        for (size_t i = 0; i < n; i++) {
            x[i] = v[i % k];
        }
        break;
    }
    case 6: { /* special values, one byte each, cycled */
        double v[16];
        const size_t k = n < 16 ? n : 16;
        for (size_t i = 0; i < k; i++) {
            v[i] = SPECIAL[u8(r) % 16];
        }
        for (size_t i = 0; i < n; i++) {
            x[i] = v[i % k];
        }
        break;
    }
    case 7: {
        const double c = pick_real(r);
        for (size_t i = 0; i < n; i++) {
            x[i] = c;
        }
        break;
    }
    case 8: {
        s = u16(r);
        const double sc = WILD[(b / 10) % 4];
        for (size_t i = 0; i < n; i++) {
            x[i] = sc * sm_normal(&s);
        }
        break;
    }
    default: { /* normals with a few special values patched in */
        s = u16(r);
        for (size_t i = 0; i < n; i++) {
            x[i] = sm_normal(&s);
        }
        const int k = 1 + u8(r) % 3;
        for (int j = 0; j < k && n > 0; j++) {
            const size_t pos = u16(r) % n;
            x[pos] = SPECIAL[u8(r) % 16];
        }
        break;
    }
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* the work budget of one input (estimated flops) */

#define BUDGET 3.0e6
static double g_budget;

static int spend(double cost)
{
    if (cost > g_budget) {
        return 0;
    }
    g_budget -= cost;
    return 1;
}

static double fwd_cost(int C, int h, int B, int T)
{
    const double b = B, t = T, c = C, hh = h, hs = c / hh;
    return b * t * c * c * 4.0 + b * hh * t * t * hs * 2.0 + 40.0 * b * t * c +
           8.0 * b * hh * t * t + 8.0 * c * c + 200.0;
}

/* ---------------------------------------------------------------------------------------------- */
/* size classes: small (the harness supplies full buffers), impossible (the call must fail with
 * MHA_EOVERFLOW or MHA_ENOMEM, so a dummy buffer is passed), or in between (not called) */

typedef unsigned __int128 u128;
enum { SZ_BAD, SZ_SMALL, SZ_MID, SZ_OVERFLOW, SZ_NOMEM };
#define SMALL_BYTES ((u128)1 << 21)
#define NOMEM_BYTES ((u128)1 << 41) /* above ASan's largest allocation (1 TiB): malloc fails */

static u128 umax(u128 a, u128 b)
{
    return a > b ? a : b;
}

/* a forward of (B,T) on a layer (C,h) whose cache holds cap_btc / cap_bhtt elements per tensor */
static int fwd_class(int C, int h, int B, int T, size_t cap_btc, size_t cap_bhtt)
{
    if (B <= 0 || T <= 0) {
        return SZ_BAD;
    }
    const u128 btc = (u128)B * (u128)T * (u128)C;
    const u128 bhtt = (u128)B * (u128)h * (u128)T * (u128)T;
    if (btc > SIZE_MAX || bhtt > SIZE_MAX || (16 * btc + 4 * bhtt) * 8 > SIZE_MAX) {
        return SZ_OVERFLOW;
    }
    const int grows = btc > cap_btc || bhtt > cap_bhtt;
    const u128 new_bytes = (16 * umax(btc, cap_btc) + 4 * umax(bhtt, cap_bhtt)) * 8;
    if (grows && new_bytes > NOMEM_BYTES) {
        return SZ_NOMEM;
    }
    return (16 * btc + 4 * bhtt) * 8 <= SMALL_BYTES ? SZ_SMALL : SZ_MID;
}

/* ---------------------------------------------------------------------------------------------- */
/* the model of a layer */

typedef struct {
    mha_layer *l;
    int C, h;
    double *params, *grads; /* pointers at creation: valid (and the same) until mha_free */
    int have_fwd, B, T, flags;
    int have_bwd;             /* 0, 1, or 2 = unknown */
    int gc;                   /* gradcheck preparation: 0 none, 1 ready, 2 unknown */
    int consistent;           /* the cache is the forward of its X with the current weights */
    int att_fresh;            /* att = softmax of the cached scores (not edited since) */
    size_t cap_btc, cap_bhtt; /* the cache capacity c/mha.c allocates (for MHA_ENOMEM) */
} slot_t;

static slot_t g_slot[2];
static mha_rng *g_rng[2];

static size_t m_btc(const slot_t *s)
{
    return (size_t)s->B * (size_t)s->T * (size_t)s->C;
}
static size_t m_bhtt(const slot_t *s)
{
    return (size_t)s->B * (size_t)s->h * (size_t)s->T * (size_t)s->T;
}
static double m_cost(const slot_t *s) /* touching every tensor once */
{
    return s->l
               ? 8.0 * s->C * s->C + (s->have_fwd ? 16.0 * m_btc(s) + 4.0 * m_bhtt(s) : 0.0) + 100.0
               : 10.0;
}

static void slot_reset(slot_t *s)
{
    memset(s, 0, sizeof *s);
}

/* Tensor shapes and kinds as the header's table documents them (MHA_TENSORS, expanded here, not
 * through the library): shape 0 (C,C), 1 (B,T,C), 2 (B,h,T,hs), 3 (B,h,T,T), -1 unknown id */
#define TABLE_SHAPE(id, name, shape, ...)      [MHA_T_##id] = MHA_SHAPE_##shape,
#define TABLE_KIND(id, name, shape, kind, ...) [MHA_T_##id] = MHA_KIND_##kind,
static const int table_shape[MHA_T_COUNT] = {MHA_TENSORS(TABLE_SHAPE)};
static const int table_kind[MHA_T_COUNT] = {MHA_TENSORS(TABLE_KIND)};
static int tkind(int id)
{
    return id >= 0 && id < MHA_T_COUNT ? table_shape[id] : -1;
}
/* a gradient kept in the cache: exists only after a backward */
static int is_bwd_id(int id)
{
    return tkind(id) > 0 && table_kind[id] == MHA_KIND_GRADIENT;
}
static const char *tname(int id)
{
    const char *n = mha_tensor_name(id);
    return n ? n : "?";
}

/* Check one tensor id against the model: presence, length, shape, pointer; read it in full. */
static void check_tensor(const slot_t *s, int id, int lennull)
{
    size_t len = 777;
    double *p = mha_tensor(s->l, id, lennull ? NULL : &len);
    int rank = -7, dims[MHA_MAX_RANK] = {-7, -7, -7, -7};
    const int rc = mha_tensor_shape(s->l, id, &rank, dims);
    const char *name = mha_tensor_name(id);
    const int kind = tkind(id);
    if (kind < 0) {
        REQUIRE(!p && (lennull || len == 0), "tensor %d: unknown id gave %p len %zu", id, (void *)p,
                len);
        REQUIRE(rc == (s->l ? MHA_ETENSOR : MHA_ENULL), "tensor_shape(unknown id %d) = %d", id, rc);
        REQUIRE(!name, "tensor_name(%d) = %s for an unknown id", id, name);
        return;
    }
    REQUIRE(name && name[0], "tensor_name(%d) is NULL or empty", id);
    if (!s->l) {
        REQUIRE(!p && (lennull || len == 0), "tensor(NULL layer, %d) gave a pointer", id);
        REQUIRE(rc == MHA_ENULL, "tensor_shape(NULL layer) = %d", rc);
        return;
    }
    int expect = kind == 0 ? 1 : !s->have_fwd ? 0 : is_bwd_id(id) ? s->have_bwd : 1;
    if (expect != 2) {
        REQUIRE((p != NULL) == expect, "tensor %s: present=%d, model says %d (fwd %d bwd %d)", name,
                p != NULL, expect, s->have_fwd, s->have_bwd);
    }
    if (kind > 0 && !s->have_fwd) {
        REQUIRE(rc == MHA_ENOFORWARD, "tensor_shape(%s) before any forward = %d", name, rc);
        REQUIRE(!p, "tensor %s before any forward", name);
        return;
    }
    REQUIRE(rc == MHA_OK, "tensor_shape(%s) = %d (%s)", name, rc, mha_strerror(rc));
    int want[4] = {0, 0, 0, 0}, wrank = 0;
    switch (kind) {
    case 0:
        wrank = 2;
        want[0] = s->C;
        want[1] = s->C;
        break;
    case 1:
        wrank = 3;
        want[0] = s->B;
        want[1] = s->T;
        want[2] = s->C;
        break;
    case 2:
        wrank = 4;
        want[0] = s->B;
        want[1] = s->h;
        want[2] = s->T;
        want[3] = s->C / s->h;
        break;
    default:
        wrank = 4;
        want[0] = s->B;
        want[1] = s->h;
        want[2] = s->T;
        want[3] = s->T;
        break;
    }
    REQUIRE(rank == wrank, "tensor_shape(%s): rank %d, expected %d", name, rank, wrank);
    size_t prod = 1;
    for (int k = 0; k < wrank; k++) {
        REQUIRE(dims[k] == want[k], "tensor_shape(%s): dims[%d] = %d, expected %d", name, k,
                dims[k], want[k]);
        prod *= (size_t)dims[k];
    }
    for (int k = wrank; k < 4; k++) {
        REQUIRE(dims[k] == -7, "tensor_shape(%s) wrote dims[%d] past its rank", name, k);
    }
    if (p) {
        if (!lennull) {
            REQUIRE(len == prod, "tensor %s: len %zu != product of its shape %zu", name, len, prod);
        }
        read_all(p, prod);
        if (kind == 0) {
            const size_t cc = (size_t)s->C * (size_t)s->C;
            double *base = id < MHA_T_DWQ ? s->params : s->grads;
            REQUIRE(p == base + (size_t)(id % 4) * cc,
                    "tensor %s is not at its offset in the %s buffer", name,
                    id < MHA_T_DWQ ? "params" : "grads");
        }
    } else {
        REQUIRE(lennull || len == 0, "tensor %s: NULL with len %zu", name, len);
    }
}

static void check_all_tensors(const slot_t *s)
{
    for (int id = -1; id <= MHA_T_COUNT; id++) {
        check_tensor(s, id, 0);
    }
    REQUIRE(mha_params(s->l) == s->params && mha_grads(s->l) == s->grads,
            "mha_params/mha_grads moved during the layer's life");
    REQUIRE(mha_layer_C(s->l) == (s->l ? s->C : 0) && mha_layer_heads(s->l) == (s->l ? s->h : 0),
            "mha_layer_C/heads = %d/%d, expected %d/%d", mha_layer_C(s->l), mha_layer_heads(s->l),
            s->C, s->h);
    REQUIRE(mha_num_params(s->l) == (s->l ? 4 * (size_t)s->C * (size_t)s->C : 0), "num_params");
}

/* ---------------------------------------------------------------------------------------------- */
/* snapshots of everything a layer exposes */

typedef struct {
    double *d[MHA_T_COUNT];
    size_t n[MHA_T_COUNT];
    double *params, *grads; /* the whole buffers, 4*C*C each */
} snap_t;

static void snap_take(mha_layer *l, snap_t *sn)
{
    for (int id = 0; id < MHA_T_COUNT; id++) {
        size_t len = 0;
        double *p = mha_tensor(l, id, &len);
        sn->n[id] = p ? len : 0;
        sn->d[id] = p ? ddup(p, len) : NULL;
    }
    sn->params = l ? ddup(mha_params(l), mha_num_params(l)) : NULL;
    sn->grads = l ? ddup(mha_grads(l), mha_num_params(l)) : NULL;
}
static void snap_free(snap_t *sn)
{
    for (int id = 0; id < MHA_T_COUNT; id++) {
        free(sn->d[id]);
        sn->d[id] = NULL;
    }
    free(sn->params);
    free(sn->grads);
    sn->params = sn->grads = NULL;
}
/* every tensor id in [lo, hi] except those in skip (a bit mask) is as in the snapshot */
static void snap_require(mha_layer *l, const snap_t *sn, int lo, int hi, uint32_t skip, int nan_eq,
                         const char *what)
{
    for (int id = lo; id <= hi; id++) {
        if (skip & (1u << id)) {
            continue;
        }
        size_t len = 0;
        const double *p = mha_tensor(l, id, &len);
        REQUIRE((p != NULL) == (sn->d[id] != NULL), "%s: tensor %s %s", what, tname(id),
                p ? "appeared" : "disappeared");
        if (!p) {
            continue;
        }
        REQUIRE(len == sn->n[id], "%s: tensor %s length %zu -> %zu", what, tname(id), sn->n[id],
                len);
        const size_t at = diff_at(sn->d[id], p, len, nan_eq);
        REQUIRE(at == len, "%s: tensor %s[%zu] changed: %.17g -> %.17g", what, tname(id), at,
                at < len ? sn->d[id][at] : 0.0, at < len ? p[at] : 0.0);
    }
}
#define ALL_IDS 0, MHA_T_COUNT - 1
#define FWD_IDS MHA_T_X, MHA_T_Y
#define BWD_IDS MHA_T_DY, MHA_T_DX

/* the same tensors of two layers are equal (NaN-tolerant); ids in skip are not compared, nor
 * tensors missing in either */
static void require_same_layers(mha_layer *a, mha_layer *b, int lo, int hi, uint32_t skip,
                                const char *what)
{
    for (int id = lo; id <= hi; id++) {
        if (skip & (1u << id)) {
            continue;
        }
        size_t na = 0, nb = 0;
        const double *pa = mha_tensor(a, id, &na), *pb = mha_tensor(b, id, &nb);
        if (!pa || !pb) {
            continue;
        }
        REQUIRE(na == nb, "%s: tensor %s lengths %zu vs %zu", what, tname(id), na, nb);
        const size_t at = diff_at(pa, pb, na, 1);
        REQUIRE(at == na, "%s: tensor %s[%zu] differs: %.17g vs %.17g (fresh layer)", what,
                tname(id), at, at < na ? pa[at] : 0.0, at < na ? pb[at] : 0.0);
    }
}

/* A fresh layer with the same C, h and the given weights (NULL if it cannot be made). */
static mha_layer *clone_layer(const slot_t *s, const double *params)
{
    mha_layer *c = NULL;
    if (mha_create(s->C, s->h, &c) != MHA_OK) {
        return NULL;
    }
    memcpy(mha_params(c), params, 4 * (size_t)s->C * (size_t)s->C * sizeof(double));
    return c;
}
static const double *snap_params(const snap_t *sn)
{
    return sn->params;
}

/* An array of n doubles inside the layer for an input that must not alias it (train's target,
 * gradcheck's aux): sel 1 = a tensor of the cache (c/mha.h: MHA_EALIAS), 2 = the weight or
 * gradient buffer (also "the layer's own buffers", but never reallocated: either answer is
 * accepted). NULL if there is none that large. *in_cache tells which. */
static double *alias_target(const slot_t *s, int sel, int id, size_t n, int *in_cache)
{
    *in_cache = 0;
    if (!s->l || n == 0) {
        return NULL;
    }
    if (sel == 1) {
        size_t len = 0;
        double *p = mha_tensor(s->l, MHA_T_X + id % (MHA_T_COUNT - MHA_T_X), &len);
        *in_cache = p != NULL;
        return p && len >= n ? p : NULL;
    }
    if (sel == 2) {
        return mha_num_params(s->l) >= n ? (id & 1 ? s->grads : s->params) : NULL;
    }
    return NULL;
}

/* ---------------------------------------------------------------------------------------------- */
/* return codes */

#define E(code)     (1u << (unsigned)(-(code)))
#define LAST_CODE   MHA_EALIAS /* the most negative status code of c/mha.h */
#define DOC_FORWARD (E(MHA_ENULL) | E(MHA_EDIM) | E(MHA_EFLAGS) | E(MHA_EOVERFLOW) | E(MHA_ENOMEM))

static const char *mask_names(unsigned mask)
{
    static char buf[320];
    buf[0] = '\0';
    for (int c = 1; c <= -LAST_CODE; c++) {
        if (mask & (1u << c)) {
            static const char *const N[-LAST_CODE + 1] = {
                "OK",         "ENULL",  "EDIM",        "EDIVISIBLE", "EOVERFLOW", "ENOMEM",
                "ENOFORWARD", "ESEED",  "ERNG",        "EFLAGS",     "EVALUE",    "ETENSOR",
                "ELOSS",      "ERANGE", "ENOBACKWARD", "EDIVERGED",  "EALIAS"};
            strcat(buf, buf[0] ? " | MHA_" : "MHA_");
            strcat(buf, N[c]);
        }
    }
    return buf;
}

static void check_rc(const char *fn, int rc, unsigned documented, unsigned causes, unsigned maybe)
{
    TRACE("    -> %s = %d (%s)\n", fn, rc, rc ? mha_strerror(rc) : "ok");
    REQUIRE(rc == 0 || (rc < 0 && rc >= -31 && (documented & E(rc))),
            "%s returned %d (%s), which c/mha.h does not document for it", fn, rc,
            mha_strerror(rc));
    if (causes) {
        REQUIRE(rc != 0 && ((causes | maybe) & E(rc)),
                "%s returned %d (%s); the arguments and state call for %s", fn, rc,
                mha_strerror(rc), mask_names(causes));
    } else {
        REQUIRE(rc == 0 || (maybe & E(rc)), "%s returned %d (%s) for valid arguments", fn, rc,
                mha_strerror(rc));
    }
}

/* size-class causes of a forward-like call with positive B, T on a live layer */
static unsigned class_causes(int cls)
{
    return cls == SZ_OVERFLOW ? E(MHA_EOVERFLOW) : cls == SZ_NOMEM ? E(MHA_ENOMEM) : 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* invariants of a computed forward */

static void check_attention(const double *att, const double *scores, size_t nbh, size_t T,
                            int causal, const char *what)
{
    for (size_t bh = 0; bh < nbh; bh++) {
        for (size_t t = 0; t < T; t++) {
            const double *a = att + (bh * T + t) * T;
            const size_t valid = causal ? t + 1 : T;
            for (size_t t2 = valid; t2 < T; t2++) {
                REQUIRE(a[t2] == 0.0, "%s: masked att[%zu,%zu,%zu] = %.17g, not 0", what, bh, t, t2,
                        a[t2]);
            }
            const double *sc = scores ? scores + (bh * T + t) * T : NULL;
            if (sc && !all_finite(sc, valid)) {
                continue;
            }
            double sum = 0.0;
            for (size_t t2 = 0; t2 < valid; t2++) {
                REQUIRE(a[t2] >= 0.0 && a[t2] <= 1.0, "%s: att[%zu,%zu,%zu] = %.17g outside [0,1]",
                        what, bh, t, t2, a[t2]);
                sum += a[t2];
            }
            REQUIRE(fabs(sum - 1.0) <= 1e-12, "%s: attention row %zu,%zu sums to %.17g", what, bh,
                    t, sum);
        }
    }
}

/* after a forward-like computation; tame: all inputs were moderate, so everything is finite */
static void check_forward_outputs(const slot_t *s, int tame, const char *what)
{
    size_t n = 0;
    const double *att = mha_tensor(s->l, MHA_T_ATT, &n);
    const double *scores = mha_tensor(s->l, MHA_T_SCORES, &n);
    REQUIRE(att && scores, "%s: no att/scores after a forward", what);
    if (s->att_fresh) {
        check_attention(att, scores, (size_t)s->B * (size_t)s->h, (size_t)s->T,
                        s->flags & MHA_CAUSAL, what);
    }
    if (tame) {
        for (int id = MHA_T_X; id <= MHA_T_Y; id++) {
            const double *p = mha_tensor(s->l, id, &n);
            REQUIRE(all_finite(p, n), "%s: tensor %s not finite although the inputs were moderate",
                    what, tname(id));
        }
    }
}

/* moderate cache and weights: a forward from here, or a backward with a moderate dY, is finite */
static int cache_tame(const slot_t *s)
{
    size_t n = 0;
    const double *w = mha_params(s->l);
    if (!within(w, mha_num_params(s->l), 1e4)) {
        return 0;
    }
    static const int ids[] = {MHA_T_X,   MHA_T_Q,       MHA_T_K,     MHA_T_V,
                              MHA_T_ATT, MHA_T_HEADOUT, MHA_T_CONCAT};
    for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++) {
        const double *p = mha_tensor(s->l, ids[k], &n);
        if (!p || !within(p, n, 1e10)) {
            return 0;
        }
    }
    const double *sc = mha_tensor(s->l, MHA_T_SCORES, &n);
    return sc && all_finite(sc, n);
}

/* ---------------------------------------------------------------------------------------------- */
/* opcodes */

enum {
    OP_CREATE,
    OP_FREE,
    OP_INIT,
    OP_FORWARD,
    OP_BACKWARD,
    OP_ZERO_GRAD,
    OP_SGD,
    OP_TRAIN,
    OP_GRADCHECK,
    OP_PREPARE,
    OP_SLICE,
    OP_FORWARD_FROM,
    OP_TENSOR,
    OP_WRITE,
    OP_SPLIT_MERGE,
    OP_SINGLE_HEAD,
    OP_MSE,
    OP_RNG_CREATE,
    OP_RNG_DRAW,
    OP_RNG_FREE,
    OP_RNG_CHECK,
    OP_STRERROR,
    OP_HEAD_VS_LAYER,
    OP_ACCESSORS,
    OP_FORWARD2,
    OP_BACKWARD2,
    OP_COUNT
};
static const char *const OP_NAMES[OP_COUNT] = {
    "create",   "free",     "init_weights", "forward",           "backward",        "zero_grad",
    "sgd_step", "train",    "gradcheck",    "gradcheck_prepare", "gradcheck_slice", "forward_from",
    "tensor",   "write",    "split_merge",  "single_head",       "mse_loss",        "rng_create",
    "rng_draw", "rng_free", "rng_check",    "strerror",          "head_vs_layer",   "accessors",
    "forward",  "backward"};

static slot_t *pick_slot(rd_t *r)
{
    return &g_slot[u8(r) & 1];
}

static void op_create(rd_t *r, slot_t *s, int C, int h, int nullout)
{
    const u128 bytes = (u128)(C > 0 ? C : 0) * (u128)(C > 0 ? C : 0) * 4 * 8;
    unsigned causes = 0;
    if (nullout) {
        causes |= E(MHA_ENULL);
    }
    if (C <= 0 || h <= 0) {
        causes |= E(MHA_EDIM);
    } else if (C % h != 0) {
        causes |= E(MHA_EDIVISIBLE);
    } else if (bytes > SIZE_MAX) {
        causes |= E(MHA_EOVERFLOW);
    } else if (bytes > NOMEM_BYTES) {
        causes |= E(MHA_ENOMEM);
    } else if (bytes > SMALL_BYTES) {
        return; /* a possible but slow size */
    }
    (void)r;
    if (!spend(causes ? 100.0 : (double)bytes / 4.0 + 100.0)) {
        return;
    }
    if (!nullout && s->l) {
        mha_free(s->l);
        slot_reset(s);
    }
    static mha_layer *const SENTINEL = (mha_layer *)&g_sink;
    mha_layer *out = SENTINEL;
    TRACE("  mha_create(C=%d, h=%d, %s)\n", C, h, nullout ? "NULL" : "&out");
    const int rc = mha_create(C, h, nullout ? NULL : &out);
    check_rc("mha_create", rc,
             E(MHA_ENULL) | E(MHA_EDIM) | E(MHA_EDIVISIBLE) | E(MHA_EOVERFLOW) | E(MHA_ENOMEM),
             causes, 0);
    if (nullout) {
        return;
    }
    if (rc != MHA_OK) {
        REQUIRE(out == NULL, "mha_create failed (%d) but did not set *out to NULL", rc);
        return;
    }
    REQUIRE(out != NULL && out != SENTINEL, "mha_create succeeded without a layer");
    slot_reset(s);
    s->l = out;
    s->C = C;
    s->h = h;
    s->params = mha_params(out);
    s->grads = mha_grads(out);
    const size_t n = 4 * (size_t)C * (size_t)C;
    for (size_t i = 0; i < n; i++) {
        REQUIRE(bits(s->params[i]) == 0 && bits(s->grads[i]) == 0,
                "a new layer's weights/gradients are not zero at %zu", i);
    }
    check_all_tensors(s);
}

static void op_free(slot_t *s)
{
    TRACE("  mha_free(%s)\n", s->l ? "layer" : "NULL");
    mha_free(s->l);
    slot_reset(s);
}

static void op_init(rd_t *r, slot_t *s)
{
    const uint32_t lo = u32(r), hi = pick_seed_hi(r);
    const int kind = pick_kind(r);
    const double scale = pick_real(r);
    const int force_null = u8(r) % 32 == 0;
    mha_layer *l = force_null ? NULL : s->l;
    unsigned causes = 0;
    if (!l) {
        causes |= E(MHA_ENULL);
    }
    if (!isfinite(scale)) {
        causes |= E(MHA_EVALUE);
    }
    if (kind != MHA_RNG_DEFAULT && kind != MHA_RNG_LEGACY) {
        causes |= E(MHA_ERNG);
    } else if (kind == MHA_RNG_LEGACY && hi != 0) {
        causes |= E(MHA_ESEED);
    }
    const size_t n = l ? mha_num_params(l) : 0;
    if (!spend(60.0 * (double)n + 2.0 * m_cost(s))) {
        return;
    }
    snap_t sn;
    snap_take(l, &sn);
    TRACE("  mha_init_weights(%s, lo=%u, hi=%u, kind=%d, scale=%.17g)\n", l ? "layer" : "NULL", lo,
          hi, kind, scale);
    const int rc = mha_init_weights(l, lo, hi, kind, scale);
    check_rc("mha_init_weights", rc, E(MHA_ENULL) | E(MHA_ERNG) | E(MHA_ESEED) | E(MHA_EVALUE),
             causes, 0);
    if (rc != MHA_OK) {
        snap_require(l, &sn, ALL_IDS, 0, 0, "failed init_weights");
        snap_free(&sn);
        return;
    }
    snap_free(&sn);
    s->consistent = 0;
    /* W = scale * standard_normal, Wq Wk Wv Wo in turn from one stream */
    mha_rng *g = NULL;
    REQUIRE(mha_rng_create(kind, lo, hi, &g) == MHA_OK,
            "rng_create refused a seed init_weights took");
    double *z = dalloc(n);
    REQUIRE(mha_rng_standard_normal(g, z, n) == MHA_OK, "rng_standard_normal");
    mha_rng_free(g);
    for (size_t i = 0; i < n; i++) {
        const double want = z[i] * scale;
        REQUIRE(bits(s->params[i]) == bits(want),
                "init_weights: param %zu = %.17g, expected scale * normal = %.17g", i, s->params[i],
                want);
        REQUIRE(bits(s->grads[i]) == 0, "init_weights did not zero gradient %zu", i);
    }
    free(z);
    check_all_tensors(s);
}

/* forward: also checked against a fresh layer with the same weights */
static void op_forward(rd_t *r, slot_t *s)
{
    const int B = pick_bt(r), T = pick_bt(r), flags = pick_flags(r);
    const uint8_t opt = u8(r);
    const int xnull = opt % 32 == 31, ynull = (opt & 3) == 1, alias = (opt & 12) == 8;
    const int alias_id = alias ? u8(r) % MHA_T_COUNT : -1;
    const int diff = (opt & 0x30) != 0x30;
    mha_layer *l = s->l;
    unsigned causes = 0;
    int cls = SZ_BAD;
    if (!l || xnull) {
        causes |= E(MHA_ENULL);
    }
    if (B <= 0 || T <= 0) {
        causes |= E(MHA_EDIM);
    }
    if (flags & ~MHA_CAUSAL) {
        causes |= E(MHA_EFLAGS);
    }
    if (l) {
        cls = fwd_class(s->C, s->h, B, T, s->cap_btc, s->cap_bhtt);
        if (cls == SZ_MID) {
            return;
        }
        causes |= class_causes(cls);
    }
    const int full = l && cls == SZ_SMALL;
    const size_t btc = full ? (size_t)B * (size_t)T * (size_t)s->C : 0;
    const size_t bhtt = full ? (size_t)B * (size_t)s->h * (size_t)T * (size_t)T : 0;
    double cost = 3.0 * m_cost(s) + 100.0;
    if (full && !causes) {
        cost += fwd_cost(s->C, s->h, B, T) * (diff ? 2.0 : 1.0);
    }
    if (!spend(cost)) {
        return;
    }
    /* c/mha.h: a forward "grows the cache" when B*T or B*T*T is larger than any seen before (the
     * cache holds (B,T,C) and (B,h,T,T) tensors); until then pointers from mha_tensor stay valid */
    const int no_grow = full && btc <= s->cap_btc && bhtt <= s->cap_bhtt;
    double *X = NULL, *Xcopy = NULL, *own = NULL;
    if (full) {
        Xcopy = dalloc(btc);
        size_t xlen = 0;
        /* c/mha.h: X may be the layer's own MHA_T_X tensor (or any other of its tensors) */
        own = alias ? mha_tensor(l, alias_id, &xlen) : NULL;
        if (own && btc <= xlen) {
            if (alias_id == MHA_T_X) {
                fill(r, own, btc);
                s->consistent = 0;
            }
            memcpy(Xcopy, own, btc * sizeof(double));
            X = own;
        } else {
            fill(r, Xcopy, btc);
            X = ddup(Xcopy, btc);
            own = NULL;
        }
    } else {
        X = canaries(1);
    }
    double *Y = ynull ? NULL : canaries(full ? btc : 1);
    const int tame = full && within(Xcopy, btc, 1e4) && within(s->params, mha_num_params(l), 1e4);
    /* pointers into the cache before the call: still valid after a forward that does not grow it */
    const double *old_p[MHA_T_COUNT];
    size_t old_n[MHA_T_COUNT];
    for (int id = 0; id < MHA_T_COUNT; id++) {
        old_n[id] = 0;
        old_p[id] = l ? mha_tensor(l, id, &old_n[id]) : NULL;
    }
    snap_t sn;
    snap_take(l, &sn);
    TRACE("  mha_forward(%s, X%s%s, B=%d, T=%d, flags=%d, %s)%s\n", l ? "layer" : "NULL",
          xnull ? "=NULL"
          : own ? "=the layer's "
                : "",
          own ? tname(alias_id) : "", B, T, flags, ynull ? "NULL" : "Y",
          no_grow ? " [B*T not larger than seen]" : "");
    const int rc = mha_forward(l, xnull ? NULL : X, B, T, flags, Y);
    check_rc("mha_forward", rc, DOC_FORWARD, causes, 0);
    if (rc != MHA_OK) {
        snap_require(l, &sn, ALL_IDS, 0, 0, "failed forward");
        if (Y) {
            require_canaries(Y, full ? btc : 1, "Y");
        }
        goto out;
    }
    s->have_fwd = 1;
    s->B = B;
    s->T = T;
    s->flags = flags;
    s->have_bwd = 0;
    s->gc = 0;
    s->consistent = 1;
    s->att_fresh = 1;
    if (btc > s->cap_btc || bhtt > s->cap_bhtt) {
        s->cap_btc = btc > s->cap_btc ? btc : s->cap_btc;
        s->cap_bhtt = bhtt > s->cap_bhtt ? bhtt : s->cap_bhtt;
    }
    if (no_grow) {
        for (int id = 0; id < MHA_T_COUNT; id++) {
            if (old_p[id]) {
                TRACE("    reading %zu values of %s through the pointer from before\n", old_n[id],
                      tname(id));
                read_all(old_p[id], old_n[id]); /* ASan reports a use after free */
            }
        }
    }
    check_all_tensors(s);
    snap_require(l, &sn, MHA_T_WQ, MHA_T_DWO, 0, 0, "forward (weights, gradients)");
    size_t n = 0;
    const double *tx = mha_tensor(l, MHA_T_X, &n), *ty = mha_tensor(l, MHA_T_Y, &n);
    REQUIRE(diff_at(tx, Xcopy, btc, 0) == btc, "forward: cached X is not a copy of X");
    if (Y) {
        REQUIRE(diff_at(ty, Y, btc, 0) == btc, "forward: Y differs from the cached Y");
    }
    check_forward_outputs(s, tame, "forward");
    if (diff) {
        mha_layer *c = clone_layer(s, s->params);
        REQUIRE(c, "could not create a small layer");
        REQUIRE(mha_forward(c, Xcopy, B, T, flags, NULL) == MHA_OK, "forward on a fresh layer");
        require_same_layers(l, c, FWD_IDS, 0, "forward vs a fresh layer");
        mha_free(c);
    }
out:
    snap_free(&sn);
    if (!own) {
        free(X);
    }
    free(Xcopy);
    free(Y);
}

static void op_backward(rd_t *r, slot_t *s)
{
    const uint8_t opt = u8(r);
    const int dynull = opt % 32 == 31, dxnull = (opt & 3) == 1, diff = (opt & 0x30) != 0x30;
    mha_layer *l = s->l;
    unsigned causes = 0;
    if (!l || dynull) {
        causes |= E(MHA_ENULL);
    }
    if (l && !s->have_fwd) {
        causes |= E(MHA_ENOFORWARD);
    }
    const int full = l && s->have_fwd;
    const size_t btc = full ? m_btc(s) : 0;
    double cost = 3.0 * m_cost(s) + 100.0;
    if (full && !causes) {
        cost += fwd_cost(s->C, s->h, s->B, s->T) * (diff ? 5.0 : 2.0);
    }
    if (!spend(cost)) {
        return;
    }
    double *dY = dalloc(full ? btc : 1);
    if (full) {
        fill(r, dY, btc);
    } else {
        dY[0] = 1.0;
    }
    double *dX = dxnull ? NULL : canaries(full ? btc : 1);
    const int tame = full && s->have_fwd && cache_tame(s) && within(dY, btc, 1e4) &&
                     within(s->grads, mha_num_params(l), 1e250);
    snap_t sn;
    snap_take(l, &sn);
    TRACE("  mha_backward(%s, %s, %s)\n", l ? "layer" : "NULL", dynull ? "NULL" : "dY",
          dxnull ? "NULL" : "dX");
    const int rc = mha_backward(l, dynull ? NULL : dY, dX);
    check_rc("mha_backward", rc, E(MHA_ENULL) | E(MHA_ENOFORWARD), causes, 0);
    if (rc != MHA_OK) {
        snap_require(l, &sn, ALL_IDS, 0, 0, "failed backward");
        if (dX) {
            require_canaries(dX, full ? btc : 1, "dX");
        }
        goto out;
    }
    s->have_bwd = 1;
    s->gc = 0; /* c/mha.h: a backward cancels a gradient-check preparation */
    check_all_tensors(s);
    snap_require(l, &sn, MHA_T_WQ, MHA_T_WO, 0, 0, "backward (weights)");
    snap_require(l, &sn, FWD_IDS, 0, 0, "backward (forward cache)");
    size_t n = 0;
    const double *tdy = mha_tensor(l, MHA_T_DY, &n), *tdx = mha_tensor(l, MHA_T_DX, &n);
    REQUIRE(diff_at(tdy, dY, btc, 0) == btc, "backward: cached dY is not a copy of dY");
    if (dX) {
        REQUIRE(diff_at(tdx, dX, btc, 0) == btc, "backward: dX differs from the cached dX");
    }
    if (tame) {
        for (int id = MHA_T_DWQ; id <= MHA_T_DX; id++) {
            if (id > MHA_T_DWO && id < MHA_T_DY) {
                continue;
            }
            const double *p = mha_tensor(l, id, &n);
            REQUIRE(all_finite(p, n), "backward: %s not finite although the inputs were moderate",
                    tname(id));
        }
    }
    if ((s->flags & MHA_CAUSAL) && s->att_fresh) {
        /* masked keys: att == 0, so dscores == 0 exactly (where datt is finite) */
        const double *ds = mha_tensor(l, MHA_T_DSCORES, &n), *da = mha_tensor(l, MHA_T_DATT, &n);
        const double *at = mha_tensor(l, MHA_T_ATT, &n);
        const size_t T = (size_t)s->T;
        for (size_t bh = 0; bh < (size_t)s->B * (size_t)s->h; bh++) {
            for (size_t t = 0; t < T; t++) {
                const size_t row = (bh * T + t) * T;
                if (!all_finite(da + row, T) || !all_finite(at + row, T)) {
                    continue;
                }
                double dot = 0.0;
                for (size_t t2 = 0; t2 < T; t2++) {
                    dot += da[row + t2] * at[row + t2];
                }
                if (!isfinite(dot)) {
                    continue;
                }
                for (size_t t2 = t + 1; t2 < T; t2++) {
                    if (!isfinite(da[row + t2] - dot)) {
                        continue; /* 0 * (datt - dot) with an overflowing difference is NaN */
                    }
                    REQUIRE(
                        ds[row + t2] == 0.0,
                        "backward: masked dscores[%zu,%zu,%zu] = %.17g (datt %.17g, row dot %.17g)",
                        bh, t, t2, ds[row + t2], da[row + t2], dot);
                }
            }
        }
    }
    if (diff && s->consistent) {
        /* a fresh layer: same weights, forward of the same X, zero gradients, backward */
        mha_layer *c = clone_layer(s, s->params);
        REQUIRE(c, "could not create a small layer");
        const double *x = mha_tensor(l, MHA_T_X, &n);
        REQUIRE(mha_forward(c, x, s->B, s->T, s->flags, NULL) == MHA_OK,
                "forward on a fresh layer");
        REQUIRE(mha_backward(c, dY, NULL) == MHA_OK, "backward on a fresh layer");
        int zero = 1;
        const double *g0 = sn.grads;
        for (size_t i = 0; i < mha_num_params(l) && zero; i++) {
            zero = g0[i] == 0.0 && !signbit(g0[i]);
        }
        uint32_t skip = zero ? 0 : 0xFFu; /* gradients accumulate: compare only from zero */
        require_same_layers(l, c, ALL_IDS, skip, "backward vs a fresh layer");
        mha_free(c);
    }
out:
    snap_free(&sn);
    free(dY);
    free(dX);
}

static void op_zero_grad(rd_t *r, slot_t *s)
{
    mha_layer *l = u8(r) % 32 == 0 ? NULL : s->l;
    if (!spend(3.0 * m_cost(s))) {
        return;
    }
    snap_t sn;
    snap_take(l, &sn);
    TRACE("  mha_zero_grad(%s)\n", l ? "layer" : "NULL");
    const int rc = mha_zero_grad(l);
    check_rc("mha_zero_grad", rc, E(MHA_ENULL), l ? 0 : E(MHA_ENULL), 0);
    const uint32_t grads = 0xF0u;
    snap_require(l, &sn, ALL_IDS, rc == MHA_OK ? grads : 0, 0, "zero_grad (everything else)");
    snap_free(&sn);
    if (rc == MHA_OK) {
        for (size_t i = 0; i < mha_num_params(l); i++) {
            REQUIRE(bits(s->grads[i]) == 0, "zero_grad left gradient %zu = %.17g", i, s->grads[i]);
        }
    }
}

static void op_sgd(rd_t *r, slot_t *s)
{
    const double lr = pick_real(r);
    mha_layer *l = u8(r) % 32 == 0 ? NULL : s->l;
    unsigned causes = (l ? 0 : E(MHA_ENULL)) | (isfinite(lr) ? 0 : E(MHA_EVALUE));
    if (!spend(3.0 * m_cost(s) + 4.0 * (l ? (double)mha_num_params(l) : 0.0))) {
        return;
    }
    snap_t sn;
    snap_take(l, &sn);
    TRACE("  mha_sgd_step(%s, lr=%.17g)\n", l ? "layer" : "NULL", lr);
    const int rc = mha_sgd_step(l, lr);
    check_rc("mha_sgd_step", rc, E(MHA_ENULL) | E(MHA_EVALUE), causes, 0);
    if (rc != MHA_OK) {
        snap_require(l, &sn, ALL_IDS, 0, 0, "failed sgd_step");
    } else {
        s->consistent = 0;
        snap_require(l, &sn, ALL_IDS, 0x0Fu, 0, "sgd_step (everything but the weights)");
        const double *p0 = sn.params, *g = s->grads;
        for (size_t i = 0; i < mha_num_params(l); i++) {
            const double want = p0[i] - lr * g[i];
            REQUIRE(same(s->params[i], want), "sgd_step: param %zu = %.17g, expected %.17g", i,
                    s->params[i], want);
        }
    }
    snap_free(&sn);
}

static int pick_steps(rd_t *r)
{
    uint8_t b = u8(r);
    if (b < 224) {
        return b % 4;
    }
    switch (b % 4) {
    case 0: return -1;
    case 1: return INT_MIN;
    case 2: return 5;
    default: return 0;
    }
}

static void op_train(rd_t *r, slot_t *s)
{
    const int B = pick_bt(r), T = pick_bt(r), flags = pick_flags(r), steps = pick_steps(r);
    const double lr = pick_real(r);
    const uint8_t opt = u8(r);
    const int xnull = opt % 32 == 31, tnull = opt % 32 == 30, lnull = (opt & 0x60) == 0x20;
    const int tsel = (opt & 0x80) ? 1 + (opt >> 1) % 2 : 0, tid = tsel ? u8(r) : 0;
    mha_layer *l = s->l;
    unsigned causes = 0, maybe = 0;
    int cls = SZ_BAD;
    if (!l || xnull || tnull) {
        causes |= E(MHA_ENULL);
    }
    if (B <= 0 || T <= 0 || steps < 0) {
        causes |= E(MHA_EDIM);
    }
    if (flags & ~MHA_CAUSAL) {
        causes |= E(MHA_EFLAGS);
    }
    if (!isfinite(lr)) {
        causes |= E(MHA_EVALUE);
    }
    if (l) {
        cls = fwd_class(s->C, s->h, B, T, s->cap_btc, s->cap_bhtt);
        /* train reads X and target before it allocates: only sizes it must reject unread */
        if (cls == SZ_MID || cls == SZ_NOMEM) {
            return;
        }
        causes |= class_causes(cls);
    }
    const int full = l && cls == SZ_SMALL;
    const size_t btc = full ? (size_t)B * (size_t)T * (size_t)s->C : 0;
    double cost = 3.0 * m_cost(s) + 100.0;
    if (full && steps > 0) {
        cost += 2.0 * steps * (3.0 * fwd_cost(s->C, s->h, B, T) + 4.0 * mha_num_params(l)) +
                4.0 * m_cost(s);
    }
    if (!spend(cost)) {
        return;
    }
    double *X = dalloc(full ? btc : 1), *target = dalloc(full ? btc : 1);
    int in_cache = 0;
    double *talias = full ? alias_target(s, tsel, tid, btc, &in_cache) : NULL;
    if (full) {
        fill(r, X, btc);
        fill(r, target, btc);
        if (talias) { /* the values passed are the layer's; keep a copy for the checks */
            memcpy(target, talias, btc * sizeof(double));
            if (in_cache) {
                causes |= E(MHA_EALIAS);
            } else {
                maybe |= E(MHA_EALIAS);
            }
        }
        if (!all_finite(X, btc) || !all_finite(target, btc)) {
            causes |= E(MHA_EVALUE);
        }
    } else {
        X[0] = target[0] = 0.0;
    }
    const int nl = steps > 0 && steps < 100 ? steps : 1;
    double *losses = lnull ? NULL : canaries((size_t)nl);
    snap_t sn;
    snap_take(l, &sn);
    TRACE("  mha_train(%s, X%s, target%s, B=%d, T=%d, flags=%d, lr=%.17g, steps=%d, %s)\n",
          l ? "layer" : "NULL", xnull ? "=NULL" : "",
          tnull    ? "=NULL"
          : talias ? (in_cache ? " in the layer's cache" : " = the layer's weights/grads")
                   : "",
          B, T, flags, lr, steps, lnull ? "NULL" : "losses");
    const int rc = mha_train(l, xnull ? NULL : X,
                             tnull    ? NULL
                             : talias ? talias
                                      : target,
                             B, T, flags, lr, steps, losses);
    check_rc("mha_train", rc, DOC_FORWARD | E(MHA_EVALUE) | E(MHA_EDIVERGED) | E(MHA_EALIAS),
             causes, maybe | (steps > 0 ? E(MHA_EDIVERGED) : 0));
    if (rc != MHA_OK && rc != MHA_EDIVERGED) {
        snap_require(l, &sn, ALL_IDS, 0, 0, "failed train");
        if (losses) {
            require_canaries(losses, (size_t)nl, "losses");
        }
        goto out;
    }
    if (steps == 0) { /* only validates */
        snap_require(l, &sn, ALL_IDS, 0, 0, "train with steps == 0");
        if (losses) {
            require_canaries(losses, 1, "losses (steps == 0)");
        }
        goto out;
    }
    const int diverged = rc == MHA_EDIVERGED;
    s->have_fwd = 1;
    s->B = B;
    s->T = T;
    s->flags = flags;
    s->have_bwd = diverged ? 2 : 1;
    s->gc = 0;
    s->consistent = diverged;
    s->att_fresh = 1;
    {
        const size_t bhtt = (size_t)B * (size_t)s->h * (size_t)T * (size_t)T;
        s->cap_btc = btc > s->cap_btc ? btc : s->cap_btc;
        s->cap_bhtt = bhtt > s->cap_bhtt ? bhtt : s->cap_bhtt;
    }
    check_all_tensors(s);
    check_forward_outputs(s, 0, "train");
    if (talias) {
        goto out; /* the target was the weights or gradients, which every step changes */
    }
    /* the documented loop on a fresh layer with the weights from before */
    mha_layer *c = clone_layer(s, snap_params(&sn));
    REQUIRE(c, "could not create a small layer");
    double *ml = dalloc((size_t)steps), *dY = dalloc(btc);
    int cdiv = 0;
    for (int k = 0; k < steps; k++) {
        size_t n = 0;
        REQUIRE(mha_zero_grad(c) == MHA_OK, "zero_grad");
        REQUIRE(mha_forward(c, X, B, T, flags, NULL) == MHA_OK, "forward (fresh layer)");
        const double *y = mha_tensor(c, MHA_T_Y, &n);
        REQUIRE(mha_mse_loss(y, target, btc, &ml[k], dY) == MHA_OK, "mse_loss");
        if (!isfinite(ml[k])) {
            for (int q = k + 1; q < steps; q++) {
                ml[q] = NAN;
            }
            cdiv = 1;
            break;
        }
        REQUIRE(mha_backward(c, dY, NULL) == MHA_OK, "backward (fresh layer)");
        REQUIRE(mha_sgd_step(c, lr) == MHA_OK, "sgd_step (fresh layer)");
    }
    REQUIRE(diverged == cdiv, "train returned %d, but the documented loop %s", rc,
            cdiv ? "diverged" : "did not diverge");
    if (losses) {
        const size_t at = diff_at(losses, ml, (size_t)steps, 1);
        REQUIRE(at == (size_t)steps, "train: losses[%zu] = %.17g, the loop gives %.17g", at,
                losses[at < (size_t)steps ? at : 0], ml[at < (size_t)steps ? at : 0]);
    }
    require_same_layers(l, c, ALL_IDS, diverged ? 0xFFFFFFFFu << MHA_T_DY : 0, "train vs the loop");
    free(ml);
    free(dY);
    mha_free(c);
out:
    snap_free(&sn);
    free(X);
    free(target);
    free(losses);
}

/* number of elements of checked tensor `which` for the model's last forward */
static size_t check_n(const slot_t *s, int which)
{
    if (which < 0 || which >= MHA_CHECK_COUNT) {
        return 0;
    }
    if (which <= MHA_CHECK_WO) {
        return (size_t)s->C * (size_t)s->C;
    }
    return which == MHA_CHECK_SCORES || which == MHA_CHECK_ATT ? m_bhtt(s) : m_btc(s);
}
static size_t positions_of(size_t n, int samples)
{
    return samples == 0 || (size_t)samples >= n ? n : (size_t)samples;
}
/* the tensor (and its gradient) that checked tensor `which` perturbs */
static int check_tensor_id(int which, int grad)
{
    static const int p[MHA_CHECK_COUNT] = {MHA_T_WQ,     MHA_T_WK,  MHA_T_WV,      MHA_T_WO,
                                           MHA_T_X,      MHA_T_Q,   MHA_T_K,       MHA_T_V,
                                           MHA_T_SCORES, MHA_T_ATT, MHA_T_HEADOUT, MHA_T_CONCAT};
    static const int g[MHA_CHECK_COUNT] = {
        MHA_T_DWQ, MHA_T_DWK, MHA_T_DWV,     MHA_T_DWO,  MHA_T_DX,       MHA_T_DQ,
        MHA_T_DK,  MHA_T_DV,  MHA_T_DSCORES, MHA_T_DATT, MHA_T_DHEADOUT, MHA_T_DCONCAT};
    return grad ? g[which] : p[which];
}

static void row_init(mha_check_row *row)
{
    memset(row, 0, sizeof *row);
    row->worst = -1.0;
}
static int rows_same(const mha_check_row *a, const mha_check_row *b)
{
    return same(a->size, b->size) && same(a->checked, b->checked) && same(a->max_abs, b->max_abs) &&
           same(a->max_rel, b->max_rel) && same(a->worst, b->worst) &&
           same(a->analytic, b->analytic) && same(a->numeric, b->numeric) &&
           same(a->mean_rel, b->mean_rel) && same(a->ss_diff, b->ss_diff) &&
           same(a->ss_analytic, b->ss_analytic) && same(a->ss_numeric, b->ss_numeric) &&
           same(a->norm_rel, b->norm_rel);
}
static void check_row(const slot_t *s, int which, const mha_check_row *row, size_t checked,
                      int prefilled, const char *what)
{
    const size_t n = check_n(s, which);
    REQUIRE(row->size == (double)n, "%s: row %d size %.17g, expected %zu", what, which, row->size,
            n);
    REQUIRE(row->checked == (double)checked, "%s: row %d checked %.17g, expected %zu", what, which,
            row->checked, checked);
    if (checked == 0) {
        return;
    }
    REQUIRE(row->worst >= 0 && row->worst < (double)n && row->worst == floor(row->worst),
            "%s: row %d worst index %.17g", what, which, row->worst);
    REQUIRE(row->max_rel >= 0 && row->max_abs >= 0 && row->mean_rel >= 0,
            "%s: row %d negative or NaN errors", what, which);
    /* cs231n's form |a - n| / max(|a| + |n|, floor): at most 1 by the triangle inequality, or
     * infinite where a gradient is not finite */
    REQUIRE(row->max_rel_sum == INFINITY ||
                (row->max_rel_sum >= 0 && row->max_rel_sum <= 1.0 + 1e-12),
            "%s: row %d max_rel_sum %.17g outside [0, 1]", what, which, row->max_rel_sum);
    REQUIRE(row->mean_rel <= row->max_rel * (1.0 + 1e-12),
            "%s: row %d mean_rel %.17g > max_rel %.17g", what, which, row->mean_rel, row->max_rel);
    /* norm-wise error: in [0, 1] (triangle inequality) or infinite, and at most max_rel up to the
     * entries below MHA_GRADCHECK_TINY, whose per-entry error is measured against TINY:
     * sum d^2 <= max_rel^2 (sum (a^2 + n^2) + checked TINY^2) */
    const double norms = sqrt(row->ss_analytic) + sqrt(row->ss_numeric);
    const double tiny = MHA_GRADCHECK_TINY;
    const double bound =
        norms > 0 && row->max_rel > 0
            ? row->max_rel * sqrt(1.0 + row->checked * tiny * tiny / (norms * norms))
            : 0.0;
    REQUIRE(row->norm_rel == INFINITY || (row->norm_rel >= 0 && row->norm_rel <= 1.0 + 1e-12 &&
                                          row->norm_rel <= bound * (1.0 + 1e-12) + 1e-300),
            "%s: row %d norm_rel %.17g (max_rel %.17g)", what, which, row->norm_rel, row->max_rel);
    size_t len = 0;
    const double *g = mha_tensor(s->l, check_tensor_id(which, 1), &len);
    if (g && len == n && !prefilled) {
        REQUIRE(same(row->analytic, g[(size_t)row->worst]),
                "%s: row %d analytic %.17g is not the gradient at its worst index (%.17g)", what,
                which, row->analytic, g[(size_t)row->worst]);
    }
}

/* common arguments of gradcheck and gradcheck_prepare */
typedef struct {
    int B, T, flags, kind, xnull, auxnull, cls, full, asel, aid, in_cache;
    size_t btc;
    double *X, *aux; /* the harness's copies of what is passed */
    double *aux_arg; /* aux passed: a->aux or an array inside the layer */
    unsigned causes, maybe;
} gc_args;

static int gc_args_read(rd_t *r, slot_t *s, gc_args *a)
{
    memset(a, 0, sizeof *a);
    a->B = pick_bt(r);
    a->T = pick_bt(r);
    a->flags = pick_flags(r);
    a->kind = pick_kind(r);
    const uint8_t opt = u8(r);
    a->xnull = opt % 32 == 31;
    a->auxnull = opt % 32 == 30;
    a->asel = (opt & 0x80) ? 1 + (opt >> 1) % 2 : 0;
    a->aid = a->asel ? u8(r) : 0;
    mha_layer *l = s->l;
    if (!l || a->xnull || a->auxnull) {
        a->causes |= E(MHA_ENULL);
    }
    if (a->B <= 0 || a->T <= 0) {
        a->causes |= E(MHA_EDIM);
    }
    if (a->flags & ~(MHA_CAUSAL | MHA_CHECK_TWO_POINT)) { /* the check's own flag is allowed */
        a->causes |= E(MHA_EFLAGS);
    }
    if (a->kind != MHA_LOSS_DOT && a->kind != MHA_LOSS_MSE) {
        a->causes |= E(MHA_ELOSS);
    }
    a->cls = SZ_BAD;
    if (l) {
        a->cls = fwd_class(s->C, s->h, a->B, a->T, s->cap_btc, s->cap_bhtt);
        if (a->cls == SZ_MID || a->cls == SZ_NOMEM) {
            return 0;
        }
        a->causes |= class_causes(a->cls);
    }
    a->full = l && a->cls == SZ_SMALL;
    a->btc = a->full ? (size_t)a->B * (size_t)a->T * (size_t)s->C : 0;
    return 1;
}
static void gc_args_fill(rd_t *r, const slot_t *s, gc_args *a)
{
    a->X = dalloc(a->full ? a->btc : 1);
    a->aux = dalloc(a->full ? a->btc : 1);
    a->aux_arg = a->aux;
    if (a->full) {
        fill(r, a->X, a->btc);
        fill(r, a->aux, a->btc);
        double *p = alias_target(s, a->asel, a->aid, a->btc, &a->in_cache);
        if (p) { /* aux inside the layer: MHA_EALIAS (cache) or either answer (weights/grads) */
            memcpy(a->aux, p, a->btc * sizeof(double));
            a->aux_arg = p;
            if (a->in_cache) {
                a->causes |= E(MHA_EALIAS);
            } else {
                a->maybe |= E(MHA_EALIAS);
            }
        }
    } else {
        a->X[0] = a->aux[0] = 0.0;
    }
}
static const char *aux_desc(const gc_args *a)
{
    return a->auxnull             ? "=NULL"
           : a->aux_arg == a->aux ? ""
           : a->in_cache          ? " in the layer's cache"
                                  : " = the layer's weights/grads";
}
static void gc_model_after(slot_t *s, const gc_args *a, int gc)
{
    s->have_fwd = 1;
    s->B = a->B;
    s->T = a->T;
    s->flags = a->flags & MHA_CAUSAL; /* the forward pass the layer holds */
    s->have_bwd = 1;
    s->gc = gc;
    s->consistent = 1;
    s->att_fresh = 1;
    const size_t bhtt = (size_t)a->B * (size_t)s->h * (size_t)a->T * (size_t)a->T;
    s->cap_btc = a->btc > s->cap_btc ? a->btc : s->cap_btc;
    s->cap_bhtt = bhtt > s->cap_bhtt ? bhtt : s->cap_bhtt;
}
/* what gradcheck_prepare must leave: the forward and backward of the loss on a fresh layer */
static void require_prepared(slot_t *s, const gc_args *a, const double *params, const char *what)
{
    mha_layer *c = clone_layer(s, params);
    REQUIRE(c, "could not create a small layer");
    size_t n = 0;
    REQUIRE(mha_forward(c, a->X, a->B, a->T, a->flags & MHA_CAUSAL, NULL) == MHA_OK,
            "forward (fresh layer)");
    double *dY = dalloc(a->btc);
    if (a->kind == MHA_LOSS_MSE) {
        double loss;
        REQUIRE(mha_mse_loss(mha_tensor(c, MHA_T_Y, &n), a->aux, a->btc, &loss, dY) == MHA_OK,
                "mse");
    } else {
        memcpy(dY, a->aux, a->btc * sizeof(double));
    }
    REQUIRE(mha_backward(c, dY, NULL) == MHA_OK, "backward (fresh layer)");
    require_same_layers(s->l, c, ALL_IDS, 0, what);
    free(dY);
    mha_free(c);
}

static void op_prepare(rd_t *r, slot_t *s)
{
    gc_args a;
    if (!gc_args_read(r, s, &a)) {
        return;
    }
    double cost = 3.0 * m_cost(s) + 100.0;
    if (a.full && !a.causes) {
        cost += 7.0 * fwd_cost(s->C, s->h, a.B, a.T) + 3.0 * m_cost(s);
    }
    if (!spend(cost)) {
        return;
    }
    gc_args_fill(r, s, &a);
    mha_layer *l = s->l;
    snap_t sn;
    snap_take(l, &sn);
    TRACE("  mha_gradcheck_prepare(%s, X%s, B=%d, T=%d, flags=%d, loss=%d, aux%s)\n",
          l ? "layer" : "NULL", a.xnull ? "=NULL" : "", a.B, a.T, a.flags, a.kind, aux_desc(&a));
    const int rc = mha_gradcheck_prepare(l, a.xnull ? NULL : a.X, a.B, a.T, a.flags, a.kind,
                                         a.auxnull ? NULL : a.aux_arg);
    check_rc("mha_gradcheck_prepare", rc, DOC_FORWARD | E(MHA_ELOSS) | E(MHA_EALIAS), a.causes,
             a.maybe);
    if (rc != MHA_OK) {
        snap_require(l, &sn, ALL_IDS, 0, 0, "failed gradcheck_prepare");
    } else {
        gc_model_after(s, &a, 1);
        check_all_tensors(s);
        snap_require(l, &sn, MHA_T_WQ, MHA_T_WO, 0, 0, "gradcheck_prepare (weights)");
        check_forward_outputs(s, 0, "gradcheck_prepare");
        require_prepared(s, &a, snap_params(&sn), "gradcheck_prepare vs a fresh layer");
    }
    snap_free(&sn);
    free(a.X);
    free(a.aux);
}

static void op_gradcheck(rd_t *r, slot_t *s)
{
    gc_args a;
    if (!gc_args_read(r, s, &a)) {
        return;
    }
    const double eps = pick_eps(r);
    const int samples = pick_samples(r);
    const uint8_t opt = u8(r);
    const int rnull = opt % 32 == 31, diff = (opt & 0x60) != 0x60;
    if (rnull) {
        a.causes |= E(MHA_ENULL);
    }
    if (!isfinite(eps) || eps <= 0.0) {
        a.causes |= E(MHA_EVALUE);
    }
    if (samples < 0) {
        a.causes |= E(MHA_EDIM);
    }
    double cost = 3.0 * m_cost(s) + 100.0;
    size_t total = 0;
    if (a.full && !a.causes) {
        slot_t m = *s;
        m.B = a.B;
        m.T = a.T;
        for (int w = 0; w < MHA_CHECK_COUNT; w++) {
            total += positions_of(check_n(&m, w), samples);
        }
        const double f = fwd_cost(s->C, s->h, a.B, a.T);
        cost += (3.0 * f + 4.0 * f * (double)total + 3.0 * m_cost(&m)) * (diff ? 2.0 : 1.0);
    }
    if (!spend(cost)) {
        return;
    }
    gc_args_fill(r, s, &a);
    mha_layer *l = s->l;
    mha_check_row *report = xmalloc(MHA_CHECK_COUNT * sizeof *report);
    for (size_t i = 0; i < MHA_CHECK_COUNT * sizeof *report / sizeof(double); i++) {
        ((double *)report)[i] = CANARY;
    }
    snap_t sn;
    snap_take(l, &sn);
    TRACE("  mha_gradcheck(%s, X%s, B=%d, T=%d, flags=%d, loss=%d, aux%s, eps=%.17g, samples=%d, "
          "%s)\n",
          l ? "layer" : "NULL", a.xnull ? "=NULL" : "", a.B, a.T, a.flags, a.kind, aux_desc(&a),
          eps, samples, rnull ? "NULL" : "report");
    const int rc = mha_gradcheck(l, a.xnull ? NULL : a.X, a.B, a.T, a.flags, a.kind,
                                 a.auxnull ? NULL : a.aux_arg, eps, samples, rnull ? NULL : report);
    check_rc("mha_gradcheck", rc, DOC_FORWARD | E(MHA_ELOSS) | E(MHA_EVALUE) | E(MHA_EALIAS),
             a.causes, a.maybe);
    if (rc != MHA_OK) {
        snap_require(l, &sn, ALL_IDS, 0, 0, "failed gradcheck");
        require_canaries((double *)report, MHA_CHECK_COUNT * sizeof *report / sizeof(double),
                         "report");
        goto out;
    }
    gc_model_after(s, &a, 2);
    check_all_tensors(s);
    snap_require(l, &sn, MHA_T_WQ, MHA_T_WO, 0, 0,
                 "gradcheck (the weights must be exactly as before)");
    {
        size_t n = 0;
        const double *tx = mha_tensor(l, MHA_T_X, &n);
        REQUIRE(diff_at(tx, a.X, a.btc, 0) == a.btc,
                "gradcheck: cached X is not the unperturbed X");
    }
    check_forward_outputs(s, 0, "gradcheck");
    for (int w = 0; w < MHA_CHECK_COUNT; w++) {
        check_row(s, w, &report[w], positions_of(check_n(s, w), samples), 0, "gradcheck");
    }
    /* smooth moderate data (softmax far from saturation): the five-point stencil agrees closely
     * (two-point's truncation error at this eps is eps^2 f'''/6, not bounded here) */
    size_t nsc = 0;
    const double *sc = mha_tensor(l, MHA_T_SCORES, &nsc);
    if (eps == MHA_GRADCHECK_EPS && !(a.flags & MHA_CHECK_TWO_POINT) && within(a.X, a.btc, 4.0) &&
        within(a.aux, a.btc, 4.0) && within(snap_params(&sn), mha_num_params(l), 1.5) &&
        s->C <= 16 && within(sc, nsc, 20.0)) {
        for (int w = 0; w < MHA_CHECK_COUNT; w++) {
            REQUIRE(report[w].max_abs <= 1e-6,
                    "gradcheck on moderate data: %s max_abs %.3g (analytic %.17g numeric %.17g at "
                    "%.0f)",
                    mha_check_name(w), report[w].max_abs, report[w].analytic, report[w].numeric,
                    report[w].worst);
        }
    }
    if (diff) {
        /* the same check in pieces, on a fresh layer with the same weights: the same bits */
        mha_layer *c = clone_layer(s, snap_params(&sn));
        REQUIRE(c, "could not create a small layer");
        REQUIRE(mha_gradcheck_prepare(c, a.X, a.B, a.T, a.flags, a.kind, a.aux) == MHA_OK,
                "gradcheck_prepare (fresh layer)");
        uint64_t seed = (uint64_t)u16(r);
        for (int w = 0; w < MHA_CHECK_COUNT; w++) {
            mha_check_row row;
            row_init(&row);
            const size_t pos = positions_of(check_n(s, w), samples);
            size_t first = 0;
            do {
                const size_t count = pos - first == 0 ? 0 : 1 + sm_next(&seed) % (pos - first);
                REQUIRE(mha_gradcheck_slice(c, w, samples, (int)first, (int)count, eps, &row) ==
                            MHA_OK,
                        "gradcheck_slice (fresh layer)");
                first += count;
            } while (first < pos);
            REQUIRE(rows_same(&row, &report[w]),
                    "gradcheck row %s differs from prepare + slices: max_rel %.17g vs %.17g, "
                    "mean_rel %.17g vs %.17g, worst %.0f vs %.0f",
                    mha_check_name(w), report[w].max_rel, row.max_rel, report[w].mean_rel,
                    row.mean_rel, report[w].worst, row.worst);
        }
        require_same_layers(l, c, ALL_IDS, 0, "gradcheck vs prepare + slices on a fresh layer");
        mha_free(c);
    }
out:
    snap_free(&sn);
    free(report);
    free(a.X);
    free(a.aux);
}

static void op_slice(rd_t *r, slot_t *s)
{
    uint8_t b = u8(r);
    int which;
    if (b < 224) {
        which = b % MHA_CHECK_COUNT;
    } else {
        static const int odd[6] = {-1, MHA_CHECK_COUNT, MHA_CHECK_COUNT + 1, INT_MAX, INT_MIN, 100};
        which = odd[b % 6];
    }
    const int samples = pick_samples(r);
    const size_t n = s->l && s->have_fwd ? check_n(s, which) : 0;
    const size_t pos = positions_of(n, samples < 0 ? 0 : samples);
    int first, count;
    b = u8(r);
    if (b < 192) {
        first = (int)(b % (pos + 1));
    } else {
        static const int odd[4] = {-1, INT_MAX, INT_MIN, 0};
        first = b % 8 < 4 ? odd[b % 4] : (int)pos + (b % 8 - 4);
    }
    b = u8(r);
    const size_t left = first >= 0 && (size_t)first <= pos ? pos - (size_t)first : 0;
    if (b < 192) {
        count = (int)(b % (left + 1));
    } else {
        static const int odd[4] = {-1, INT_MAX, INT_MIN, 0};
        count = b % 8 < 4 ? odd[b % 4] : (int)left + (b % 8 - 4);
    }
    const double eps = pick_eps(r);
    const uint8_t opt = u8(r);
    const int rnull = opt % 32 == 31;
    mha_layer *l = opt % 32 == 30 ? NULL : s->l;
    unsigned causes = 0, maybe = 0;
    if (!l || rnull) {
        causes |= E(MHA_ENULL);
    }
    if (l && s->gc == 0) {
        causes |= E(MHA_ENOFORWARD);
    } else if (l && s->gc == 2) {
        maybe |= E(MHA_ENOFORWARD);
    }
    if (!isfinite(eps) || eps <= 0.0) {
        causes |= E(MHA_EVALUE);
    }
    if (samples < 0 || first < 0 || count < 0) {
        causes |= E(MHA_EDIM);
    }
    if (which < 0 || which >= MHA_CHECK_COUNT) {
        causes |= E(MHA_ETENSOR);
    } else if (!(causes & E(MHA_EDIM)) &&
               ((size_t)first > pos || (size_t)count > pos - (size_t)first)) {
        if (s->gc != 0) {
            causes |= E(MHA_ERANGE);
        } else {
            maybe |= E(MHA_ERANGE); /* the order of the checks is not documented */
        }
    }
    double cost = 3.0 * m_cost(s) + 100.0;
    if (!causes && l) {
        cost += 4.0 * (double)count * fwd_cost(s->C, s->h, s->B, s->T);
    }
    if (!spend(cost)) {
        return;
    }
    mha_check_row row, before;
    row_init(&row);
    if (u8(r) & 1) { /* a row already holding a previous slice's figures */
        row.size = (double)n;
        row.checked = 2.0;
        row.max_abs = 1e-9;
        row.max_rel = 1e-6;
        row.worst = 0.0;
        row.mean_rel = 5e-7;
    }
    before = row;
    snap_t sn;
    snap_take(l, &sn);
    TRACE("  mha_gradcheck_slice(%s, which=%d, samples=%d, first=%d, count=%d, eps=%.17g, %s)\n",
          l ? "layer" : "NULL", which, samples, first, count, eps, rnull ? "NULL" : "row");
    const int rc = mha_gradcheck_slice(l, which, samples, first, count, eps, rnull ? NULL : &row);
    check_rc("mha_gradcheck_slice", rc,
             DOC_FORWARD | E(MHA_ELOSS) | E(MHA_EVALUE) | E(MHA_ERANGE) | E(MHA_ETENSOR) |
                 E(MHA_ENOFORWARD),
             causes, maybe);
    if (rc != MHA_OK) {
        snap_require(l, &sn, ALL_IDS, 0, 0, "failed gradcheck_slice");
        REQUIRE(memcmp(&row, &before, sizeof row) == 0, "failed gradcheck_slice modified the row");
    } else {
        /* the weights are restored exactly; a consistent cache is restored to the same bits */
        snap_require(l, &sn, MHA_T_WQ, MHA_T_WO, 0, 0, "gradcheck_slice (weights)");
        if (s->consistent) {
            snap_require(l, &sn, ALL_IDS, 0, 1, "gradcheck_slice (cache)");
        }
        if (s->gc == 1) {
            check_row(s, which, &row, (size_t)before.checked + (size_t)count, before.worst >= 0,
                      "gradcheck_slice");
        }
    }
    snap_free(&sn);
}

static int pick_stage(rd_t *r)
{
    static const int valid[7] = {MHA_T_Q,   MHA_T_K,       MHA_T_V,     MHA_T_SCORES,
                                 MHA_T_ATT, MHA_T_HEADOUT, MHA_T_CONCAT};
    uint8_t b = u8(r);
    if (b < 200) {
        return valid[b % 7];
    }
    static const int odd[8] = {MHA_T_X, MHA_T_Y,     MHA_T_WQ, MHA_T_DQ,
                               -1,      MHA_T_COUNT, INT_MAX,  INT_MIN};
    return b % 9 < 8 ? odd[b % 9] : (int)u32(r);
}

static void op_forward_from(rd_t *r, slot_t *s)
{
    const int stage = pick_stage(r);
    mha_layer *l = u8(r) % 32 == 0 ? NULL : s->l;
    unsigned causes = 0;
    const int valid = stage == MHA_T_Q || stage == MHA_T_K || stage == MHA_T_V ||
                      stage == MHA_T_SCORES || stage == MHA_T_ATT || stage == MHA_T_HEADOUT ||
                      stage == MHA_T_CONCAT;
    if (!l) {
        causes |= E(MHA_ENULL);
    }
    if (!valid) {
        causes |= E(MHA_ETENSOR);
    }
    if (l && !s->have_fwd) {
        causes |= E(MHA_ENOFORWARD);
    }
    double cost = 4.0 * m_cost(s) + 100.0;
    if (!causes) {
        cost += 2.0 * fwd_cost(s->C, s->h, s->B, s->T);
    }
    if (!spend(cost)) {
        return;
    }
    const int tame = !causes && cache_tame(s);
    snap_t sn;
    snap_take(l, &sn);
    TRACE("  mha_forward_from(%s, stage=%d %s)\n", l ? "layer" : "NULL", stage,
          valid ? mha_tensor_name(stage) : "");
    const int rc = mha_forward_from(l, stage);
    check_rc("mha_forward_from", rc, E(MHA_ENULL) | E(MHA_ENOFORWARD) | E(MHA_ETENSOR), causes, 0);
    if (rc != MHA_OK) {
        snap_require(l, &sn, ALL_IDS, 0, 0, "failed forward_from");
        snap_free(&sn);
        return;
    }
    s->have_bwd = 0;
    s->gc = 0;
    /* c/mha.h: from Q or K, scores and att are recomputed; from scores, att is; V starts at headout */
    const int recompute_att = stage == MHA_T_Q || stage == MHA_T_K || stage == MHA_T_SCORES;
    if (recompute_att) {
        s->att_fresh = 1;
    }
    check_all_tensors(s);
    snap_require(l, &sn, MHA_T_WQ, MHA_T_DWO, 0, 0, "forward_from (weights, gradients)");
    /* upstream of the stage nothing changes; a consistent cache recomputes to the same bits */
    snap_require(l, &sn, MHA_T_X, stage <= MHA_T_V ? MHA_T_V : stage, 0, 0,
                 "forward_from (upstream tensors)");
    if (s->consistent) {
        snap_require(l, &sn, FWD_IDS, 0, 1, "forward_from on an unedited cache");
    }
    if (stage == MHA_T_Q || stage == MHA_T_K) {
        /* scores = Q K^T / sqrt(hs), recomputed from the cached Q and K */
        size_t n = 0;
        const double *Q = mha_tensor(l, MHA_T_Q, &n), *K = mha_tensor(l, MHA_T_K, &n);
        const double *S = mha_tensor(l, MHA_T_SCORES, &n);
        const size_t T = (size_t)s->T, hs = (size_t)(s->C / s->h);
        const double root = sqrt((double)hs);
        for (size_t bh = 0; bh < (size_t)s->B * (size_t)s->h; bh++) {
            for (size_t i = 0; i < T; i++) {
                for (size_t j = 0; j < T; j++) {
                    double acc = 0.0, mag = 0.0;
                    for (size_t k = 0; k < hs; k++) {
                        acc += Q[(bh * T + i) * hs + k] * K[(bh * T + j) * hs + k];
                        mag += fabs(Q[(bh * T + i) * hs + k] * K[(bh * T + j) * hs + k]);
                    }
                    acc /= root;
                    mag /= root;
                    const double got = S[(bh * T + i) * T + j];
                    if (!isfinite(mag)) {
                        continue;
                    }
                    REQUIRE(fabs(got - acc) <= 1e-13 * mag + 1e-300,
                            "forward_from(%s): scores[%zu,%zu,%zu] = %.17g, but Q K^T/sqrt(hs) = "
                            "%.17g: scores were not recomputed",
                            tname(stage), bh, i, j, got, acc);
                }
            }
        }
    }
    check_forward_outputs(s, tame, "forward_from");
    snap_free(&sn);
}

static int pick_tensor_id(rd_t *r)
{
    uint8_t b = u8(r);
    if (b < 232) {
        return b % MHA_T_COUNT;
    }
    static const int odd[6] = {-1, MHA_T_COUNT, INT_MIN, INT_MAX, 100, -100};
    return b % 7 < 6 ? odd[b % 7] : (int)u32(r);
}

static void op_tensor(rd_t *r, slot_t *s)
{
    const int id = pick_tensor_id(r);
    const uint8_t opt = u8(r);
    if (!spend(m_cost(s))) {
        return;
    }
    TRACE("  mha_tensor(%s, id=%d)\n", s->l ? "layer" : "NULL", id);
    check_tensor(s, id, (opt & 7) == 7);
    int rank = 0, dims[4];
    if ((opt & 0x18) == 0x08) {
        REQUIRE(mha_tensor_shape(s->l, id, NULL, dims) == MHA_ENULL, "tensor_shape(rank = NULL)");
    } else if ((opt & 0x18) == 0x10) {
        REQUIRE(mha_tensor_shape(s->l, id, &rank, NULL) == MHA_ENULL, "tensor_shape(dims = NULL)");
    }
}

/* edit entries of a tensor (or the parameter/gradient buffers) in place, as the page does */
static void op_write(rd_t *r, slot_t *s)
{
    const int id = pick_tensor_id(r);
    const int k = 1 + u8(r) % 4;
    if (!s->l || !spend(100.0 + m_cost(s))) {
        return;
    }
    size_t len = 0;
    double *p = mha_tensor(s->l, id, &len);
    if (!p) {
        return;
    }
    for (int j = 0; j < k; j++) {
        const size_t i = u16(r) % len;
        const uint8_t b = u8(r);
        const double v = b < 128   ? p[i] + 1e-3 * (double)((int)b - 64)
                         : b < 192 ? SPECIAL[b % 16]
                                   : pick_real(r);
        TRACE("  %s[%zu] = %.17g\n", tname(id), i, v);
        p[i] = v;
    }
    if (tkind(id) == 0 && id <= MHA_T_WO) {
        s->consistent = 0;
    } else if (id >= MHA_T_X && id <= MHA_T_Y) {
        s->consistent = 0;
        if (id == MHA_T_ATT || id == MHA_T_SCORES) {
            s->att_fresh = 0;
        }
    }
}

static void op_split_merge(rd_t *r)
{
    const int B = pick_bt(r), T = pick_bt(r);
    int C = pick_C(r);
    if (C > 16 && C <= 64) {
        C = 1 + C % 16;
    }
    const int h = pick_h(r, C);
    const uint8_t opt = u8(r);
    const int xnull = opt % 32 == 31, onull = opt % 32 == 30;
    unsigned causes = 0;
    if (xnull || onull) {
        causes |= E(MHA_ENULL);
    }
    int full = 0;
    size_t n = 0;
    if (B <= 0 || T <= 0 || C <= 0 || h <= 0) {
        causes |= E(MHA_EDIM);
    } else {
        if (C % h != 0) {
            causes |= E(MHA_EDIVISIBLE);
        }
        const u128 btc = (u128)B * (u128)T * (u128)C;
        if (btc * 8 > SIZE_MAX) {
            causes |= E(MHA_EOVERFLOW);
        } else if (btc * 8 <= SMALL_BYTES) {
            full = 1;
            n = (size_t)btc;
        } else {
            return;
        }
    }
    if (!spend(10.0 * (double)n + 100.0)) {
        return;
    }
    double *x = dalloc(full ? n : 1), *y = canaries(full ? n : 1), *z = canaries(full ? n : 1);
    if (full) {
        fill(r, x, n);
    } else {
        x[0] = 1.0;
    }
    const unsigned doc = E(MHA_ENULL) | E(MHA_EDIM) | E(MHA_EDIVISIBLE) | E(MHA_EOVERFLOW);
    TRACE("  mha_split_heads(x%s, B=%d, T=%d, C=%d, h=%d, out%s)\n", xnull ? "=NULL" : "", B, T, C,
          h, onull ? "=NULL" : "");
    int rc = mha_split_heads(xnull ? NULL : x, B, T, C, h, onull ? NULL : y);
    check_rc("mha_split_heads", rc, doc, causes, 0);
    if (rc != MHA_OK) {
        require_canaries(y, full ? n : 1, "split_heads out");
    } else {
        const size_t hs = (size_t)(C / h);
        for (size_t b = 0; b < (size_t)B; b++) {
            for (size_t hd = 0; hd < (size_t)h; hd++) {
                for (size_t t = 0; t < (size_t)T; t++) {
                    for (size_t d = 0; d < hs; d++) {
                        const size_t i = ((b * (size_t)h + hd) * (size_t)T + t) * hs + d;
                        const size_t j = (b * (size_t)T + t) * (size_t)C + hd * hs + d;
                        REQUIRE(bits(y[i]) == bits(x[j]), "split_heads: out[%zu,%zu,%zu,%zu] != x",
                                b, hd, t, d);
                    }
                }
            }
        }
    }
    TRACE("  mha_merge_heads(...)\n");
    rc = mha_merge_heads(xnull ? NULL : (rc == MHA_OK ? y : x), B, T, C, h, onull ? NULL : z);
    check_rc("mha_merge_heads", rc, doc, causes, 0);
    if (rc != MHA_OK) {
        require_canaries(z, full ? n : 1, "merge_heads out");
    } else {
        REQUIRE(memcmp(x, z, n * sizeof(double)) == 0, "merge_heads(split_heads(x)) != x");
    }
    free(x);
    free(y);
    free(z);
}

static void op_single_head(rd_t *r)
{
    const int B = pick_bt(r), T = pick_bt(r);
    int C = pick_C(r), hs = pick_C(r);
    if (C > 16 && C <= 64) {
        C = 1 + C % 16;
    }
    if (hs > 16 && hs <= 64) {
        hs = 1 + hs % 16;
    }
    const int flags = pick_flags(r);
    const uint8_t opt = u8(r);
    const int xnull = opt % 32 == 31, wnull = opt % 32 == 30;
    const int anull = (opt & 0x60) == 0x20, onull = (opt & 0x60) == 0x40;
    unsigned causes = 0;
    if (xnull || wnull) {
        causes |= E(MHA_ENULL);
    }
    if (flags & ~MHA_CAUSAL) {
        causes |= E(MHA_EFLAGS);
    }
    int full = 0;
    size_t btc = 0, chs = 0, btt = 0, bths = 0;
    if (B <= 0 || T <= 0 || C <= 0 || hs <= 0) {
        causes |= E(MHA_EDIM);
    } else {
        const u128 bt = (u128)B * (u128)T;
        const u128 tmp = (3 * bt * (u128)hs + bt * (u128)T) * 8;
        const u128 x = bt * (u128)C * 8, w = (u128)C * (u128)hs * 8;
        if (tmp > SIZE_MAX || x > SIZE_MAX) {
            causes |= E(MHA_EOVERFLOW);
        } else if (tmp > NOMEM_BYTES) {
            causes |= E(MHA_ENOMEM);
        } else if (tmp <= SMALL_BYTES && x <= SMALL_BYTES && w <= SMALL_BYTES) {
            full = 1;
            btc = (size_t)(bt * (u128)C);
            chs = (size_t)C * (size_t)hs;
            btt = (size_t)(bt * (u128)T);
            bths = (size_t)(bt * (u128)hs);
        } else {
            return;
        }
    }
    double cost = 100.0;
    if (full) {
        cost += 8.0 * (double)btc * hs + 4.0 * (double)btt * hs + 10.0 * (double)btt;
    }
    if (!spend(cost)) {
        return;
    }
    double *X = dalloc(full ? btc : 1), *W[3];
    for (int k = 0; k < 3; k++) {
        W[k] = dalloc(full ? chs : 1);
    }
    if (full) {
        fill(r, X, btc);
        for (int k = 0; k < 3; k++) {
            fill(r, W[k], chs);
        }
    } else {
        X[0] = W[0][0] = W[1][0] = W[2][0] = 0.0;
    }
    double *att = anull ? NULL : canaries(full ? btt : 1);
    double *out = onull ? NULL : canaries(full ? bths : 1);
    const int tame = full && within(X, btc, 1e4) && within(W[0], chs, 1e4) &&
                     within(W[1], chs, 1e4) && within(W[2], chs, 1e4);
    TRACE("  mha_single_head(X%s, B=%d, T=%d, C=%d, hs=%d, W%s, flags=%d, %s, %s)\n",
          xnull ? "=NULL" : "", B, T, C, hs, wnull ? "k=NULL" : "", flags, anull ? "NULL" : "att",
          onull ? "NULL" : "out");
    const int rc = mha_single_head(xnull ? NULL : X, B, T, C, hs, W[0], wnull ? NULL : W[1], W[2],
                                   flags, att, out);
    check_rc("mha_single_head", rc, DOC_FORWARD, causes, 0);
    if (rc != MHA_OK) {
        if (att) {
            require_canaries(att, full ? btt : 1, "single_head att");
        }
        if (out) {
            require_canaries(out, full ? bths : 1, "single_head out");
        }
    } else {
        if (att) {
            if (tame) {
                check_attention(att, NULL, (size_t)B, (size_t)T, flags & MHA_CAUSAL, "single_head");
            } else {
                for (size_t b = 0; b < (size_t)B; b++) { /* the mask holds for any data */
                    for (size_t t = 0; t < (size_t)T; t++) {
                        for (size_t t2 = t + 1; (flags & MHA_CAUSAL) && t2 < (size_t)T; t2++) {
                            REQUIRE(att[(b * T + t) * T + t2] == 0.0,
                                    "single_head: masked att != 0");
                        }
                    }
                }
            }
            read_all(att, btt);
        }
        if (out) {
            REQUIRE(!tame || all_finite(out, bths),
                    "single_head: out not finite for moderate inputs");
            read_all(out, bths);
        }
    }
    free(X);
    for (int k = 0; k < 3; k++) {
        free(W[k]);
    }
    free(att);
    free(out);
}

/* single-head attention with the columns of one head of the layer's weights = that head */
static void op_head_vs_layer(rd_t *r, slot_t *s)
{
    const uint8_t b = u8(r);
    if (!s->l || !s->have_fwd || !s->consistent || !s->att_fresh) {
        return;
    }
    const size_t B = (size_t)s->B, T = (size_t)s->T, C = (size_t)s->C, h = (size_t)s->h, hs = C / h;
    const size_t head = b % h;
    if (!spend(2.0 * fwd_cost(s->C, 1, s->B, s->T) + m_cost(s))) {
        return;
    }
    double *W[3];
    for (int k = 0; k < 3; k++) {
        W[k] = dalloc(C * hs);
        for (size_t c = 0; c < C; c++) {
            memcpy(W[k] + c * hs, s->params + (size_t)k * C * C + c * C + head * hs,
                   hs * sizeof(double));
        }
    }
    double *att = dalloc(B * T * T), *out = dalloc(B * T * hs);
    size_t n = 0;
    const double *X = mha_tensor(s->l, MHA_T_X, &n);
    TRACE("  mha_single_head(layer X, head %zu of the layer's weights)\n", head);
    const int rc =
        mha_single_head(X, s->B, s->T, s->C, (int)hs, W[0], W[1], W[2], s->flags, att, out);
    REQUIRE(rc == MHA_OK, "single_head on the layer's sizes: %d", rc);
    const double *latt = mha_tensor(s->l, MHA_T_ATT, &n),
                 *lho = mha_tensor(s->l, MHA_T_HEADOUT, &n);
    for (size_t bb = 0; bb < B; bb++) {
        const size_t at = diff_at(att + bb * T * T, latt + (bb * h + head) * T * T, T * T, 1);
        REQUIRE(at == T * T, "single_head att[%zu][%zu] != layer att of head %zu", bb, at, head);
        const size_t ao = diff_at(out + bb * T * hs, lho + (bb * h + head) * T * hs, T * hs, 1);
        REQUIRE(ao == T * hs, "single_head out[%zu][%zu] != layer headout of head %zu", bb, ao,
                head);
    }
    for (int k = 0; k < 3; k++) {
        free(W[k]);
    }
    free(att);
    free(out);
}

static void op_mse(rd_t *r)
{
    const uint8_t b = u8(r);
    const size_t n = b < 232 ? 1 + b % 64 : 0;
    const uint8_t opt = u8(r);
    const int ynull = opt % 32 == 31, tnull = opt % 32 == 30, lnull = opt % 32 == 29;
    const int dnull = (opt & 0x60) == 0x20;
    if (!spend(20.0 * (double)n + 100.0)) {
        return;
    }
    double *Y = dalloc(n ? n : 1), *t = dalloc(n ? n : 1);
    fill(r, Y, n ? n : 1);
    fill(r, t, n ? n : 1);
    double *dY = dnull ? NULL : canaries(n ? n : 1);
    double loss = CANARY;
    const unsigned causes =
        (ynull || tnull || lnull ? E(MHA_ENULL) : 0) | (n == 0 ? E(MHA_EDIM) : 0);
    TRACE("  mha_mse_loss(n=%zu)\n", n);
    const int rc = mha_mse_loss(ynull ? NULL : Y, tnull ? NULL : t, n, lnull ? NULL : &loss, dY);
    check_rc("mha_mse_loss", rc, E(MHA_ENULL) | E(MHA_EDIM), causes, 0);
    if (rc != MHA_OK) {
        REQUIRE(bits(loss) == bits(CANARY), "failed mse_loss wrote the loss");
        if (dY) {
            require_canaries(dY, n ? n : 1, "mse dY");
        }
    } else if (within(Y, n, 1e100) && within(t, n, 1e100)) {
        double naive = 0.0;
        for (size_t i = 0; i < n; i++) {
            naive += (Y[i] - t[i]) * (Y[i] - t[i]);
        }
        naive /= (double)n;
        REQUIRE(isfinite(loss) && loss >= 0.0 && fabs(loss - naive) <= 1e-13 * naive,
                "mse_loss = %.17g, mean of squares = %.17g", loss, naive);
        for (size_t i = 0; dY && i < n; i++) {
            const double want = 2.0 * (Y[i] - t[i]) / (double)n;
            REQUIRE(fabs(dY[i] - want) <= 4.0 * DBL_EPSILON * fabs(want),
                    "mse dY[%zu] = %.17g, not %.17g", i, dY[i], want);
        }
    }
    free(Y);
    free(t);
    free(dY);
}

static void op_rng_create(rd_t *r)
{
    const int slot = u8(r) & 1, kind = pick_kind(r);
    const uint32_t lo = u32(r), hi = pick_seed_hi(r);
    const int nullout = u8(r) % 16 == 0;
    unsigned causes = 0;
    if (nullout) {
        causes |= E(MHA_ENULL);
    }
    if (kind != MHA_RNG_DEFAULT && kind != MHA_RNG_LEGACY) {
        causes |= E(MHA_ERNG);
    } else if (kind == MHA_RNG_LEGACY && hi != 0) {
        causes |= E(MHA_ESEED);
    }
    if (!spend(3000.0)) {
        return;
    }
    if (!nullout) {
        mha_rng_free(g_rng[slot]);
        g_rng[slot] = NULL;
    }
    mha_rng *g = NULL;
    TRACE("  mha_rng_create(kind=%d, lo=%u, hi=%u, %s)\n", kind, lo, hi, nullout ? "NULL" : "&out");
    const int rc = mha_rng_create(kind, lo, hi, nullout ? NULL : &g);
    check_rc("mha_rng_create", rc, E(MHA_ENULL) | E(MHA_ERNG) | E(MHA_ESEED) | E(MHA_ENOMEM),
             causes, 0);
    if (rc == MHA_OK && !nullout) {
        REQUIRE(g != NULL, "rng_create succeeded without a generator");
        g_rng[slot] = g;
    }
}

static size_t pick_n(rd_t *r)
{
    const uint8_t b = u8(r);
    if (b < 128) {
        return b % 32;
    }
    if (b < 216) {
        return (size_t)(b % 64) * 64;
    }
    static const size_t odd[5] = {0, 1, 4095, 4096, 2000};
    return odd[b % 5];
}

static void op_rng_draw(rd_t *r)
{
    const int slot = u8(r) & 1, fn = u8(r) % 3;
    const size_t n = pick_n(r);
    const double loc = fn == 2 ? pick_real(r) : 0.0, scale = fn == 2 ? pick_real(r) : 1.0;
    const int onull = u8(r) % 16 == 0;
    mha_rng *g = g_rng[slot];
    unsigned causes = 0;
    if (!g || (onull && n > 0)) {
        causes |= E(MHA_ENULL);
    }
    if (fn == 2 && (!isfinite(loc) || !isfinite(scale))) {
        causes |= E(MHA_EVALUE);
    }
    if (!spend(60.0 * (double)n + 100.0)) {
        return;
    }
    double *out = onull ? NULL : canaries(n ? n : 1);
    int rc;
    TRACE("  mha_rng_%s(%s, n=%zu, loc=%.17g, scale=%.17g)\n",
          fn == 0   ? "standard_normal"
          : fn == 1 ? "random"
                    : "normal",
          g ? "rng" : "NULL", n, loc, scale);
    if (fn == 0) {
        rc = mha_rng_standard_normal(g, out, n);
    } else if (fn == 1) {
        rc = mha_rng_random(g, out, n);
    } else {
        rc = mha_rng_normal(g, loc, scale, out, n);
    }
    check_rc("mha_rng draw", rc, E(MHA_ENULL) | E(MHA_EVALUE), causes, 0);
    if (rc != MHA_OK) {
        if (out) {
            require_canaries(out, n ? n : 1, "rng out");
        }
    } else if (out) {
        for (size_t i = 0; i < n; i++) {
            if (fn == 1) {
                REQUIRE(out[i] >= 0.0 && out[i] < 1.0, "rng random[%zu] = %.17g outside [0,1)", i,
                        out[i]);
            } else if (fn == 0) {
                REQUIRE(isfinite(out[i]) && fabs(out[i]) < 40.0, "rng standard_normal[%zu] = %.17g",
                        i, out[i]);
            } else if (fabs(loc) <= 1e300 && fabs(scale) <= 1e300) {
                REQUIRE(isfinite(out[i]), "rng normal[%zu] = %.17g", i, out[i]);
            }
        }
        if (n == 0) {
            require_canaries(out, 1, "rng out (n = 0)");
        }
    }
    free(out);
}

static void op_rng_free(rd_t *r)
{
    const int slot = u8(r) & 1;
    TRACE("  mha_rng_free(%s)\n", g_rng[slot] ? "rng" : "NULL");
    mha_rng_free(g_rng[slot]);
    g_rng[slot] = NULL;
}

/* streams: n1 then n2 values = n1 + n2 values at once; normal = loc + scale * standard_normal */
static void op_rng_check(rd_t *r)
{
    const int kind = u8(r) & 1, fn = u8(r) % 3;
    const uint32_t lo = u32(r), hi = kind == MHA_RNG_LEGACY ? 0 : pick_seed_hi(r);
    const size_t n1 = u16(r) % 700, n2 = u16(r) % 700;
    const double loc = pick_real(r), scale = pick_real(r);
    if (!spend(240.0 * (double)(n1 + n2) + 500.0)) {
        return;
    }
    mha_rng *a = NULL, *b = NULL;
    REQUIRE(mha_rng_create(kind, lo, hi, &a) == MHA_OK &&
                mha_rng_create(kind, lo, hi, &b) == MHA_OK,
            "rng_create(%d, %u, %u)", kind, lo, hi);
    double *x = dalloc(n1 + n2 + 1), *y = dalloc(n1 + n2 + 1);
    TRACE("  rng stream check kind=%d fn=%d lo=%u hi=%u n1=%zu n2=%zu\n", kind, fn, lo, hi, n1, n2);
    if (fn == 0) {
        REQUIRE(mha_rng_standard_normal(a, x, n1) == 0 &&
                    mha_rng_standard_normal(a, x + n1, n2) == 0 &&
                    mha_rng_standard_normal(b, y, n1 + n2) == 0,
                "standard_normal");
    } else if (fn == 1) {
        REQUIRE(mha_rng_random(a, x, n1) == 0 && mha_rng_random(a, x + n1, n2) == 0 &&
                    mha_rng_random(b, y, n1 + n2) == 0,
                "random");
    } else {
        if (!isfinite(loc) || !isfinite(scale)) {
            goto out;
        }
        REQUIRE(mha_rng_normal(a, loc, scale, x, n1) == 0 &&
                    mha_rng_normal(a, loc, scale, x + n1, n2) == 0 &&
                    mha_rng_standard_normal(b, y, n1 + n2) == 0,
                "normal");
        for (size_t i = 0; i < n1 + n2; i++) {
            const double t = scale * y[i];
            y[i] = loc + t;
        }
    }
    {
        const size_t at = diff_at(x, y, n1 + n2, 0);
        REQUIRE(at == n1 + n2,
                "rng kind %d fn %d seed %u/%u: value %zu differs (%.17g vs %.17g) when "
                "drawn in two calls (%zu + %zu)",
                kind, fn, lo, hi, at, x[at], y[at], n1, n2);
    }
out:
    mha_rng_free(a);
    mha_rng_free(b);
    free(x);
    free(y);
}

/* The tensor table's functions for any id / index `code`, and a shape for sizes from `b` */
static void op_table(int code, uint8_t b)
{
    const int known = code >= 0 && code < MHA_T_COUNT;
    REQUIRE(mha_tensor_count() == MHA_T_COUNT, "tensor_count");
    REQUIRE((mha_tensor_kind(code) >= 0) == known && (known || mha_tensor_step(code) == -1),
            "tensor_kind/step(%d)", code);
    const int grad = mha_tensor_grad(code), stage = mha_tensor_stage(code);
    REQUIRE(grad == MHA_T_NONE || (known && tkind(grad) == tkind(code)), "tensor_grad(%d)", code);
    REQUIRE(stage >= MHA_STAGE_NONE && stage <= MHA_STAGE_Y && (known || stage == MHA_STAGE_NONE),
            "tensor_stage(%d)", code);
    const int row = mha_check_tensor(code);
    REQUIRE(row == (code >= 0 && code < MHA_CHECK_COUNT ? check_tensor_id(code, 0) : MHA_T_NONE),
            "check_tensor(%d) = %d", code, row);
    const int g = mha_grad_order(code);
    REQUIRE(g == MHA_T_NONE || (code >= 0 && table_kind[g] == MHA_KIND_GRADIENT),
            "grad_order(%d) = %d", code, g);
    const int nk = mha_constant_count();
    const int kin = code >= 0 && code < nk;
    REQUIRE((mha_constant_name(code) != NULL) == kin && isnan(mha_constant_value(code)) == !kin,
            "constant %d of %d", code, nk);
    /* a shape without a layer: sizes 1..4 (h may not divide C) */
    const int B = 1 + b % 2, T = 1 + (b >> 1) % 4, C = 2 + (b >> 3) % 4, h = 1 + (b >> 5) % 3;
    int rank = -7, dims[MHA_MAX_RANK] = {-7, -7, -7, -7};
    const int rc = mha_tensor_shape_for(code, B, T, C, h, &rank, dims);
    const int want = !known ? MHA_ETENSOR : C % h ? MHA_EDIVISIBLE : MHA_OK;
    REQUIRE(rc == want, "tensor_shape_for(%d, %d %d %d %d) = %d", code, B, T, C, h, rc);
    if (rc == MHA_OK) {
        const int wrank = tkind(code) == 0 ? 2 : tkind(code) == 1 ? 3 : 4;
        REQUIRE(rank == wrank && dims[0] == (wrank == 2 ? C : B), "tensor_shape_for(%d)", code);
    } else {
        REQUIRE(rank == -7 && dims[0] == -7, "tensor_shape_for(%d) wrote on error", code);
    }
    const double bytes = mha_cache_bytes(B, T, C, h);
    REQUIRE((bytes > 0.0) == (C % h == 0), "cache_bytes(%d %d %d %d) = %g", B, T, C, h, bytes);
}

static void op_strerror(rd_t *r)
{
    const uint8_t b = u8(r);
    const int code = b < 160   ? 2 - (int)(b % 20)
                     : b < 200 ? (int)u32(r)
                     : b % 2   ? INT_MIN
                               : INT_MAX;
    const char *m = mha_strerror(code);
    TRACE("  mha_strerror(%d) = %s\n", code, m ? m : "(null)");
    REQUIRE(m != NULL && m[0] != '\0', "strerror(%d) is NULL or empty", code);
    const int known = code <= 0 && code >= LAST_CODE;
    REQUIRE(known == (strcmp(m, "unknown error code") != 0), "strerror(%d) = \"%s\"", code, m);
    const char *tn = mha_tensor_name(code), *cn = mha_check_name(code);
    REQUIRE((tn != NULL) == (code >= 0 && code < MHA_T_COUNT), "tensor_name(%d)", code);
    REQUIRE((cn != NULL) == (code >= 0 && code < MHA_CHECK_COUNT), "check_name(%d)", code);
    if (tn) {
        REQUIRE(strlen(tn) > 0 && strlen(tn) < 16, "tensor_name(%d)", code);
    }
    if (cn) {
        REQUIRE(strlen(cn) > 0 && strcmp(cn, mha_tensor_name(check_tensor_id(code, 0))) == 0,
                "check_name(%d) = %s is not the name of the tensor it checks", code, cn);
    }
    op_table(code, u8(r));
}

static void op_accessors(rd_t *r, slot_t *s)
{
    (void)r;
    if (!spend(m_cost(s))) {
        return;
    }
    check_all_tensors(s);
    REQUIRE(mha_params(NULL) == NULL && mha_grads(NULL) == NULL && mha_num_params(NULL) == 0 &&
                mha_layer_C(NULL) == 0 && mha_layer_heads(NULL) == 0,
            "accessors of a NULL layer");
    mha_free(NULL);
    mha_rng_free(NULL);
}

/* ---------------------------------------------------------------------------------------------- */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *t = getenv("FUZZ_MHA_TRACE");
    g_trace = t && t[0] && t[0] != '0';
    /* static facts */
    char v[32];
    snprintf(v, sizeof v, "%d.%d.%d", MHA_VERSION_MAJOR, MHA_VERSION_MINOR, MHA_VERSION_PATCH);
    REQUIRE(strcmp(mha_version(), v) == 0, "mha_version() = %s, the header says %s", mha_version(),
            v);
    for (int a = LAST_CODE; a <= 0; a++) {
        for (int b = a + 1; b <= 0; b++) {
            REQUIRE(strcmp(mha_strerror(a), mha_strerror(b)) != 0,
                    "codes %d and %d share a message", a, b);
        }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rd_t r = {data, size, 0};
    g_budget = BUDGET;
    g_op = "header";
    TRACE("--- input of %zu bytes\n", size);
    const int C = pick_C(&r), h = pick_h(&r, C);
    op_create(&r, &g_slot[0], C, h, 0);
    while (r.i < r.n) {
        const int op = u8(&r) % OP_COUNT;
        g_op = OP_NAMES[op];
        TRACE("[%s]\n", g_op);
        switch (op) {
        case OP_CREATE: {
            slot_t *s = pick_slot(&r);
            const int c = pick_C(&r), hh = pick_h(&r, c);
            op_create(&r, s, c, hh, u8(&r) % 16 == 0);
            break;
        }
        case OP_FREE: op_free(pick_slot(&r)); break;
        case OP_INIT: op_init(&r, pick_slot(&r)); break;
        case OP_FORWARD:
        case OP_FORWARD2: op_forward(&r, pick_slot(&r)); break;
        case OP_BACKWARD:
        case OP_BACKWARD2: op_backward(&r, pick_slot(&r)); break;
        case OP_ZERO_GRAD: op_zero_grad(&r, pick_slot(&r)); break;
        case OP_SGD: op_sgd(&r, pick_slot(&r)); break;
        case OP_TRAIN: op_train(&r, pick_slot(&r)); break;
        case OP_GRADCHECK: op_gradcheck(&r, pick_slot(&r)); break;
        case OP_PREPARE: op_prepare(&r, pick_slot(&r)); break;
        case OP_SLICE: op_slice(&r, pick_slot(&r)); break;
        case OP_FORWARD_FROM: op_forward_from(&r, pick_slot(&r)); break;
        case OP_TENSOR: op_tensor(&r, pick_slot(&r)); break;
        case OP_WRITE: op_write(&r, pick_slot(&r)); break;
        case OP_SPLIT_MERGE: op_split_merge(&r); break;
        case OP_SINGLE_HEAD: op_single_head(&r); break;
        case OP_MSE: op_mse(&r); break;
        case OP_RNG_CREATE: op_rng_create(&r); break;
        case OP_RNG_DRAW: op_rng_draw(&r); break;
        case OP_RNG_FREE: op_rng_free(&r); break;
        case OP_RNG_CHECK: op_rng_check(&r); break;
        case OP_STRERROR: op_strerror(&r); break;
        case OP_HEAD_VS_LAYER: op_head_vs_layer(&r, pick_slot(&r)); break;
        case OP_ACCESSORS: op_accessors(&r, pick_slot(&r)); break;
        default: break;
        }
    }
    g_op = "cleanup";
    for (int k = 0; k < 2; k++) {
        mha_free(g_slot[k].l);
        slot_reset(&g_slot[k]);
        mha_rng_free(g_rng[k]);
        g_rng[k] = NULL;
    }
    return 0;
}
