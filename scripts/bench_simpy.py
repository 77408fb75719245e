#!/usr/bin/python3
"""The closed tandem of `vqsim bench tandem` written in SimPy 3, for a speed comparison.

Same network: `customers` jobs cycling through `stations` single-server FCFS stations with
exponential service, means 1.0, 1.25, ... µs. Prints cycles per wall-clock second (and the
simulated throughput, as a sanity check against exact MVA) as JSON.
"""
import argparse
import json
import random
import time

import simpy


def run(customers, stations, cycles, seed):
    rng = random.Random(seed)
    env = simpy.Environment()
    servers = [simpy.Resource(env, capacity=1) for _ in range(stations)]
    means = [1.0 + 0.25 * k for k in range(stations)]
    state = {"done": 0, "response_sum": 0.0}
    finished = env.event()

    def customer():
        while True:
            start = env.now
            for k in range(stations):
                with servers[k].request() as req:
                    yield req
                    yield env.timeout(rng.expovariate(1.0 / means[k]))
            state["done"] += 1
            state["response_sum"] += env.now - start
            if state["done"] == cycles and not finished.triggered:
                finished.succeed()

    for _ in range(customers):
        env.process(customer())
    t0 = time.perf_counter()
    env.run(until=finished)
    wall = time.perf_counter() - t0
    return {
        "wall_s": wall,
        "cycles": cycles,
        "cycles_per_s": cycles / wall,
        "throughput_per_s": cycles / env.now * 1e6,  # time unit is µs
        "response_mean_ns": state["response_sum"] / cycles * 1e3,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--customers", type=int, default=32)
    ap.add_argument("--stations", type=int, default=5)
    ap.add_argument("--cycles", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    print(json.dumps({"simpy_version": simpy.__version__, **run(a.customers, a.stations, a.cycles, a.seed)}))


if __name__ == "__main__":
    main()
