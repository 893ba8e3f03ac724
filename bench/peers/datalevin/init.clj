;; Workload W, bulk-load phase, on the real Datalevin (BENCHMARKS.md "W"): `init-db` of the
;; 1M entities {:k long unique identity, :v 36-char UUID string} into an empty directory.
;;
;; Usage (see bench/peers/README.md; bench/peers/run.sh sets up java and the classpath):
;;   init.clj DB_DIR TOTAL [WARMUP]
;;     DB_DIR  must not exist yet (or be empty)
;;     TOTAL   entities (keys 2, 4, ..., 2*TOTAL; entity ids 1..TOTAL)
;;     WARMUP  entities loaded first into DB_DIR-warmup and deleted (JIT warm-up), default 20000
;; Timed: from the `init-db` call until `close-db` returned. The datoms (d/datom objects, UUID
;; strings included) are built before the clock starts. The count check reopens the directory
;; afterwards (untimed). Prints `RESULT {json}`; exits 3 when the count is wrong.
(load-file (str (.getParent (java.io.File. ^String *file*)) "/../clj/common.clj"))

(ns peers.datalevin.init
  (:require [datalevin.core :as d]
            [peers.common :as c])
  (:import [java.util UUID]))

(def schema {:k {:db/valueType :db.type/long :db/unique :db.unique/identity}
             :v {:db/valueType :db.type/string}})

;; Map sized up front (as write.clj does) so the load does not measure map resizing; the
;; durability flags stay Datalevin's defaults (init-db loads with nosync and syncs at the end).
(def opts {:kv-opts {:mapsize 16384}})

(defn- datoms-of [total]
  (let [out (java.util.ArrayList. (int (* 2 total)))]
    (dotimes [i total]
      (let [e (inc i)]
        (.add out (d/datom e :k (long (* 2 e))))
        (.add out (d/datom e :v (str (UUID/randomUUID))))))
    (vec out)))

(defn- load! [dir datoms]
  (d/close-db (d/init-db datoms dir schema opts)))

(defn run-init [dir total warmup]
  (when (pos? warmup)
    (let [wdir (str dir "-warmup")]
      (c/delete-tree! wdir)
      (load! wdir (datoms-of warmup))
      (c/delete-tree! wdir)))
  (let [p0     (System/nanoTime)
        datoms (datoms-of total)
        prep   (/ (- (System/nanoTime) p0) 1e9)
        _      (c/log! "datalevin init: dir" dir "entities" total "datoms" (count datoms)
                       "prepared in" prep "s")
        cpu0   (c/cpu-times)
        t0     (System/nanoTime)
        _      (load! dir datoms)
        secs   (/ (- (System/nanoTime) t0) 1e9)
        cpu1   (c/cpu-times)
        conn   (d/get-conn dir schema opts)
        db     (d/db conn)
        n-k    (d/count-datoms db nil :k nil)
        n-v    (d/count-datoms db nil :v nil)
        last-k (d/q '[:find ?k . :in $ ?e :where [?e :k ?k]] db total)]
    (d/close conn)
    (let [ok (and (= n-k total) (= n-v total) (= last-k (* 2 total)))]
      (c/result! (array-map
                  :peer "datalevin" :workload "W" :phase "init" :condition "datalevin-init"
                  :entities total :datoms (* 2 total)
                  :seconds secs :prep_seconds prep
                  :user_s (:user_s (c/cpu-delta cpu0 cpu1)) :sys_s (:sys_s (c/cpu-delta cpu0 cpu1))
                  :peak_rss_kb (c/peak-rss-kb)
                  :count n-k :count_v n-v :expected_count total :count_ok ok))
      (when-not ok
        (c/die! 3 "count check failed: expected" total ":k and :v datoms, found" n-k "and" n-v
                "; key of entity" total "is" last-k)))))

(let [[dir total warmup] *command-line-args*]
  (when-not (and dir total)
    (c/die! 64 "usage: init.clj DB_DIR TOTAL [WARMUP]"))
  (run-init dir
            (c/parse-long-arg "TOTAL" total)
            (if warmup (c/parse-long-arg "WARMUP" warmup) 20000))
  (shutdown-agents)
  (System/exit 0))
