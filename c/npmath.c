/*
 * npmath.c - deterministic log, exp and log1p in the "glibc-FMA" flavour (see npmath.h).
 *
 * What is reproduced, bit for bit: glibc >= 2.29 running on an x86-64 CPU with FMA and AVX2.
 * There glibc picks variants of its generic C code that were compiled with -mfma -mavx2, and
 * GCC 12 fused a particular set of multiply-adds in them. We use the same algorithms and call
 * fma() at exactly those places; every other operation is a separately rounded +, -, * or /.
 *
 *   log   ARM optimized-routines algorithm (glibc's sysdeps/ieee754/dbl-64/e_log.c, also in
 *         musl): table lookup around 128 centres c, log(x) = k*ln2 + log(c) + log1p(z/c - 1),
 *         plus a separate polynomial for x close to 1.
 *   exp   ARM optimized-routines algorithm (e_exp.c): x = k*ln2/128 + r, 2^(k/128) from a table,
 *         exp(r) - 1 by a degree-5 polynomial.
 *   log1p fdlibm algorithm (glibc's s_log1p.c). glibc got an FMA build of it in 2.39 (commit
 *         a8ecb126), which Debian 12 backported in 2.36-9+deb12u10. That FMA flavour is the
 *         default here. Compile with -DNPMATH_LOG1P_PLAIN to get the separately rounded
 *         flavour instead (glibc 2.29-2.38 without the backport, or a CPU without FMA).
 *
 * Build rules: -ffp-contract=off (the compiler must not fuse anything on its own), never
 * -ffast-math, no x87 (wasm32 and x86-64 SSE2 are fine). The fma() calls must be correctly
 * rounded, which C requires (musl's software fma in WebAssembly, hardware or glibc natively).
 * Floating-point exceptions and errno are not reproduced; returned values, including those for
 * NaN, infinities, zeros, negatives and subnormals, are.
 *
 * The code below was written for this project from the published algorithm descriptions; the
 * tables are data taken verbatim from ARM's optimized-routines (via musl) and from fdlibm, with
 * their notices kept next to them.
 */
#include "npmath.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* Bit access                                                                                 */
/* ------------------------------------------------------------------------------------------ */

static inline uint64_t bits_of(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline double double_of(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* NaN result for an invalid argument, computed the way glibc does ((x-x)/(x-x)), so a NaN
   argument propagates and anything else gives the platform's default NaN. */
static double invalid_result(double x)
{
    double d = x - x;
    return d / d;
}

/* ------------------------------------------------------------------------------------------ */
/* Tables and constants for log and exp                                                        */
/* ------------------------------------------------------------------------------------------ */

/*
 * The numbers in this section (log: ln2 split, the two polynomials and the 128 (invc, logc)
 * pairs; exp: the reduction constants, the polynomial and the 2^(i/128) table) come from ARM's
 * optimized-routines, as shipped in musl's src/math/log_data.c and exp_data.c and in glibc's
 * sysdeps/ieee754/dbl-64/e_log_data.c and e_exp_data.c:
 *
 *   Copyright (c) 2018, Arm Limited.
 *   SPDX-License-Identifier: MIT
 *
 *   Permission is hereby granted, free of charge, to any person obtaining a copy of this
 *   software and associated documentation files (the "Software"), to deal in the Software
 *   without restriction, including without limitation the rights to use, copy, modify, merge,
 *   publish, distribute, sublicense, and/or sell copies of the Software, and to permit persons
 *   to whom the Software is furnished to do so, subject to the following conditions:
 *   The above copyright notice and this permission notice shall be included in all copies or
 *   substantial portions of the Software.
 *   THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,
 *   INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR
 *   PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE
 *   FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR
 *   OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER
 *   DEALINGS IN THE SOFTWARE.
 *
 * With a fused z*invc - 1 the log algorithm does not need the (chi, clo) table that the
 * non-FMA build uses, so it is not included.
 */

/* ln2 = LN2_HI + LN2_LO; LN2_HI has trailing zero bits so that k*LN2_HI + logc is exact. */
#define LOG_LN2_HI 0x1.62e42fefa3800p-1
#define LOG_LN2_LO 0x1.ef35793c76730p-45

/* log1p(r) - r ~= A0 r^2 + A1 r^3 + ... + A4 r^6 for |r| < 1/256 (main path). */
static const double log_poly[5] = {
    -0x1.0000000000001p-1, 0x1.555555551305bp-2,  -0x1.fffffffeb459p-3,
    0x1.999b324f10111p-3,  -0x1.55575e506c89fp-3,
};

/* log(1+r) - r ~= B0 r^2 + B1 r^3 + ... + B10 r^12 for -1/16 <= r < 0x1.09p-4 (near 1);
   B0 is exactly -1/2. */
static const double log_poly_near1[11] = {
    -0x1p-1,
    0x1.5555555555577p-2,
    -0x1.ffffffffffdcbp-3,
    0x1.999999995dd0cp-3,
    -0x1.55555556745a7p-3,
    0x1.24924a344de3p-3,
    -0x1.fffffa4423d65p-4,
    0x1.c7184282ad6cap-4,
    -0x1.999eb43b068ffp-4,
    0x1.78182f7afd085p-4,
    -0x1.5521375d145cdp-4,
};

/* For the i-th of 128 subintervals of [0x1.6p-1, 0x1.6p0): invc = 1/c and logc = log(c), for a
   point c near the middle chosen so that logc is very close to the true log(c). */
static const struct {
    double invc, logc;
} log_table[128] = {
    {0x1.734f0c3e0de9fp+0, -0x1.7cc7f79e69000p-2}, {0x1.713786a2ce91fp+0, -0x1.76feec20d0000p-2},
    {0x1.6f26008fab5a0p+0, -0x1.713e31351e000p-2}, {0x1.6d1a61f138c7dp+0, -0x1.6b85b38287800p-2},
    {0x1.6b1490bc5b4d1p+0, -0x1.65d5590807800p-2}, {0x1.69147332f0cbap+0, -0x1.602d076180000p-2},
    {0x1.6719f18224223p+0, -0x1.5a8ca86909000p-2}, {0x1.6524f99a51ed9p+0, -0x1.54f4356035000p-2},
    {0x1.63356aa8f24c4p+0, -0x1.4f637c36b4000p-2}, {0x1.614b36b9ddc14p+0, -0x1.49da7fda85000p-2},
    {0x1.5f66452c65c4cp+0, -0x1.445923989a800p-2}, {0x1.5d867b5912c4fp+0, -0x1.3edf439b0b800p-2},
    {0x1.5babccb5b90dep+0, -0x1.396ce448f7000p-2}, {0x1.59d61f2d91a78p+0, -0x1.3401e17bda000p-2},
    {0x1.5805612465687p+0, -0x1.2e9e2ef468000p-2}, {0x1.56397cee76bd3p+0, -0x1.2941b3830e000p-2},
    {0x1.54725e2a77f93p+0, -0x1.23ec58cda8800p-2}, {0x1.52aff42064583p+0, -0x1.1e9e129279000p-2},
    {0x1.50f22dbb2bddfp+0, -0x1.1956d2b48f800p-2}, {0x1.4f38f4734ded7p+0, -0x1.141679ab9f800p-2},
    {0x1.4d843cfde2840p+0, -0x1.0edd094ef9800p-2}, {0x1.4bd3ec078a3c8p+0, -0x1.09aa518db1000p-2},
    {0x1.4a27fc3e0258ap+0, -0x1.047e65263b800p-2}, {0x1.4880524d48434p+0, -0x1.feb224586f000p-3},
    {0x1.46dce1b192d0bp+0, -0x1.f474a7517b000p-3}, {0x1.453d9d3391854p+0, -0x1.ea4443d103000p-3},
    {0x1.43a2744b4845ap+0, -0x1.e020d44e9b000p-3}, {0x1.420b54115f8fbp+0, -0x1.d60a22977f000p-3},
    {0x1.40782da3ef4b1p+0, -0x1.cc00104959000p-3}, {0x1.3ee8f5d57fe8fp+0, -0x1.c202956891000p-3},
    {0x1.3d5d9a00b4ce9p+0, -0x1.b81178d811000p-3}, {0x1.3bd60c010c12bp+0, -0x1.ae2c9ccd3d000p-3},
    {0x1.3a5242b75dab8p+0, -0x1.a45402e129000p-3}, {0x1.38d22cd9fd002p+0, -0x1.9a877681df000p-3},
    {0x1.3755bc5847a1cp+0, -0x1.90c6d69483000p-3}, {0x1.35dce49ad36e2p+0, -0x1.87120a645c000p-3},
    {0x1.34679984dd440p+0, -0x1.7d68fb4143000p-3}, {0x1.32f5cceffcb24p+0, -0x1.73cb83c627000p-3},
    {0x1.3187775a10d49p+0, -0x1.6a39a9b376000p-3}, {0x1.301c8373e3990p+0, -0x1.60b3154b7a000p-3},
    {0x1.2eb4ebb95f841p+0, -0x1.5737d76243000p-3}, {0x1.2d50a0219a9d1p+0, -0x1.4dc7b8fc23000p-3},
    {0x1.2bef9a8b7fd2ap+0, -0x1.4462c51d20000p-3}, {0x1.2a91c7a0c1babp+0, -0x1.3b08abc830000p-3},
    {0x1.293726014b530p+0, -0x1.31b996b490000p-3}, {0x1.27dfa5757a1f5p+0, -0x1.2875490a44000p-3},
    {0x1.268b39b1d3bbfp+0, -0x1.1f3b9f879a000p-3}, {0x1.2539d838ff5bdp+0, -0x1.160c8252ca000p-3},
    {0x1.23eb7aac9083bp+0, -0x1.0ce7f57f72000p-3}, {0x1.22a012ba940b6p+0, -0x1.03cdc49fea000p-3},
    {0x1.2157996cc4132p+0, -0x1.f57bdbc4b8000p-4}, {0x1.201201dd2fc9bp+0, -0x1.e370896404000p-4},
    {0x1.1ecf4494d480bp+0, -0x1.d17983ef94000p-4}, {0x1.1d8f5528f6569p+0, -0x1.bf9674ed8a000p-4},
    {0x1.1c52311577e7cp+0, -0x1.adc79202f6000p-4}, {0x1.1b17c74cb26e9p+0, -0x1.9c0c3e7288000p-4},
    {0x1.19e010c2c1ab6p+0, -0x1.8a646b372c000p-4}, {0x1.18ab07bb670bdp+0, -0x1.78d01b3ac0000p-4},
    {0x1.1778a25efbcb6p+0, -0x1.674f145380000p-4}, {0x1.1648d354c31dap+0, -0x1.55e0e6d878000p-4},
    {0x1.151b990275fddp+0, -0x1.4485cdea1e000p-4}, {0x1.13f0ea432d24cp+0, -0x1.333d94d6aa000p-4},
    {0x1.12c8b7210f9dap+0, -0x1.22079f8c56000p-4}, {0x1.11a3028ecb531p+0, -0x1.10e4698622000p-4},
    {0x1.107fbda8434afp+0, -0x1.ffa6c6ad20000p-5}, {0x1.0f5ee0f4e6bb3p+0, -0x1.dda8d4a774000p-5},
    {0x1.0e4065d2a9fcep+0, -0x1.bbcece4850000p-5}, {0x1.0d244632ca521p+0, -0x1.9a1894012c000p-5},
    {0x1.0c0a77ce2981ap+0, -0x1.788583302c000p-5}, {0x1.0af2f83c636d1p+0, -0x1.5715e67d68000p-5},
    {0x1.09ddb98a01339p+0, -0x1.35c8a49658000p-5}, {0x1.08cabaf52e7dfp+0, -0x1.149e364154000p-5},
    {0x1.07b9f2f4e28fbp+0, -0x1.e72c082eb8000p-6}, {0x1.06ab58c358f19p+0, -0x1.a55f152528000p-6},
    {0x1.059eea5ecf92cp+0, -0x1.63d62cf818000p-6}, {0x1.04949cdd12c90p+0, -0x1.228fb8caa0000p-6},
    {0x1.038c6c6f0ada9p+0, -0x1.c317b20f90000p-7}, {0x1.02865137932a9p+0, -0x1.419355daa0000p-7},
    {0x1.0182427ea7348p+0, -0x1.81203c2ec0000p-8}, {0x1.008040614b195p+0, -0x1.0040979240000p-9},
    {0x1.fe01ff726fa1ap-1, 0x1.feff384900000p-9},  {0x1.fa11cc261ea74p-1, 0x1.7dc41353d0000p-7},
    {0x1.f6310b081992ep-1, 0x1.3cea3c4c28000p-6},  {0x1.f25f63ceeadcdp-1, 0x1.b9fc114890000p-6},
    {0x1.ee9c8039113e7p-1, 0x1.1b0d8ce110000p-5},  {0x1.eae8078cbb1abp-1, 0x1.58a5bd001c000p-5},
    {0x1.e741aa29d0c9bp-1, 0x1.95c8340d88000p-5},  {0x1.e3a91830a99b5p-1, 0x1.d276aef578000p-5},
    {0x1.e01e009609a56p-1, 0x1.07598e598c000p-4},  {0x1.dca01e577bb98p-1, 0x1.253f5e30d2000p-4},
    {0x1.d92f20b7c9103p-1, 0x1.42edd8b380000p-4},  {0x1.d5cac66fb5ccep-1, 0x1.606598757c000p-4},
    {0x1.d272caa5ede9dp-1, 0x1.7da76356a0000p-4},  {0x1.cf26e3e6b2ccdp-1, 0x1.9ab434e1c6000p-4},
    {0x1.cbe6da2a77902p-1, 0x1.b78c7bb0d6000p-4},  {0x1.c8b266d37086dp-1, 0x1.d431332e72000p-4},
    {0x1.c5894bd5d5804p-1, 0x1.f0a3171de6000p-4},  {0x1.c26b533bb9f8cp-1, 0x1.067152b914000p-3},
    {0x1.bf583eeece73fp-1, 0x1.147858292b000p-3},  {0x1.bc4fd75db96c1p-1, 0x1.2266ecdca3000p-3},
    {0x1.b951e0c864a28p-1, 0x1.303d7a6c55000p-3},  {0x1.b65e2c5ef3e2cp-1, 0x1.3dfc33c331000p-3},
    {0x1.b374867c9888bp-1, 0x1.4ba366b7a8000p-3},  {0x1.b094b211d304ap-1, 0x1.5933928d1f000p-3},
    {0x1.adbe885f2ef7ep-1, 0x1.66acd2418f000p-3},  {0x1.aaf1d31603da2p-1, 0x1.740f8ec669000p-3},
    {0x1.a82e63fd358a7p-1, 0x1.815c0f51af000p-3},  {0x1.a5740ef09738bp-1, 0x1.8e92954f68000p-3},
    {0x1.a2c2a90ab4b27p-1, 0x1.9bb3602f84000p-3},  {0x1.a01a01393f2d1p-1, 0x1.a8bed1c2c0000p-3},
    {0x1.9d79f24db3c1bp-1, 0x1.b5b515c01d000p-3},  {0x1.9ae2505c7b190p-1, 0x1.c2967ccbcc000p-3},
    {0x1.9852ef297ce2fp-1, 0x1.cf635d5486000p-3},  {0x1.95cbaeea44b75p-1, 0x1.dc1bd3446c000p-3},
    {0x1.934c69de74838p-1, 0x1.e8c01b8cfe000p-3},  {0x1.90d4f2f6752e6p-1, 0x1.f5509c0179000p-3},
    {0x1.8e6528effd79dp-1, 0x1.00e6c121fb800p-2},  {0x1.8bfce9fcc007cp-1, 0x1.071b80e93d000p-2},
    {0x1.899c0dabec30ep-1, 0x1.0d46b9e867000p-2},  {0x1.87427aa2317fbp-1, 0x1.13687334bd000p-2},
    {0x1.84f00acb39a08p-1, 0x1.1980d67234800p-2},  {0x1.82a49e8653e55p-1, 0x1.1f8ffe0cc8000p-2},
    {0x1.8060195f40260p-1, 0x1.2595fd7636800p-2},  {0x1.7e22563e0a329p-1, 0x1.2b9300914a800p-2},
    {0x1.7beb377dcb5adp-1, 0x1.3187210436000p-2},  {0x1.79baa679725c2p-1, 0x1.377266dec1800p-2},
    {0x1.77907f2170657p-1, 0x1.3d54ffbaf3000p-2},  {0x1.756cadbd6130cp-1, 0x1.432eee32fe000p-2},
};

/* exp: N = 128 table steps per factor 2. */
#define EXP_INV_LN2_N    (0x1.71547652b82fep0 * 128) /* 128/ln2 */
#define EXP_NEG_LN2_HI_N (-0x1.62e42fefa0000p-8)     /* -ln2/128, high part */
#define EXP_NEG_LN2_LO_N (-0x1.cf79abc9e3b3ap-47)    /* -ln2/128, low part */
#define EXP_SHIFT        0x1.8p52                    /* adding it rounds to an integer */

/* exp(r) - 1 ~= r + C2 r^2 + C3 r^3 + C4 r^4 + C5 r^5 for |r| <= ln2/256. */
#define EXP_C2 0x1.ffffffffffdbdp-2
#define EXP_C3 0x1.555555555543cp-3
#define EXP_C4 0x1.55555cf172b91p-5
#define EXP_C5 0x1.1111167a4d017p-7

/* For j = 0..127, 2^(j/128) ~= S_j * (1 + T_j): word 2j holds the bits of T_j, word 2j+1 the
   bits of S_j minus j << 45, so that adding k << 45 for k = 128m + j gives the bits of 2^m S_j. */
static const uint64_t exp_table[256] = {
    0x0,
    0x3ff0000000000000,
    0x3c9b3b4f1a88bf6e,
    0x3feff63da9fb3335,
    0xbc7160139cd8dc5d,
    0x3fefec9a3e778061,
    0xbc905e7a108766d1,
    0x3fefe315e86e7f85,
    0x3c8cd2523567f613,
    0x3fefd9b0d3158574,
    0xbc8bce8023f98efa,
    0x3fefd06b29ddf6de,
    0x3c60f74e61e6c861,
    0x3fefc74518759bc8,
    0x3c90a3e45b33d399,
    0x3fefbe3ecac6f383,
    0x3c979aa65d837b6d,
    0x3fefb5586cf9890f,
    0x3c8eb51a92fdeffc,
    0x3fefac922b7247f7,
    0x3c3ebe3d702f9cd1,
    0x3fefa3ec32d3d1a2,
    0xbc6a033489906e0b,
    0x3fef9b66affed31b,
    0xbc9556522a2fbd0e,
    0x3fef9301d0125b51,
    0xbc5080ef8c4eea55,
    0x3fef8abdc06c31cc,
    0xbc91c923b9d5f416,
    0x3fef829aaea92de0,
    0x3c80d3e3e95c55af,
    0x3fef7a98c8a58e51,
    0xbc801b15eaa59348,
    0x3fef72b83c7d517b,
    0xbc8f1ff055de323d,
    0x3fef6af9388c8dea,
    0x3c8b898c3f1353bf,
    0x3fef635beb6fcb75,
    0xbc96d99c7611eb26,
    0x3fef5be084045cd4,
    0x3c9aecf73e3a2f60,
    0x3fef54873168b9aa,
    0xbc8fe782cb86389d,
    0x3fef4d5022fcd91d,
    0x3c8a6f4144a6c38d,
    0x3fef463b88628cd6,
    0x3c807a05b0e4047d,
    0x3fef3f49917ddc96,
    0x3c968efde3a8a894,
    0x3fef387a6e756238,
    0x3c875e18f274487d,
    0x3fef31ce4fb2a63f,
    0x3c80472b981fe7f2,
    0x3fef2b4565e27cdd,
    0xbc96b87b3f71085e,
    0x3fef24dfe1f56381,
    0x3c82f7e16d09ab31,
    0x3fef1e9df51fdee1,
    0xbc3d219b1a6fbffa,
    0x3fef187fd0dad990,
    0x3c8b3782720c0ab4,
    0x3fef1285a6e4030b,
    0x3c6e149289cecb8f,
    0x3fef0cafa93e2f56,
    0x3c834d754db0abb6,
    0x3fef06fe0a31b715,
    0x3c864201e2ac744c,
    0x3fef0170fc4cd831,
    0x3c8fdd395dd3f84a,
    0x3feefc08b26416ff,
    0xbc86a3803b8e5b04,
    0x3feef6c55f929ff1,
    0xbc924aedcc4b5068,
    0x3feef1a7373aa9cb,
    0xbc9907f81b512d8e,
    0x3feeecae6d05d866,
    0xbc71d1e83e9436d2,
    0x3feee7db34e59ff7,
    0xbc991919b3ce1b15,
    0x3feee32dc313a8e5,
    0x3c859f48a72a4c6d,
    0x3feedea64c123422,
    0xbc9312607a28698a,
    0x3feeda4504ac801c,
    0xbc58a78f4817895b,
    0x3feed60a21f72e2a,
    0xbc7c2c9b67499a1b,
    0x3feed1f5d950a897,
    0x3c4363ed60c2ac11,
    0x3feece086061892d,
    0x3c9666093b0664ef,
    0x3feeca41ed1d0057,
    0x3c6ecce1daa10379,
    0x3feec6a2b5c13cd0,
    0x3c93ff8e3f0f1230,
    0x3feec32af0d7d3de,
    0x3c7690cebb7aafb0,
    0x3feebfdad5362a27,
    0x3c931dbdeb54e077,
    0x3feebcb299fddd0d,
    0xbc8f94340071a38e,
    0x3feeb9b2769d2ca7,
    0xbc87deccdc93a349,
    0x3feeb6daa2cf6642,
    0xbc78dec6bd0f385f,
    0x3feeb42b569d4f82,
    0xbc861246ec7b5cf6,
    0x3feeb1a4ca5d920f,
    0x3c93350518fdd78e,
    0x3feeaf4736b527da,
    0x3c7b98b72f8a9b05,
    0x3feead12d497c7fd,
    0x3c9063e1e21c5409,
    0x3feeab07dd485429,
    0x3c34c7855019c6ea,
    0x3feea9268a5946b7,
    0x3c9432e62b64c035,
    0x3feea76f15ad2148,
    0xbc8ce44a6199769f,
    0x3feea5e1b976dc09,
    0xbc8c33c53bef4da8,
    0x3feea47eb03a5585,
    0xbc845378892be9ae,
    0x3feea34634ccc320,
    0xbc93cedd78565858,
    0x3feea23882552225,
    0x3c5710aa807e1964,
    0x3feea155d44ca973,
    0xbc93b3efbf5e2228,
    0x3feea09e667f3bcd,
    0xbc6a12ad8734b982,
    0x3feea012750bdabf,
    0xbc6367efb86da9ee,
    0x3fee9fb23c651a2f,
    0xbc80dc3d54e08851,
    0x3fee9f7df9519484,
    0xbc781f647e5a3ecf,
    0x3fee9f75e8ec5f74,
    0xbc86ee4ac08b7db0,
    0x3fee9f9a48a58174,
    0xbc8619321e55e68a,
    0x3fee9feb564267c9,
    0x3c909ccb5e09d4d3,
    0x3feea0694fde5d3f,
    0xbc7b32dcb94da51d,
    0x3feea11473eb0187,
    0x3c94ecfd5467c06b,
    0x3feea1ed0130c132,
    0x3c65ebe1abd66c55,
    0x3feea2f336cf4e62,
    0xbc88a1c52fb3cf42,
    0x3feea427543e1a12,
    0xbc9369b6f13b3734,
    0x3feea589994cce13,
    0xbc805e843a19ff1e,
    0x3feea71a4623c7ad,
    0xbc94d450d872576e,
    0x3feea8d99b4492ed,
    0x3c90ad675b0e8a00,
    0x3feeaac7d98a6699,
    0x3c8db72fc1f0eab4,
    0x3feeace5422aa0db,
    0xbc65b6609cc5e7ff,
    0x3feeaf3216b5448c,
    0x3c7bf68359f35f44,
    0x3feeb1ae99157736,
    0xbc93091fa71e3d83,
    0x3feeb45b0b91ffc6,
    0xbc5da9b88b6c1e29,
    0x3feeb737b0cdc5e5,
    0xbc6c23f97c90b959,
    0x3feeba44cbc8520f,
    0xbc92434322f4f9aa,
    0x3feebd829fde4e50,
    0xbc85ca6cd7668e4b,
    0x3feec0f170ca07ba,
    0x3c71affc2b91ce27,
    0x3feec49182a3f090,
    0x3c6dd235e10a73bb,
    0x3feec86319e32323,
    0xbc87c50422622263,
    0x3feecc667b5de565,
    0x3c8b1c86e3e231d5,
    0x3feed09bec4a2d33,
    0xbc91bbd1d3bcbb15,
    0x3feed503b23e255d,
    0x3c90cc319cee31d2,
    0x3feed99e1330b358,
    0x3c8469846e735ab3,
    0x3feede6b5579fdbf,
    0xbc82dfcd978e9db4,
    0x3feee36bbfd3f37a,
    0x3c8c1a7792cb3387,
    0x3feee89f995ad3ad,
    0xbc907b8f4ad1d9fa,
    0x3feeee07298db666,
    0xbc55c3d956dcaeba,
    0x3feef3a2b84f15fb,
    0xbc90a40e3da6f640,
    0x3feef9728de5593a,
    0xbc68d6f438ad9334,
    0x3feeff76f2fb5e47,
    0xbc91eee26b588a35,
    0x3fef05b030a1064a,
    0x3c74ffd70a5fddcd,
    0x3fef0c1e904bc1d2,
    0xbc91bdfbfa9298ac,
    0x3fef12c25bd71e09,
    0x3c736eae30af0cb3,
    0x3fef199bdd85529c,
    0x3c8ee3325c9ffd94,
    0x3fef20ab5fffd07a,
    0x3c84e08fd10959ac,
    0x3fef27f12e57d14b,
    0x3c63cdaf384e1a67,
    0x3fef2f6d9406e7b5,
    0x3c676b2c6c921968,
    0x3fef3720dcef9069,
    0xbc808a1883ccb5d2,
    0x3fef3f0b555dc3fa,
    0xbc8fad5d3ffffa6f,
    0x3fef472d4a07897c,
    0xbc900dae3875a949,
    0x3fef4f87080d89f2,
    0x3c74a385a63d07a7,
    0x3fef5818dcfba487,
    0xbc82919e2040220f,
    0x3fef60e316c98398,
    0x3c8e5a50d5c192ac,
    0x3fef69e603db3285,
    0x3c843a59ac016b4b,
    0x3fef7321f301b460,
    0xbc82d52107b43e1f,
    0x3fef7c97337b9b5f,
    0xbc892ab93b470dc9,
    0x3fef864614f5a129,
    0x3c74b604603a88d3,
    0x3fef902ee78b3ff6,
    0x3c83c5ec519d7271,
    0x3fef9a51fbc74c83,
    0xbc8ff7128fd391f0,
    0x3fefa4afa2a490da,
    0xbc8dae98e223747d,
    0x3fefaf482d8e67f1,
    0x3c8ec3bc41aa2008,
    0x3fefba1bee615a27,
    0x3c842b94c3a9eb32,
    0x3fefc52b376bba97,
    0x3c8a64a931d185ee,
    0x3fefd0765b6e4540,
    0xbc8e37bae43be3ed,
    0x3fefdbfdad9cbe14,
    0x3c77893b4d91cd9d,
    0x3fefe7c1819e90d8,
    0x3c5305c14160cc89,
    0x3feff3c22b8f71f1,
};

/* ------------------------------------------------------------------------------------------ */
/* log                                                                                        */
/* ------------------------------------------------------------------------------------------ */

/* Inputs with bit patterns in [NEAR1_LO, NEAR1_HI) take the near-1 path. */
#define NEAR1_LO 0x3fee000000000000ULL /* 1 - 2^-4 */
#define NEAR1_HI 0x3ff1090000000000ULL /* 1 + 0x1.09p-4 */
#define ONE_BITS 0x3ff0000000000000ULL
/* Reduced arguments z lie in [0x1.6p-1, 0x1.6p0); this is the bit pattern of 0x1.6p-1. */
#define LOG_Z_BASE 0x3fe6000000000000ULL

/* log(1 + r) for x = 1 + r close to 1, where the table path would lose accuracy. */
static double log_near1(double x)
{
    const double *B = log_poly_near1;
    double r = x - 1.0; /* exact */
    double r2 = r * r;
    double r3 = r * r2;

    /* Tail polynomial B1 + B2 r + ... + B10 r^9, in three groups joined by powers of r3. */
    double g1 = fma(B[3], r2, fma(B[2], r, B[1]));
    double g2 = fma(B[6], r2, fma(B[5], r, B[4]));
    double g3 = fma(B[10], r3, fma(B[9], r2, fma(B[8], r, B[7])));
    double tail = fma(fma(g3, r3, g2), r3, g1);

    /* The leading terms r - r^2/2 in extra precision: rhi keeps the top 26 bits of r, so that
       rhi*rhi is exact; the product r * 2^27 is exact as well. */
    double big = fma(r, 0x1p27, r);
    double rhi = fma(-r, 0x1p27, big);
    double rlo = r - rhi;
    double rhi2 = rhi * rhi;
    double hi = fma(rhi2, B[0], r); /* r - rhi^2/2 */
    double lo = fma(rhi2, B[0], r - hi);
    /* -(r^2 - rhi^2)/2 = -rlo*(rhi + r)/2 */
    lo = fma(B[0] * rlo, rhi + r, lo);

    return hi + fma(tail, r3, lo);
}

double np_log(double x)
{
    uint64_t ix = bits_of(x);
    uint32_t top16 = (uint32_t)(ix >> 48);

    if (ix - NEAR1_LO < NEAR1_HI - NEAR1_LO) {
        if (ix == ONE_BITS) return 0.0;
        return log_near1(x);
    }

    /* Everything that is not a positive normal number: zeros, subnormals, negatives, Inf, NaN.
       (top16 - 0x0010 wraps around for exponent fields 0, so one comparison suffices.) */
    if (top16 - 0x0010u >= 0x7ff0u - 0x0010u) {
        if ((ix << 1) == 0) return -INFINITY;      /* log(+-0) */
        if (ix == 0x7ff0000000000000ULL) return x; /* log(+Inf) */
        if ((top16 & 0x8000u) != 0 || (top16 & 0x7ff0u) == 0x7ff0u)
            return invalid_result(x); /* negative, or NaN */
        /* Positive subnormal: scale into the normal range, then remove 52 from the exponent. */
        ix = bits_of(x * 0x1p52) - (52ULL << 52);
    }

    /* Write x = 2^k * z with z in [0x1.6p-1, 0x1.6p0). d is the offset of x's bit pattern from
       that of 0x1.6p-1: its top 12 bits are k (two's complement), bits 45..51 pick the table
       row, and clearing the top 12 bits of d in x's pattern gives z. */
    uint64_t d = ix - LOG_Z_BASE;
    int row = (int)((d >> 45) & 127);
    int64_t khi = (int64_t)(d >> 52); /* 0..4095 */
    int k = (int)(khi >= 2048 ? khi - 4096 : khi);
    double z = double_of(ix - (d & (0xfffULL << 52)));
    double invc = log_table[row].invc;
    double logc = log_table[row].logc;
    double kd = (double)k;

    /* log(x) = k ln2 + log(c) + log1p(r), r = z/c - 1 computed with a single rounding. */
    double r = fma(z, invc, -1.0);
    double w = fma(kd, LOG_LN2_HI, logc); /* exact */
    double hi = w + r;
    double lo = fma(kd, LOG_LN2_LO, (w - hi) + r);

    const double *A = log_poly;
    double r2 = r * r;
    double p = fma(fma(A[4], r, A[3]), r2, fma(A[2], r, A[1]));
    double y = fma(r * r2, p, fma(A[0], r2, lo));
    return y + hi;
}

/* ------------------------------------------------------------------------------------------ */
/* exp                                                                                        */
/* ------------------------------------------------------------------------------------------ */

/* Exponent fields: 2^-54 -> 0x3c9, 512 -> 0x408, 1024 -> 0x409. */
#define EXP_EF_TINY 0x3c9u
#define EXP_EF_512  0x408u
#define EXP_EF_1024 0x409u

/* exp for |x| in [512, 1024), where scale = 2^(k/128) may itself overflow or underflow.
   p is exp(r) - 1 + tail (see np_exp), sbits the unadjusted bit pattern of scale, kbits the
   pattern of the shifted k (bit 31 is the sign of k). */
static double exp_large(double p, uint64_t sbits, uint64_t kbits)
{
    if ((kbits & 0x80000000u) == 0) {
        /* k > 0: build scale / 2^1009, which is representable, and scale back at the end. */
        double s = double_of(sbits - (1009ULL << 52));
        return 0x1p1009 * fma(p, s, s);
    }
    /* k < 0: build scale * 2^1022. If the result is subnormal, round it to its final
       precision in one step (by adding 1 and subtracting it again) before scaling down. */
    double s = double_of(sbits + (1022ULL << 52));
    double sp = p * s;
    double y = s + sp;
    if (y < 1.0) {
        double lo = (s - y) + sp; /* y + lo = s + s*p more exactly */
        double hi = 1.0 + y;
        lo = ((1.0 - hi) + y) + lo; /* hi + lo = 1 + y + lo */
        y = (hi + lo) - 1.0;
        if (y == 0.0) y = 0.0; /* never -0 */
    }
    return 0x1p-1022 * y;
}

double np_exp(double x)
{
    uint64_t ix = bits_of(x);
    uint32_t ef = (uint32_t)(ix >> 52) & 0x7ffu; /* exponent field of |x| */
    int large = 0;

    if (ef - EXP_EF_TINY >= EXP_EF_512 - EXP_EF_TINY) {
        if (ef < EXP_EF_TINY) return 1.0 + x; /* |x| < 2^-54, including zeros and subnormals */
        if (ef >= EXP_EF_1024) {
            if (ix == 0xfff0000000000000ULL) return 0.0; /* exp(-Inf) */
            if (ef == 0x7ffu) return 1.0 + x;            /* +Inf or NaN */
            return (ix >> 63) ? 0.0 : INFINITY;          /* certain underflow / overflow */
        }
        large = 1; /* 512 <= |x| < 1024 */
    }

    /* k = round(x * 128/ln2) via the shift trick; its bits sit in the low bits of kshift. */
    double kshift = fma(x, EXP_INV_LN2_N, EXP_SHIFT);
    uint64_t kbits = bits_of(kshift);
    double kd = kshift - EXP_SHIFT;
    /* r = x - k ln2/128, with ln2/128 in two parts. */
    double r = fma(kd, EXP_NEG_LN2_LO_N, fma(kd, EXP_NEG_LN2_HI_N, x));

    /* 2^(k/128) = 2^(k>>7) * 2^(j/128) ~= scale * (1 + tail), j = k mod 128. */
    unsigned j = (unsigned)(kbits & 127u);
    double tail = double_of(exp_table[2 * j]);
    uint64_t sbits = exp_table[2 * j + 1] + (kbits << 45);

    /* p = tail + (exp(r) - 1); result = scale * (1 + p). */
    double r2 = r * r;
    double p = fma(r2 * r2, fma(EXP_C5, r, EXP_C4), fma(fma(EXP_C3, r, EXP_C2), r2, r + tail));
    if (large) return exp_large(p, sbits, kbits);
    double scale = double_of(sbits);
    return fma(p, scale, scale);
}

/* ------------------------------------------------------------------------------------------ */
/* log1p                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/*
 * The constants below are fdlibm's (glibc sysdeps/ieee754/dbl-64/s_log1p.c, musl
 * src/math/log1p.c):
 *
 * ====================================================
 * Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
 *
 * Developed at SunPro, a Sun Microsystems, Inc. business.
 * Permission to use, copy, modify, and distribute this
 * software is freely granted, provided that this notice
 * is preserved.
 * ====================================================
 */
#define L1P_LN2_HI     6.93147180369123816490e-01 /* 3fe62e42 fee00000 */
#define L1P_LN2_LO     1.90821492927058770002e-10 /* 3dea39ef 35793c76 */
#define L1P_TWO_THIRDS 0x1.5555555555555p-1       /* glibc writes 0.66666666666666666 */
static const double Lp[8] = {
    0.0,
    6.666666666666735130e-01, /* 3FE55555 55555593 */
    3.999999999940941908e-01, /* 3FD99999 9997FA04 */
    2.857142874366239149e-01, /* 3FD24924 94229359 */
    2.222219843214978396e-01, /* 3FCC71C5 1D8E78AF */
    1.818357216161805012e-01, /* 3FC74664 96CB03DE */
    1.531383769920937332e-01, /* 3FC39A09 D078C69F */
    1.479819860511658591e-01, /* 3FC2F112 DF3E5244 */
};

/* a*b + c, fused in the FMA flavour, two roundings in the plain one. */
#ifdef NPMATH_LOG1P_PLAIN
#define L1P_MADD(a, b, c) ((a) * (b) + (c))
#else
#define L1P_MADD(a, b, c) fma((a), (b), (c))
#endif

/*
 * Method: write 1 + x = 2^k (1 + f) with sqrt(2)/2 <= 1 + f < sqrt(2). When k != 0, 1 + x is
 * rounded to u first and c = ((1 + x) - u)/u is kept as a correction. Then with s = f/(2 + f),
 * log(1 + f) = 2s + s*R(s^2) = f - (hfsq - s*(hfsq + R)), hfsq = f^2/2, and the answer is
 * k*ln2_hi + (f - (hfsq - (s*(hfsq + R) + (k*ln2_lo + c)))).
 */
double np_log1p(double x)
{
    uint64_t ix = bits_of(x);
    uint32_t hx = (uint32_t)(ix >> 32); /* high word, sign included */
    uint32_t ax = hx & 0x7fffffffu;     /* high word of |x| */
    int negative = (hx >> 31) != 0;
    int reduce = 1; /* whether 1 + x must be reduced to 2^k (1 + f) */
    int k = 0;
    double f = x;    /* unreduced case: f = x, k = 0 */
    double c = 0.0;  /* correction ((1 + x) - u)/u for the rounding of u = 1 + x */
    uint32_t hu = 1; /* after the reduction, 0 flags |f| < 2^-20 */

    if (negative || hx < 0x3fda827au) { /* x < 0x1.a827ap-2 (about sqrt(2) - 1) */
        if (ax >= 0x3ff00000u) {        /* x <= -1, -Inf, or NaN with the sign bit set */
            if (x == -1.0) return -INFINITY;
            return invalid_result(x);
        }
        if (ax < 0x3e200000u) {             /* |x| < 2^-29 */
            if (ax < 0x3c900000u) return x; /* |x| < 2^-54: log1p(x) rounds to x */
            return x - (x * x) * 0.5;
        }
        /* -0.2929 < x < 0.4142 needs no reduction (k = 0, f = x exactly); -1 < x <= -0.2929
           is reduced below. */
        reduce = negative && ax > 0x3fd2bec3u;
    } else if (hx >= 0x7ff00000u) {
        return x + x; /* +Inf or NaN */
    }

    if (reduce) {
        double u;
        if (hx < 0x43400000u || negative) { /* x < 2^53: form u = 1 + x and its error */
            u = 1.0 + x;
            hu = (uint32_t)(bits_of(u) >> 32);
            k = (int)(hu >> 20) - 1023;
            c = (k > 0) ? 1.0 - (u - x) : x - (u - 1.0);
            c = c / u;
        } else { /* 1 + x rounds to x */
            u = x;
            hu = hx;
            k = (int)(hu >> 20) - 1023;
        }
        /* Replace u's exponent to bring it into [sqrt(2)/2, sqrt(2)). */
        uint64_t low = bits_of(u) & 0xffffffffULL;
        hu &= 0x000fffffu;
        if (hu < 0x6a09eu) {
            u = double_of((uint64_t)(hu | 0x3ff00000u) << 32 | low);
        } else {
            k += 1;
            u = double_of((uint64_t)(hu | 0x3fe00000u) << 32 | low);
            hu = (0x00100000u - hu) >> 2;
        }
        f = u - 1.0;
    }

    double hfsq = 0.5 * f * f;
    double kd = (double)k;

    if (reduce && hu == 0) { /* |f| < 2^-20: a short series is enough (k is never 0 here) */
        if (f == 0.0) return k == 0 ? 0.0 : L1P_MADD(kd, L1P_LN2_HI, L1P_MADD(kd, L1P_LN2_LO, c));
        double R = hfsq * L1P_MADD(-f, L1P_TWO_THIRDS, 1.0);
        if (k == 0) return f - R;
        double t = (R - L1P_MADD(kd, L1P_LN2_LO, c)) - f;
        return L1P_MADD(kd, L1P_LN2_HI, -t);
    }

    double s = f / (2.0 + f);
    double z = s * s;
    double z2 = z * z;
    double z4 = z2 * z2;
    double z6 = z2 * z4;
    double R2 = L1P_MADD(z, Lp[3], Lp[2]);
    double R3 = L1P_MADD(z, Lp[5], Lp[4]);
    double R4 = L1P_MADD(z, Lp[7], Lp[6]);
    /* R = z*Lp1 + z2*R2 + z4*R3 + z6*R4, summed left to right */
    double R = L1P_MADD(z6, R4, L1P_MADD(z4, R3, L1P_MADD(z, Lp[1], z2 * R2)));
    double sR = s * (hfsq + R);
    if (k == 0) return f - (hfsq - sR);
    double t = (hfsq - (L1P_MADD(kd, L1P_LN2_LO, c) + sR)) - f;
    return L1P_MADD(kd, L1P_LN2_HI, -t);
}
