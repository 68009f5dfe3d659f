// Verilator testbench of a NoC Mesh: injects packets from a traffic file at the local inputs and
// logs every flit delivered at the local outputs.
//
// Usage: Vmesh TRAFFIC LOG [--seed N] [--stall PERMILLE] [--max-cycles N] [--timeout N]
//                          [--drain N]
//
// TRAFFIC (text, '#' starts a comment line):
//   P <src> <cycle> <vc> <n> <w0> .. <wn-1> a packet of n flits (hex words, w0 = head flit),
//                                           injected at tile <src> on <vc> at or after <cycle>
//   D <src> <cycle> <vc> <n> <w0> .. <wn-1> the same, for a packet the mesh must drop (its
//                                           destination is outside the mesh): not awaited
// Packets of one (source, VC) enter the network in file order, whole (first..last) and
// back-to-back when the router is ready. A source offers its VC-1 flit when it has one and the
// router is ready for it, else its VC-0 flit (flits of the two VCs may interleave on the link).
//
// Receivers accept on each VC with probability 1 - PERMILLE/1000 per cycle (xorshift PRNG seeded
// with --seed), so runs are reproducible.
//
// LOG lines:  I <cycle> <tile> <vc> <head hex>                     head flit injected
//             R <cycle> <tile> <vc> <first> <last> <data hex>       flit delivered
// stdout, last line: RESULT status=<ok|deadlock|timeout> cycles=.. injected=.. delivered=..
//                    error=..
// Exit status: 0 ok, 2 no progress for --timeout cycles (deadlock or lost flits), 3 max cycles.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "verilated.h"
#include "Vmesh.h"

struct Link {
    CData *valid, *vc, *first, *last;
    IData *data;
    CData *ready;
};

#include "ports.h"  // Generated: MESH_X, MESH_Y, N_TILES, bind_ports().

struct Packet {
    uint64_t cycle;
    bool awaited;  // Must be delivered (P), or must be dropped (D).
    std::vector<uint32_t> flits;
};

struct Source {
    std::deque<Packet> queue[2];  // Per VC.
    size_t pos[2] = {0, 0};       // Next flit of the front packet.
};

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd() {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void die(const char *msg, const char *arg = "") {
    fprintf(stderr, "tb: %s%s\n", msg, arg);
    exit(1);
}

int main(int argc, char **argv) {
    if (argc < 3)
        die("usage: Vmesh TRAFFIC LOG [--seed N] [--stall PERMILLE] [--max-cycles N] "
            "[--timeout N] [--drain N]");
    const char *traffic_path = argv[1], *log_path = argv[2];
    uint64_t seed = 1, max_cycles = 10000000, timeout = 2000, drain = 32;
    unsigned stall = 0;
    for (int i = 3; i < argc; i++) {
        if (i + 1 >= argc) die("missing value for ", argv[i]);
        uint64_t v = strtoull(argv[i + 1], nullptr, 0);
        if (!strcmp(argv[i], "--seed")) seed = v;
        else if (!strcmp(argv[i], "--stall")) stall = (unsigned)v;
        else if (!strcmp(argv[i], "--max-cycles")) max_cycles = v;
        else if (!strcmp(argv[i], "--timeout")) timeout = v;
        else if (!strcmp(argv[i], "--drain")) drain = v;
        else die("unknown option ", argv[i]);
        i++;
    }
    rng_state ^= seed * 0x9E3779B97F4A7C15ull;
    if (!rng_state) rng_state = 1;

    // Traffic.
    std::vector<Source> src(N_TILES);
    uint64_t expect = 0, n_packets = 0;
    {
        FILE *f = fopen(traffic_path, "r");
        if (!f) die("cannot open ", traffic_path);
        char tag[16];
        while (fscanf(f, " %15s", tag) == 1) {
            if (tag[0] == '#') {
                int c;
                while ((c = fgetc(f)) != EOF && c != '\n') {}
            } else if (!strcmp(tag, "P") || !strcmp(tag, "D")) {
                unsigned s, vc, n;
                Packet p;
                p.awaited = tag[0] == 'P';
                if (fscanf(f, "%u %lu %u %u", &s, &p.cycle, &vc, &n) != 4) die("bad packet line");
                if (s >= N_TILES || vc > 1 || n == 0) die("bad packet fields");
                for (unsigned k = 0; k < n; k++) {
                    unsigned w;
                    if (fscanf(f, "%x", &w) != 1) die("bad packet word");
                    p.flits.push_back(w);
                }
                if (p.awaited) expect += n;
                src[s].queue[vc].push_back(std::move(p));
                n_packets++;
            } else {
                die("bad traffic tag ", tag);
            }
        }
        fclose(f);
    }

    FILE *log = fopen(log_path, "w");
    if (!log) die("cannot open ", log_path);
    static char logbuf[1 << 20];
    setvbuf(log, logbuf, _IOFBF, sizeof(logbuf));

    auto ctx = std::make_unique<VerilatedContext>();
    auto top = std::make_unique<Vmesh>(ctx.get());
    Link in[N_TILES], out[N_TILES];
    bind_ports(top.get(), in, out);

    // Reset.
    top->sys_clk = 0;
    top->sys_rst = 1;
    for (int t = 0; t < N_TILES; t++) { *in[t].valid = 0; *out[t].ready = 0; }
    for (int k = 0; k < 4; k++) {
        top->eval(); top->sys_clk = 1; top->eval(); top->sys_clk = 0;
    }
    top->sys_rst = 0;
    top->eval();

    // in_flight: flits of awaited packets injected but not delivered yet.
    uint64_t cycle = 0, injected = 0, delivered = 0, idle = 0, done_at = 0;
    int64_t in_flight = 0;
    bool done = false;
    const char *status = "ok";
    int rc = 0;
    int inj_vc[N_TILES];
    for (;; cycle++) {
        if (cycle >= max_cycles) { status = "timeout"; rc = 3; break; }

        // Receivers: per-VC ready, randomly stalled.
        for (int t = 0; t < N_TILES; t++) {
            unsigned r = 0;
            for (int v = 0; v < 2; v++)
                if (stall == 0 || rnd() % 1000 >= stall) r |= 1u << v;
            *out[t].ready = r;
        }
        top->eval();  // ready of the inputs depends on router state only.

        // Sources: offer a flit on a VC the router is ready for (VC 1 first).
        bool waiting = false;  // Some source has a flit it may inject now.
        for (int t = 0; t < N_TILES; t++) {
            inj_vc[t] = -1;
            for (int v = 1; v >= 0; v--) {
                auto &q = src[t].queue[v];
                if (q.empty() || q.front().cycle > cycle) continue;
                waiting = true;
                if (inj_vc[t] < 0 && ((*in[t].ready >> v) & 1)) inj_vc[t] = v;
            }
            if (inj_vc[t] < 0) { *in[t].valid = 0; continue; }
            int v = inj_vc[t];
            const Packet &p = src[t].queue[v].front();
            size_t k = src[t].pos[v];
            *in[t].valid = 1;
            *in[t].vc = v;
            *in[t].first = k == 0;
            *in[t].last = k + 1 == p.flits.size();
            *in[t].data = p.flits[k];
        }
        top->eval();

        // Transfers of this cycle.
        bool progress = false;
        for (int t = 0; t < N_TILES; t++) {
            if (*out[t].valid && ((*out[t].ready >> *out[t].vc) & 1)) {
                fprintf(log, "R %lu %d %u %u %u %08x\n", cycle, t, *out[t].vc, *out[t].first,
                    *out[t].last, *out[t].data);
                delivered++;
                in_flight--;
                progress = true;
            }
            int v = inj_vc[t];
            if (v >= 0) {
                auto &q = src[t].queue[v];
                size_t &k = src[t].pos[v];
                if (k == 0) fprintf(log, "I %lu %d %d %08x\n", cycle, t, v, q.front().flits[0]);
                injected++;
                if (q.front().awaited) in_flight++;
                progress = true;
                if (++k == q.front().flits.size()) { q.pop_front(); k = 0; }
            }
        }

        top->sys_clk = 1;
        top->eval();
        top->sys_clk = 0;
        top->eval();

        bool all_injected = true;
        for (int t = 0; t < N_TILES; t++)
            if (!src[t].queue[0].empty() || !src[t].queue[1].empty()) all_injected = false;
        if (!done && all_injected && delivered >= expect) { done = true; done_at = cycle; }
        if (done && cycle >= done_at + drain) { cycle++; break; }
        // Idle while the network should be moving flits: nothing in, nothing out.
        if (!progress && (waiting || in_flight > 0) && !done) {
            if (++idle >= timeout) { status = "deadlock"; rc = 2; cycle++; break; }
        } else {
            idle = 0;
        }
    }
    fclose(log);
    printf("RESULT status=%s cycles=%lu done_at=%lu injected=%lu delivered=%lu expect=%lu "
        "packets=%lu error=%u\n", status, cycle, done_at, injected, delivered, expect, n_packets,
        (unsigned)top->noc_error);
    top->final();
    return rc;
}
