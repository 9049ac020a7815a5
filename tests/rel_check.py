# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""What the tests' Python parts share: PASS/FAIL lines, the closure of
complete requests, and the agreement of ttftrace's requests with the load
generator's rows."""


class Checks:
    def __init__(self, prefix):
        self.prefix = prefix
        self.ok = True

    def check(self, name, cond, detail=""):
        print(("PASS: " if cond else "FAIL: ") + self.prefix + ": " + name
              + (": " + detail if detail else ""))
        self.ok &= bool(cond)

    def closure(self, name, requests):
        """Every complete request among requests (report --json) has stages
        summing exactly to its TTFT."""
        bad = [r["id"] for r in requests if r["complete"] and
               (r.get("stages") is None or
                sum(r["stages"].values()) != r["ttft_ns"])]
        self.check(name, not bad, f"{len(bad)} do not: {bad[:5]}")

    def agree(self, name, pairs):
        """pairs: (tool request, client row). What a fault must not break:
        causality, strictly (the kernel had the request after the client
        sent it and put the first token on the wire before the client read
        it: every timestamp of the tool lies inside the client's window) and
        the token counts. How close TTFT comes to the client's is printed,
        against the kernel's receive stamp of the first token where the
        client has it (its own read is late by milliseconds now and then
        under the load these tests make); the accuracy check is
        test_bpf_ttft.sh's."""
        acausal = [r["id"] for r, c in pairs
                   if r["t_arrive_ns"] < int(c["t_send_ns"])
                   or r["t_wire_ns"] > int(c["t_first_token_ns"])]
        self.check(f"{name}: causal (client send <= t_arrive, t_wire <= "
                   "client's first token)", bool(pairs) and not acausal,
                   f"{len(acausal)} of {len(pairs)} are not: {acausal[:5]}")
        errs, off = [], 0
        for r, c in pairs:
            ref = int(c.get("ttft_rx_ns") or 0) or int(c["ttft_ns"])
            diff = abs(r["ttft_ns"] - ref)
            errs.append(diff)
            off += diff > 500_000 + 0.01 * int(c["ttft_ns"])
        errs.sort()
        n = len(errs)
        if n:
            print(f"  {self.prefix}: {name}: TTFT vs the client's: "
                  f"{n - off}/{n} within 0.5 ms + 1%, error p50 "
                  f"{errs[n // 2] / 1e3:.0f} us, worst {errs[-1] / 1e3:.0f} us")
        tok = [r["id"] for r, c in pairs if r["tokens"] != int(c["tokens"])]
        self.check(f"{name}: token counts equal the client's", not tok,
                   f"{len(tok)} differ: {tok[:5]}")
