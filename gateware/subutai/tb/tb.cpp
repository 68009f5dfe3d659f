// Closed-loop Verilator harness of N Subutai-HW engines (bench.v, see bench.py).
//
// Reads commands on stdin, one per line, and answers on stdout:
//   P <src_stall> <rep_stall> <seed> <trace_idle>
//        stall probabilities in 1/1000 per cycle: engine sources (stall<e>) and tile reply
//        ports (rep<t>_ready low); xorshift PRNG seed; trace_idle=1 adds E events.
//   I <at> <engine> <sync_id hex> <op> <core> <thread> <value hex> <reply>
//        queue a core request for engine's request port, offered at or after cycle <at>.
//        Requests of one (core, engine) pair enter in command order; among cores the harness
//        picks at random. An offered request stays offered until accepted.
//   R <max_cycles> <idle> <until_reply>
//        simulate until a reply reached a tile port (if until_reply; the cycle is completed), or
//        <idle> consecutive quiet cycles (nothing queued, every engine idle with no packet
//        pending, every FIFO empty),
//        or <max_cycles> more cycles. Prints the events of the run, then "D <cycle> <reason>"
//        with reason reply | idle | max.
//   S    print "C <engine> <counter> <value>" for every counter, then "D <cycle> stats".
//   Q    quit.
// Events (numbers decimal except ids/values, hex):
//   A <cycle> <engine> <sync> <op> <core> <thread> <value> <reply>   request accepted (sink)
//   O <cycle> <engine> <dest> <sync> <op> <core> <thread> <value>    packet emitted (source)
//   Y <cycle> <tile> <dest> <sync> <op> <core> <thread> <value>      reply delivered to tile
//   E <cycle> <engine>                                               engine's FSM back in IDLE
//   X <cycle> <engine>                                               packet to a missing tile
// <cycle> is the cycle of the transfer; cycle 0 is the first cycle after reset (the engines
// then spend n_ctrl + n_queue cycles building their free lists).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <vector>

#include "verilated.h"
#include "Vbench.h"

struct ReqPort { CData *valid, *ready; IData *sync_id; CData *op, *core; SData *thread; IData *value; CData *reply; };
struct RepPort { CData *valid, *ready; IData *sync_id; CData *op, *core; SData *thread; IData *value; };
struct InObs { CData *fire; IData *sync_id; CData *op, *core; SData *thread; IData *value; CData *reply; };
struct OutObs { CData *fire, *dest; IData *sync_id; CData *op, *core; SData *thread; IData *value; };

#include "ports.h"  // Generated: N_ENG, N_COUNTERS, counter_names, bind_ports().

struct Req {
    uint64_t at;
    uint32_t sync_id, value;
    unsigned op, core, thread, reply;
};

struct Engine {
    std::vector<std::deque<Req>> q = std::vector<std::deque<Req>>(256);  // Per core.
    std::vector<unsigned> active;  // Cores with queued requests.
    bool offering = false;
    unsigned offer_core = 0;
    size_t queued = 0;
};

static uint64_t rng_state = 88172645463325252ull;
static inline uint64_t rnd() {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

int main(int argc, char **argv) {
    static char outbuf[1 << 20];
    setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));

    auto ctx = std::make_unique<VerilatedContext>();
    ctx->commandArgs(argc, argv);
    auto top = std::make_unique<Vbench>(ctx.get());
    ReqPort req[N_ENG];
    RepPort rep[N_ENG];
    InObs in[N_ENG];
    OutObs out[N_ENG];
    CData *stall[N_ENG], *idle[N_ENG];
    IData *counters[N_ENG][N_COUNTERS];
    bind_ports(top.get(), req, rep, in, out, stall, idle, counters);

    top->sys_clk = 0;
    top->sys_rst = 1;
    for (int e = 0; e < N_ENG; e++) { *req[e].valid = 0; *rep[e].ready = 0; *stall[e] = 0; }
    for (int k = 0; k < 4; k++) {
        top->eval(); top->sys_clk = 1; top->eval(); top->sys_clk = 0;
    }
    top->sys_rst = 0;
    top->eval();

    std::vector<Engine> eng(N_ENG);
    unsigned src_stall = 0, rep_stall = 0;
    bool trace_idle = false;
    bool was_idle[N_ENG];
    for (int e = 0; e < N_ENG; e++) was_idle[e] = false;
    uint64_t cycle = 0;

    char line[512];
    while (fgets(line, sizeof(line), stdin)) {
        char cmd = line[0];
        if (cmd == 'Q') break;
        if (cmd == 'P') {
            unsigned long long seed;
            int tr;
            if (sscanf(line + 1, "%u %u %llu %d", &src_stall, &rep_stall, &seed, &tr) != 4) {
                fprintf(stderr, "tb: bad P command: %s", line); return 1;
            }
            rng_state = 88172645463325252ull ^ (seed * 0x9E3779B97F4A7C15ull);
            if (!rng_state) rng_state = 1;
            trace_idle = tr != 0;
        } else if (cmd == 'I') {
            Req r;
            unsigned e;
            unsigned long long at;
            if (sscanf(line + 1, "%llu %u %x %u %u %u %x %u", &at, &e, &r.sync_id, &r.op, &r.core,
                       &r.thread, &r.value, &r.reply) != 8 || e >= N_ENG || r.core > 255) {
                fprintf(stderr, "tb: bad I command: %s", line); return 1;
            }
            r.at = at;
            Engine &E = eng[e];
            if (E.q[r.core].empty()) E.active.push_back(r.core);
            E.q[r.core].push_back(r);
            E.queued++;
        } else if (cmd == 'S') {
            for (int e = 0; e < N_ENG; e++)
                for (int k = 0; k < N_COUNTERS; k++)
                    printf("C %d %s %u\n", e, counter_names[k], (unsigned)*counters[e][k]);
            printf("D %llu stats\n", (unsigned long long)cycle);
            fflush(stdout);
        } else if (cmd == 'R') {
            unsigned long long max_cycles;
            unsigned idle_limit, until_reply;
            if (sscanf(line + 1, "%llu %u %u", &max_cycles, &idle_limit, &until_reply) != 3) {
                fprintf(stderr, "tb: bad R command: %s", line); return 1;
            }
            uint64_t end = cycle + max_cycles;
            unsigned quiet_cycles = 0;
            const char *reason = "max";
            while (cycle < end) {
                // Offer requests.
                bool future = false;
                for (int e = 0; e < N_ENG; e++) {
                    Engine &E = eng[e];
                    if (!E.offering && !E.active.empty()) {
                        // Pick a random core among those whose next request is due.
                        unsigned n = E.active.size(), start = rnd() % n;
                        for (unsigned k = 0; k < n; k++) {
                            unsigned c = E.active[(start + k) % n];
                            if (E.q[c].front().at <= cycle) { E.offering = true; E.offer_core = c; break; }
                        }
                    }
                    if (E.offering) {
                        const Req &r = E.q[E.offer_core].front();
                        *req[e].valid = 1;
                        *req[e].sync_id = r.sync_id; *req[e].op = r.op; *req[e].core = r.core;
                        *req[e].thread = r.thread; *req[e].value = r.value; *req[e].reply = r.reply;
                    } else {
                        *req[e].valid = 0;
                        if (E.queued) future = true;
                    }
                    *stall[e] = src_stall && (rnd() % 1000 < src_stall);
                    *rep[e].ready = !(rep_stall && (rnd() % 1000 < rep_stall));
                }
                top->eval();

                bool got_reply = false;
                for (int e = 0; e < N_ENG; e++) {
                    if (*in[e].fire)
                        printf("A %llu %d %x %u %u %u %x %u\n", (unsigned long long)cycle, e,
                            *in[e].sync_id, *in[e].op, *in[e].core, *in[e].thread, *in[e].value,
                            *in[e].reply);
                    if (*out[e].fire) {
                        printf("O %llu %d %u %x %u %u %u %x\n", (unsigned long long)cycle, e,
                            *out[e].dest, *out[e].sync_id, *out[e].op, *out[e].core,
                            *out[e].thread, *out[e].value);
                        if (*out[e].dest >= N_ENG) printf("X %llu %d\n", (unsigned long long)cycle, e);
                    }
                    if (*rep[e].valid && *rep[e].ready) {
                        printf("Y %llu %d %u %x %u %u %u %x\n", (unsigned long long)cycle, e,
                            e, *rep[e].sync_id, *rep[e].op, *rep[e].core, *rep[e].thread,
                            *rep[e].value);
                        got_reply = true;
                    }
                    if (trace_idle) {
                        bool now = *idle[e];
                        if (now && !was_idle[e]) printf("E %llu %d\n", (unsigned long long)cycle, e);
                        was_idle[e] = now;
                    }
                    Engine &E = eng[e];
                    if (E.offering && *req[e].ready) {
                        auto &q = E.q[E.offer_core];
                        q.pop_front();
                        E.queued--;
                        E.offering = false;
                        if (q.empty()) {
                            for (size_t k = 0; k < E.active.size(); k++)
                                if (E.active[k] == E.offer_core) {
                                    E.active[k] = E.active.back(); E.active.pop_back(); break;
                                }
                        }
                    }
                }
                bool quiet = top->quiet;
                bool any_offer = false;
                for (int e = 0; e < N_ENG; e++) if (eng[e].offering || eng[e].queued) any_offer = true;
                (void)future;

                top->sys_clk = 1;
                top->eval();
                top->sys_clk = 0;
                top->eval();
                cycle++;

                if (until_reply && got_reply) { reason = "reply"; break; }
                if (quiet && !any_offer) {
                    if (++quiet_cycles >= idle_limit) { reason = "idle"; break; }
                } else {
                    quiet_cycles = 0;
                }
            }
            printf("D %llu %s\n", (unsigned long long)cycle, reason);
            fflush(stdout);
        } else if (cmd == '\n' || cmd == '#') {
            continue;
        } else {
            fprintf(stderr, "tb: unknown command: %s", line);
            return 1;
        }
    }
    top->final();
    return 0;
}
