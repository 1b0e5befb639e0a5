/* vk_ops.c - recording the network's operations (see vk_ops.h): argument
 * checks, push constants (vk_push.h) and workgroup counts per shader. */
#include "nn/vk/vk_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn/vk/vk_impl.h"
#include "nn/vk/vk_push.h"

/* The word offset of r in its buffer, or a recorded FY_EINVAL. */
static int woff(fy_vk_cmd *c, fy_vk_ref r, const char *what, uint32_t *out)
{
    if (!r.buf) return fy_vk_cmd_fail(c, FY_EINVAL, "%s: no buffer", what);
    if (r.off % 4 || r.off / 4 > UINT32_MAX || r.off > r.buf->size)
        return fy_vk_cmd_fail(c, FY_EINVAL, "%s: offset %zu not a word inside the buffer", what,
                              r.off);
    *out = (uint32_t)(r.off / 4);
    return 0;
}

static int bad(fy_vk_cmd *c, const char *op, const char *what)
{
    return fy_vk_cmd_fail(c, FY_EINVAL, "%s: %s", op, what);
}

static uint32_t groups(size_t n, uint32_t per)
{
    return (uint32_t)((n + per - 1) / per);
}

int fy_vk_op_quantize(fy_vk_cmd *c, fy_vk_ref x, int ldx, int rows, int k, float mult, fy_vk_ref a)
{
    fy_vk_push_quantize p = {
        .rows = (uint32_t)rows, .k = (uint32_t)k, .ldx = (uint32_t)ldx, .mult = mult};
    if (rows < 0 || k <= 0 || k % 4 || ldx < k) return bad(c, "quantize", "bad shape");
    if (woff(c, x, "quantize x", &p.x_off) || woff(c, a, "quantize a", &p.a_off)) return FY_EINVAL;
    fy_vk_buf *b[] = {x.buf, a.buf};
    return fy_vk_cmd_dispatch(c, FY_VK_K_QUANTIZE, NULL, 0, b, 2, &p, sizeof p,
                              groups((size_t)k / 4, 64), (uint32_t)rows, 1);
}

static int layer_check(fy_vk_cmd *c, const char *op, const fy_vk_i8_layer *l, fy_vk_ref a,
                       fy_vk_ref y, uint32_t *offs)
{
    if (!l || l->n <= 0 || l->k <= 0 || l->k % 64) return bad(c, op, "k must be a multiple of 64");
    if (woff(c, a, op, &offs[0]) || woff(c, l->w, op, &offs[1]) || woff(c, l->bias, op, &offs[2]) ||
        woff(c, y, op, &offs[3]))
        return FY_EINVAL;
    return 0;
}

int fy_vk_op_gemm_i8(fy_vk_cmd *c, const fy_vk_i8_layer *l, fy_vk_ref a, int m, fy_vk_ref cols,
                     int ncols, int j0, int relu, fy_vk_ref y, int ldy)
{
    uint32_t o[4], co = 0;
    if (layer_check(c, "gemm_i8", l, a, y, o)) return FY_EINVAL;
    if (m < 0 || ncols < 0 || ldy < ncols || (!cols.buf && (j0 < 0 || j0 + ncols > l->n)))
        return bad(c, "gemm_i8", "bad shape");
    if (cols.buf && woff(c, cols, "gemm_i8 cols", &co)) return FY_EINVAL;
    uint32_t flags = (cols.buf ? FY_VK_GEMM_COLS : 0) | (relu ? FY_VK_GEMM_RELU : 0);
    if (m <= FY_VK_GEMV_ROWS && l->k <= FY_VK_ROWS_MAX_K) { /* a 64-row tile would idle */
        fy_vk_push_gemm_rows r = {
            .m = (uint32_t)m,
            .k = (uint32_t)l->k,
            .ldy = (uint32_t)ldy,
            .a_off = o[0],
            .w_off = o[1],
            .bias_off = o[2],
            .y_off = o[3],
            .cols_off = co,
            .flags = flags,
            .unquant = l->unquant,
            .j0 = (uint32_t)(cols.buf ? 0 : j0),
            .ncols = (uint32_t)ncols,
        };
        fy_vk_buf *b[] = {a.buf, l->w.buf, l->bias.buf, y.buf, cols.buf ? cols.buf : a.buf, a.buf};
        return fy_vk_cmd_dispatch(c, FY_VK_K_GEMM_I8_ROWS, NULL, 0, b, 6, &r, sizeof r,
                                  groups((size_t)ncols, 64), (uint32_t)m, 1);
    }
    if (fy_vk_dev_info(fy_vk_cmd_dev(c))->int_dot_accel) /* two dot products per 4 bytes */
        return fy_vk_op_gemm_i8_dot(c, l, fy_vk_at(NULL, 0), fy_vk_at(NULL, 0), a, m, cols, ncols,
                                    j0, relu, y, ldy);
    fy_vk_push_gemm p = {
        .m = (uint32_t)m,
        .ncols = (uint32_t)ncols,
        .k = (uint32_t)l->k,
        .ldy = (uint32_t)ldy,
        .a_off = o[0],
        .w_off = o[1],
        .bias_off = o[2],
        .y_off = o[3],
        .cols_off = co,
        .j0 = (uint32_t)(cols.buf ? 0 : j0),
        .flags = flags,
        .unquant = l->unquant,
    };
    fy_vk_buf *b[] = {a.buf, l->w.buf, l->bias.buf, y.buf, cols.buf ? cols.buf : a.buf};
    return fy_vk_cmd_dispatch(c, FY_VK_K_GEMM_I8, NULL, 0, b, 5, &p, sizeof p,
                              groups((size_t)ncols, 64), groups((size_t)m, 64), 1);
}

size_t fy_vk_i8_fixups(const int8_t *w, int n, int k, uint32_t *start, uint32_t *pairs)
{
    size_t count = 0;
    for (int j = 0; j < n; j++) {
        if (start) start[j] = (uint32_t)count;
        const int8_t *row = w + (size_t)j * k;
        for (int q = 0; q < k / 2; q++) {
            int w0 = row[2 * q], w1 = row[2 * q + 1];
            int same = (w0 > 0 && w1 > 0) || (w0 < 0 && w1 < 0);
            if (!same || abs(w0) + abs(w1) <= 129) continue;
            if (pairs) pairs[count] = (uint32_t)q;
            count++;
        }
    }
    if (start) start[n] = (uint32_t)count;
    return count;
}

int fy_vk_op_gemm_i8_dot(fy_vk_cmd *c, const fy_vk_i8_layer *l, fy_vk_ref start, fy_vk_ref pairs,
                         fy_vk_ref a, int m, fy_vk_ref cols, int ncols, int j0, int relu,
                         fy_vk_ref y, int ldy)
{
    uint32_t o[4], co = 0, fo = 0, po = 0, mode = start.buf ? 0 : 1;
    if (layer_check(c, "gemm_i8_dot", l, a, y, o)) return FY_EINVAL;
    if (m < 0 || ncols < 0 || ldy < ncols || (!cols.buf && (j0 < 0 || j0 + ncols > l->n)))
        return bad(c, "gemm_i8_dot", "bad shape");
    if ((cols.buf && woff(c, cols, "gemm_i8_dot cols", &co)) ||
        (start.buf &&
         (woff(c, start, "gemm_i8_dot start", &fo) || woff(c, pairs, "gemm_i8_dot pairs", &po))))
        return FY_EINVAL;
    fy_vk_push_gemm_dot p = {
        .g =
            {
                .m = (uint32_t)m,
                .ncols = (uint32_t)ncols,
                .k = (uint32_t)l->k,
                .ldy = (uint32_t)ldy,
                .a_off = o[0],
                .w_off = o[1],
                .bias_off = o[2],
                .y_off = o[3],
                .cols_off = co,
                .j0 = (uint32_t)(cols.buf ? 0 : j0),
                .flags = (cols.buf ? FY_VK_GEMM_COLS : 0) | (relu ? FY_VK_GEMM_RELU : 0),
                .unquant = l->unquant,
            },
        .fix_off = fo,
        .pair_off = po,
    };
    fy_vk_buf *b[] = {a.buf,
                      l->w.buf,
                      l->bias.buf,
                      y.buf,
                      cols.buf ? cols.buf : a.buf,
                      start.buf ? start.buf : a.buf,
                      start.buf ? pairs.buf : a.buf};
    return fy_vk_cmd_dispatch(c, FY_VK_K_GEMM_I8_DOT, &mode, 1, b, 7, &p, sizeof p,
                              groups((size_t)ncols, 64), groups((size_t)m, 64), 1);
}

int fy_vk_op_gemm_i8_rows(fy_vk_cmd *c, const fy_vk_i8_layer *l, fy_vk_ref a, int m, fy_vk_ref cols,
                          fy_vk_ref rowcols, int max_n, int relu, fy_vk_ref y, int ldy)
{
    uint32_t o[4], co, ro;
    if (layer_check(c, "gemm_i8_rows", l, a, y, o)) return FY_EINVAL;
    if (m < 0 || max_n < 0 || ldy < max_n) return bad(c, "gemm_i8_rows", "bad shape");
    if (l->k > FY_VK_ROWS_MAX_K) return bad(c, "gemm_i8_rows", "k over FY_VK_ROWS_MAX_K");
    if (woff(c, cols, "gemm_i8_rows cols", &co) || woff(c, rowcols, "gemm_i8_rows rows", &ro))
        return FY_EINVAL;
    fy_vk_push_gemm_rows p = {
        .m = (uint32_t)m,
        .k = (uint32_t)l->k,
        .ldy = (uint32_t)ldy,
        .a_off = o[0],
        .w_off = o[1],
        .bias_off = o[2],
        .y_off = o[3],
        .cols_off = co,
        .rows_off = ro,
        .flags = FY_VK_GEMM_PER_ROW | (relu ? FY_VK_GEMM_RELU : 0),
        .unquant = l->unquant,
    };
    fy_vk_buf *b[] = {a.buf, l->w.buf, l->bias.buf, y.buf, cols.buf, rowcols.buf};
    return fy_vk_cmd_dispatch(c, FY_VK_K_GEMM_I8_ROWS, NULL, 0, b, 6, &p, sizeof p,
                              groups((size_t)max_n, 64), (uint32_t)m, 1);
}

int fy_vk_op_gemm_f32(fy_vk_cmd *c, const fy_vk_f32_layer *l, fy_vk_ref x, int ldx, int m,
                      fy_vk_ref cols, int ncols, int j0, int relu, fy_vk_ref y, int ldy)
{
    fy_vk_push_gemm_f32 p = {
        .m = (uint32_t)m,
        .ncols = (uint32_t)ncols,
        .ldy = (uint32_t)ldy,
        .ldx = (uint32_t)ldx,
    };
    if (!l || l->n <= 0 || l->k <= 0 || m < 0 || ncols < 0 || ldy < ncols || ldx < l->k ||
        (!cols.buf && (j0 < 0 || j0 + ncols > l->n)))
        return bad(c, "gemm_f32", "bad shape");
    p.k = (uint32_t)l->k;
    if (woff(c, x, "gemm_f32 x", &p.x_off) || woff(c, l->w, "gemm_f32 w", &p.w_off) ||
        woff(c, y, "gemm_f32 y", &p.y_off) ||
        (l->bias.buf && woff(c, l->bias, "gemm_f32 bias", &p.bias_off)) ||
        (cols.buf && woff(c, cols, "gemm_f32 cols", &p.cols_off)))
        return FY_EINVAL;
    p.j0 = (uint32_t)(cols.buf ? 0 : j0);
    p.flags = (cols.buf ? FY_VK_GEMM_COLS : 0) | (relu ? FY_VK_GEMM_RELU : 0) |
              (l->bias.buf ? FY_VK_GEMM_BIAS : 0);
    fy_vk_buf *b[] = {x.buf, l->w.buf, l->bias.buf ? l->bias.buf : x.buf, y.buf,
                      cols.buf ? cols.buf : x.buf};
    return fy_vk_cmd_dispatch(c, FY_VK_K_GEMM_F32, NULL, 0, b, 5, &p, sizeof p,
                              groups((size_t)ncols, 64), groups((size_t)m, 64), 1);
}

int fy_vk_op_add_norm(fy_vk_cmd *c, fy_vk_ref x, int ldx, fy_vk_ref y, int ldy, int rows, int d,
                      fy_vk_ref scale, fy_vk_ref bias)
{
    fy_vk_push_add_norm p = {
        .rows = (uint32_t)rows, .d = (uint32_t)d, .ldx = (uint32_t)ldx, .ldy = (uint32_t)ldy};
    if (rows < 0 || d <= 0 || d > FY_VK_NORM_MAX_D || ldx < d || ldy < d)
        return bad(c, "add_norm", "bad shape");
    if (woff(c, x, "add_norm x", &p.x_off) || woff(c, y, "add_norm y", &p.y_off) ||
        woff(c, scale, "add_norm scale", &p.scale_off) ||
        woff(c, bias, "add_norm bias", &p.bias_off))
        return FY_EINVAL;
    fy_vk_buf *b[] = {x.buf, y.buf, scale.buf, bias.buf};
    return fy_vk_cmd_dispatch(c, FY_VK_K_ADD_NORM, NULL, 0, b, 4, &p, sizeof p, (uint32_t)rows, 1,
                              1);
}

int fy_vk_op_relu(fy_vk_cmd *c, fy_vk_ref x, size_t n)
{
    fy_vk_push_relu p = {.n = (uint32_t)n};
    if (n > UINT32_MAX) return bad(c, "relu", "too many elements");
    if (woff(c, x, "relu x", &p.off)) return FY_EINVAL;
    uint32_t g = groups(n, 256), gy = groups(g, 65535);
    fy_vk_buf *b[] = {x.buf};
    return fy_vk_cmd_dispatch(c, FY_VK_K_RELU, NULL, 0, b, 1, &p, sizeof p, gy > 1 ? 65535 : g, gy,
                              1);
}

int fy_vk_op_ssru(fy_vk_cmd *c, int rows, int d, fy_vk_ref cell, int ld_cell, fy_vk_ref f, int ld_f,
                  fy_vk_ref xw, int ld_xw, fy_vk_ref out, int ld_out)
{
    fy_vk_push_ssru p = {
        .rows = (uint32_t)rows,
        .d = (uint32_t)d,
        .ld_cell = (uint32_t)ld_cell,
        .ld_f = (uint32_t)ld_f,
        .ld_xw = (uint32_t)ld_xw,
        .ld_out = (uint32_t)ld_out,
    };
    if (rows < 0 || d <= 0 || ld_cell < d || ld_f < d || ld_xw < d || ld_out < d)
        return bad(c, "ssru", "bad shape");
    if (woff(c, cell, "ssru cell", &p.cell_off) || woff(c, f, "ssru f", &p.f_off) ||
        woff(c, xw, "ssru xw", &p.xw_off) || woff(c, out, "ssru out", &p.out_off))
        return FY_EINVAL;
    fy_vk_buf *b[] = {cell.buf, f.buf, xw.buf, out.buf};
    return fy_vk_cmd_dispatch(c, FY_VK_K_SSRU, NULL, 0, b, 4, &p, sizeof p, groups((size_t)d, 64),
                              (uint32_t)rows, 1);
}

int fy_vk_op_embed(fy_vk_cmd *c, fy_vk_ref x, int ldx, int rows, int d, fy_vk_ref table, int int8,
                   float inv, float scale, fy_vk_ref ids, fy_vk_ref pos, int pos_step,
                   fy_vk_ref posi)
{
    fy_vk_push_embed p = {
        .rows = (uint32_t)rows,
        .d = (uint32_t)d,
        .ldx = (uint32_t)ldx,
        .pos_step = pos_step,
        .int8 = int8 ? 1u : 0u,
        .scale = scale,
        .inv = inv,
    };
    if (rows < 0 || d <= 0 || ldx < d) return bad(c, "embed", "bad shape");
    if (woff(c, x, "embed x", &p.x_off) || woff(c, table, "embed table", &p.table_off) ||
        woff(c, ids, "embed ids", &p.ids_off) || woff(c, pos, "embed pos", &p.pos_off))
        return FY_EINVAL;
    if (pos_step < 0 && woff(c, posi, "embed posi", &p.posi_off)) return FY_EINVAL;
    fy_vk_buf *b[] = {x.buf, table.buf, pos.buf, ids.buf, pos_step < 0 ? posi.buf : ids.buf};
    return fy_vk_cmd_dispatch(c, FY_VK_K_EMBED, NULL, 0, b, 5, &p, sizeof p, groups((size_t)d, 64),
                              (uint32_t)rows, 1);
}

void fy_vk_embed_positions(const int *off, const int *len, int ns, int32_t *posi)
{
    for (int s = 0; s < ns; s++)
        for (int t = 0; t < len[s]; t++) posi[off[s] + t] = t;
}

int fy_vk_op_attend(fy_vk_cmd *c, int nq, int heads, int dk, fy_vk_ref q, int ldq, fy_vk_ref k,
                    int ldk, fy_vk_ref v, int ldv, fy_vk_ref out, int ldo, fy_vk_ref info,
                    float scale)
{
    fy_vk_push_attend p = {
        .nq = (uint32_t)nq,
        .heads = (uint32_t)heads,
        .dk = (uint32_t)dk,
        .ldq = (uint32_t)ldq,
        .ldk = (uint32_t)ldk,
        .ldv = (uint32_t)ldv,
        .ldo = (uint32_t)ldo,
        .scale = scale,
    };
    int d = heads * dk;
    if (nq < 0 || heads <= 0 || dk <= 0 || dk > FY_VK_ATTEND_MAX_DK || ldq < d || ldk < d ||
        ldv < d || ldo < d)
        return bad(c, "attend", "bad shape");
    if (woff(c, q, "attend q", &p.q_off) || woff(c, k, "attend k", &p.k_off) ||
        woff(c, v, "attend v", &p.v_off) || woff(c, out, "attend out", &p.o_off) ||
        woff(c, info, "attend info", &p.info_off))
        return FY_EINVAL;
    if (p.info_off % 4) return bad(c, "attend", "info must be 16-byte aligned");
    p.info_off /= 4; /* in ivec4s */
    fy_vk_buf *b[] = {q.buf, k.buf, v.buf, out.buf, info.buf};
    return fy_vk_cmd_dispatch(c, FY_VK_K_ATTEND, NULL, 0, b, 5, &p, sizeof p, (uint32_t)nq,
                              (uint32_t)heads, 1);
}

float fy_vk_attend_scale(int dk)
{
    return 1.0f / sqrtf((float)dk);
}

void fy_vk_attend_info_encoder(const int *off, const int *len, int ns, int32_t *info)
{
    for (int s = 0; s < ns; s++) {
        int blocked = len[s] / 4 * 4;
        for (int t = 0; t < len[s]; t++) {
            int32_t *e = info + 4 * (size_t)(off[s] + t);
            e[0] = off[s];
            e[1] = len[s];
            e[2] = t < blocked;
            e[3] = 0;
        }
    }
}

void fy_vk_attend_info_decoder(const int *src_off, const int *src_len, int rows, int32_t *info)
{
    for (int r = 0; r < rows; r++) {
        int32_t *e = info + 4 * (size_t)r;
        e[0] = src_off[r];
        e[1] = src_len[r];
        e[2] = 0;
        e[3] = 0;
    }
}

int fy_vk_op_softmax(fy_vk_cmd *c, fy_vk_ref x, int ld, int rows, int n)
{
    fy_vk_push_softmax p = {.rows = (uint32_t)rows, .n = (uint32_t)n, .ld = (uint32_t)ld};
    if (rows < 0 || n <= 0 || n > FY_VK_ATTEND_MAX_TK || ld < n)
        return bad(c, "softmax", "bad shape");
    if (woff(c, x, "softmax x", &p.off)) return FY_EINVAL;
    fy_vk_buf *b[] = {x.buf};
    return fy_vk_cmd_dispatch(c, FY_VK_K_SOFTMAX, NULL, 0, b, 1, &p, sizeof p, (uint32_t)rows, 1,
                              1);
}

static int select_push(fy_vk_cmd *c, const char *op, const fy_vk_select *s, fy_vk_ref out,
                       fy_vk_push_select *p)
{
    memset(p, 0, sizeof *p);
    if (!s || s->rows < 0 || (!s->cols.buf && s->n_all < 0) || s->ldl < 0)
        return bad(c, op, "bad shape");
    p->rows = (uint32_t)s->rows;
    p->ldl = (uint32_t)s->ldl;
    p->unk = s->unk;
    p->n_all = (uint32_t)s->n_all;
    p->flags = s->cols.buf ? 0 : FY_VK_SELECT_IDENTITY;
    if (woff(c, s->logits, op, &p->l_off) || woff(c, out, op, &p->out_off)) return FY_EINVAL;
    if (s->cols.buf &&
        (woff(c, s->cols, op, &p->cols_off) || woff(c, s->rowcols, op, &p->rows_off)))
        return FY_EINVAL;
    return 0;
}

int fy_vk_op_pick(fy_vk_cmd *c, const fy_vk_select *s, fy_vk_ref out)
{
    fy_vk_push_select p;
    if (select_push(c, "pick", s, out, &p)) return FY_EINVAL;
    fy_vk_buf *b[] = {s->logits.buf, s->cols.buf ? s->cols.buf : s->logits.buf,
                      s->cols.buf ? s->rowcols.buf : s->logits.buf, out.buf};
    return fy_vk_cmd_dispatch(c, FY_VK_K_PICK, NULL, 0, b, 4, &p, sizeof p, (uint32_t)s->rows, 1,
                              1);
}

int fy_vk_op_topk(fy_vk_cmd *c, const fy_vk_select *s, fy_vk_ref path, int k, fy_vk_ref out)
{
    fy_vk_push_select p;
    if (k < 1 || k > FY_VK_TOPK_MAX) return bad(c, "topk", "k out of range");
    if (select_push(c, "topk", s, out, &p) || woff(c, path, "topk path", &p.path_off))
        return FY_EINVAL;
    p.k = (uint32_t)k;
    fy_vk_buf *b[] = {s->logits.buf, s->cols.buf ? s->cols.buf : s->logits.buf,
                      s->cols.buf ? s->rowcols.buf : s->logits.buf, out.buf, path.buf};
    return fy_vk_cmd_dispatch(c, FY_VK_K_TOPK, NULL, 0, b, 5, &p, sizeof p, (uint32_t)s->rows, 1,
                              1);
}

int fy_vk_op_gather(fy_vk_cmd *c, fy_vk_ref src, int lds, fy_vk_ref dst, int ldd, int words,
                    fy_vk_ref from, int rows)
{
    fy_vk_push_gather p = {.rows = (uint32_t)rows,
                           .words = (uint32_t)words,
                           .lds = (uint32_t)lds,
                           .ldd = (uint32_t)ldd};
    if (rows < 0 || words <= 0 || lds < words || ldd < words) return bad(c, "gather", "bad shape");
    if (woff(c, src, "gather src", &p.src_off) || woff(c, dst, "gather dst", &p.dst_off) ||
        woff(c, from, "gather from", &p.from_off))
        return FY_EINVAL;
    fy_vk_buf *b[] = {src.buf, dst.buf, from.buf};
    return fy_vk_cmd_dispatch(c, FY_VK_K_GATHER, NULL, 0, b, 3, &p, sizeof p,
                              groups((size_t)words, 64), (uint32_t)rows, 1);
}
