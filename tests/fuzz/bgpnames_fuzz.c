// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `flowbloom bgp`'s refusal of a JSON object naming a member twice
 * (user/lib/fleet/bgpmsg.c: fb_bgp_members() counts the names a line
 * gives, fb_bgp_members_held() those json-c kept; json-c keeps the last of
 * one name, silently). The input: a line, parsed as bgp.c parses it
 * (json-c's strict tokener, nothing after the value but blanks).
 *
 * What must hold, for every line json-c takes: the counts differ exactly
 * when an object of it gives a name twice, as a reader written here finds
 * the names (each decoded, \uXXXX too, and compared as json-c keeps them:
 * up to a NUL); and fb_bgp_line() refuses a line giving a name twice,
 * changing nothing.
 */
#include "fuzz.h"
#include <ctype.h>
#include <json-c/json.h>
#include "fleet/bgp.h"
#include "fleet/bgp_int.h"

struct rd {
	const char *s;
	size_t i, n;
	bool twice;
	int depth;
};

static void ws(struct rd *r)
{
	while (r->i < r->n && isspace((unsigned char)r->s[r->i]))
		r->i++;
}

static unsigned hex4(const char *p)
{
	char h[5] = { p[0], p[1], p[2], p[3], 0 };

	return (unsigned)strtoul(h, NULL, 16);
}

static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80)
		return o[0] = (char)cp, 1;
	if (cp < 0x800)
		return o[0] = (char)(0xc0 | cp >> 6), o[1] = (char)(0x80 | (cp & 0x3f)), 2;
	if (cp < 0x10000)
		return o[0] = (char)(0xe0 | cp >> 12), o[1] = (char)(0x80 | ((cp >> 6) & 0x3f)),
		       o[2] = (char)(0x80 | (cp & 0x3f)), 3;
	return o[0] = (char)(0xf0 | cp >> 18), o[1] = (char)(0x80 | ((cp >> 12) & 0x3f)),
	       o[2] = (char)(0x80 | ((cp >> 6) & 0x3f)), o[3] = (char)(0x80 | (cp & 0x3f)), 4;
}

/* A string at r->i (its quote there), decoded into a malloc'd C string. */
static char *str(struct rd *r)
{
	char q = r->s[r->i++], *o = malloc(4 * r->n + 1);
	size_t at = 0;

	if (!o)
		abort();
	while (r->i < r->n && r->s[r->i] != q) {
		char c = r->s[r->i++];

		if (c != '\\') {
			o[at++] = c;
			continue;
		}
		c = r->s[r->i++];
		switch (c) {
		case 'b':
			o[at++] = '\b';
			break;
		case 'f':
			o[at++] = '\f';
			break;
		case 'n':
			o[at++] = '\n';
			break;
		case 'r':
			o[at++] = '\r';
			break;
		case 't':
			o[at++] = '\t';
			break;
		case 'u': {
			unsigned cp = hex4(r->s + r->i);

			r->i += 4;
			if (cp >= 0xd800 && cp <= 0xdbff && r->s[r->i] == '\\' &&
			    r->s[r->i + 1] == 'u') {
				unsigned lo = hex4(r->s + r->i + 2);

				if (lo >= 0xdc00 && lo <= 0xdfff) {
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
					r->i += 6;
				}
			}
			if (cp >= 0xd800 && cp <= 0xdfff)
				cp = 0xfffd; /* a lone surrogate: json-c's replacement */
			at += put_utf8(o + at, cp);
			break;
		}
		default:
			o[at++] = c;
		}
	}
	r->i++; /* the closing quote */
	o[at] = 0;
	return o;
}

static void value(struct rd *r)
{
	ws(r);
	if (r->i >= r->n)
		return;
	if (r->s[r->i] == '{') {
		char **names = NULL;
		size_t k = 0, j;

		r->i++;
		for (;;) {
			ws(r);
			if (r->s[r->i] == '}') {
				r->i++;
				break;
			}
			if (r->s[r->i] == ',') {
				r->i++;
				continue;
			}
			names = realloc(names, (k + 1) * sizeof(*names));
			if (!names)
				abort();
			names[k] = str(r);
			for (j = 0; j < k; j++)
				if (!strcmp(names[j], names[k]))
					r->twice = true;
			k++;
			ws(r);
			r->i++; /* ':' */
			value(r);
		}
		for (j = 0; j < k; j++)
			free(names[j]);
		free(names);
	} else if (r->s[r->i] == '[') {
		r->i++;
		for (;;) {
			ws(r);
			if (r->s[r->i] == ']') {
				r->i++;
				break;
			}
			if (r->s[r->i] == ',') {
				r->i++;
				continue;
			}
			value(r);
		}
	} else if (r->s[r->i] == '"' || r->s[r->i] == '\'') {
		free(str(r));
	} else {
		while (r->i < r->n && !strchr(",]} \t\r\n\f\v", r->s[r->i]))
			r->i++;
	}
}

static char last_note[512];

/* The objects and arrays json-c made. */
static size_t containers(json_object *v)
{
	size_t i, count = 0;

	if (json_object_is_type(v, json_type_array)) {
		for (i = 0; i < json_object_array_length(v); i++)
			count += containers(json_object_array_get_idx(v, i));
		return count + 1;
	}
	if (json_object_is_type(v, json_type_object)) {
		json_object_object_foreach(v, key, val)
		{
			(void)key;
			count += containers(val);
		}
		return count + 1;
	}
	return 0;
}

static void on_note(void *ctx, const char *msg)
{
	(void)ctx;
	snprintf(last_note, sizeof(last_note), "%s", msg);
	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "note: %s\n", msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_tokener *tok;
	json_object *msg;
	struct rd r = { 0 };
	size_t end, n = size;
	char *line = fuzz_cstr(data, size);
	bool given_twice, counted_twice;

	if (!line)
		return 0;
	fuzz_silence();
	while (n && isspace((unsigned char)line[n - 1]))
		n--; /* as fb_bgp_line() cuts it */
	if (fb_bgp_containers(line, n, FB_BGP_MAX_CONTAINERS) > FB_BGP_MAX_CONTAINERS)
		goto out;
	tok = json_tokener_new_ex(FB_BGP_MAX_DEPTH);
	if (!tok)
		abort();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS);
	msg = json_tokener_parse_ex(tok, line, (int)n);
	end = json_tokener_get_parse_end(tok);
	if (!msg || json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(msg);
		json_tokener_free(tok);
		goto out;
	}
	json_tokener_free(tok);
	while (end < n && isspace((unsigned char)line[end]))
		end++;
	if (end < n) {
		json_object_put(msg);
		goto out;
	}

	/* The count before parsing (its bound, 2^18: json-c's memory) is
	 * of what json-c made, not fewer; more only for names given twice
	 * (json-c drops one of them and what it held). */
	FUZZ_ASSERT(fb_bgp_containers(line, n, SIZE_MAX - 1) >= containers(msg),
		    "'%s': %zu objects and arrays counted, json-c made %zu", line,
		    fb_bgp_containers(line, n, SIZE_MAX - 1), containers(msg));
	r.s = line;
	r.n = n;
	value(&r);
	given_twice = r.twice;
	counted_twice = fb_bgp_members_held(msg) != fb_bgp_members(line, n);
	if (fuzz_verbose)
		fprintf(stderr, "names %zu, held %zu, twice %d\n", fb_bgp_members(line, n),
			fb_bgp_members_held(msg), given_twice);
	json_object_put(msg);
	FUZZ_ASSERT(given_twice == counted_twice, "'%s': %s given twice, the count says %s", line,
		    given_twice ? "a name" : "no name", counted_twice ? "twice" : "not");
	if (given_twice) {
		struct fb_bgp_opts o = { .community = FB_BGP_BLACKHOLE };
		struct fb_bgp b;
		int rc;

		if (fb_bgp_init(&b, &o))
			abort();
		b.note = on_note;
		b.source = "fuzz";
		last_note[0] = 0;
		rc = fb_bgp_line(&b, line, n, 1);
		FUZZ_ASSERT(rc == -1 && !b.nadd && !b.ndel && !b.changed && !b.npaths,
			    "'%s' gives a name twice, not refused (%d)", line, rc);
		FUZZ_ASSERT(strstr(last_note, "twice"), "'%s' refused for another reason: %s", line,
			    last_note);
		fb_bgp_free(&b);
	}
out:
	free(line);
	return 0;
}
