#!/usr/bin/env python3
"""Write the seed corpus of tests/fuzz/fuzz_mha.c (tests/fuzz/corpus/) and the hand-made
regression inputs (tests/fuzz/regressions/).

Each seed is a small program in the harness's byte format (see the comment at the top of
fuzz_mha.c): two header bytes choose C and h of the layer in slot 0, then opcodes with their
operands. The helpers below mirror the harness's readers (pick_C, pick_bt, pick_real, fill, ...),
so a seed reads as the calls it makes. Run from anywhere: python3 tests/fuzz/make_corpus.py
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# opcodes (enum in fuzz_mha.c)
(CREATE, FREE, INIT, FORWARD, BACKWARD, ZERO_GRAD, SGD, TRAIN, GRADCHECK, PREPARE, SLICE,
 FORWARD_FROM, TENSOR, WRITE, SPLIT_MERGE, SINGLE_HEAD, MSE, RNG_CREATE, RNG_DRAW, RNG_FREE,
 RNG_CHECK, STRERROR, HEAD_VS_LAYER, ACCESSORS) = range(24)

# tensor ids and checked tensors (c/mha.h)
T = dict(Wq=0, Wk=1, Wv=2, Wo=3, dWq=4, dWk=5, dWv=6, dWo=7, X=8, Q=9, K=10, V=11, scores=12,
         att=13, headout=14, concat=15, Y=16, dY=17, dconcat=18, dheadout=19, dV=20, datt=21,
         dscores=22, dQ=23, dK=24, dX=25)

# special integers of pick_special_int (second byte after a selector >= 232 / 232 / 232)
SPECIAL_INT = dict(zero=0, minus1=1, neg=2, int_min=3, int_max=4, p30=5, p20=6, p16=7,
                   n46341=8, near_plus1=9, p24=10)
# pick_real: NICE table index (byte < 144) and SPECIAL table index (144 + i)
NICE = [0.1, 1e-3, 1.0, 0.5, 0.35355339059327373, 0.01, 1e-6, 2.0, 0.0, -0.1, 3.0, 0.125, 0.25,
        10.0, 1e3, 1e-4]
SPECIAL = dict(zero=0, negzero=1, one=2, minus1=3, half=4, minus2=5, nan=6, negnan=7, inf=8,
               neginf=9, dbl_min=10, denorm_min=11, subnormal=12, dbl_max=13, neg_dbl_max=14,
               tiny=15)


def b(*xs):
    return bytes(xs)


def u16(v):
    return struct.pack('<H', v)


def u32(v):
    return struct.pack('<I', v & 0xFFFFFFFF)


def C(c):
    """pick_C for a valid C in 1..64"""
    if c <= 8:
        return b(c - 1)
    if c <= 16:
        return b(128 + c - 1)
    return b(192, c - 1)


def C_special(name):
    return b(232, SPECIAL_INT[name])


def H(c, h):
    """pick_h: the index of h among the divisors of c"""
    divs = [d for d in range(1, c + 1) if c % d == 0]
    return b(divs.index(h))


def H_any(h):
    """pick_h: any h in 1..16 (e.g. not a divisor)"""
    for x in range(160, 228):
        if 1 + x % 16 == h:
            return b(x)
    raise ValueError(h)


def BT(n):
    """pick_bt for 1..8"""
    assert 1 <= n <= 8
    return b(n - 1)


def BT_special(name):
    return b(232, SPECIAL_INT[name])


def flags(causal=False, bad=None):
    if bad is not None:  # 0: 2, 1: 3, 2: -1, 3: INT_MIN, 4: 0x100
        return b(224 + (bad - 224 % 6) % 6)
    return b(1 if causal else 0)


def kind(k=0, bad=None):
    if bad is not None:  # 0: 2, 1: -1, 2: INT_MAX, 3: INT_MIN
        return b(225 + (bad - 225 % 5) % 5)
    return b(k)


def real(x=None, special=None):
    if special is not None:
        return b(144 + SPECIAL[special])
    if x in NICE:
        return b(NICE.index(x))
    return b(216) + struct.pack('<d', x)


def normal(seed, scale_idx=0):
    """fill: generated normals (scale index into 1, 0.5, 0.1, 2, 1e-3, 3, 1, 0.25)"""
    return b(scale_idx * 10) + u16(seed)


def raw(n, *values):
    """fill of n elements: min(n, 16) raw doubles (values cycled), repeated over the tensor"""
    k = min(n, 16)
    return b(5) + b''.join(struct.pack('<d', values[i % len(values)]) for i in range(k))


def specials(n, *names):
    """fill of n elements: min(n, 16) special values (names cycled), repeated over the tensor"""
    k = min(n, 16)
    return b(6) + bytes(SPECIAL[names[i % len(names)]] for i in range(k))


def const(x=None, special=None):
    return b(7) + real(x, special)


def wild(seed, idx=2):
    """fill: normals times 1e-300, 1e150, 1e300 or 1e-320"""
    return b(8 + 10 * idx) + u16(seed)


def patched(seed, *patches):
    """normals with special values at positions"""
    out = b(9) + u16(seed) + b((len(patches) - 1) % 3)
    for pos, name in patches:
        out += u16(pos) + b(SPECIAL[name])
    return out


def samples(n):
    return b(0) if n == 0 else b(96 + n - 1)


# --- opcodes ---

def op_create(slot, c_bytes, h_bytes, nullout=False):
    return b(CREATE, slot) + c_bytes + h_bytes + b(0 if nullout else 1)


def op_free(slot):
    return b(FREE, slot)


def op_init(slot, seed_lo, hi=0, k=0, scale=None, scale_special=None, null=False):
    hib = {0: b(0), 1: b(160), 0xFFFFFFFF: b(200)}[hi]
    return (b(INIT, slot) + u32(seed_lo) + hib + (k if isinstance(k, bytes) else kind(k)) +
            real(scale, scale_special) + b(0 if null else 1))


def op_forward(slot, B, T_, fl, data=b'', ynull=False, alias=None, nodiff=False, xnull=False):
    """alias: a tensor name; X is then that tensor of the layer (data is ignored unless 'X',
    which the fill writes into the layer's own X first)"""
    opt = (31 if xnull else 0) | (1 if ynull else 0) | (8 if alias else 0) | (0x30 if nodiff else 0)
    if xnull:
        opt = 31 | (0x30 if nodiff else 0)
    return b(FORWARD, slot) + B + T_ + fl + b(opt) + (b(T[alias]) if alias else b'') + data


def op_backward(slot, data=b'', dxnull=False, dynull=False):
    opt = 31 if dynull else (1 if dxnull else 0)
    return b(BACKWARD, slot, opt) + data


def op_zero_grad(slot):
    return b(ZERO_GRAD, slot, 1)


def op_sgd(slot, lr_bytes):
    return b(SGD, slot) + lr_bytes + b(1)


def op_train(slot, B, T_, fl, steps, lr_bytes, X=b'', target=b'', lnull=False, target_in=None):
    """target_in: ('cache', tensor name) or ('params' | 'grads',): target points into the layer"""
    sb = b(steps) if 0 <= steps <= 3 else {-1: b(224), 5: b(226)}[steps]
    return b(TRAIN, slot) + B + T_ + fl + sb + lr_bytes + alias_opt(0x20 if lnull else 0, target_in) + \
        X + target


def alias_opt(opt, where):
    """the option byte (and id byte) of train/gradcheck/prepare for target/aux inside the layer"""
    if where is None:
        return b(opt)
    if where[0] == 'cache':
        return b(opt | 0x80) + b(T[where[1]] - T['X'])
    return b(opt | 0x82) + b(1 if where[0] == 'grads' else 0)


def gc_common(B, T_, fl, k, X, aux):
    return B + T_ + fl + k, X + aux


def op_gradcheck(slot, B, T_, fl, k, X, aux, eps=b(0), smp=b(0), diff=True, chunks=7,
                 rnull=False):
    opt = (31 if rnull else 0) | (0 if diff else 0x60)
    return (b(GRADCHECK, slot) + B + T_ + fl + k + b(0) + eps + smp + b(opt) + X + aux +
            (u16(chunks) if diff else b''))


def op_prepare(slot, B, T_, fl, k, X, aux, auxnull=False, aux_in=None):
    return b(PREPARE, slot) + B + T_ + fl + k + alias_opt(30 if auxnull else 0, aux_in) + X + aux


def op_slice(slot, which, smp, first, count, eps=b(0), prefill=False):
    return b(SLICE, slot, which) + smp + b(first, count) + eps + b(0, 1 if prefill else 0)


def op_forward_from(slot, stage_idx):
    """stage_idx: 0 Q, 1 K, 2 V, 3 scores, 4 att, 5 headout, 6 concat; or a raw byte >= 200"""
    return b(FORWARD_FROM, slot, stage_idx, 1)


def op_tensor(slot, tid, opt=0):
    return b(TENSOR, slot, tid, opt)


def op_write(slot, tid, *edits):
    """edits: (index, byte) with byte < 128: +1e-3*(byte-64); 128..191: SPECIAL[byte % 16]"""
    out = b(WRITE, slot, tid, len(edits) - 1)
    for idx, v in edits:
        out += u16(idx) + b(v)
    return out


def op_split_merge(B, T_, c_bytes, h_bytes, data, opt=0):
    return b(SPLIT_MERGE) + B + T_ + c_bytes + h_bytes + b(opt) + data


def op_single_head(B, T_, c_bytes, hs_bytes, fl, X, Wq, Wk, Wv, opt=0):
    return b(SINGLE_HEAD) + B + T_ + c_bytes + hs_bytes + fl + b(opt) + X + Wq + Wk + Wv


def op_mse(n, Y, target, opt=0):
    return b(MSE, n - 1 if n else 232, opt) + Y + target


def op_rng_create(slot, k, seed_lo, hi_byte=0, nullout=False):
    return b(RNG_CREATE, slot) + (k if isinstance(k, bytes) else kind(k)) + u32(seed_lo) + \
        b(hi_byte) + b(0 if nullout else 1)


def op_rng_draw(slot, fn, n_byte, loc=b'', scale=b'', onull=False):
    return b(RNG_DRAW, slot, fn, n_byte) + (loc + scale if fn == 2 else b'') + b(0 if onull else 1)


def op_rng_free(slot):
    return b(RNG_FREE, slot)


def op_rng_check(k, fn, seed_lo, n1, n2, loc=real(0.0), scale=real(1.0), hi_byte=0):
    return (b(RNG_CHECK, k, fn) + u32(seed_lo) + (b(hi_byte) if k == 0 else b'') + u16(n1) +
            u16(n2) + loc + scale)


def op_strerror(byte, code=None):
    """byte < 160: code 2 - byte % 20; 160..199: the raw 32-bit code; else INT_MIN / INT_MAX"""
    return b(STRERROR, byte) + (u32(code) if code is not None else b'')


def op_head_vs_layer(slot, head):
    return b(HEAD_VS_LAYER, slot, head)


def op_accessors(slot):
    return b(ACCESSORS, slot)


def header(c, h):
    return C(c) + H(c, h)


SEEDS = {
    # forward at a few sizes, causal and not, Y NULL, then every tensor
    'forward-basic': header(8, 2) + op_init(0, 42, scale=0.35355339059327373) +
    op_forward(0, BT(2), BT(3), flags(False), normal(7)) +
    op_forward(0, BT(2), BT(3), flags(True), normal(8), ynull=True) +
    b''.join(op_tensor(0, i) for i in range(0, 26, 3)),
    # backward before any forward (MHA_ENOFORWARD), then forward, backward, tensors
    'backward-before-forward': header(4, 1) + op_backward(0) + op_init(0, 1, scale=0.5) +
    op_forward(0, BT(1), BT(4), flags(True), normal(3)) + op_backward(0, normal(4)) +
    op_tensor(0, T['dscores']) + op_tensor(0, T['dX']) + op_backward(0, normal(5), dxnull=True),
    # training: a few steps, then losses of zero steps, bad lr, bad steps
    'train': header(8, 4) + op_init(0, 42, scale=0.35355339059327373) +
    op_train(0, BT(2), BT(4), flags(False), 3, real(0.1), normal(1), normal(2)) +
    op_train(0, BT(2), BT(4), flags(True), 0, real(0.1), normal(1), normal(2)) +
    op_train(0, BT(2), BT(4), flags(False), 2, real(special='nan'), normal(1), normal(2)) +
    op_train(0, BT(1), BT(2), flags(False), -1, real(0.1), normal(1), normal(2)),
    # training that diverges: huge weights and learning rate
    'train-diverge': header(4, 2) + op_init(0, 3, scale=0.5) +
    op_train(0, BT(1), BT(3), flags(False), 3, real(1e200), normal(1), normal(2)),
    # training with a non-finite target (MHA_EVALUE)
    'train-nonfinite': header(4, 1) + op_init(0, 5, scale=0.5) +
    op_train(0, BT(1), BT(2), flags(False), 2, real(0.1), normal(1), patched(2, (3, 'nan'))),
    # full gradient check, dot loss, compared with prepare + slices
    'gradcheck-full-dot': header(4, 2) + op_init(0, 42, scale=0.5) +
    op_gradcheck(0, BT(1), BT(3), flags(False), kind(0), normal(11), normal(12)),
    # sampled gradient check, MSE loss, causal
    'gradcheck-mse-causal': header(8, 2) + op_init(0, 7, scale=0.35355339059327373) +
    op_gradcheck(0, BT(2), BT(3), flags(True), kind(1), normal(13), normal(14), smp=samples(3)),
    # gradient check argument errors: eps NaN / 0, samples < 0, loss kind 2, NULL report
    'gradcheck-errors': header(4, 2) + op_init(0, 1, scale=0.5) +
    op_gradcheck(0, BT(1), BT(2), flags(False), kind(0), normal(1), normal(2),
                 eps=b(176) + real(special='nan'), diff=False) +
    op_gradcheck(0, BT(1), BT(2), flags(False), kind(0), normal(1), normal(2),
                 eps=b(176) + real(0.0), diff=False) +
    op_gradcheck(0, BT(1), BT(2), flags(False), kind(0), normal(1), normal(2), smp=b(228),
                 diff=False) +
    op_gradcheck(0, BT(1), BT(2), flags(False), kind(bad=0), normal(1), normal(2), diff=False) +
    op_gradcheck(0, BT(1), BT(2), flags(False), kind(0), normal(1), normal(2), rnull=True,
                 diff=False),
    # prepare + slices of every checked tensor, out-of-range slices, bad which
    'prepare-slices': header(4, 2) + op_init(0, 9, scale=0.5) +
    op_prepare(0, BT(1), BT(3), flags(True), kind(0), normal(3), normal(4)) +
    b''.join(op_slice(0, w, samples(0), 0, 2) for w in range(12)) +
    op_slice(0, 3, samples(4), 1, 3, prefill=True) + op_slice(0, 0, samples(0), 197, 0) +
    op_slice(0, 224, samples(0), 0, 1) + op_slice(0, 2, samples(0), 0, 197),
    # slices before any preparation, and after a forward cancelled it (MHA_ENOFORWARD)
    'slice-unprepared': header(4, 2) + op_slice(0, 0, samples(0), 0, 1) +
    op_prepare(0, BT(1), BT(2), flags(False), kind(1), normal(3), normal(4)) +
    op_forward(0, BT(1), BT(2), flags(False), normal(5)) + op_slice(0, 0, samples(0), 0, 1),
    # edits of intermediates, then forward_from every stage
    'forward-from': header(8, 2) + op_init(0, 4, scale=0.35355339059327373) +
    op_forward(0, BT(2), BT(3), flags(True), normal(6)) +
    op_write(0, T['Q'], (5, 100)) + op_forward_from(0, 0) +
    op_write(0, T['K'], (2, 30)) + op_forward_from(0, 1) +
    op_write(0, T['V'], (7, 90)) + op_forward_from(0, 2) +
    op_write(0, T['att'], (1, 70)) + op_forward_from(0, 4) +
    op_write(0, T['headout'], (3, 60)) + op_forward_from(0, 5) +
    op_write(0, T['concat'], (4, 50)) + op_forward_from(0, 6) + op_forward_from(0, 200),
    # scores edited to non-finite values, then recomputed from scores
    'forward-from-scores-special': header(4, 2) + op_init(0, 4, scale=0.5) +
    op_forward(0, BT(1), BT(4), flags(False), normal(6)) +
    op_write(0, T['scores'], (0, 128 + SPECIAL['inf']), (5, 128 + SPECIAL['nan'])) +
    op_forward_from(0, 3) + op_backward(0, normal(2)),
    # split/merge heads round trips (valid, non-divisible, overflowing)
    'split-merge': header(1, 1) + op_split_merge(BT(2), BT(3), C(8), H(8, 4), normal(1)) +
    op_split_merge(BT(1), BT(4), C(6), H_any(4), normal(2)) +
    op_split_merge(BT_special('int_max'), BT_special('int_max'), C(8), H(8, 2), b'') +
    op_split_merge(BT(3), BT(2), C(12), H(12, 3), specials(72, 'nan', 'negzero', 'inf')),
    # lesson 1: single head, causal and not, NULL outputs, bad flags
    'single-head': header(4, 1) +
    op_single_head(BT(2), BT(3), C(4), C(2), flags(True), normal(1), normal(2), normal(3), normal(4)) +
    op_single_head(BT(1), BT(4), C(3), C(5), flags(False), normal(1), normal(2), normal(3), normal(4),
                   opt=0x20) +
    op_single_head(BT(1), BT(2), C(2), C(2), flags(bad=0), normal(1), normal(2), normal(3), normal(4)),
    # single head with one head's columns of the layer's weights = the layer's head
    'head-vs-layer': header(8, 4) + op_init(0, 42, scale=0.35355339059327373) +
    op_forward(0, BT(2), BT(4), flags(True), normal(9)) + op_head_vs_layer(0, 1) +
    op_head_vs_layer(0, 3),
    # MSE loss: values, n = 0, NULL loss
    'mse': header(1, 1) + op_mse(10, normal(1), normal(2)) + op_mse(0, normal(1), normal(2)) +
    op_mse(3, normal(1), normal(2), opt=29) + op_mse(5, specials(5, 'nan', 'one'), normal(2)),
    # random generators: both kinds, draws of every kind, bad kind, legacy seed >= 2^32, free
    'rng': header(1, 1) + op_rng_create(0, 0, 42) + op_rng_create(1, 1, 12345) +
    op_rng_draw(0, 0, 10) + op_rng_draw(0, 1, 129) + op_rng_draw(1, 2, 5, real(1.0), real(2.0)) +
    op_rng_draw(1, 2, 5, real(special='nan'), real(1.0)) + op_rng_draw(1, 0, 200) +
    op_rng_create(0, kind(bad=0), 1) + op_rng_create(1, 1, 1, hi_byte=160) +
    op_rng_draw(0, 0, 3) + op_rng_free(1) + op_rng_free(1) + op_rng_draw(1, 1, 4),
    # streams drawn in two calls equal one call; normal = loc + scale * z
    'rng-streams': header(1, 1) + op_rng_check(0, 0, 42, 7, 300) + op_rng_check(1, 0, 7, 1, 1) +
    op_rng_check(1, 1, 3, 100, 3) + op_rng_check(0, 2, 9, 5, 6, real(3.0), real(0.5)) +
    op_rng_check(0, 0, 0xFFFFFFFF, 1, 2, hi_byte=200),
    # init_weights: both generators, legacy seed error, NaN scale, bad kind, NULL layer
    'init-weights': header(6, 3) + op_init(0, 42, scale=1.0) + op_init(0, 7, k=1, scale=0.5) +
    op_init(0, 1, hi=1, k=1, scale=0.5) + op_init(0, 1, scale_special='nan') +
    op_init(0, 1, k=kind(bad=1), scale=1.0) + op_init(0, 1, scale=1.0, null=True) +
    op_init(0, 5, hi=0xFFFFFFFF, scale=0.125),
    # huge and invalid sizes: overflow and impossible allocations fail cleanly
    'huge-sizes': header(4, 2) + op_init(0, 1, scale=0.5) +
    op_forward(0, BT(1), BT(2), flags(False), normal(1)) +
    op_forward(0, BT_special('p30'), BT_special('p30'), flags(False)) +
    op_forward(0, BT_special('p20'), BT_special('p16'), flags(False)) +
    op_forward(0, BT_special('zero'), BT(2), flags(False)) +
    op_forward(0, BT_special('minus1'), BT(2), flags(False)) +
    op_create(1, C_special('p30'), b(0)) + op_create(1, C_special('p20'), b(0)) +
    op_create(1, C_special('int_max'), b(0)) + op_create(1, C(6), H_any(4)) +
    op_create(1, C_special('zero'), b(0)) + op_create(1, C(8), H(8, 2), nullout=True) +
    op_single_head(BT_special('p20'), BT_special('p20'), C(4), C(4), flags(False), b'', b'', b'', b''),
    # two layers, frees (never twice), calls on a freed slot
    'two-layers': header(8, 2) + op_create(1, C(16), H(16, 4)) + op_init(1, 3, scale=0.25) +
    op_forward(1, BT(2), BT(2), flags(False), normal(1)) +
    op_forward(0, BT(1), BT(3), flags(True), normal(2)) + op_free(0) + op_free(0) +
    op_forward(0, BT(1), BT(3), flags(True)) + op_backward(0) + op_zero_grad(0) +
    op_accessors(0) + op_accessors(1) + op_backward(1, normal(3)),
    # the optimiser pieces
    'sgd-zero-grad': header(4, 4) + op_init(0, 8, scale=0.5) +
    op_forward(0, BT(2), BT(2), flags(False), normal(1)) + op_backward(0, normal(2)) +
    op_backward(0, normal(3)) + op_sgd(0, real(0.1)) + op_sgd(0, real(special='inf')) +
    op_zero_grad(0) + op_sgd(0, real(0.0)) + op_backward(0, normal(4)),
    # non-finite and subnormal data flow through forward and backward
    'special-data': header(4, 2) + op_init(0, 2, scale=0.5) +
    op_forward(0, BT(1), BT(3), flags(True), specials(12, 'nan', 'inf', 'subnormal', 'negzero')) +
    op_backward(0, specials(12, 'inf', 'one')) +
    op_forward(0, BT(2), BT(2), flags(False), raw(16, 1e308, -1e308, 5e-324)) +
    op_backward(0, wild(1, 2)) + op_forward(0, BT(1), BT(2), flags(False), const(special='dbl_max')),
    # the cache grows and is reused; X aliasing the layer's own MHA_T_X
    'cache-growth': header(8, 2) + op_init(0, 6, scale=0.35355339059327373) +
    op_forward(0, BT(1), BT(2), flags(False), normal(1)) +
    op_forward(0, BT(4), BT(8), flags(True), normal(2)) +
    op_forward(0, BT(2), BT(2), flags(False), normal(3), alias='X') +
    op_backward(0, normal(4)) + op_forward(0, BT(1), BT(1), flags(False), normal(5)),
    # X may be any tensor of the layer, also when the forward reallocates the cache
    'forward-x-from-own-tensors': header(2, 2) + op_init(0, 3, scale=0.5) +
    op_forward(0, BT(1), BT(4), flags(True), normal(1)) +
    op_forward(0, BT(2), BT(8), flags(False), alias='att') +
    op_forward(0, BT(1), BT(2), flags(False), alias='Y') +
    op_forward(0, BT(1), BT(2), flags(False), alias='Wq'),
    # target / aux inside the layer: the cache is refused (MHA_EALIAS)
    'alias-target-aux': header(4, 2) + op_init(0, 3, scale=0.5) +
    op_forward(0, BT(2), BT(4), flags(False), normal(1)) +
    op_train(0, BT(1), BT(2), flags(False), 2, real(0.1), normal(2), normal(3),
             target_in=('cache', 'Y')) +
    op_prepare(0, BT(1), BT(2), flags(False), kind(1), normal(2), normal(3), aux_in=('cache', 'att')) +
    op_prepare(0, BT(1), BT(2), flags(False), kind(0), normal(2), normal(3), aux_in=('params',)) +
    op_train(0, BT(1), BT(2), flags(False), 1, real(0.1), normal(2), normal(3),
             target_in=('grads',)),
    # a wide layer
    'wide': header(64, 8) + op_init(0, 42, scale=0.125) +
    op_forward(0, BT(2), BT(4), flags(True), normal(1)) + op_backward(0, normal(2)) +
    op_head_vs_layer(0, 5),
    # every tensor id, unknown ids, NULL rank/dims
    'tensor-ids': header(6, 2) + b''.join(op_tensor(0, i) for i in range(26)) +
    op_forward(0, BT(1), BT(2), flags(False), normal(1)) +
    b''.join(op_tensor(0, i, opt) for i, opt in [(0, 7), (9, 8), (13, 16), (25, 0), (232, 0),
                                                 (233, 0), (236, 0), (238, 0)]),
    # status codes and names
    'strerror': header(1, 1) + b''.join(op_strerror(x) for x in [2, 3, 4, 10, 16, 17, 18, 19, 200, 201]) +
    op_strerror(160, 12345) + op_strerror(160, -16) + op_strerror(160, 25),
    # flags with unknown bits, bad rng kinds, loss kinds
    'bad-flags': header(4, 2) + op_forward(0, BT(1), BT(2), flags(bad=0), normal(1)) +
    op_forward(0, BT(1), BT(2), flags(bad=2), normal(1)) +
    op_forward(0, BT(1), BT(2), flags(bad=4), normal(1)) +
    op_prepare(0, BT(1), BT(2), flags(False), kind(bad=1), normal(1), normal(2)) +
    op_prepare(0, BT(1), BT(2), flags(False), kind(0), normal(1), normal(2), auxnull=True),
}

REGRESSIONS = {
    # [fixed in 45b4961] c/mha.h: "Any mha_forward, mha_forward_from, mha_backward or mha_train in
    # between cancels the preparation (MHA_ENOFORWARD)". mha_backward did not: the slice returned
    # MHA_OK and compared the numeric gradient of the prepared loss with the new dY's analytic one.
    'backward-keeps-gradcheck-prepared': header(4, 2) + op_init(0, 1, scale=0.5) +
    op_prepare(0, BT(1), BT(2), flags(False), kind(0), normal(1), normal(2)) +
    op_backward(0, const(0.0)) + op_slice(0, 4, samples(0), 0, 8),
    # [open] c/mha.h: forward_from(MHA_T_V) recomputes "scores, att, headout, concat, Y"; c/mha.c
    # recomputes only from headout, so edited scores stay (and att is not the softmax of Q K^T).
    'forward-from-v-keeps-scores': header(4, 2) + op_init(0, 1, scale=0.5) +
    op_forward(0, BT(1), BT(2), flags(False), normal(1)) +
    op_write(0, T['scores'], (0, 128 + SPECIAL['minus2'])) + op_forward_from(0, 2),
    # [fixed in 45b4961] X = the layer's own att while the forward reallocates the cache (B*T
    # 4 -> 16): mha_forward memmoved X out of the block it had just freed (heap-use-after-free in
    # layer_begin_forward).
    'forward-x-in-own-cache-across-growth': header(2, 2) + op_init(0, 1, scale=0.5) +
    op_forward(0, BT(1), BT(4), flags(False), normal(1)) +
    op_forward(0, BT(2), BT(8), flags(False), alias='att'),
    # [open] c/mha.h: pointers from mha_tensor "stay valid until the next mha_forward that grows
    # the cache (a larger B*T than any seen before)". Here B*T stays 4 (B=4,T=1 then B=1,T=4) but
    # c/mha.c reallocates because B*h*T*T grows, so the pointers taken after the first forward
    # dangle: the harness reads them (heap-use-after-free reported in read_all).
    'tensor-pointer-dangles-same-bt': header(4, 2) + op_init(0, 1, scale=0.5) +
    op_forward(0, BT(4), BT(1), flags(False), normal(1)) +
    op_forward(0, BT(1), BT(4), flags(False), normal(2)),
}


def main():
    for sub, table in (('corpus', SEEDS), ('regressions', REGRESSIONS)):
        d = os.path.join(HERE, sub)
        os.makedirs(d, exist_ok=True)
        for name, data in table.items():
            with open(os.path.join(d, name), 'wb') as f:
                f.write(data)
    print(f'{len(SEEDS)} seeds in tests/fuzz/corpus/, {len(REGRESSIONS)} in tests/fuzz/regressions/')


if __name__ == '__main__':
    main()
