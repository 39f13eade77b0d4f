/* A plain CSV file's cells as integer codes of their labels, in one pass over the bytes.
 *
 * Compiled on first use by models/csv_codes.py and loaded with ctypes. "Plain": no '"'
 * anywhere, line ends LF or CR LF, every non-empty line holding exactly `ncols` fields
 * separated by ','. Anything else stops the pass with a status, and the caller reads the
 * file another way. Empty lines are skipped (as pyarrow.csv does); an empty field is code -1.
 * Per column, codes are given in order of first appearance; each label is remembered by the
 * offset and length of its first cell and compared byte for byte (never by hash alone).
 *
 * The bytes are scanned 64 at a time into bit masks of the separators (SSE2 where the
 * compiler targets it, else a byte loop), and the fields are taken from the set bits; so
 * finding the next field does not wait for the previous field's bytes to be looked at.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define BC_ABI 3

enum {
    BC_OK = 0,
    BC_QUOTE = 1,          /* a '"' byte */
    BC_LONE_CR = 2,        /* a '\r' not followed by '\n' */
    BC_FIELDS = 3,         /* a line with another number of fields than the header */
    BC_ROWS = 4,           /* more rows than the caller made room for */
    BC_MEMORY = 5,         /* an allocation failed */
    BC_UNSUPPORTED = 6,    /* not a little-endian machine, or a field of 2 GiB or more */
    BC_WIDE = 7,           /* more than 128 labels in a column given 1-byte codes */
};

typedef struct {
    uint64_t key;          /* the label's first (up to) 8 bytes, zero-padded */
    int32_t len;           /* -1: an empty slot */
    int32_t code;
} slot_t;

typedef struct {
    slot_t *slots;         /* open addressing, a power of two of them */
    uint32_t mask;
    int32_t n;             /* labels so far */
    int32_t cap;           /* room in start, len, hash */
    int64_t *start;        /* offset of each label's first cell */
    int32_t *len;
    uint64_t *hash;
} column_t;

typedef struct {
    int32_t ncols;
    column_t *cols;
} result_t;

static inline uint64_t load8(const uint8_t *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

static inline uint64_t mix(uint64_t h)
{
    h *= 0x9E3779B97F4A7C15ULL;
    return h ^ (h >> 31);
}

static int grow_labels(column_t *c)
{
    int32_t cap = c->cap ? 2 * c->cap : 16;
    int64_t *start = realloc(c->start, (size_t)cap * sizeof *start);
    if (!start) return 0;
    c->start = start;
    int32_t *len = realloc(c->len, (size_t)cap * sizeof *len);
    if (!len) return 0;
    c->len = len;
    uint64_t *hash = realloc(c->hash, (size_t)cap * sizeof *hash);
    if (!hash) return 0;
    c->hash = hash;
    c->cap = cap;
    return 1;
}

static int grow_slots(column_t *c, const uint8_t *buf)
{
    uint32_t size = c->slots ? 2 * (c->mask + 1) : 16;
    slot_t *slots = malloc((size_t)size * sizeof *slots);
    if (!slots) return 0;
    for (uint32_t i = 0; i < size; i++) slots[i].len = -1;
    for (int32_t k = 0; k < c->n; k++) {
        uint32_t i = (uint32_t)(c->hash[k] >> 32) & (size - 1);
        while (slots[i].len >= 0) i = (i + 1) & (size - 1);
        uint64_t key = 0;
        memcpy(&key, buf + c->start[k], c->len[k] < 8 ? (size_t)c->len[k] : 8);
        slots[i].key = key;
        slots[i].len = c->len[k];
        slots[i].code = k;
    }
    free(c->slots);
    c->slots = slots;
    c->mask = size - 1;
    return 1;
}

/* The code of the non-empty label buf[s, s + len), added when new; -1 when out of memory,
 * -2 when it would be code 128 and `narrow`. */
static inline int32_t code_of(column_t *c, const uint8_t *buf, const uint8_t *end,
                              int64_t s, int32_t len, int narrow)
{
    const uint8_t *p = buf + s;
    uint64_t key, hash;
    if (end - p >= 8) {
        key = load8(p);
    } else {
        key = 0;
        memcpy(&key, p, (size_t)(end - p));
    }
    if (len < 8) key &= (1ULL << (8 * len)) - 1;
    hash = mix(key ^ (uint64_t)len);
    for (int32_t at = 8; at < len; at += 8) {
        uint64_t w = 0;
        if (end - (p + at) >= 8) {
            w = load8(p + at);
        } else {
            memcpy(&w, p + at, (size_t)(end - (p + at)));
        }
        if (len - at < 8) w &= (1ULL << (8 * (len - at))) - 1;
        hash = mix(hash ^ w);
    }
    uint32_t i = (uint32_t)(hash >> 32) & c->mask;
    for (;;) {
        slot_t *t = &c->slots[i];
        if (t->len < 0) break;
        if (t->len == len && t->key == key
            && (len <= 8 || memcmp(buf + c->start[t->code] + 8, p + 8, (size_t)len - 8) == 0))
            return t->code;
        i = (i + 1) & c->mask;
    }
    if (narrow && c->n == 128) return -2;
    if (c->n == c->cap && !grow_labels(c)) return -1;
    int32_t k = c->n++;
    c->start[k] = s;
    c->len[k] = len;
    c->hash[k] = hash;
    c->slots[i].key = key;
    c->slots[i].len = len;
    c->slots[i].code = k;
    if ((uint32_t)c->n * 2 > c->mask + 1 && !grow_slots(c, buf)) return -1;
    return k;
}

void bc_free(result_t *r)
{
    if (!r) return;
    if (r->cols) {
        for (int32_t j = 0; j < r->ncols; j++) {
            column_t *c = &r->cols[j];
            free(c->slots);
            free(c->start);
            free(c->len);
            free(c->hash);
        }
        free(r->cols);
    }
    free(r);
}

int32_t bc_abi(void)
{
    return BC_ABI;
}

/* Number of '\n' bytes in buf[start, end). */
int64_t bc_count_newlines(const uint8_t *buf, int64_t start, int64_t end_at)
{
    int64_t n = 0;
    const uint8_t *p = buf + start, *end = buf + end_at;
    while (p < end) {
        const uint8_t *q = memchr(p, '\n', (size_t)(end - p));
        if (!q) break;
        n++;
        p = q + 1;
    }
    return n;
}

/* Bit i of each mask: byte p[i] is ',', '\n', '"', '\r' (64 bytes from p). */
static inline void masks(const uint8_t *p, uint64_t *comma, uint64_t *nl, uint64_t *quote,
                         uint64_t *cr)
{
#ifdef __SSE2__
    const __m128i vc = _mm_set1_epi8(','), vn = _mm_set1_epi8('\n'),
                  vq = _mm_set1_epi8('"'), vr = _mm_set1_epi8('\r');
    uint64_t a = 0, b = 0, q = 0, r = 0;
    for (int i = 0; i < 4; i++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + 16 * i));
        a |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, vc)) << (16 * i);
        b |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, vn)) << (16 * i);
        q |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, vq)) << (16 * i);
        r |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, vr)) << (16 * i);
    }
    *comma = a;
    *nl = b;
    *quote = q;
    *cr = r;
#else
    uint64_t a = 0, b = 0, q = 0, r = 0;
    for (int i = 0; i < 64; i++) {
        a |= (uint64_t)(p[i] == ',') << i;
        b |= (uint64_t)(p[i] == '\n') << i;
        q |= (uint64_t)(p[i] == '"') << i;
        r |= (uint64_t)(p[i] == '\r') << i;
    }
    *comma = a;
    *nl = b;
    *quote = q;
    *cr = r;
#endif
}

/* The code of the field [s, s + flen) of a column, written to row `row` of its codes
   (-1 for an empty field): BC_OK, or the status that stops the parse. */
static int32_t store_field(column_t *col, void *out, int64_t row, const uint8_t *buf,
                           const uint8_t *end, int64_t s, int64_t flen, int narrow)
{
    int32_t code = -1;
    if (flen) {
        if (flen > INT32_MAX - 8)
            return BC_UNSUPPORTED;
        code = code_of(col, buf, end, s, (int32_t)flen, narrow);
        if (code == -2)
            return BC_WIDE;
        if (code < 0)
            return BC_MEMORY;
    }
    if (narrow)
        ((int8_t *)out)[row] = (int8_t)code;
    else
        ((int32_t *)out)[row] = code;
    return BC_OK;
}

/* Parse the rows in buf[start, len): those after the header line, or a part of them that
 * starts at a line start (models/csv_codes.py parses a large file in parts on several threads).
 *
 * codes[j]: room for max_rows codes of column j (int8 when width is 1, else int32), or NULL
 * for a column not wanted (its fields are counted but not looked up). On return *status is
 * BC_OK and *rows the number of rows, or another status; the result (NULL only when it could
 * not be allocated) is freed with bc_free either way.
 */
result_t *bc_parse(const uint8_t *buf, int64_t len, int64_t start, int32_t ncols,
                   void **codes, int32_t width, int64_t max_rows, int32_t *status,
                   int64_t *rows)
{
    *rows = 0;
    const uint16_t probe = 1;
    if (*(const uint8_t *)&probe != 1 || ncols < 1 || (width != 1 && width != 4)) {
        *status = BC_UNSUPPORTED;
        return NULL;
    }
    result_t *r = calloc(1, sizeof *r);
    if (!r) {
        *status = BC_MEMORY;
        return NULL;
    }
    r->ncols = ncols;
    r->cols = calloc((size_t)ncols, sizeof *r->cols);
    if (!r->cols) goto memory;
    for (int32_t j = 0; j < ncols; j++)
        if (codes[j] && (!grow_labels(&r->cols[j]) || !grow_slots(&r->cols[j], buf)))
            goto memory;

    const uint8_t *end = buf + len;
    const int narrow = width == 1;
    int64_t s = start;      /* where the current field starts */
    int64_t row = 0;
    int32_t j = 0;          /* its column */
    int carry = 0;          /* the previous block ended in '\r' */
    uint8_t tail[64];
    for (int64_t base = start; base < len; base += 64) {
        const uint8_t *p = buf + base;
        int64_t avail = len - base;
        if (avail < 64) {
            memset(tail, 0, sizeof tail);
            memcpy(tail, p, (size_t)avail);
            p = tail;
        }
        uint64_t comma, nl, quote, cr;
        masks(p, &comma, &nl, &quote, &cr);
        if (quote) {
            *status = BC_QUOTE;
            return r;
        }
        if (carry) {
            if (!(nl & 1)) {
                *status = BC_LONE_CR;
                return r;
            }
            nl &= ~1ULL;    /* the LF of a CR LF: the CR ended the line */
            carry = 0;
        }
        if (cr) {
            uint64_t lf_after = cr << 1;
            if ((lf_after & nl) != lf_after) {
                *status = BC_LONE_CR;
                return r;
            }
            nl &= ~lf_after;
            if (cr >> 63) {
                if (avail <= 64) {
                    *status = BC_LONE_CR;   /* the file ends in a lone '\r' */
                    return r;
                }
                carry = 1;
            }
        }
        uint64_t delim = comma | nl | cr;
        while (delim) {
            int64_t d = base + __builtin_ctzll(delim);
            delim &= delim - 1;
            uint8_t c = buf[d];
            int64_t next = d + 1 + (c == '\r');
            int eol = c != ',';
            if (eol && j == 0 && d == s) {  /* an empty line is no row */
                s = next;
                continue;
            }
            if (eol != (j == ncols - 1)) {
                *status = BC_FIELDS;
                return r;
            }
            if (j == 0 && row == max_rows) {
                *status = BC_ROWS;
                return r;
            }
            if (codes[j]) {
                int32_t why = store_field(&r->cols[j], codes[j], row, buf, end, s, d - s,
                                          narrow);
                if (why != BC_OK) {
                    *status = why;
                    return r;
                }
            }
            s = next;
            if (eol) {
                j = 0;
                row++;
            } else {
                j++;
            }
        }
    }
    if (s < len || j > 0) {  /* the last line has no line end */
        if (j != ncols - 1) {
            *status = BC_FIELDS;
            return r;
        }
        if (row == max_rows) {
            *status = BC_ROWS;
            return r;
        }
        if (codes[j]) {
            int32_t why = store_field(&r->cols[j], codes[j], row, buf, end, s, len - s,
                                      narrow);
            if (why != BC_OK) {
                *status = why;
                return r;
            }
        }
        row++;
    }
    *rows = row;
    *status = BC_OK;
    return r;

memory:
    *status = BC_MEMORY;
    return r;
}

/* codes[i] = table[codes[i]] for the n codes (int8 when width is 1, else int32); a code below
 * zero (an empty cell) is left as it is. */
void bc_recode(void *codes, int32_t width, int64_t n, const int32_t *table)
{
    if (width == 1) {
        int8_t *c = codes;
        for (int64_t i = 0; i < n; i++)
            if (c[i] >= 0) c[i] = (int8_t)table[c[i]];
    } else {
        int32_t *c = codes;
        for (int64_t i = 0; i < n; i++)
            if (c[i] >= 0) c[i] = table[c[i]];
    }
}

int32_t bc_labels_count(const result_t *r, int32_t j)
{
    return r->cols[j].n;
}

/* Column j's labels: offset and length of each one's first cell, in order of code. */
void bc_labels(const result_t *r, int32_t j, int64_t *starts, int32_t *lens)
{
    const column_t *c = &r->cols[j];
    for (int32_t k = 0; k < c->n; k++) {
        starts[k] = c->start[k];
        lens[k] = c->len[k];
    }
}
