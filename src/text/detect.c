/* detect.c - language detection: CLD2, then rules on the scripts of the
 * letters where CLD2 cannot decide (detect.h has the decision in full).
 *
 * The text looked at is the one the splitter sees (HTML flattened), without
 * URLs, e-mail addresses and code, which are Latin whatever the language.
 * Script shares are counted in UTF-8 bytes, as CLD2 counts: a Han character
 * (3 bytes) weighs about a short Latin word, so "我爱 Python 编程" is
 * mostly Han. Simplified against Traditional Chinese is counted with a table
 * of characters that exist in one form only.
 */
#include "text/detect.h"

#include "text/cld2_bridge.h"
#include "text/text_internal.h"
#include "util/lang.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAMPLE_MAX      (256 * 1024) /* bytes of text looked at */
#define BEST_EFFORT_MIN 4            /* bytes of letters CLD2's best effort is trusted with */
#define SHORT_TEXT      64           /* fewer bytes of letters: distinctive letters beat CLD2 */

/* Pairs of a Simplified character and its Traditional form, where neither
 * is in ordinary use in the other script's text (so 后/後, 里/裡, 干/幹,
 * 台/臺, 云/雲, 只/隻... are left out: the simplified form is also a
 * traditional character). */
static const char variant_pairs[] =
    "这這国國说說会會为為们們来來时時个個对對过過发發经經现現问問间間还還进進动動"
    "种種样樣关關长長开開实實学學话話点點体體东東头頭机機电電气氣业業万萬书書车車"
    "门門见見听聽写寫买買卖賣钱錢边邊远遠运運连連选選认認让讓识識语語读讀请請谁誰"
    "课課谢謝员員图圖场場报報处處备備层層岁歲师師帮幫应應总總战戰数數无無条條极極"
    "权權欢歡汉漢没沒热熱爱愛产產亲親觉覺记記许許设設论論证證试試词詞质質贵貴费費"
    "资資转轉软軟轻輕农農办辦务務劳勞华華单單卫衛压壓厅廳历歷县縣变變号號叶葉吗嗎"
    "团團园園围圍坏壞声聲奋奮妇婦孙孫宁寧宝寶将將专專导導尽盡属屬岛島币幣广廣庆慶"
    "库庫张張弹彈录錄怀懷态態惊驚戏戲护護担擔拥擁择擇换換损損据據击擊敌敵断斷显顯"
    "杂雜杀殺构構标標树樹桥橋梦夢检檢楼樓欧歐毕畢决決况況济濟测測浓濃灯燈灵靈烟煙"
    "烦煩爷爺状狀独獨环環画畫当當疗療盘盤众眾矿礦码碼础礎确確礼禮称稱积積稳穩穷窮"
    "笔筆简簡类類级級纪紀约約红紅纸紙线線组組细細终終结結给給统統继繼续續维維网網"
    "罗羅职職联聯脑腦脸臉节節艺藝药藥苏蘇虽雖观觀规規视視览覽计計订訂讨討训訓议議"
    "讯訊讲講诉訴诗詩误誤调調谈談谓謂贝貝负負败敗货貨购購贸貿赛賽赶趕跃躍践踐轮輪"
    "较較辆輛辈輩达達迟遲适適递遞遗遺邮郵邻鄰释釋针針钟鐘铁鐵银銀销銷锁鎖错錯键鍵"
    "镜鏡闭閉闻聞阅閱队隊阳陽阴陰际際陆陸险險随隨难難雾霧静靜页頁顶頂项項顺順须須"
    "顾顧预預领領频頻题題颜顏风風飞飛饭飯馆館马馬验驗鱼魚鸟鳥鸡雞麦麥黄黃齐齊龙龍"
    "内內别別吴吳争爭乐樂义義习習乱亂亚亞传傳伤傷从從乡鄉亿億仅僅伟偉侠俠侧側债債"
    "倾傾儿兒兴興养養兽獸冈岡军軍冯馮冻凍净淨减減凤鳳刘劉则則刚剛创創删刪剧劇劝勸"
    "势勢勋勳区區医醫协協卢盧卧臥厂廠厉厲厌厭参參双雙叙敘吓嚇启啟响響圆圓圣聖坚堅"
    "块塊坛壇垒壘执執扩擴扫掃扬揚扰擾抢搶拟擬挥揮挤擠挡擋摆擺携攜昼晝晒曬杨楊枪槍"
    "柜櫃栏欄残殘汇匯汤湯沟溝泪淚泽澤洁潔浅淺涛濤涨漲润潤渐漸渔漁湾灣湿濕满滿滚滾"
    "灭滅灾災烂爛烧燒牵牽犹猶狮獅猪豬献獻畅暢疯瘋盖蓋监監砖磚硕碩碍礙祸禍离離窃竊"
    "竞競签簽粮糧紧緊纯純纲綱纳納纵縱纷紛练練织織绍紹绝絕绕繞绘繪络絡绩績绪緒绿綠"
    "缓緩编編缘緣缩縮罚罰肠腸肤膚胁脅脚腳舰艦荣榮获獲营營虑慮补補袭襲装裝誉譽访訪"
    "评評诚誠询詢该該详詳诸諸谱譜贡貢财財责責贤賢贯貫贴貼贷貸赏賞赔賠赖賴赚賺赞贊"
    "赢贏赵趙趋趨踪蹤轨軌载載辑輯输輸辞辭迁遷迈邁违違逻邏邓鄧郑鄭酱醬鉴鑒钓釣钢鋼"
    "钥鑰钻鑽铜銅铺鋪链鏈锅鍋锦錦镇鎮闪閃闷悶闹鬧阔闊阶階陈陳阵陣隐隱顿頓额額飘飄"
    "饮飲饰飾饱飽饼餅驱驅驶駛驻駐骑騎骗騙鲜鮮鸭鴨龄齡归歸"
    "丢丟严嚴丧喪临臨丽麗举舉乔喬亏虧仓倉价價优優伞傘伪偽佣傭侨僑俭儉偿償兑兌兰蘭册冊"
    "凉涼凑湊凭憑凯凱刹剎剂劑剑劍励勵劲勁匀勻却卻叹嘆吕呂呜嗚咏詠哑啞唤喚喷噴嘱囑坝壩"
    "垦墾堕墮墙牆壮壯壳殼够夠夹夾夺奪奖獎妆妝妈媽娱娛婴嬰宠寵审審宪憲宫宮宽寬宾賓寻尋"
    "寿壽尔爾尘塵尝嘗届屆岂豈岗崗岭嶺峡峽帅帥帐帳带帶庙廟庞龐废廢异異弃棄弯彎彻徹径徑"
    "忆憶忧憂怜憐恋戀恶惡恳懇悦悅惧懼惨慘惩懲愤憤户戶抚撫抛拋拢攏拣揀挚摯挟挾挣掙捞撈"
    "捡撿捣搗掷擲揽攬摄攝摇搖撑撐斋齋旧舊旷曠晋晉晓曉晕暈暂暫栈棧栋棟桩樁椭橢榄欖毁毀"
    "毙斃沪滬泼潑洒灑浆漿浇澆浏瀏渊淵温溫溃潰滤濾滥濫滨濱潜潛灿燦炉爐炼煉烛燭焕煥狭狹"
    "猎獵猫貓玛瑪痒癢痴癡瘾癮盏盞盐鹽砚硯窍竅窑窯竖豎笋筍筹籌纠糾纤纖纹紋罢罷聪聰肃肅"
    "肾腎肿腫胆膽脉脈脏臟艰艱艳豔芦蘆苍蒼茧繭荐薦荡蕩莱萊莲蓮萝蘿蓝藍虏虜虚虛虫蟲虾蝦"
    "蚀蝕蚂螞蛮蠻衔銜衬襯诊診译譯诞誕谋謀谜謎谣謠贩販贪貪贫貧贺賀辉輝逊遜铃鈴闯闖韩韓"
    "饺餃馈饋驾駕骤驟鲁魯齿齒龟龜丝絲绳繩饿餓钉釘鸣鳴鹅鵝鸽鴿丛叢乌烏伦倫侦偵俩倆厕廁"
    "厨廚哗嘩坟墳壶壺娇嬌庐廬扑撲拨撥沦淪浊濁滩灘炖燉烫燙琐瑣疮瘡皱皺盗盜矫矯祷禱秃禿"
    "窜竄粪糞缆纜缝縫羡羨耸聳胶膠腊臘舱艙苇葦蚕蠶蜡蠟袄襖裤褲谊誼贞貞贼賊赌賭躯軀辫辮"
    "钝鈍铅鉛锈鏽锣鑼锻鍛闸閘陕陝隶隸韧韌颈頸颗顆馒饅驴驢骂罵骄驕鸦鴉鹰鷹";

typedef struct variant_entry {
    uint32_t cp;
    int form; /* 1 Simplified only, 2 Traditional only */
} variant_entry;

/* Characters in the table (each pair is two 3-byte characters): the
 * decoded table always has room for all of them. */
#define NVARIANTS ((sizeof variant_pairs - 1) / 3)

static int cmp_variant(const void *a, const void *b)
{
    uint32_t x = ((const variant_entry *)a)->cp, y = ((const variant_entry *)b)->cp;
    return (x > y) - (x < y);
}

/* Decodes the pair table into t (sorted by code point); returns its size. */
static size_t variant_table(variant_entry t[NVARIANTS])
{
    size_t n = 0, len = sizeof variant_pairs - 1;
    for (size_t i = 0, k; i < len && n < NVARIANTS; i += k, n++) {
        t[n].cp = fy_utf8_get(variant_pairs, len, i, &k);
        t[n].form = n % 2 ? 2 : 1;
    }
    qsort(t, n, sizeof *t, cmp_variant);
    return n;
}

static int variant_of(const variant_entry *t, size_t n, uint32_t cp)
{
    variant_entry key = {cp, 0};
    const variant_entry *e = bsearch(&key, t, n, sizeof *t, cmp_variant);
    return e ? e->form : 0;
}

const char *fy_zh_variant_pairs(void)
{
    return variant_pairs;
}

/* ---- counting ---------------------------------------------------------------- */

#define NSCRIPTS 16

typedef struct evidence {
    size_t letters;               /* bytes of letters */
    size_t han, kana, hangul;     /* bytes of each */
    size_t han_chars, kana_chars; /* characters */
    size_t simp, trad;            /* characters of one form only */
    const char *names[NSCRIPTS];  /* scripts seen */
    size_t bytes[NSCRIPTS];       /* their bytes */
    size_t nscripts;
    const char *script; /* the dominant one, NULL without letters */
    size_t script_bytes;
} evidence;

static void add_script(evidence *ev, const char *sc, size_t n)
{
    size_t k = 0;
    while (k < ev->nscripts && strcmp(ev->names[k], sc)) k++;
    if (k == ev->nscripts) {
        if (k == NSCRIPTS) return; /* a text of more than 16 scripts: the rest is noise */
        ev->names[ev->nscripts++] = sc;
    }
    ev->bytes[k] += n;
    if (ev->bytes[k] > ev->script_bytes) ev->script = ev->names[k], ev->script_bytes = ev->bytes[k];
}

static void count_scripts(const char *s, size_t len, const variant_entry *table, size_t nt,
                          evidence *ev)
{
    memset(ev, 0, sizeof *ev);
    for (size_t i = 0, n; i < len; i += n) {
        uint32_t cp = fy_utf8_get(s, len, i, &n);
        const char *sc = fy_cp_script(cp);
        if (!sc) continue;
        ev->letters += n;
        add_script(ev, sc, n);
        if (!strcmp(sc, "Hani")) {
            ev->han += n, ev->han_chars++;
            int form = variant_of(table, nt, cp);
            ev->simp += form == 1, ev->trad += form == 2;
        } else if (!strcmp(sc, "Kana")) {
            ev->kana += n, ev->kana_chars++;
        } else if (!strcmp(sc, "Hang")) {
            ev->hangul += n;
        }
    }
}

/* The text to look at: flattened HTML without URLs, e-mail addresses and
 * code, at most SAMPLE_MAX bytes. NULL when out of memory. */
static char *sample(const char *text, size_t len, int html, size_t *out_len)
{
    fy_flat f = {0};
    fy_spans sp = {0};
    fy_buf b = {0};
    const char *s = text;
    size_t n = len, c = 0;
    if (html && fy_flatten(text, len, 1, 0, &f)) return NULL;
    if (html) s = f.text, n = f.len;
    if (n > SAMPLE_MAX) {
        n = SAMPLE_MAX;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
    }
    if (fy_find_spans_ex(s, n, 0, &sp)) b.oom = 1;
    for (size_t k = 0; k < sp.n; k++) {
        if (sp.v[k].kind == FY_SPAN_NUMUNIT) continue;
        fy_buf_put(&b, s + c, sp.v[k].start - c);
        fy_buf_putc(&b, ' ');
        c = sp.v[k].start + sp.v[k].len;
    }
    fy_buf_put(&b, s + c, n - c);
    free(sp.v);
    fy_flat_free(&f);
    return fy_buf_take(&b, out_len);
}

/* ---- deciding ------------------------------------------------------------------ */

/* CLD2's code as our tag; 0 for its pseudo-languages (un, xx-*, zz*, tlh). */
static int cld2_tag(const char *code, char out[FY_LANG_MAX])
{
    static const char *const renamed[][2] = {
        {"iw", "he"}, {"no", "nb"}, {"jw", "jv"}, {"in", "id"}, {"mo", "ro"}};
    if (!*code || !strcmp(code, "un") || !strncmp(code, "xx", 2) || !strncmp(code, "zz", 2) ||
        !strcmp(code, "tlh"))
        return 0;
    for (size_t k = 0; k < sizeof renamed / sizeof *renamed; k++)
        if (!strcmp(code, renamed[k][0])) code = renamed[k][1];
    return fy_lang_normalize(code, out) == 0;
}

/* Adds lang (at the end) unless it is there already or the list is full. */
static void add_guess(fy_detection *out, const char *lang, int percent)
{
    for (int k = 0; k < out->n; k++)
        if (!strcmp(out->top[k].lang, lang)) return;
    if (out->n == 3) return;
    snprintf(out->top[out->n].lang, sizeof out->top[0].lang, "%s", lang);
    out->top[out->n++].percent = percent;
}

/* CLD2's known languages, best first. */
static void add_cld2(fy_detection *out, const fy_cld2_result *cr)
{
    char tag[FY_LANG_MAX];
    for (int k = 0; k < 3; k++)
        if (cld2_tag(cr->code[k], tag)) add_guess(out, tag, cr->percent[k]);
}

static int is_chinese(const char *tag)
{
    return !strcmp(tag, "zh") || !strcmp(tag, "zh-Hant");
}

static int is_cjk_lang(const char *tag)
{
    return is_chinese(tag) || !strcmp(tag, "ja") || !strcmp(tag, "ko");
}

/* Simplified or Traditional, by the characters of one form only: without
 * a Traditional-only character the text is Simplified; with both forms,
 * the form with more of them. *decisive: any such character at all. */
static const char *chinese_variant(const evidence *ev, int *decisive)
{
    *decisive = ev->simp + ev->trad > 0;
    return ev->trad > ev->simp ? "zh-Hant" : "zh";
}

/* The language a script is written in when only one is. */
static const char *single_language(const char *script)
{
    static const char *const map[][2] = {
        {"Thai", "th"}, {"Hebr", "he"},  {"Grek", "el"},  {"Geor", "ka"}, {"Armn", "hy"},
        {"Taml", "ta"}, {"Telu", "te"},  {"Knda", "kn"},  {"Mlym", "ml"}, {"Gujr", "gu"},
        {"Guru", "pa"}, {"Sinh", "si"},  {"Khmr", "km"},  {"Laoo", "lo"}, {"Mymr", "my"},
        {"Ethi", "am"}, {"Orya", "or"},  {"Thaa", "dv"},  {"Tibt", "bo"}, {"Hang", "ko"},
        {"Kana", "ja"}, {"Cher", "chr"}, {"Syrc", "syr"}, {"Mong", "mn"}};
    for (size_t k = 0; k < sizeof map / sizeof *map; k++)
        if (!strcmp(script, map[k][0])) return map[k][1];
    return NULL;
}

/* The most common language of a script written by many. */
static const char *default_language(const char *script)
{
    static const char *const map[][2] = {
        {"Latn", "en"}, {"Cyrl", "ru"}, {"Arab", "ar"}, {"Deva", "hi"}, {"Beng", "bn"}};
    for (size_t k = 0; k < sizeof map / sizeof *map; k++)
        if (!strcmp(script, map[k][0])) return map[k][1];
    return NULL;
}

static int share(size_t part, size_t whole)
{
    return whole ? (int)(part * 100 / whole) : 0;
}

/* Puts lang first in out (keeping the other guesses after it). */
static void put_first(fy_detection *out, const char *lang, int percent)
{
    fy_detection d = {0};
    memcpy(d.script, out->script, sizeof d.script);
    d.reliable = out->reliable;
    add_guess(&d, lang, percent);
    for (int k = 0; k < out->n; k++) add_guess(&d, out->top[k].lang, out->top[k].percent);
    *out = d;
}

/* The frame's letters are mostly Han, kana or Hangul: the script decides
 * (kana -> ja, Hangul -> ko, Han -> Chinese, its variant by the counts of
 * the whole text; Han alone is Japanese only when CLD2 is sure of it). A
 * Chinese text without one-form characters also lists the other variant,
 * so whichever model is installed can take it. */
static void from_cjk(const evidence *ev, const evidence *fr, const fy_cld2_result *cr,
                     fy_detection *out)
{
    fy_detection cld = {0};
    add_cld2(&cld, cr);
    int decisive = 1;
    const char *lang;
    if (fr->kana && 8 * fr->kana_chars >= fr->kana_chars + fr->han_chars)
        lang = "ja";
    else if (2 * fr->hangul >= fr->han + fr->kana + fr->hangul)
        lang = "ko";
    else if (cr->reliable && cld.n && !strcmp(cld.top[0].lang, "ja"))
        lang = "ja";
    else
        lang = chinese_variant(ev, &decisive);
    out->reliable = decisive || (cr->reliable && cld.n && is_cjk_lang(cld.top[0].lang));
    int percent = share(ev->han + ev->kana + ev->hangul, ev->letters);
    add_guess(out, lang, percent);
    if (is_chinese(lang) && !decisive)
        add_guess(out, strcmp(lang, "zh") ? "zh" : "zh-Hant", percent);
    for (int k = 0; k < cld.n; k++)
        if (!is_chinese(cld.top[k].lang)) add_guess(out, cld.top[k].lang, cld.top[k].percent);
}

/* CLD2 was reliable: its answer, Chinese's variant from the counts. */
static void from_cld2(const evidence *ev, const fy_cld2_result *cr, fy_detection *out)
{
    int decisive;
    add_cld2(out, cr);
    out->reliable = 1;
    if (is_chinese(out->top[0].lang))
        put_first(out, chinese_variant(ev, &decisive), out->top[0].percent);
}

/* The script rules that decide alone. Returns the language or NULL;
 * *percent its share, *reliable whether the rule is decisive. */
static const char *script_rule(const evidence *ev, int *percent, int *reliable)
{
    *reliable = 1;
    *percent = share(ev->script_bytes, ev->letters);
    return single_language(ev->script);
}

/* CLD2 was not reliable: the script rules, then CLD2's guesses (its best
 * effort when it had none: good at a word or two of a Latin language). */
static int from_scripts(const char *s, size_t n, const evidence *ev, const fy_cld2_result *cr,
                        fy_detection *out)
{
    fy_detection cld = {0};
    add_cld2(&cld, cr);
    int percent, reliable;
    const char *lang = script_rule(ev, &percent, &reliable);
    if (!lang && cld.n == 0 && ev->letters >= BEST_EFFORT_MIN) {
        fy_cld2_result best;
        if (fy_cld2_detect(s, n, 1, &best)) return FY_ENOMEM;
        add_cld2(&cld, &best);
    }
    if (!lang && cld.n == 0) lang = default_language(ev->script), reliable = 0;
    out->reliable = lang ? reliable : 0;
    if (lang) add_guess(out, lang, percent);
    for (int k = 0; k < cld.n; k++) add_guess(out, cld.top[k].lang, cld.top[k].percent);
    return 0;
}

/* Decides from the counts of the sample s[0..n) (ev) and of its frame
 * f[0..fn) (fr: without quotations, brackets and code-like words). */
static int decide(const char *s, size_t n, const evidence *ev, const char *f, size_t fn,
                  const evidence *fr, fy_detection *out)
{
    fy_cld2_result cr;
    int rc = fy_cld2_detect(s, n, 0, &cr);
    if (rc) return rc;
    if (2 * (fr->han + fr->kana + fr->hangul) >= fr->letters) {
        from_cjk(ev, fr, &cr, out);
        return 0;
    }
    fy_detection probe = {0};
    add_cld2(&probe, &cr);
    /* CLD2 read the quotations: the frame is not CJK, so ask about it. */
    if (probe.n && is_cjk_lang(probe.top[0].lang) && fn < n) {
        if ((rc = fy_cld2_detect(f, fn, 0, &cr))) return rc;
        memset(&probe, 0, sizeof probe);
        add_cld2(&probe, &cr);
        s = f, n = fn;
    }
    if (cr.reliable && probe.n > 0)
        from_cld2(ev, &cr, out);
    else
        rc = from_scripts(s, n, fr, &cr, out);
    const char *rule = ev->letters < SHORT_TEXT ? fy_letter_rule(s, n, ev->script) : NULL;
    if (!rc && rule && out->n && strcmp(out->top[0].lang, rule))
        put_first(out, rule, out->top[0].percent);
    return rc;
}

int fy_detect(const char *text, size_t len, int html, fy_detection *out)
{
    memset(out, 0, sizeof *out);
    if (!text && len) return FY_EINVAL;
    if (!text) text = "";
    if (!fy_utf8_valid(text, len, NULL)) return FY_EINVAL;
    size_t n, fn = 0;
    char *s = sample(text, len, html, &n), *f = s ? fy_detect_frame(s, n, &fn) : NULL;
    if (!s || !f) {
        free(s);
        return FY_ENOMEM;
    }
    evidence ev, fr;
    variant_entry table[NVARIANTS];
    size_t nt = variant_table(table);
    count_scripts(s, n, table, nt, &ev);
    count_scripts(f, fn, table, nt, &fr);
    if (!fr.letters) fr = ev, fn = n; /* all of it quoted: the quotation is the text */
    int rc = 0;
    if (ev.letters) {
        snprintf(out->script, sizeof out->script, "%s", ev.script);
        rc = decide(s, n, &ev, fn < n ? f : s, fn, &fr, out);
    }
    free(s);
    free(f);
    if (rc) memset(out, 0, sizeof *out);
    return rc;
}

const char *fy_detect_language(const char *text, size_t len)
{
    fy_detection d;
    if (fy_detect(text, len, 0, &d) != 0 || d.n == 0) return "en";
    return is_chinese(d.top[0].lang) ? "zh" : "en";
}
