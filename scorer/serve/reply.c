#include "serve/reply.h"

#include <string.h>

#include "buf.h"
#include "scratch.h"

void reply_take(struct buf *b, struct reply *out)
{
	out->content_type = NULL;
	out->scratch = b->scratch;
	out->body = buf_release(b, &out->len);
	out->status = out->body ? 200 : 500;
	if (!out->body)
		out->len = 0;
}

void reply_free_body(struct reply *r)
{
	scratch_drop(r->body, r->scratch);
	r->body = NULL;
}

void reply_error(unsigned status, const char *msg, struct reply *out)
{
	size_t len = strlen(msg);
	struct buf b;

	/* Escaping grows a byte to at most six. */
	buf_init(&b, 6 * len + 16);
	buf_puts(&b, "{\"error\":");
	buf_json_str(&b, msg, len);
	buf_puts(&b, "}");
	reply_take(&b, out);
	if (out->body)
		out->status = status;
}
