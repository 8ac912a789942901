/* A pod's "namespace/name" (scorer/parse/podlabel.c), the one way logs,
 * /v1/nodes, /metrics' labels and the in-flight table print it: whole
 * for valid names, printable ASCII only, the namespace cut at 63 bytes,
 * the whole cut at the caller's buffer, a missing part empty. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "scorer/parse/podlabel.h"

static void test_podlabel_valid(void **state)
{
	char out[PODLABEL_MAX + 1], name[PODLABEL_NAME_MAX + 1], ns[PODLABEL_NS_MAX + 1];

	(void)state;
	assert_string_equal(podlabel_format("shop", 4, "web-1", 5, out, sizeof(out)), "shop/web-1");
	/* Not NUL-terminated: only len bytes count. */
	assert_string_equal(podlabel_format("shopX", 4, "web-1Y", 5, out, sizeof(out)),
			    "shop/web-1");
	/* The longest valid pair fits whole. */
	memset(ns, 'n', PODLABEL_NS_MAX);
	memset(name, 'p', PODLABEL_NAME_MAX);
	podlabel_format(ns, PODLABEL_NS_MAX, name, PODLABEL_NAME_MAX, out, sizeof(out));
	assert_int_equal(strlen(out), PODLABEL_MAX);
	assert_int_equal(out[PODLABEL_NS_MAX], '/');
}

static void test_podlabel_hostile(void **state)
{
	char out[PODLABEL_MAX + 1], small[12], ns[100];

	(void)state;
	/* Control bytes, quotes' neighbours and high bytes: '?'. */
	assert_string_equal(podlabel_format("a\nb", 3, "c\x7f\xc3\xa9", 4, out, sizeof(out)),
			    "a?b/c???");
	/* A namespace no apiserver accepts: cut at 63 bytes. */
	memset(ns, 'n', sizeof(ns));
	podlabel_format(ns, sizeof(ns), "p", 1, out, sizeof(out));
	assert_int_equal(strlen(out), PODLABEL_NS_MAX + 2);
	/* The caller's buffer bounds the whole. */
	assert_string_equal(podlabel_format("shop", 4, "web-123456789", 13, small, sizeof(small)),
			    "shop/web-12");
	/* Missing parts are empty. */
	assert_string_equal(podlabel_format(NULL, 4, "p", 1, out, sizeof(out)), "/p");
	assert_string_equal(podlabel_format("n", 1, NULL, 0, out, sizeof(out)), "n/");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_podlabel_valid),
		cmocka_unit_test(test_podlabel_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
