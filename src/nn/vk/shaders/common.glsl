/* common.glsl - the float rules every shader follows (docs/gpu.md, "Float
 * rules"), and the software operations they need. Included first by every
 * shader.
 *
 * The CPU engine's bits, on any Vulkan device, need:
 *  - correctly rounded, round-to-nearest-even float operations: every entry
 *    point declares RoundingModeRTE 32 (below; spirv_fix.cmake adds
 *    RoundingModeRTE 64 to modules that compute in double);
 *  - no contraction: every float temporary is `precise`, so every float
 *    add, subtract and multiply carries NoContraction (checked in the
 *    SPIR-V by tests/gpu/spirv_check.py) and the optimiser may not fold
 *    x + 0 or fuse a·b + c;
 *  - no driver division, sqrt, exp or fma on floats (Vulkan allows 2.5 ulp,
 *    "inherited" and implementation-defined precision): div_rn and sqrt_rn
 *    are exact by construction, exp_ps is Cephes' transcription and
 *    expf_musl musl's expf;
 *  - constants as bit patterns (glslang reads a decimal literal through
 *    double, which can round differently from C's direct conversion);
 *  - denormals kept: DenormPreserve 32 where the device offers it (variant
 *    bit 0), SignedZeroInfNanPreserve 32 likewise (bit 1).
 * tests/gpu/shader_lint.py rejects what breaks these rules in the source.
 */
#extension GL_EXT_spirv_intrinsics : require

spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4467], 4462, 32);
#if FY_DENORM_PRESERVE
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4464], 4459, 32);
#endif
#if FY_SZINP
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4466], 4461, 32);
#endif

/* Test builds start div_rn and sqrt_rn one ulp off (up or down by the
 * inputs' parity), so their exact fix-up runs even where the driver's own
 * double division and sqrt are exact (lavapipe). 0 in production. */
layout(constant_id = 0) const uint FY_SKEW = 0u;

#define F_0 uintBitsToFloat(0x00000000u)
#define F_1 uintBitsToFloat(0x3f800000u)
#define F_HALF uintBitsToFloat(0x3f000000u)
#define F_INF uintBitsToFloat(0x7f800000u)
#define F_NEG_INF uintBitsToFloat(0xff800000u)

/* ---- exact conversions between float bits and double ---------------------
 * Done in integers so that a device that flushes float denormals (no
 * DenormPreserve) still gets div_rn and sqrt_rn right. */

/* The double value of a finite float magnitude (bits < 0x7f800000), and
 * 2^128 for 0x7f800000 (the overflow threshold's upper neighbour). */
double f2d(uint b)
{
    uint e = b >> 23, m = b & 0x7fffffu;
    if (e == 0u) { /* denormal: m·2^-149, both exact in double */
        precise double dm = double(int(m));
        precise double r = dm * packDouble2x32(uvec2(0u, 0x36a00000u));
        return r;
    }
    return packDouble2x32(uvec2(m << 29, ((e + 896u) << 20) | (m >> 3)));
}

/* A positive double truncated to float magnitude bits (denormals included;
 * 0x7f800000 from 2^128 up): a candidate within an ulp or two. */
uint d2f_trunc(double q)
{
    uvec2 w = unpackDouble2x32(q);
    int e = int((w.y >> 20) & 0x7ffu) - 1023;
    if (e >= 128) return 0x7f800000u;
    uint m = ((w.y & 0xfffffu) << 3) | (w.x >> 29);
    if (e >= -126) return (uint(e + 127) << 23) | m;
    int sh = -126 - e;
    return sh > 24 ? 0u : (0x800000u | m) >> uint(sh);
}

/* The midpoint between float magnitudes b and b + 1, exactly (25 bits). */
double fmid(uint b)
{
    precise double s = f2d(b) + f2d(b + 1u);
    precise double r = s * packDouble2x32(uvec2(0u, 0x3fe00000u));
    return r;
}

/* Test builds: the candidate one ulp off. */
uint skew(uint q, uint salt)
{
    if (FY_SKEW == 0u) return q;
    if ((salt & 1u) != 0u) return q < 0x7f800000u ? q + 1u : q;
    return q > 0u ? q - 1u : q;
}

/* ---- a / b, correctly rounded ----------------------------------------------
 * IEEE division with x86's NaN results (a NaN operand comes back quieted,
 * the first one first; invalid gives 0xffc00000). For finite nonzero
 * operands: a candidate from the driver's double division (any accuracy
 * within a few ulp), then moved to the correctly rounded magnitude q by
 * exact tests: the true quotient lies above the midpoint m of q and q + 1
 * iff |a| > m·|b|, where m·|b| has at most 49 bits and so is exact in
 * double; equality is a tie, which goes to the even q. */
float div_rn(float a, float b)
{
    uint ua = floatBitsToUint(a), ub = floatBitsToUint(b);
    uint aa = ua & 0x7fffffffu, ab = ub & 0x7fffffffu, sign = (ua ^ ub) & 0x80000000u;
    if (aa > 0x7f800000u) return uintBitsToFloat(ua | 0x400000u);
    if (ab > 0x7f800000u) return uintBitsToFloat(ub | 0x400000u);
    if (aa == ab && (aa == 0u || aa == 0x7f800000u)) return uintBitsToFloat(0xffc00000u);
    if (aa == 0x7f800000u || ab == 0u) return uintBitsToFloat(sign | 0x7f800000u);
    if (aa == 0u || ab == 0x7f800000u) return uintBitsToFloat(sign);
    precise double A = f2d(aa), B = f2d(ab);
    precise double cand = A / B; /* lint: fp64 candidate, fixed up below */
    uint q = skew(d2f_trunc(cand), ua ^ ub);
    for (int i = 0; i < 6; i++) {
        if (q < 0x7f800000u) {
            precise double mb = fmid(q) * B;
            if (A > mb || (A == mb && (q & 1u) != 0u)) {
                q++;
                continue;
            }
        }
        if (q > 0u) {
            precise double mb = fmid(q - 1u) * B;
            if (A < mb || (A == mb && (q & 1u) != 0u)) {
                q--;
                continue;
            }
        }
        break;
    }
    return uintBitsToFloat(sign | q);
}

/* ---- sqrt(x), correctly rounded ----------------------------------------------
 * x86's results for NaN (quieted), negative (0xffc00000), ±0 and +inf. A
 * candidate from the driver's double sqrt, then exact tests: sqrt(x) lies
 * above the midpoint m of s and s + 1 iff x > m·m (50 bits: exact; never
 * equal, as m has 25 significant bits and x 24). */
float sqrt_rn(float x)
{
    uint ux = floatBitsToUint(x);
    if ((ux & 0x7fffffffu) > 0x7f800000u) return uintBitsToFloat(ux | 0x400000u);
    if (ux == 0x80000000u || ux == 0u || ux == 0x7f800000u) return x;
    if (ux > 0x80000000u) return uintBitsToFloat(0xffc00000u);
    precise double X = f2d(ux);
    precise double cand = sqrt(X); /* lint: fp64 candidate, fixed up below */
    uint s = skew(d2f_trunc(cand), ux);
    for (int i = 0; i < 6; i++) {
        precise double up = fmid(s);
        precise double up2 = up * up;
        if (X > up2) {
            s++;
            continue;
        }
        if (s > 0u) {
            precise double dn = fmid(s - 1u);
            precise double dn2 = dn * dn;
            if (X < dn2) {
                s--;
                continue;
            }
        }
        break;
    }
    return uintBitsToFloat(s);
}

/* ---- Cephes exp_ps (ops.c fy_exp_ps), one lane ------------------------------ */
#define EXP_HI uintBitsToFloat(0x42b0c0a5u)     /* 88.3762626647949 */
#define EXP_NEG_HI uintBitsToFloat(0xc2b0c0a5u) /* -88.3762626647949 */
#define EXP_LOG2E uintBitsToFloat(0x3fb8aa3bu)
#define EXP_C1 uintBitsToFloat(0x3f318000u) /* 0.693359375 */
#define EXP_C2 uintBitsToFloat(0xb95e8083u) /* -2.12194440e-4 */
#define EXP_P0 uintBitsToFloat(0x39506967u)
#define EXP_P1 uintBitsToFloat(0x3ab743ceu)
#define EXP_P2 uintBitsToFloat(0x3c088908u)
#define EXP_P3 uintBitsToFloat(0x3d2aa9c1u)
#define EXP_P4 uintBitsToFloat(0x3e2aaaaau)
#define EXP_P5 uintBitsToFloat(0x3f000000u)

float exp_ps(float xin)
{
    precise float x = xin < EXP_HI ? xin : EXP_HI;
    x = x > EXP_NEG_HI ? x : EXP_NEG_HI;
    precise float fx = x * EXP_LOG2E;
    fx = fx + F_HALF;
    precise float tmp = float(int(fx));
    fx = tmp > fx ? tmp - F_1 : tmp; /* floor by truncation and correction */
    precise float z = fx * EXP_C2;
    precise float t = fx * EXP_C1;
    x = x - t;
    x = x - z;
    z = x * x;
    precise float y = EXP_P0 * x;
    y = y + EXP_P1;
    y = y * x;
    y = y + EXP_P2;
    y = y * x;
    y = y + EXP_P3;
    y = y * x;
    y = y + EXP_P4;
    y = y * x;
    y = y + EXP_P5;
    y = y * z;
    y = y + x;
    y = y + F_1;
    precise float r = y * uintBitsToFloat(uint(int(fx) + 127) << 23);
    return r;
}

/* ---- musl's expf (ops.c fy_expf), in double ------------------------------------
 * The table holds 2^(i/32) less i << 47, as (high, low) words; k << 47 is
 * added to the high word only (its low word is zero, so no carry). */
const uint EXPF_HI[32] = uint[32](
    0x3ff00000u, 0x3fefd9b0u, 0x3fefb558u, 0x3fef9301u, 0x3fef72b8u, 0x3fef5487u, 0x3fef387au,
    0x3fef1e9du, 0x3fef06feu, 0x3feef1a7u, 0x3feedea6u, 0x3feece08u, 0x3feebfdau, 0x3feeb42bu,
    0x3feeab07u, 0x3feea47eu, 0x3feea09eu, 0x3fee9f75u, 0x3feea114u, 0x3feea589u, 0x3feeace5u,
    0x3feeb737u, 0x3feec491u, 0x3feed503u, 0x3feee89fu, 0x3feeff76u, 0x3fef199bu, 0x3fef3720u,
    0x3fef5818u, 0x3fef7c97u, 0x3fefa4afu, 0x3fefd076u);
const uint EXPF_LO[32] = uint[32](
    0x00000000u, 0xd3158574u, 0x6cf9890fu, 0xd0125b51u, 0x3c7d517bu, 0x3168b9aau, 0x6e756238u,
    0xf51fdee1u, 0x0a31b715u, 0x373aa9cbu, 0x4c123422u, 0x6061892du, 0xd5362a27u, 0x569d4f82u,
    0xdd485429u, 0xb03a5585u, 0x667f3bcdu, 0xe8ec5f74u, 0x73eb0187u, 0x994cce13u, 0x422aa0dbu,
    0xb0cdc5e5u, 0x82a3f090u, 0xb23e255du, 0x995ad3adu, 0xf2fb5e47u, 0xdd85529cu, 0xdcef9069u,
    0xdcfba487u, 0x337b9b5fu, 0xa2a490dau, 0x5b6e4540u);

float expf_musl(float x)
{
    uint ux = floatBitsToUint(x);
    uint abstop = (ux >> 20) & 0x7ffu;
    if (abstop >= 0x42bu) { /* |x| >= 88, inf or NaN */
        if (ux == 0xff800000u) return F_0;
        if (abstop >= 0x7f8u) {
            precise float r = x + x;
            return r;
        }
        if (x > uintBitsToFloat(0x42b17217u)) return F_INF; /* 0x1.62e42ep6 */
        if (x < uintBitsToFloat(0xc2cff1b4u)) return F_0;   /* -0x1.9fe368p6 */
    }
    double SHIFT = packDouble2x32(uvec2(0u, 0x43380000u)); /* 0x1.8p52 */
    precise double z = packDouble2x32(uvec2(0x652b82feu, 0x40471547u)) * double(x);
    precise double kd = z + SHIFT;
    uint ki = unpackDouble2x32(kd).x;
    kd = kd - SHIFT;
    precise double r = z - kd;
    double s = packDouble2x32(uvec2(EXPF_LO[ki & 31u], EXPF_HI[ki & 31u] + (ki << 15)));
    precise double p = packDouble2x32(uvec2(0x4b912394u, 0x3ebc6af8u)) * r; /* C0 */
    p = p + packDouble2x32(uvec2(0x50fac4f3u, 0x3f2ebfceu));               /* C1 */
    precise double r2 = r * r;
    precise double y = packDouble2x32(uvec2(0xff0c52d6u, 0x3f962e42u)) * r; /* C2 */
    y = y + packDouble2x32(uvec2(0u, 0x3ff00000u));
    precise double pr2 = p * r2;
    y = pr2 + y;
    y = y * s;
    return float(y);
}
