/* The reply every endpoint answers with (scorer/serve/reply.c): an error body is
 * {"error":"..."} with the message escaped, whatever it holds; a finished
 * buffer becomes a 200; a failed one a 500 without a body. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/buf.h"
#include "scorer/serve/reply.h"

struct error_row {
	const char *name;
	unsigned status;
	const char *msg;
	const char *body;
};

static const struct error_row error_rows[] = {
	{ "plain", 404, "no such path", "{\"error\":\"no such path\"}" },
	{ "quotes and a newline", 413, "body of \"9\" bytes\n",
	  "{\"error\":\"body of \\\"9\\\" bytes\\u000a\"}" },
	{ "a backslash and a control byte", 400, "a\\b\x01", "{\"error\":\"a\\\\b\\u0001\"}" },
	{ "empty", 500, "", "{\"error\":\"\"}" },
};

static void test_reply_error(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(error_rows) / sizeof(error_rows[0]); r++) {
		const struct error_row *row = &error_rows[r];
		struct reply rep;

		reply_error(row->status, row->msg, &rep);
		if (rep.status != row->status || !rep.body || strcmp(rep.body, row->body) ||
		    rep.len != strlen(rep.body) || rep.content_type)
			fail_msg("%s: %u %s, want %u %s", row->name, rep.status,
				 rep.body ? rep.body : "(no body)", row->status, row->body);
		free(rep.body);
	}
}

static void test_reply_take(void **state)
{
	struct reply rep = { .content_type = "text/plain" };
	struct buf b;

	(void)state;
	buf_init(&b, 64);
	buf_puts(&b, "{\"ok\":true}");
	reply_take(&b, &rep);
	assert_int_equal(rep.status, 200);
	assert_string_equal(rep.body, "{\"ok\":true}");
	assert_int_equal(rep.len, 11);
	assert_null(rep.content_type);
	free(rep.body);

	/* Over the buffer's bound: a 500 without a body. */
	buf_init(&b, 4);
	buf_puts(&b, "{\"too\":\"long\"}");
	reply_take(&b, &rep);
	assert_int_equal(rep.status, 500);
	assert_null(rep.body);
	assert_int_equal(rep.len, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reply_error),
		cmocka_unit_test(test_reply_take),
	};
	return cmocka_run_group_tests_name("reply", tests, NULL, NULL);
}
