# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""What the reliability tests' Python parts share: PASS/FAIL lines, and the
agreement of ttftrace's requests with the load generator's rows."""


class Checks:
    def __init__(self, prefix):
        self.prefix = prefix
        self.ok = True

    def check(self, name, cond, detail=""):
        print(("PASS: " if cond else "FAIL: ") + self.prefix + ": " + name
              + (": " + detail if detail else ""))
        self.ok &= bool(cond)

    def agree(self, name, pairs):
        """pairs: (tool request, client row). Causality is strict: the kernel
        had the request after the client sent it and put the first token on
        the wire before the client read it. Agreement (TTFT within 0.5 ms +
        1%) allows 2% (at least one) off: the client reads late now and then
        on a busy machine, which by causality can only make its TTFT longer."""
        acausal = [r["id"] for r, c in pairs
                   if r["t_arrive_ns"] < int(c["t_send_ns"])
                   or r["t_wire_ns"] > int(c["t_first_token_ns"])]
        self.check(f"{name}: causal (client send <= t_arrive, t_wire <= "
                   "client's first token)", not acausal,
                   f"{len(acausal)} of {len(pairs)} are not: {acausal[:5]}")
        errs, off = [], []
        for r, c in pairs:
            diff = r["ttft_ns"] - int(c["ttft_ns"])
            errs.append(abs(diff))
            if abs(diff) > 500_000 + 0.01 * int(c["ttft_ns"]):
                off.append((r["id"], f"{diff / 1e3:+.0f} us"))
        errs.sort()
        n = len(errs)
        self.check(f"{name}: TTFT agrees with the client's", n > 0 and
                   len(off) <= max(1, n // 50),
                   f"{n - len(off)}/{n} within 0.5 ms + 1%"
                   + (f", error p50 {errs[n // 2] / 1e3:.0f} us, worst "
                      f"{errs[-1] / 1e3:.0f} us" if n else "")
                   + (f"; off (tool - client): {off[:5]}" if off else ""))
        tok = [r["id"] for r, c in pairs if r["tokens"] != int(c["tokens"])]
        self.check(f"{name}: token counts equal the client's", not tok,
                   f"{len(tok)} differ: {tok[:5]}")
