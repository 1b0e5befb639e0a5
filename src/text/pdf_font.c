/* pdf_font.c - the fonts translations are drawn in: chosen by the target
 * language from Debian's font packages, one face per style, fallbacks per
 * character, subsetted to the glyphs used (harfbuzz's hb-subset) and
 * embedded as Type0 fonts with Identity-H encoding (MuPDF's
 * pdf_add_cid_font writes the widths and a ToUnicode map, so the text can
 * be searched and copied).
 *
 * Families, by the script of the target language (the first installed one
 * that covers the language is the primary; the others and DejaVu Sans are
 * fallbacks for characters it lacks):
 *   zh, zh-Hant  WenQuanYi Micro Hei, WenQuanYi Zen Hei (fonts-wqy-*)
 *   ja           IPAex/IPA Gothic, VL Gothic, then WenQuanYi
 *   ko           Nanum Gothic, UnDotum, then WenQuanYi
 *   others       Liberation Sans/Serif (metric-compatible with Helvetica and
 *                Times, fonts-liberation2), DejaVu Sans/Serif (fonts-dejavu)
 * Only TrueType outlines: CFF-based OpenType (Noto CJK) would be embedded
 * with different CID rules. A style the family lacks is synthesised
 * (pdf_page.c strokes bold, slants italic). Scripts that need shaping or
 * right-to-left layout (Arabic, Hebrew, Indic, Thai...) are refused: this
 * writer places glyphs one per character, left to right.
 */
#include <harfbuzz/hb-subset.h>
#include <harfbuzz/hb.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "text/pdf_internal.h"
#include "text/text_internal.h"
#include "util/lang.h"

enum { ST_REGULAR, ST_BOLD, ST_ITALIC, ST_BOLD_ITALIC, NSTYLES };
enum { MAX_FAMILIES = 8 };

typedef struct family {
    const char *name;
    const char *file[NSTYLES]; /* NULL: that style is synthesised from the regular face */
    int index;                 /* face in a collection (.ttc) */
} family;

#define DV  "/usr/share/fonts/truetype/dejavu/"
#define LB  "/usr/share/fonts/truetype/liberation2/"
#define LB1 "/usr/share/fonts/truetype/liberation/"

static const family LIBERATION_SANS = {
    "Liberation Sans",
    {LB "LiberationSans-Regular.ttf", LB "LiberationSans-Bold.ttf", LB "LiberationSans-Italic.ttf",
     LB "LiberationSans-BoldItalic.ttf"},
    0};
static const family LIBERATION1_SANS = {
    "Liberation Sans",
    {LB1 "LiberationSans-Regular.ttf", LB1 "LiberationSans-Bold.ttf",
     LB1 "LiberationSans-Italic.ttf", LB1 "LiberationSans-BoldItalic.ttf"},
    0};
static const family LIBERATION_SERIF = {
    "Liberation Serif",
    {LB "LiberationSerif-Regular.ttf", LB "LiberationSerif-Bold.ttf",
     LB "LiberationSerif-Italic.ttf", LB "LiberationSerif-BoldItalic.ttf"},
    0};
static const family DEJAVU_SANS = {"DejaVu Sans",
                                   {DV "DejaVuSans.ttf", DV "DejaVuSans-Bold.ttf",
                                    DV "DejaVuSans-Oblique.ttf", DV "DejaVuSans-BoldOblique.ttf"},
                                   0};
static const family DEJAVU_SERIF = {"DejaVu Serif",
                                    {DV "DejaVuSerif.ttf", DV "DejaVuSerif-Bold.ttf",
                                     DV "DejaVuSerif-Italic.ttf", DV "DejaVuSerif-BoldItalic.ttf"},
                                    0};
static const family WQY_MICROHEI = {
    "WenQuanYi Micro Hei", {"/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"}, 0};
static const family WQY_ZENHEI = {
    "WenQuanYi Zen Hei", {"/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc"}, 0};
static const family IPAEX_GOTHIC = {
    "IPAexGothic", {"/usr/share/fonts/opentype/ipaexfont-gothic/ipaexg.ttf"}, 0};
static const family IPA_GOTHIC = {
    "IPAGothic", {"/usr/share/fonts/opentype/ipafont-gothic/ipag.ttf"}, 0};
static const family VL_GOTHIC = {
    "VL Gothic", {"/usr/share/fonts/truetype/vlgothic/VL-Gothic-Regular.ttf"}, 0};
static const family NANUM_GOTHIC = {"NanumGothic",
                                    {"/usr/share/fonts/truetype/nanum/NanumGothic.ttf",
                                     "/usr/share/fonts/truetype/nanum/NanumGothicBold.ttf"},
                                    0};
static const family UN_DOTUM = {"UnDotum",
                                {"/usr/share/fonts/truetype/unfonts-core/UnDotum.ttf",
                                 "/usr/share/fonts/truetype/unfonts-core/UnDotumBold.ttf"},
                                0};

/* A script and the families to try for it, best first; sample: letters a
 * primary family must have. */
typedef struct script_fonts {
    const char *langs; /* " zh zh-Hant " */
    const char *name;
    const char *sample; /* UTF-8 */
    const family *sans[5], *serif[5];
} script_fonts;

static const script_fonts scripts[] = {
    {" zh ", "Chinese", "中文的语言", {&WQY_MICROHEI, &WQY_ZENHEI}, {NULL}},
    {" zh-Hant ", "Chinese (Traditional)", "中文的語言", {&WQY_MICROHEI, &WQY_ZENHEI}, {NULL}},
    {" ja ",
     "Japanese",
     "日本語のテキスト",
     {&IPAEX_GOTHIC, &IPA_GOTHIC, &VL_GOTHIC, &WQY_MICROHEI, &WQY_ZENHEI},
     {NULL}},
    {" ko ",
     "Korean",
     "한국어 문장",
     {&NANUM_GOTHIC, &UN_DOTUM, &WQY_MICROHEI, &WQY_ZENHEI},
     {NULL}},
    {" el ",
     "Greek",
     "Ελληνικά",
     {&LIBERATION_SANS, &LIBERATION1_SANS, &DEJAVU_SANS},
     {&LIBERATION_SERIF, &DEJAVU_SERIF}},
    {" ru uk be bg mk sr ",
     "Cyrillic",
     "Русский язык",
     {&LIBERATION_SANS, &LIBERATION1_SANS, &DEJAVU_SANS},
     {&LIBERATION_SERIF, &DEJAVU_SERIF}},
    {" vi ",
     "Vietnamese",
     "Tiếng Việt",
     {&LIBERATION_SANS, &LIBERATION1_SANS, &DEJAVU_SANS},
     {&LIBERATION_SERIF, &DEJAVU_SERIF}},
    {"",
     "Latin",
     "Aa",
     {&LIBERATION_SANS, &LIBERATION1_SANS, &DEJAVU_SANS},
     {&LIBERATION_SERIF, &DEJAVU_SERIF}},
};

/* Languages whose script needs shaping or right-to-left layout. */
static const char *const complex_langs =
    " ar fa ur ps he yi hi mr ne bn as gu pa kn ml ta te si th lo km my bo dv ";

typedef struct face {
    const family *fam;
    int style;     /* ST_* */
    int tried;     /* loading was attempted */
    fz_font *font; /* NULL: not installed */
    fz_buffer *data;
    hb_set_t *unicodes, *gids; /* used, for the subset */
    hb_blob_t *blob, *sub_blob;
    hb_face_t *hbface, *sub;
    hb_subset_input_t *in;
    fz_buffer *sub_data;
    fz_font *sub_font;
    pdf_obj *obj;
} face;

struct pdffonts {
    face f[MAX_FAMILIES * NSTYLES];
    int nfam;
    const family *fams[MAX_FAMILIES]; /* the chain: sans primary, serif primary, fallbacks */
    int sans, serif;                  /* primary families (indices into fams) */
    int ready;
    size_t missing;
};

pdffonts *pf_new(void)
{
    return calloc(1, sizeof(pdffonts));
}

static int installed(const family *fam)
{
    return access(fam->file[ST_REGULAR], R_OK) == 0;
}

static int add_family(pdffonts *f, const family *fam)
{
    for (int i = 0; i < f->nfam; i++)
        if (f->fams[i] == fam) return i;
    if (f->nfam == MAX_FAMILIES || !installed(fam)) return -1;
    for (int s = 0; s < NSTYLES; s++) f->f[f->nfam * NSTYLES + s] = (face){.fam = fam, .style = s};
    f->fams[f->nfam] = fam;
    return f->nfam++;
}

/* The face of family fi in style s, loaded on first use; NULL when the
 * family has no such file. */
static face *get_face(fz_context *ctx, pdffonts *f, int fi, int s)
{
    face *fc = &f->f[fi * NSTYLES + s];
    const char *path = fc->fam->file[s];
    if (!path) return NULL;
    if (!fc->tried) {
        fc->tried = 1;
        if (access(path, R_OK) != 0) return NULL;
        fc->data = fz_read_file(ctx, path);
        fc->font = fz_new_font_from_buffer(ctx, fc->fam->name, fc->data, fc->fam->index, 0);
    }
    return fc->font ? fc : NULL;
}

static int covers(fz_context *ctx, fz_font *font, const char *s)
{
    size_t len = strlen(s);
    for (size_t i = 0, n; i < len; i += n) {
        uint32_t cp = fy_utf8_get(s, len, i, &n);
        if (cp != ' ' && fz_encode_character(ctx, font, (int)cp) <= 0) return 0;
    }
    return 1;
}

static const script_fonts *script_of(const char *target)
{
    char key[FY_LANG_MAX + 2];
    snprintf(key, sizeof key, " %s ", target);
    size_t n = sizeof scripts / sizeof *scripts;
    for (size_t i = 0; i + 1 < n; i++)
        if (strstr(scripts[i].langs, key)) return &scripts[i];
    return &scripts[n - 1];
}

/* The first installed family of list that covers the sample; -1 if none. */
static int primary(fz_context *ctx, pdffonts *f, const family *const *list, const char *sample)
{
    for (int i = 0; i < 5 && list[i]; i++) {
        int fi = add_family(f, list[i]);
        if (fi < 0) continue;
        face *fc = get_face(ctx, f, fi, ST_REGULAR);
        if (fc && covers(ctx, fc->font, sample)) return fi;
    }
    return -1;
}

void pf_choose(fz_context *ctx, pdffonts *f, const char *target)
{
    pdfdoc *p = fz_user_context(ctx);
    char key[FY_LANG_MAX + 2];
    snprintf(key, sizeof key, " %s ", target);
    char base[FY_LANG_MAX];
    snprintf(base, sizeof base, "%.*s", (int)strcspn(target, "-"), target);
    char bkey[FY_LANG_MAX + 2];
    snprintf(bkey, sizeof bkey, " %s ", base);
    if (*target && strstr(complex_langs, bkey))
        pdf_raise(p, FY_EUNSUPPORTED,
                  "PDF output in %s is not supported: its script needs shaping or right-to-left "
                  "layout, which this writer does not do; translate to another format (txt, docx)",
                  fy_lang_name(target));
    const script_fonts *sc = script_of(target);
    f->sans = primary(ctx, f, sc->sans, sc->sample);
    f->serif = sc->serif[0] ? primary(ctx, f, sc->serif, sc->sample) : -1;
    if (f->serif < 0) f->serif = f->sans;
    if (f->sans < 0)
        pdf_raise(p, FY_EUNSUPPORTED,
                  "no installed font covers %s: install fonts-wqy-microhei (Chinese, Japanese, "
                  "Korean) and fonts-liberation2 or fonts-dejavu-core (Latin, Greek, Cyrillic)",
                  *target ? fy_lang_name(target) : sc->name);
    /* Fallbacks: CJK for names and quotes in another script, DejaVu for the rest. */
    add_family(f, &WQY_MICROHEI);
    add_family(f, &WQY_ZENHEI);
    add_family(f, &DEJAVU_SANS);
    add_family(f, &DEJAVU_SERIF);
    f->ready = 1;
}

static int style_slot(unsigned style)
{
    return ((style & PS_BOLD) ? ST_BOLD : 0) | ((style & PS_ITALIC) ? ST_ITALIC : 0);
}

/* gid of cp in fc, or 0. */
static int lookup(fz_context *ctx, face *fc, uint32_t cp)
{
    return fc ? fz_encode_character(ctx, fc->font, (int)cp) : 0;
}

static void use(fz_context *ctx, face *fc, uint32_t cp, int gid)
{
    if (!fc->unicodes) {
        fc->unicodes = hb_set_create();
        fc->gids = hb_set_create();
    }
    hb_set_add(fc->unicodes, cp);
    hb_set_add(fc->gids, (hb_codepoint_t)gid);
    if (!hb_set_allocation_successful(fc->unicodes) || !hb_set_allocation_successful(fc->gids))
        fz_throw(ctx, FZ_ERROR_MEMORY, "out of memory");
}

static void found(fz_context *ctx, face *fc, int index, uint32_t cp, int gid, pl_char *out)
{
    use(ctx, fc, cp, gid);
    *out = (pl_char){cp, index, gid, fz_advance_glyph(ctx, fc->font, gid, 0)};
}

void pf_glyph(fz_context *ctx, pdffonts *f, unsigned style, uint32_t cp, pl_char *out)
{
    int prim = (style & PS_SERIF) ? f->serif : f->sans, s = style_slot(style);
    /* The primary family in the style (or its regular face), then every
     * other family's regular face. */
    face *fc = get_face(ctx, f, prim, s);
    int slot = s;
    if (!fc) {
        fc = get_face(ctx, f, prim, ST_REGULAR);
        slot = ST_REGULAR;
    }
    int gid = lookup(ctx, fc, cp);
    if (gid > 0) {
        found(ctx, fc, prim * NSTYLES + slot, cp, gid, out);
        return;
    }
    for (int fi = 0; fi < f->nfam; fi++) {
        if (fi == prim) continue;
        face *alt = get_face(ctx, f, fi, s);
        int as = s;
        if (!alt || lookup(ctx, alt, cp) <= 0) {
            alt = get_face(ctx, f, fi, ST_REGULAR);
            as = ST_REGULAR;
        }
        if ((gid = lookup(ctx, alt, cp)) > 0) {
            found(ctx, alt, fi * NSTYLES + as, cp, gid, out);
            return;
        }
    }
    f->missing++;
    found(ctx, fc, prim * NSTYLES + slot, cp, 0, out);
}

unsigned pf_synthetic(const pdffonts *f, int font, unsigned style)
{
    int have = f->f[font].style;
    unsigned fake = 0;
    if ((style & PS_BOLD) && !(have & ST_BOLD)) fake |= PS_BOLD;
    if ((style & PS_ITALIC) && !(have & ST_ITALIC)) fake |= PS_ITALIC;
    return fake;
}

size_t pf_missing(const pdffonts *f)
{
    return f->missing;
}

const char *pf_name(const pdffonts *f, int font)
{
    return f->f[font].fam->name;
}

int pf_ready(const pdffonts *f)
{
    return f->ready;
}

/* ---- embedding --------------------------------------------------------------------- */

static void subset(fz_context *ctx, face *fc)
{
    unsigned char *data;
    size_t len = fz_buffer_storage(ctx, fc->data, &data);
    fc->blob =
        hb_blob_create((const char *)data, (unsigned)len, HB_MEMORY_MODE_READONLY, NULL, NULL);
    fc->hbface = hb_face_create(fc->blob, (unsigned)fc->fam->index);
    fc->in = hb_subset_input_create_or_fail();
    if (!fc->in) fz_throw(ctx, FZ_ERROR_MEMORY, "out of memory");
    /* By code point only: a glyph set would bring every code point that
     * shares a glyph into the cmap (CJK compatibility ideographs), and
     * the ToUnicode map MuPDF derives from it could name those. */
    hb_set_union(hb_subset_input_unicode_set(fc->in), fc->unicodes);
    /* Glyph ids stay as laid out; no hinting, no layout tables (nothing is
     * shaped): the smallest font that draws the same glyphs. */
    hb_subset_input_set_flags(fc->in, HB_SUBSET_FLAGS_RETAIN_GIDS | HB_SUBSET_FLAGS_NO_HINTING);
    static const char drop[][5] = {"GSUB", "GPOS", "GDEF", "BASE", "JSTF", "MATH", "DSIG",
                                   "morx", "kerx", "vhea", "vmtx", "VORG", "EBDT", "EBLC"};
    hb_set_t *tags = hb_subset_input_set(fc->in, HB_SUBSET_SETS_DROP_TABLE_TAG);
    for (size_t i = 0; i < sizeof drop / sizeof *drop; i++)
        hb_set_add(tags, HB_TAG(drop[i][0], drop[i][1], drop[i][2], drop[i][3]));
    fc->sub = hb_subset_or_fail(fc->hbface, fc->in);
    if (!fc->sub) fz_throw(ctx, FZ_ERROR_GENERIC, "could not subset the font %s", fc->fam->name);
    fc->sub_blob = hb_face_reference_blob(fc->sub);
    unsigned n;
    const char *bytes = hb_blob_get_data(fc->sub_blob, &n);
    if (!bytes || !n)
        fz_throw(ctx, FZ_ERROR_GENERIC, "could not subset the font %s", fc->fam->name);
    fc->sub_data = fz_new_buffer_from_copied_data(ctx, (const unsigned char *)bytes, n);
}

/* A subset font's name: six letters from the glyphs it holds, '+', the
 * family's PostScript-style name (PDF 9.6.4). */
static void subset_name(face *fc, char *out, size_t cap)
{
    uint32_t h = 2166136261u;
    hb_codepoint_t g = HB_SET_VALUE_INVALID;
    while (hb_set_next(fc->gids, &g)) h = (h ^ g) * 16777619u;
    char tag[7];
    for (int i = 0; i < 6; i++, h /= 26) tag[i] = (char)('A' + h % 26);
    tag[6] = '\0';
    static const char *const sfx[NSTYLES] = {"", "-Bold", "-Italic", "-BoldItalic"};
    char fam[48];
    size_t k = 0;
    for (const char *s = fc->fam->name; *s && k + 1 < sizeof fam; s++)
        if (*s != ' ') fam[k++] = *s;
    fam[k] = '\0';
    snprintf(out, cap, "%s+%s%s", tag, fam, sfx[fc->style]);
}

void pf_embed(fz_context *ctx, pdffonts *f, pdf_document *doc)
{
    for (int i = 0; i < f->nfam * NSTYLES; i++) {
        face *fc = &f->f[i];
        if (!fc->font || !fc->gids || fc->obj) continue;
        subset(ctx, fc);
        char name[80];
        subset_name(fc, name, sizeof name);
        fc->sub_font = fz_new_font_from_buffer(ctx, name, fc->sub_data, 0, 0);
        fc->obj = pdf_add_cid_font(ctx, doc, fc->sub_font);
    }
}

pdf_obj *pf_object(const pdffonts *f, int font)
{
    return f->f[font].obj;
}

void pf_free(fz_context *ctx, pdffonts *f)
{
    if (!f) return;
    for (int i = 0; i < f->nfam * NSTYLES; i++) {
        face *fc = &f->f[i];
        pdf_drop_obj(ctx, fc->obj);
        fz_drop_font(ctx, fc->sub_font);
        fz_drop_buffer(ctx, fc->sub_data);
        hb_blob_destroy(fc->sub_blob);
        hb_face_destroy(fc->sub);
        hb_subset_input_destroy(fc->in);
        hb_face_destroy(fc->hbface);
        hb_blob_destroy(fc->blob);
        hb_set_destroy(fc->unicodes);
        hb_set_destroy(fc->gids);
        fz_drop_font(ctx, fc->font);
        fz_drop_buffer(ctx, fc->data);
    }
    free(f);
}
