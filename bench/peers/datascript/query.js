#!/usr/bin/env node
// Workload Q (queries and transactions, seed 003 / seed 001) on Datascript 1.8.1, in memory.
//
// Usage (see bench/peers/README.md):
//   node query.js DATA.jsonl WORK_DIR [SECONDS] [TASKS]
//     WORK_DIR is accepted for a uniform command line and unused (in-memory databases).
// Prints one `RESULT {json}` line per task on stdout.
//
// Datascript's JS API keys attributes by string ("name"), while the benchmark's query texts
// use keywords (:name) and :sex holds keyword values (:male). To run the exact query texts, the
// data must hold real keywords: `edn()` below gets keyword (and map) values out of Datascript's
// own EDN reader through a query function, and transactions use the list form
// [":db/add", e, <keyword>, v], which the JS API passes through unchanged.
"use strict";

const fs = require("fs");
const path = require("path");

function loadDatascript() {
  const local = path.join(__dirname, "..", ".cache", "datascript", "node_modules", "datascript");
  try {
    return require(local);
  } catch (_) {
    return require("datascript");
  }
}
const d = loadDatascript();

// The value of an EDN literal, read by Datascript (a ClojureScript value, not a JS one).
function edn(text) {
  let out;
  d.q(`[:find ?r . :in ?f :where [(ground ${text}) ?k] [(?f ?k) ?r]]`, (k) => {
    out = k;
    return 1;
  });
  return out;
}

// Seed 003's Datascript schema.
const SCHEMA = edn(
  "{:follows {:db/valueType :db.type/ref :db/cardinality :db.cardinality/many}" +
    " :name {:db/index true} :salary {:db/index true}}"
);
const ATTRS = ["name", "last-name", "sex", "age", "salary"];
const KW = Object.fromEntries(ATTRS.map((a) => [a, edn(":" + a)]));
const SEX = { male: edn(":male"), female: edn(":female") };

const QUERIES = {
  q1: ['[:find ?e :where [?e :name "Ivan"]]'],
  q2: ['[:find ?e ?a :where [?e :name "Ivan"] [?e :age ?a]]'],
  "q2-switch": ['[:find ?e ?a :where [?e :age ?a] [?e :name "Ivan"]]'],
  q3: ['[:find ?e ?a :where [?e :name "Ivan"] [?e :age ?a] [?e :sex :male]]'],
  q4: ['[:find ?e ?l ?a :where [?e :name "Ivan"] [?e :last-name ?l] [?e :age ?a] [?e :sex :male]]'],
  q5: ['[:find ?e1 ?l ?a :where [?e :name "Ivan"] [?e :age ?a] [?e1 :age ?a] [?e1 :last-name ?l]]'],
  qpred1: ["[:find ?e ?s :where [?e :salary ?s] [(> ?s 50000)]]"],
  qpred2: ["[:find ?e ?s :in $ ?min_s :where [?e :salary ?s] [(> ?s ?min_s)]]", 50000],
  "lookup-q": ['[:find ?l :with ?e :where [?e :name "Ivan"] [?e :last-name ?l]]'],
};
const WRITE_TASKS = ["init", "add-1", "add-5", "add-all", "retract-5"];
const QUERY_TASKS = ["q1", "q2", "q2-switch", "q3", "q4", "q5", "qpred1", "qpred2", "lookup-q", "lookup-raw"];

function die(code, msg) {
  process.stderr.write(`ERROR: ${msg}\n`);
  process.exit(code);
}

function result(obj) {
  process.stdout.write("RESULT " + JSON.stringify(obj) + "\n");
}

function nowMs() {
  return Number(process.hrtime.bigint()) / 1e6;
}

function median(xs) {
  const v = [...xs].sort((a, b) => a - b);
  const n = v.length;
  if (n === 0) return null;
  const m = n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return Math.round(m * 1e6) / 1e6;
}

function readPeople(file) {
  const people = [];
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const p = JSON.parse(line);
    const sex = SEX[p.sex];
    if (sex === undefined) die(65, `bad sex ${JSON.stringify(p.sex)} for id ${p.id}`);
    // `follows` is accepted and ignored: the Q tasks use the five scalar attributes.
    people.push({ id: p.id, name: p.name, "last-name": p["last-name"], sex, age: p.age, salary: p.salary });
  }
  return people;
}

// Same timing rules as clj/common.clj bench-query and datalith-bench's own peers: warm up for
// two thirds of `seconds` (at least 3 calls; 2 s at the default 3 s, Datascript's own
// benchmark's warm-up), then time each call for `seconds`.
function benchQuery(seconds, f) {
  const warmEnd = nowMs() + (2000 * seconds) / 3;
  for (let i = 0; i < 3 || nowMs() < warmEnd; i++) f();
  const end = nowMs() + 1000 * seconds;
  const times = [];
  let r;
  do {
    const t0 = nowMs();
    r = f();
    times.push(nowMs() - t0);
  } while (nowMs() < end);
  return { median_ms: median(times), runs: times.length, count: r.length };
}

// clj/common.clj bench-write: untimed setup, timed work, untimed count; one warm-up run.
function benchWrite(seconds, setup, f, countFn) {
  const once = () => {
    const st = setup();
    const t0 = nowMs();
    const st2 = f(st);
    const dt = nowMs() - t0;
    return [dt, countFn(st2)];
  };
  once();
  const end = nowMs() + 1000 * seconds;
  const times = [];
  let c;
  do {
    const [dt, cnt] = once();
    times.push(dt);
    c = cnt;
  } while (nowMs() < end);
  return { median_ms: median(times), runs: times.length, count: c };
}

function personDatoms(db) {
  let n = 0;
  for (const a of ATTRS) n += d.datoms(db, ":aevt", KW[a]).length;
  return n;
}

function addOps(p) {
  return ATTRS.map((a) => [":db/add", p.id, KW[a], p[a]]);
}

// Seeded shuffle (mulberry32 + Fisher-Yates), so retract-5's order is reproducible.
function shuffled(xs, seed) {
  let s = seed >>> 0;
  const rnd = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const v = [...xs];
  for (let i = v.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [v[i], v[j]] = [v[j], v[i]];
  }
  return v;
}

function lookupRaw(db) {
  const out = [];
  for (const datom of d.datoms(db, ":avet", KW.name, "Ivan")) {
    for (const x of d.datoms(db, ":eavt", datom.e, KW["last-name"])) out.push(x.v);
  }
  return out;
}

function runTask(task, people, seconds) {
  const allOps = people.flatMap(addOps);
  const empty = () => d.empty_db(SCHEMA);
  switch (task) {
    case "init": {
      const datoms = people.flatMap((p) => ATTRS.map((a) => [p.id, KW[a], p[a]]));
      return benchWrite(seconds, () => null, () => d.init_db(datoms, SCHEMA), personDatoms);
    }
    case "add-1":
      return benchWrite(
        seconds,
        empty,
        (db) => {
          for (const p of people) for (const op of addOps(p)) db = d.db_with(db, [op]);
          return db;
        },
        personDatoms
      );
    case "add-5":
      return benchWrite(
        seconds,
        empty,
        (db) => {
          for (const p of people) db = d.db_with(db, addOps(p));
          return db;
        },
        personDatoms
      );
    case "add-all":
      return benchWrite(seconds, empty, (db) => d.db_with(db, allOps), personDatoms);
    case "retract-5":
      return benchWrite(
        seconds,
        () => {
          const db = d.db_with(empty(), allOps);
          const eids = shuffled(d.datoms(db, ":aevt", KW.name).map((x) => x.e), 42);
          return { db, eids };
        },
        ({ db, eids }) => {
          for (const e of eids) db = d.db_with(db, [[":db/retractEntity", e]]);
          return db;
        },
        personDatoms
      );
    default:
      die(64, `unknown task ${task}`);
  }
}

function main() {
  const [data, work, secondsArg, tasksArg] = process.argv.slice(2);
  if (!data || !work) die(64, "usage: query.js DATA.jsonl WORK_DIR [SECONDS] [TASKS]");
  const seconds = secondsArg === undefined ? 5 : Number(secondsArg);
  if (!(seconds > 0)) die(64, `SECONDS must be a positive number, got '${secondsArg}'`);
  const all = [...WRITE_TASKS, ...QUERY_TASKS];
  const tasks = !tasksArg || tasksArg === "all" ? all : tasksArg.split(",");
  for (const t of tasks) if (!all.includes(t)) die(64, `unknown task '${t}'; known: ${all.join(",")}`);

  const people = readPeople(data);
  console.log(`datascript query: ${people.length} people from ${data} seconds ${seconds}`);
  for (const t of tasks.filter((t) => WRITE_TASKS.includes(t))) {
    result({ peer: "datascript", workload: "Q", task: t, ...runTask(t, people, seconds) });
  }
  const qs = tasks.filter((t) => QUERY_TASKS.includes(t));
  if (qs.length) {
    const db = d.db_with(d.empty_db(SCHEMA), people.flatMap(addOps));
    console.log(`datascript: query db loaded, ${personDatoms(db)} person datoms`);
    for (const t of qs) {
      const r =
        t === "lookup-raw"
          ? benchQuery(seconds, () => lookupRaw(db))
          : benchQuery(seconds, () => d.q(QUERIES[t][0], db, ...QUERIES[t].slice(1)));
      result({ peer: "datascript", workload: "Q", task: t, ...r });
    }
  }
}

main();
