;; Workload W, mixed read/write phase, on the real Datalevin (BENCHMARKS.md "W").
;;
;; Usage (see bench/peers/README.md):
;;   mixed.clj CONDITION DB_DIR ITERATIONS SEED CSV [WINDOW] [KEY_MAX] [MAX_SECS] [READ] [WARMUP] [WARMUP_SECS]
;;     CONDITION   datalevin-default | datalevin-async | datalevin-kv | datalevin-kv-async
;;     DB_DIR      the database left by write.clj (a Datalog one for datalevin-default/-async,
;;                 a KV one for datalevin-kv/-kv-async)
;;     ITERATIONS  number of (read, write) pairs
;;     SEED        seed of the keys: SplitMix64 of SEED ^ MIXED_STREAM, the stream datalith-bench
;;                 draws Datalith's mixed keys from (bench/peers/clj/common.clj `mixed-keys`)
;;     CSV         per-window rows of the writes ("-" for none)
;;     WINDOW      writes per CSV row, default 10000
;;     KEY_MAX     keys are uniform in 1..KEY_MAX, default 2*ITERATIONS
;;     MAX_SECS    stop after this many seconds (0 or absent: no cap); the result then has the
;;                 iterations done and `:capped true`
;;     READ        query (default): Datalog `d/q` (KV: `get-value`); raw: `datoms` on AVE then EAV
;;     WARMUP      untimed iterations first (reads, and upserts of keys already present, so the
;;                 count is unchanged), default 0; WARMUP_SECS caps them (default 10)
;; Each iteration reads the value of key K, then upserts {:k K :v new-uuid} as its own call.
;; Prints `RESULT {json}`; exits 3 when the final count is wrong.
(load-file (str (.getParent (java.io.File. ^String *file*)) "/../clj/common.clj"))

(ns peers.datalevin.mixed
  (:require [datalevin.core :as d]
            [peers.common :as c])
  (:import [java.util UUID SplittableRandom HashSet]
           [java.util.concurrent Semaphore]))

(def schema {:k {:db/valueType :db.type/long :db/unique :db.unique/identity}
             :v {:db/valueType :db.type/string}})
(def kv-dbi "kv")
(def max-in-flight 1000)
(def mapsize-mb 16384)

(def read-q '[:find ?v . :in $ ?k :where [?e :k ?k] [?e :v ?v]])

(defn- warm-up!
  "Untimed: up to `n` iterations (at most `secs` seconds) of a read and, when the key is
   present, an upsert of it (the count is unchanged), through the same calls as the timed
   loop; waits for every async call. Returns the iterations done."
  [{:keys [kv? async? conn kv read!]} seed key-max n secs]
  (let [next-key (c/mixed-keys (bit-xor (long seed) 0x7761726d) key-max)
        vals     (c/splitmix (bit-xor (long seed) 0x7761726d))
        sem      (Semaphore. max-in-flight)
        end      (+ (System/nanoTime) (long (* secs 1e9)))]
    (loop [i 0]
      (if (and (< i n) (< (System/nanoTime) end))
        (let [k (next-key)]
          (when (some? (read! k))
            (let [v   (c/splitmix-uuid! vals)
                  txs (if kv? [[:put k v]] [{:k k :v v}])]
              (if async?
                (do (.acquire sem)
                    (let [cb (fn [_] (.release sem))]
                      (if kv?
                        (d/transact-kv-async kv kv-dbi txs :long :string cb)
                        (d/transact-async conn txs nil cb))))
                (if kv?
                  (d/transact-kv kv kv-dbi txs :long :string)
                  (d/transact! conn txs)))))
          (recur (inc i)))
        (do (.acquire sem max-in-flight)
            (.release sem max-in-flight)
            i)))))

(defn run-mixed [condition dir target seed csv window key-max max-secs level warmup warmup-secs]
  (when-not (.exists (java.io.File. (str dir)))
    (c/die! 64 "DB_DIR" dir "does not exist: run write.clj first"))
  (let [kv?    (case condition
                 ("datalevin-default" "datalevin-async") false
                 ("datalevin-kv" "datalevin-kv-async") true
                 (c/die! 64 "unknown condition" condition))
        async? (.endsWith ^String condition "-async")
        conn   (when-not kv? (d/get-conn dir schema {:kv-opts {:mapsize mapsize-mb}}))
        kv     (when kv? (doto (d/open-kv dir {:mapsize mapsize-mb}) (d/open-dbi kv-dbi)))
        count! (fn [] (if kv? (d/entries kv kv-dbi) (d/count-datoms (d/db conn) nil :k nil)))
        read!  (cond
                 kv?              (fn [k] (d/get-value kv kv-dbi k :long :string))
                 (= level "raw")  (fn [k]
                                    (let [db (d/db conn)]
                                      (when-let [dt (first (d/datoms db :ave :k k))]
                                        (:v (first (d/datoms db :eav (:e dt) :v))))))
                 :else            (fn [k] (d/q read-q (d/db conn) k)))
        warmed (warm-up! {:kv? kv? :async? async? :conn conn :kv kv :read! read!}
                         seed key-max warmup warmup-secs)
        count0 (count! )
        next-key (c/mixed-keys seed key-max)
        vals   (c/splitmix (bit-xor (long seed) 0x76616c73))
        meter  (c/new-meter window)
        sem    (Semaphore. max-in-flight)
        failed (atom nil)
        ;; keys this run wrote, to know which writes create a new entity
        written (HashSet.)
        found  (volatile! 0)
        fresh  (volatile! 0)
        read-ns (volatile! 0)
        iterations-done (volatile! 0)
        cpu0   (c/cpu-times)
        t-start (System/nanoTime)]
    (c/log! "datalevin mixed:" condition "dir" dir "iterations" target "seed" seed
            "key-max" key-max "count at start" count0)
    (c/meter-start! meter)
    (loop [done 0]
      (if (or (>= done target)
              (and (pos? max-secs) (>= (- (System/nanoTime) t-start) (* max-secs 1e9))))
        (vreset! iterations-done done)
        (do
          (when @failed (c/die! 1 "transaction failed:" (str @failed)))
          (let [k  (next-key)
                r0 (System/nanoTime)
                v  (read! k)
                _  (vswap! read-ns + (- (System/nanoTime) r0))]
            (if (some? v)
              (vswap! found inc)
              (when-not (.contains written k) (vswap! fresh inc)))
            (.add written k)
            (let [v   (c/splitmix-uuid! vals)
                  txs (if kv? [[:put k v]] [{:k k :v v}])]
              (if async?
                (do
                  (.acquire sem)
                  (let [t0 (System/nanoTime)
                        cb (fn [res]
                             (if (instance? Throwable res)
                               (reset! failed res)
                               (c/record-commit! meter 1 (- (System/nanoTime) t0)))
                             (.release sem))]
                    (if kv?
                      (d/transact-kv-async kv kv-dbi txs :long :string cb)
                      (d/transact-async conn txs nil cb))
                    (c/record-call! meter (- (System/nanoTime) t0))))
                (let [t0 (System/nanoTime)]
                  (if kv?
                    (d/transact-kv kv kv-dbi txs :long :string)
                    (d/transact! conn txs))
                  (let [dt (- (System/nanoTime) t0)]
                    (c/record-call! meter dt)
                    (c/record-commit! meter 1 dt))))))
          (recur (inc done)))))
    (.acquire sem max-in-flight)
    (.release sem max-in-flight)
    (when-let [e @failed] (c/die! 1 "transaction failed:" (str e)))
    (let [iterations @iterations-done
          wall     (/ (- (System/nanoTime) t-start) 1e9)
          rows     (c/meter-finish! meter)
          cpu      (c/cpu-delta cpu0 (c/cpu-times))
          n        (count!)
          expected (+ count0 @fresh)]
      (c/write-csv! csv rows)
      (if kv? (d/close-kv kv) (d/close conn))
      (c/result! (array-map
                  :peer "datalevin" :workload "W" :phase "mixed" :condition condition
                  :read_level level :warmup_iterations warmed
                  :iterations iterations :capped (< iterations target)
                  :seed seed :key_max key-max
                  :seconds wall :reads_found @found
                  :mean_read_ms (if (pos? iterations) (/ @read-ns iterations 1e6) 0.0)
                  :user_s (:user_s cpu) :sys_s (:sys_s cpu) :peak_rss_kb (c/peak-rss-kb)
                  :count n :expected_count expected :csv csv))
      (when (not= n expected)
        (c/die! 3 "count check failed: expected" expected "found" n)))))

(let [[condition dir iterations seed csv window key-max max-secs level warmup warmup-secs]
      *command-line-args*]
  (when-not (and condition dir iterations seed csv)
    (c/die! 64 "usage: mixed.clj CONDITION DB_DIR ITERATIONS SEED CSV [WINDOW] [KEY_MAX] [MAX_SECS] [READ] [WARMUP] [WARMUP_SECS]"))
  (when-not (#{nil "query" "raw"} level)
    (c/die! 64 "READ must be query or raw, got" level))
  (let [iterations (c/parse-long-arg "ITERATIONS" iterations)]
    (run-mixed condition dir iterations
               (c/parse-long-arg "SEED" seed)
               csv
               (if window (c/parse-long-arg "WINDOW" window) 10000)
               (if key-max (c/parse-long-arg "KEY_MAX" key-max) (* 2 iterations))
               (if max-secs (Double/parseDouble max-secs) 0.0)
               (or level "query")
               (if warmup (c/parse-long-arg "WARMUP" warmup) 0)
               (if warmup-secs (c/parse-double-arg "WARMUP_SECS" warmup-secs) 10.0)))
  (shutdown-agents)
  (System/exit 0))
