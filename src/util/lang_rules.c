/* lang_rules.c - the table of language rules (lang_rules.h says what each
 * field means and who reads it).
 *
 * Quotation marks are set only where the language's convention is clear
 * and a straight pair is plainly not it: « » (French, Russian, Greek...),
 * „ “ (German, Czech, Bulgarian...), „ ” (Polish, Romanian, Hungarian),
 * ” ” (Swedish, Finnish). Languages whose writers use “ ” or straight
 * quotes alike (English, Spanish, Italian, Dutch...) keep what the engine
 * wrote. Abbreviation lists are short on purpose: the frequent words whose
 * '.' would otherwise cut a sentence in two.
 */
#include "util/lang_rules.h"

#include <string.h>

/* ---- abbreviations ---------------------------------------------------------- */

static const fy_abbrevs en_abbrevs = {
    .never = "mr mrs ms mx dr prof sr jr st mt ft vs cf gen sen rep rev gov capt col lt sgt hon "
             "messrs viz e.g i.e a.k.a approx nr",
    .numbered = "no nos fig figs vol pp p op art ch sec eq ref",
    .may_end = "etc inc ltd co corp llc plc bros dept univ est al ed eds jan feb mar apr jun jul "
               "aug sep sept oct nov dec ca min max hr hrs yr yrs",
    .openers = "The A An This That These Those It Its He She We They I You His Her Our Their My "
               "Your There Then But And So Yet Or In On At For If When While After Before As "
               "However Meanwhile Also Now What Why How Who Where Which Some Many Most All Not "
               "One Today Yesterday Tomorrow Later Still Thus Instead Since Because",
};

static const fy_abbrevs de_abbrevs = {
    .never = "hr fr dr prof hl st bzw ggf vgl z.b d.h u.a o.a evtl inkl zzgl sog",
    .numbered = "nr s abs bd kap abb tab ca",
    .may_end = "usw etc usf jh",
    .openers = "Der Die Das Er Sie Es Wir Ich Ihr Dann Aber Und Doch Heute Morgen Gestern Am Im "
               "In Auf Nach Vor Wenn Als Ein Eine Dies Diese Dieser Man Danach Deshalb Daher "
               "Jetzt Hier Dort Was Wie Warum Wer Wo",
};

static const fy_abbrevs fr_abbrevs = {
    .never = "m mm mme mmes mlle mlles dr pr me mgr st ste cf p.ex",
    .numbered = "n no p chap art vol fig",
    .may_end = "etc env av apr",
    .openers = "Le La Les Il Elle Ils Elles Nous Vous Je On Un Une Ce Cette Ces Mais Et Puis "
               "Alors Donc Ensuite Quand Si Dans En Pour Après Avant Depuis Comme Pourquoi "
               "Comment Où Qui Que",
};

static const fy_abbrevs es_abbrevs = {
    .never = "sr sra srta sres dr dra lic ing ud uds dña p.ej",
    .numbered = "núm pág cap art fig vol no",
    .may_end = "etc aprox",
    .openers = "El La Los Las Él Ella Ellos Ellas Nosotros Yo Tú Usted Un Una Este Esta Pero Y "
               "Luego Entonces Hoy Ayer Mañana En Si Cuando Después Antes Por Para Como",
};

static const fy_abbrevs it_abbrevs = {
    .never = "sig sigg dott prof ing avv geom arch",
    .numbered = "n pag cap fig art",
    .may_end = "ecc",
    .openers = "Il Lo La I Gli Le Un Una Lui Lei Noi Voi Io Ma E Poi Oggi Ieri Domani In Se "
               "Quando Dopo Questo Questa Come Perché Dove Chi",
};

static const fy_abbrevs pt_abbrevs = {
    .never = "sr sra srta dr dra prof profa eng",
    .numbered = "n pág cap art fig",
    .may_end = "etc",
    .openers = "O A Os As Ele Ela Eles Elas Nós Eu Você Um Uma Mas E Depois Então Hoje Ontem "
               "Amanhã Em Se Quando Este Esta Isso Como Por Onde Quem",
};

static const fy_abbrevs nl_abbrevs = {
    .never = "dhr mevr mw dr prof ir ing drs bijv d.w.z m.a.w o.a",
    .numbered = "nr blz p hfst",
    .may_end = "enz etc",
    .openers = "De Het Een Hij Zij Ze Wij We Ik Jij Je Maar En Toen Daarna Vandaag Gisteren "
               "Morgen In Als Wanneer Na Dit Dat Hoe Waarom Waar Wie",
};

static const fy_abbrevs ru_abbrevs = {
    .never = "т.е т.к т.н ул им проф акад тов",
    .numbered = "см рис стр с гл п",
    .may_end = "т.д т.п др г гг",
    .openers = "Он Она Оно Они Мы Я Вы Это Эта Этот Но И А Потом Затем Сегодня Вчера Завтра В "
               "На Когда Если После Как Что Почему Где Кто Там Тогда",
};

/* ---- the table -------------------------------------------------------------- */

/* Shorthands for the rows. */
#define LTR     0
#define RTL     1
#define TIGHT   (FY_LR_FULLWIDTH | FY_LR_TIGHT)
#define ALPHA   FY_SRC_ALPHA, FY_SPACING_SPACE, FY_TAGS_WORDS, FY_CLEAN_ALPHA
#define NOSPACE FY_SRC_ALPHA, FY_SPACING_SPACE, FY_TAGS_CHARS, FY_CLEAN_NEUTRAL
#define NOQ                                                                                        \
    {                                                                                              \
        0, 0                                                                                       \
    }
#define GUIL                                                                                       \
    {                                                                                              \
        0xAB, 0xBB                                                                                 \
    } /* « » */
#define LOW9                                                                                       \
    {                                                                                              \
        0x201E, 0x201C                                                                             \
    } /* „ “ */
#define LOW9R                                                                                      \
    {                                                                                              \
        0x201E, 0x201D                                                                             \
    } /* „ ” */
#define RIGHT99                                                                                    \
    {                                                                                              \
        0x201D, 0x201D                                                                             \
    } /* ” ” */

/* Sorted by tag (strcmp), checked by the tests. */
static const fy_lang_rules rows[] = {
    {"ar", "Arabic", "العربية", "Arab", RTL, ALPHA, TIGHT | FY_LR_ARABIC | FY_LR_RTL_MARK, NOQ,
     NULL, NULL},
    {"az", "Azerbaijani", "azərbaycanca", "Latn", LTR, ALPHA, TIGHT, NOQ, NULL, NULL},
    {"be", "Belarusian", "беларуская", "Cyrl", LTR, ALPHA, TIGHT, GUIL, NULL, NULL},
    {"bg", "Bulgarian", "български", "Cyrl", LTR, ALPHA, TIGHT, LOW9, NULL, NULL},
    {"bn", "Bengali", "বাংলা", "Beng", LTR, ALPHA, TIGHT | FY_LR_DANDA, NOQ, NULL, NULL},
    {"br", "Breton", "brezhoneg", "Latn", LTR, ALPHA, TIGHT | FY_LR_FRENCH, GUIL, NULL, NULL},
    {"bs", "Bosnian", "bosanski", "Latn", LTR, ALPHA, TIGHT, LOW9, NULL, NULL},
    {"ca", "Catalan", "català", "Latn", LTR, ALPHA, TIGHT, NOQ, NULL, NULL},
    {"cs", "Czech", "čeština", "Latn", LTR, ALPHA, TIGHT, LOW9, NULL, NULL},
    {"da", "Danish", "dansk", "Latn", LTR, ALPHA, TIGHT, NOQ, NULL, NULL},
    {"de", "German", "Deutsch", "Latn", LTR, ALPHA, TIGHT, LOW9, NULL, &de_abbrevs},
    {"el", "Greek", "Ελληνικά", "Grek", LTR, ALPHA, TIGHT, GUIL, ";", NULL},
    {"en", "English", "English", "Latn", LTR, ALPHA, TIGHT, NOQ, NULL, &en_abbrevs},
    {"es", "Spanish", "español", "Latn", LTR, ALPHA, TIGHT | FY_LR_INVERTED, NOQ, NULL,
     &es_abbrevs},
    {"et", "Estonian", "eesti", "Latn", LTR, ALPHA, TIGHT, NOQ, NULL, NULL},
    {"fa", "Persian", "فارسی", "Arab", RTL, ALPHA, TIGHT | FY_LR_ARABIC | FY_LR_RTL_MARK, GUIL,
     NULL, NULL},
    {"fi", "Finnish", "suomi", "Latn", LTR, ALPHA, TIGHT, RIGHT99, NULL, NULL},
    {"fr", "French", "français", "Latn", LTR, ALPHA, TIGHT | FY_LR_FRENCH, GUIL, NULL, &fr_abbrevs},
    {"gu", "Gujarati", "ગુજરાતી", "Gujr", LTR, ALPHA, TIGHT, NOQ, NULL, NULL},
    {"he", "Hebrew", "עברית", "Hebr", RTL, ALPHA, TIGHT | FY_LR_RTL_MARK, NOQ, NULL, NULL},
    {"hi", "Hindi", "हिन्दी", "Deva", LTR, ALPHA, TIGHT | FY_LR_DANDA, NOQ, NULL, NULL},
    {"hr", "Croatian", "hrvatski", "Latn", LTR, ALPHA, TIGHT, LOW9, NULL, NULL},
    {"hu", "Hungarian", "magyar", "Latn", LTR, ALPHA, TIGHT, LOW9R, NULL, NULL},
    {"hy", "Armenian", "հայերեն", "Armn", LTR, ALPHA, TIGHT, GUIL, ":", NULL},
    {"id", "Indonesian", "Bahasa Indonesia", "Latn", LTR, ALPHA, TIGHT, NOQ, NULL, NULL},
    {"is", "Icelandic", "íslenska", "Latn", LTR, ALPHA, TIGHT, LOW9, NULL, NULL},
    {"it", "Italian", "italiano", "Latn", LTR, ALPHA, TIGHT, NOQ, NULL, &it_abbrevs},
    {"ja",
     "Japanese",
     "日本語",
     "Jpan",
     LTR,
     FY_SRC_JA,
     FY_SPACING_NONE,
     FY_TAGS_CHARS,
     FY_CLEAN_CJK,
     0,
     {0x300C, 0x300D},
     NULL,
     NULL},
    {"ka", "Georgian", "ქართული", "Geor", LTR, ALPHA, TIGHT, LOW9, NULL, NULL},
    {"km", "Khmer", "ខ្មែរ", "Khmr", LTR, NOSPACE, FY_LR_FULLWIDTH | FY_LR_NO_DOT_END, NOQ, NULL,
     NULL},
    {"kn", "Kannada", "ಕನ್ನಡ", "Knda", LTR, ALPHA, TIGHT, NOQ, NULL, NULL},
    {"ko", "Korean", "한국어", "Kore", LTR, FY_SRC_KO, FY_SPACING_SPACE, FY_TAGS_WORDS,
     FY_CLEAN_ALPHA, TIGHT, NOQ, NULL, NULL},
    {"lo", "Lao", "ລາວ", "Laoo", LTR, NOSPACE, FY_LR_FULLWIDTH | FY_LR_NO_DOT_END, NOQ, NULL, NULL},
    {"lt", "Lithuanian", "lietuvių", "Latn", LTR, ALPHA, TIGHT, LOW9, NULL, NULL},
    {"lv", "Latvian", "latviešu", "Latn", LTR, ALPHA, TIGHT, NOQ, NULL, NULL},
    {"ml", "Malayalam", "മലയാളം", "Mlym", LTR, ALPHA, TIGHT, NOQ, NULL, NULL},
    {"mr", "Marathi", "मराठी", "Deva", LTR, ALPHA, TIGHT, NOQ, NULL, NULL},
    {"ms", "Malay", "Bahasa Melayu", "Latn", LTR, ALPHA, TIGHT, NOQ, NULL, NULL},
    {"my", "Burmese", "မြန်မာ", "Mymr", LTR, NOSPACE, FY_LR_FULLWIDTH | FY_LR_NO_DOT_END, NOQ, NULL,
     NULL},
    {"nb", "Norwegian Bokmål", "norsk bokmål", "Latn", LTR, ALPHA, TIGHT, GUIL, NULL, NULL},
    {"ne", "Nepali", "नेपाली", "Deva", LTR, ALPHA, TIGHT | FY_LR_DANDA, NOQ, NULL, NULL},
    {"nl", "Dutch", "Nederlands", "Latn", LTR, ALPHA, TIGHT, NOQ, NULL, &nl_abbrevs},
    {"nn", "Norwegian Nynorsk", "norsk nynorsk", "Latn", LTR, ALPHA, TIGHT, GUIL, NULL, NULL},
    {"pa", "Punjabi", "ਪੰਜਾਬੀ", "Guru", LTR, ALPHA, TIGHT | FY_LR_DANDA, NOQ, NULL, NULL},
    {"pl", "Polish", "polski", "Latn", LTR, ALPHA, TIGHT, LOW9R, NULL, NULL},
    {"pt", "Portuguese", "português", "Latn", LTR, ALPHA, TIGHT, NOQ, NULL, &pt_abbrevs},
    {"ro", "Romanian", "română", "Latn", LTR, ALPHA, TIGHT, LOW9R, NULL, NULL},
    {"ru", "Russian", "русский", "Cyrl", LTR, ALPHA, TIGHT, GUIL, NULL, &ru_abbrevs},
    {"sk", "Slovak", "slovenčina", "Latn", LTR, ALPHA, TIGHT, LOW9, NULL, NULL},
    {"sl", "Slovenian", "slovenščina", "Latn", LTR, ALPHA, TIGHT, LOW9, NULL, NULL},
    {"sq", "Albanian", "shqip", "Latn", LTR, ALPHA, TIGHT, NOQ, NULL, NULL},
    {"sr", "Serbian", "српски", "Cyrl", LTR, ALPHA, TIGHT, LOW9, NULL, NULL},
    {"sr-Latn", "Serbian (Latin)", "srpski", "Latn", LTR, ALPHA, TIGHT, LOW9, NULL, NULL},
    {"sv", "Swedish", "svenska", "Latn", LTR, ALPHA, TIGHT, RIGHT99, NULL, NULL},
    {"ta", "Tamil", "தமிழ்", "Taml", LTR, ALPHA, TIGHT, NOQ, NULL, NULL},
    {"te", "Telugu", "తెలుగు", "Telu", LTR, ALPHA, TIGHT, NOQ, NULL, NULL},
    {"th", "Thai", "ไทย", "Thai", LTR, NOSPACE, FY_LR_FULLWIDTH | FY_LR_NO_DOT_END, NOQ, NULL,
     NULL},
    {"tr", "Turkish", "Türkçe", "Latn", LTR, ALPHA, TIGHT, NOQ, NULL, NULL},
    {"uk", "Ukrainian", "українська", "Cyrl", LTR, ALPHA, TIGHT, GUIL, NULL, NULL},
    {"ur", "Urdu", "اردو", "Arab", RTL, ALPHA, TIGHT | FY_LR_ARABIC | FY_LR_RTL_MARK, NOQ, NULL,
     NULL},
    {"vi", "Vietnamese", "Tiếng Việt", "Latn", LTR, ALPHA, TIGHT, NOQ, NULL, NULL},
    {"zh",
     "Chinese",
     "简体中文",
     "Hans",
     LTR,
     FY_SRC_HAN,
     FY_SPACING_NONE,
     FY_TAGS_CHARS,
     FY_CLEAN_CJK,
     0,
     {0x201C, 0x201D},
     NULL,
     NULL},
    {"zh-Hant",
     "Chinese (Traditional)",
     "繁體中文",
     "Hant",
     LTR,
     FY_SRC_HAN,
     FY_SPACING_NONE,
     FY_TAGS_CHARS,
     FY_CLEAN_CJK,
     0,
     {0x300C, 0x300D},
     NULL,
     NULL},
};

static const fy_lang_rules default_row = {
    "", NULL, NULL, NULL, LTR, FY_SRC_ALPHA, FY_SPACING_SPACE, FY_TAGS_WORDS, FY_CLEAN_NEUTRAL,
    0,  NOQ,  NULL, NULL,
};

const fy_lang_rules *fy_lang_rules_default(void)
{
    return &default_row;
}

const fy_lang_rules *fy_lang_rules_of(const char *tag)
{
    size_t lo = 0, hi = sizeof rows / sizeof *rows;
    if (!tag || !*tag) return &default_row;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(tag, rows[mid].tag);
        if (!c) return &rows[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return &default_row;
}

const fy_lang_rules *fy_lang_rules_at(size_t i)
{
    return i < sizeof rows / sizeof *rows ? &rows[i] : NULL;
}
