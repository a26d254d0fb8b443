/* A random Trick Arena bot in C: the C standard library only (plus POSIX getline).
 *
 * It plays every game: each request lists every legal action, so the bot picks one at random and
 * answers with its 0-based index. It never needs to know a rule. Copy this file to start your own.
 *
 * Build and run:   make && ./random_bot [SEED]      (or set BOT_SEED; the default seed is 0)
 *
 * Seeding: for each match the generator is SplitMix64 (SPEC.md section 3) seeded with
 * SEED xor FNV-1a-64("<match_id>:<seat>"), so a match replays exactly whatever came before it.
 * The Python and JavaScript random bots use the same scheme and make the same choices.
 *
 * Messages (SPEC.md section 4), one JSON object per line each way:
 *   hello -> answer ready;  request -> answer action;  bye or end of input -> exit.
 *   match_start, event, fault and match_end need no answer.
 * Only stdout carries protocol lines; write anything else to stderr (the organiser's log).
 *
 * The JSON reader below is deliberately tiny: it walks the top-level object of a message, keeps
 * the few fields this bot needs and skips every other value (views, events) without storing it.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- SplitMix64 and FNV-1a, exactly as in SPEC.md section 3 ---------------------------------- */

static uint64_t rng_state;

static uint64_t rng_next(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* A uniform integer in [0, n): reject the top sliver so every index is equally likely. */
static uint64_t rng_below(uint64_t n) {
    uint64_t limit = UINT64_MAX - (UINT64_MAX % n + 1) % n;   /* 2^64 - (2^64 mod n), minus 1 */
    for (;;) {
        uint64_t x = rng_next();
        if (x <= limit) return x % n;
    }
}

static uint64_t fnv1a64(const char *text) {
    uint64_t h = 0xCBF29CE484222325ULL;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        h = (h ^ *p) * 0x100000001B3ULL;
    }
    return h;
}

/* ---- a minimal JSON scanner ------------------------------------------------------------------ */

typedef struct {
    const char *p;
    const char *end;
} Scan;

static void skip_ws(Scan *s) {
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\r' || *s->p == '\n')) s->p++;
}

static int expect(Scan *s, char c) {
    skip_ws(s);
    if (s->p < s->end && *s->p == c) {
        s->p++;
        return 0;
    }
    return -1;
}

static int put_utf8(char *out, size_t cap, size_t *len, unsigned long cp) {
    char tmp[4];
    size_t n;
    if (cp < 0x80) { tmp[0] = (char)cp; n = 1; }
    else if (cp < 0x800) { tmp[0] = (char)(0xC0 | (cp >> 6)); tmp[1] = (char)(0x80 | (cp & 0x3F)); n = 2; }
    else if (cp < 0x10000) {
        tmp[0] = (char)(0xE0 | (cp >> 12)); tmp[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        tmp[2] = (char)(0x80 | (cp & 0x3F)); n = 3;
    } else {
        tmp[0] = (char)(0xF0 | (cp >> 18)); tmp[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        tmp[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); tmp[3] = (char)(0x80 | (cp & 0x3F)); n = 4;
    }
    for (size_t i = 0; i < n; i++) {
        if (out && *len + 1 < cap) out[*len] = tmp[i];
        (*len)++;
    }
    return 0;
}

static int hex4(Scan *s, unsigned long *cp) {
    if (s->end - s->p < 4) return -1;
    *cp = 0;
    for (int i = 0; i < 4; i++) {
        char c = *s->p++;
        *cp <<= 4;
        if (c >= '0' && c <= '9') *cp |= (unsigned long)(c - '0');
        else if (c >= 'a' && c <= 'f') *cp |= (unsigned long)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') *cp |= (unsigned long)(c - 'A' + 10);
        else return -1;
    }
    return 0;
}

/* Reads a JSON string, decoding escapes into out (NUL-terminated, truncated to cap; out may be
 * NULL to skip the string). */
static int read_string(Scan *s, char *out, size_t cap) {
    size_t len = 0;
    if (expect(s, '"') != 0) return -1;
    while (s->p < s->end) {
        char c = *s->p++;
        if (c == '"') {
            if (out && cap) out[len < cap ? len : cap - 1] = '\0';
            return 0;
        }
        if (c == '\\') {
            if (s->p >= s->end) return -1;
            char e = *s->p++;
            unsigned long cp;
            switch (e) {
                case 'n': c = '\n'; break;
                case 't': c = '\t'; break;
                case 'r': c = '\r'; break;
                case 'b': c = '\b'; break;
                case 'f': c = '\f'; break;
                case '"': case '\\': case '/': c = e; break;
                case 'u':
                    if (hex4(s, &cp) != 0) return -1;
                    if (cp >= 0xD800 && cp < 0xDC00 && s->end - s->p >= 6 && s->p[0] == '\\' && s->p[1] == 'u') {
                        unsigned long low;
                        s->p += 2;
                        if (hex4(s, &low) != 0) return -1;
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    }
                    put_utf8(out, cap, &len, cp);
                    continue;
                default: return -1;
            }
        }
        if (out && len + 1 < cap) out[len] = c;
        len++;
    }
    return -1;
}

static int skip_value(Scan *s);

/* Skips an object or array (open is '{' or '['), counting its elements into *count if given. */
static int skip_container(Scan *s, char open, int *count) {
    char close = open == '{' ? '}' : ']';
    int n = 0;
    if (expect(s, open) != 0) return -1;
    skip_ws(s);
    if (s->p < s->end && *s->p == close) {
        s->p++;
        if (count) *count = 0;
        return 0;
    }
    for (;;) {
        if (open == '{') {
            if (read_string(s, NULL, 0) != 0 || expect(s, ':') != 0) return -1;
        }
        if (skip_value(s) != 0) return -1;
        n++;
        skip_ws(s);
        if (s->p >= s->end) return -1;
        char c = *s->p++;
        if (c == close) break;
        if (c != ',') return -1;
    }
    if (count) *count = n;
    return 0;
}

static int skip_value(Scan *s) {
    skip_ws(s);
    if (s->p >= s->end) return -1;
    char c = *s->p;
    if (c == '"') return read_string(s, NULL, 0);
    if (c == '{' || c == '[') return skip_container(s, c, NULL);
    /* a number, true, false or null: everything up to the next delimiter */
    const char *start = s->p;
    while (s->p < s->end && !strchr(",}] \t\r\n", *s->p)) s->p++;
    return s->p > start ? 0 : -1;
}

/* An integer value, or null (then *is_null is set). */
static int read_int(Scan *s, long long *out, int *is_null) {
    skip_ws(s);
    *is_null = 0;
    if (s->end - s->p >= 4 && strncmp(s->p, "null", 4) == 0) {
        s->p += 4;
        *is_null = 1;
        return 0;
    }
    char *stop;
    *out = strtoll(s->p, &stop, 10);
    if (stop == s->p) return -1;
    s->p = stop;
    return 0;
}

/* ---- the fields of one message this bot uses ------------------------------------------------- */

typedef struct {
    char type[32];
    char match_id[1024];
    char kind[64];
    char message[1024];
    long long id;
    int id_is_null;
    long long seat;
    int legal_count;
} Message;

static int parse_message(const char *line, size_t length, Message *m) {
    Scan s = {line, line + length};
    char key[64];
    int is_null;
    memset(m, 0, sizeof *m);
    m->legal_count = -1;
    if (expect(&s, '{') != 0) return -1;
    skip_ws(&s);
    if (s.p < s.end && *s.p == '}') return 0;
    for (;;) {
        if (read_string(&s, key, sizeof key) != 0 || expect(&s, ':') != 0) return -1;
        int rc;
        if (strcmp(key, "type") == 0) rc = read_string(&s, m->type, sizeof m->type);
        else if (strcmp(key, "match_id") == 0) rc = read_string(&s, m->match_id, sizeof m->match_id);
        else if (strcmp(key, "kind") == 0) rc = read_string(&s, m->kind, sizeof m->kind);
        else if (strcmp(key, "message") == 0) rc = read_string(&s, m->message, sizeof m->message);
        else if (strcmp(key, "id") == 0) rc = read_int(&s, &m->id, &m->id_is_null);
        else if (strcmp(key, "seat") == 0) rc = read_int(&s, &m->seat, &is_null);
        else if (strcmp(key, "legal") == 0) rc = skip_container(&s, '[', &m->legal_count);
        else rc = skip_value(&s);
        if (rc != 0) return -1;
        skip_ws(&s);
        if (s.p >= s.end) return -1;
        char c = *s.p++;
        if (c == '}') return 0;
        if (c != ',') return -1;
    }
}

/* ---- the bot --------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
    const char *seed_text = argc > 1 ? argv[1] : getenv("BOT_SEED");
    uint64_t base_seed = seed_text ? strtoull(seed_text, NULL, 10) : 0;
    rng_state = base_seed;

    char *line = NULL;
    size_t capacity = 0;
    ssize_t length;
    Message m;
    static char key[1100];

    while ((length = getline(&line, &capacity, stdin)) > 0) {   /* end of input: the referee has gone */
        if (parse_message(line, (size_t)length, &m) != 0) {
            fprintf(stderr, "random_bot.c: cannot read this line, ignoring it: %.200s\n", line);
            continue;
        }
        if (strcmp(m.type, "hello") == 0) {
            printf("{\"type\":\"ready\",\"name\":\"random-c\",\"version\":\"1\"}\n");
            fflush(stdout);   /* the referee is waiting for this line: never leave it in a buffer */
        } else if (strcmp(m.type, "match_start") == 0) {
            snprintf(key, sizeof key, "%s:%lld", m.match_id, m.seat);
            rng_state = base_seed ^ fnv1a64(key);
        } else if (strcmp(m.type, "request") == 0) {
            int index = m.legal_count > 0 ? (int)rng_below((uint64_t)m.legal_count) : 0;
            printf("{\"type\":\"action\",\"id\":%lld,\"index\":%d}\n", m.id, index);
            fflush(stdout);
        } else if (strcmp(m.type, "fault") == 0) {
            fprintf(stderr, "random_bot.c: fault %s: %s\n", m.kind, m.message);
        } else if (strcmp(m.type, "match_end") == 0) {
            fprintf(stderr, "random_bot.c: match %s over\n", m.match_id);
        } else if (strcmp(m.type, "bye") == 0) {
            break;
        }
        /* "event" and any message type added later: nothing to do */
    }
    free(line);
    return 0;
}
