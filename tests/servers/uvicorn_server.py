#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""starlette on uvicorn with h11 (Debian's python3-uvicorn): SSE through
StreamingResponse (chunked; h11 writes each event as one chunk and the
terminator "0\\r\\n\\r\\n" in a send of its own), JSON through JSONResponse
(Content-Length; headers and body in two sends)."""
import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import uvicorn  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.responses import Response, StreamingResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402

import common  # noqa: E402

args = common.parse_args(__doc__)


async def completions(request):
    n, stream = common.want(await request.body())
    if not stream:
        return Response(common.completion(n), media_type="application/json")

    async def events():
        for i in range(n):
            if i:
                await asyncio.sleep(args.gap_ms / 1000)
            yield common.event(i, args.pad)
        if not args.no_done:
            yield common.DONE

    return StreamingResponse(events(), media_type="text/event-stream")


app = Starlette(routes=[Route("/v1/completions", completions,
                              methods=["POST"])])
tls = args.tls.split(",", 1) if args.tls else (None, None)
# with --tls, asyncio's SSL: OpenSSL writes to a memory BIO, the loop
# sends its records after
uvicorn.run(app, host="127.0.0.1", port=args.port, http="h11",
            loop="asyncio", log_level="warning", access_log=False,
            ssl_certfile=tls[0], ssl_keyfile=tls[1])
