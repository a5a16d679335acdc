/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: the exchange-message parser, as a peer's bytes reach it.
 *
 * Properties checked on every input, beyond "no crash, no sanitizer report":
 * - rk_wire_check_header and rk_wire_decode agree: a message that decodes
 *   has a header that checks, with the length the input has (the header
 *   length is its type's, or bench version 2's BENCH_SETUP length, which
 *   decode then refuses by its bench_version);
 * - a refusal returns -EBADMSG or -EPROTONOSUPPORT and says why, within the
 *   why buffer, even a tiny one;
 * - anything that decodes re-encodes to exactly the same bytes (the layout
 *   has no slack a peer could smuggle data in).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdmakit/wire.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t out[RK_WIRE_MAX_LEN + 16];
	char why[256], tiny[8];
	struct rk_msg msg;
	size_t len = 0;
	int hret, dret, n;

	memset(why, 0, sizeof(why));
	hret = rk_wire_check_header(data, size, &len, why, sizeof(why));
	if (hret) {
		FUZZ_CHECK(hret == -EBADMSG || hret == -EPROTONOSUPPORT, "check_header returned %d",
			   hret);
		FUZZ_CHECK(why[0] != '\0', "check_header refused (%d) without saying why", hret);
		FUZZ_CHECK(memchr(why, 0, sizeof(why)) != NULL, "why is not terminated");
	} else {
		FUZZ_CHECK(len >= RK_WIRE_HDR_LEN && len <= RK_WIRE_MAX_LEN,
			   "check_header accepted a length of %zu", len);
		FUZZ_CHECK(len == rk_wire_len((enum rk_msg_type)(data[6] << 8 | data[7])) ||
				   ((data[6] << 8 | data[7]) == RK_MSG_BENCH_SETUP &&
				    len == RK_WIRE_BENCH_SETUP_V2_LEN),
			   "check_header length %zu is not its type's", len);
	}

	memset(why, 0, sizeof(why));
	memset(&msg, 0xa5, sizeof(msg));
	dret = rk_wire_decode(data, size, &msg, why, sizeof(why));
	if (dret) {
		FUZZ_CHECK(dret == -EBADMSG || dret == -EPROTONOSUPPORT, "decode returned %d",
			   dret);
		FUZZ_CHECK(why[0] != '\0', "decode refused (%d) without saying why", dret);
		/* A short why buffer is cut, never overrun; NULL is allowed. */
		memset(tiny, 0x5a, sizeof(tiny));
		FUZZ_CHECK(rk_wire_decode(data, size, &msg, tiny, 4) == dret,
			   "decode's result depends on the why buffer");
		FUZZ_CHECK(memchr(tiny, 0, 4) && tiny[4] == 0x5a, "why of 4 bytes overrun or open");
		FUZZ_CHECK(rk_wire_decode(data, size, &msg, NULL, 0) == dret,
			   "decode with why NULL differs");
		return 0;
	}
	FUZZ_CHECK(hret == 0 && len == size,
		   "decode accepted %zu bytes that check_header judged %d (length %zu)", size, hret,
		   len);
	FUZZ_CHECK(rk_msg_type_str(msg.type)[0] != 'U', "decode accepted unknown type %d",
		   (int)msg.type);

	memset(out, 0xcc, sizeof(out));
	n = rk_wire_encode(&msg, out, sizeof(out));
	FUZZ_CHECK(n == (int)size, "re-encoding a decoded %s gave %d bytes, not %zu",
		   rk_msg_type_str(msg.type), n, size);
	for (size_t i = 0; i < size; i++)
		FUZZ_CHECK(out[i] == data[i],
			   "re-encoded %s differs at byte %zu: 0x%02x, was 0x%02x",
			   rk_msg_type_str(msg.type), i, out[i], data[i]);
	FUZZ_CHECK(out[size] == 0xcc, "encode wrote past the message's %zu bytes", size);
	/* Too small a buffer: refused, nothing written. */
	memset(out, 0xcc, sizeof(out));
	FUZZ_CHECK(rk_wire_encode(&msg, out, size - 1) == -ENOSPC, "encode into %zu bytes",
		   size - 1);
	FUZZ_CHECK(out[0] == 0xcc, "encode wrote into a buffer it refused");
	return 0;
}
