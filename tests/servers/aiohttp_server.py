#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""aiohttp's web server (Debian's python3-aiohttp): SSE through a
StreamResponse (chunked: the headers go out with the first chunk, and
write_eof sends the terminator), JSON through json_response
(Content-Length)."""
import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aiohttp import web  # noqa: E402

import common  # noqa: E402

args = common.parse_args(__doc__)


async def completions(request):
    n, stream = common.want(await request.read())
    if not stream:
        return web.Response(body=common.completion(n),
                            content_type="application/json")
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await resp.prepare(request)
    for i in range(n):
        if i:
            await asyncio.sleep(args.gap_ms / 1000)
        await resp.write(common.event(i, args.pad))
    if not args.no_done:
        await resp.write(common.DONE)
    await resp.write_eof()
    return resp


app = web.Application()
app.router.add_post("/v1/completions", completions)
web.run_app(app, host="127.0.0.1", port=args.port, print=None,
            access_log=None, ssl_context=common.tls_context(args.tls))
