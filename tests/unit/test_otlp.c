// SPDX-License-Identifier: MIT
/* The OTLP exporter's pure parts: URLs, the request envelope, the IDs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>

#include "http.h"
#include "otlp.h"
#include "output/output.h"

static void urls(void **state)
{
	struct rec_http_url u;
	const char *why = NULL;

	(void)state;
	assert_int_equal(rec_http__parse_url("http://127.0.0.1:4318", &u, &why), 0);
	assert_string_equal(u.host, "127.0.0.1");
	assert_string_equal(u.port, "4318");
	assert_string_equal(u.path, "");
	assert_int_equal(rec_http__parse_url("http://collector/otlp/", &u, &why), 0);
	assert_string_equal(u.port, "80");
	assert_string_equal(u.path, "/otlp");
	assert_int_equal(rec_http__parse_url("https://x", &u, &why), -EINVAL);
	assert_string_equal(why, "https is not supported: use http://");
	assert_int_equal(rec_http__parse_url("ftp://x", &u, &why), -EINVAL);
	assert_int_equal(rec_http__parse_url("http://:80", &u, &why), -EINVAL);
	assert_int_equal(rec_http__parse_url("http://x:8a", &u, &why), -EINVAL);
	assert_int_equal(rec_http__parse_url("http://x/a b", &u, &why), -EINVAL);
}

static void envelope(void **state)
{
	struct rec_otlp_opts o = { .service_name = "svc \"q\"", .pid = 42 };
	char *body = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(rec_otlp__envelope(&o, "host", "{\"a\":1},{\"b\":2}", 15, &body, &len), 0);
	assert_string_equal(
		body, "{\"resourceLogs\":[{\"resource\":{\"attributes\":["
		      "{\"key\":\"service.name\",\"value\":{\"stringValue\":\"svc \\\"q\\\"\"}},"
		      "{\"key\":\"process.pid\",\"value\":{\"intValue\":\"42\"}},"
		      "{\"key\":\"host.name\",\"value\":{\"stringValue\":\"host\"}}]},"
		      "\"scopeLogs\":[{\"scope\":{\"name\":\"recorder\",\"version\":\"0.1\"},"
		      "\"logRecords\":[{\"a\":1},{\"b\":2}]}]}]}");
	free(body);
}

static void ids(void **state)
{
	char t1[33], s1[17], t2[33], s2[17];

	(void)state;
	rec_output_otlp__ids(0x8000000000000001ULL, 7, t1, s1);
	rec_output_otlp__ids(0x8000000000000001ULL, 7, t2, s2);
	assert_string_equal(t1, t2);
	assert_int_equal(strlen(t1), 32);
	assert_int_equal(strlen(s1), 16);
	assert_int_equal(strspn(t1, "0123456789abcdef"), 32);
	/* Another salt (another run), another trace. */
	rec_output_otlp__ids(0x8000000000000001ULL, 8, t2, s2);
	assert_string_not_equal(t1, t2);
	rec_output_otlp__ids(0x8000000000000002ULL, 7, t2, s2);
	assert_string_not_equal(t1, t2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(urls),
		cmocka_unit_test(envelope),
		cmocka_unit_test(ids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
