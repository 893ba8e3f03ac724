#!/usr/bin/env python3
"""Test-only generator of a workload Q data file (the Rust bench generates the real one).

Usage: gen_people.py N [SEED] > people.jsonl

One JSON object per line, ids 1..N in shuffled order:
{"id":N,"name":..,"last-name":..,"sex":"male"|"female","age":0..99,"salary":0..99999,"follows":[]}
"""
import json
import random
import sys

NAMES = ["Ivan", "Petr", "Sergei", "Oleg", "Yuri", "Dmitry", "Fedor", "Denis"]
LAST_NAMES = ["Ivanov", "Petrov", "Sidorov", "Kovalev", "Kuznetsov", "Voronoi"]


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: gen_people.py N [SEED] > people.jsonl")
    n = int(sys.argv[1])
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 42)
    people = [
        {
            "id": i,
            "name": rng.choice(NAMES),
            "last-name": rng.choice(LAST_NAMES),
            "sex": rng.choice(["male", "female"]),
            "age": rng.randrange(100),
            "salary": rng.randrange(100000),
            "follows": [],
        }
        for i in range(1, n + 1)
    ]
    rng.shuffle(people)
    out = sys.stdout
    for p in people:
        out.write(json.dumps(p, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
