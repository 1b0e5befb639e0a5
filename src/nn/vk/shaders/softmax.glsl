/* softmax.glsl - ops.c fy_softmax on a row held in shared memory, called by
 * every invocation of the workgroup (it has barriers). The maximum and the
 * sums are sequential chains in one invocation, as on the CPU (no tree
 * reductions on floats); exponentials and divisions run in parallel, each
 * element on its own. n % 4 == 0: exp_ps, four lane sums (lane l adds
 * elements l, l+4, ... in order), then 0 + lane0 + lane1 + lane2 + lane3;
 * otherwise musl's expf and one running sum. Then x/sum. */
#define SM_MAX 1024u
shared float sm_x[SM_MAX];
shared float sm_stat[6];

void softmax_shared(uint n, uint t, uint nt)
{
    if (t == 0u) {
        float mx = sm_x[0];
        for (uint i = 1u; i < n; i++) mx = mx < sm_x[i] ? sm_x[i] : mx;
        sm_stat[0] = mx;
    }
    barrier();
    float mx = sm_stat[0];
    bool four = (n & 3u) == 0u;
    for (uint i = t; i < n; i += nt) {
        precise float v = sm_x[i] - mx;
        sm_x[i] = four ? exp_ps(v) : expf_musl(v);
    }
    barrier();
    if (t < (four ? 4u : 1u)) {
        precise float s = F_0;
        for (uint i = t; i < n; i += four ? 4u : 1u) s = s + sm_x[i];
        sm_stat[2u + t] = s;
    }
    barrier();
    if (t == 0u) {
        precise float s = F_0;
        if (four) {
            for (uint l = 0u; l < 4u; l++) s = s + sm_stat[2u + l];
        } else {
            s = sm_stat[2];
        }
        sm_stat[1] = s;
    }
    barrier();
    float sum = sm_stat[1];
    for (uint i = t; i < n; i += nt) sm_x[i] = div_rn(sm_x[i], sum);
    barrier();
}
