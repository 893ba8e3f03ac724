;; Workload W, pure write phase, on the real Datalevin (BENCHMARKS.md "W").
;;
;; Usage (see bench/peers/README.md; bench/peers/run.sh sets up java and the classpath):
;;   write.clj CONDITION DB_DIR TOTAL BATCH CSV [WINDOW] [MAX_SECS] [WARMUP] [WARMUP_SECS] [SEED]
;;     CONDITION  datalevin-default | datalevin-async | datalevin-kv | datalevin-kv-async |
;;                datalevin-remote (`datalevin-default` through Datalevin's server: DB_DIR is then
;;                `dtlv://USER:PASSWORD@HOST:PORT/NAME`, a database of a running server)
;;     DB_DIR     must not exist yet (or be empty): the run starts from an empty database
;;     TOTAL      number of writes (keys 2, 4, ..., 2*TOTAL ascending)
;;     BATCH      writes per transaction call (1, 10, 100, 1000)
;;     CSV        output path for the per-window rows ("-" for none)
;;     WINDOW     writes per CSV row, default 10000
;;     MAX_SECS   stop submitting after this many seconds (0 or absent: no cap); a capped run
;;                reports the writes it made (`:capped true`) and checks the count of those
;;     WARMUP     untimed writes first, of the same condition and batch, into DB_DIR-warmup
;;                (deleted after), so the timed run starts on a warm JVM; default 0
;;     WARMUP_SECS cap on the warm-up's seconds, default 10
;;     SEED       seed of the values (SplitMix64 UUIDs, as datalith-bench draws them), default
;;                20250402; the warm-up uses SEED ^ 0x7761726d, as datalith-bench's does
;; Prints `RESULT {json}` at the end; exits 3 when the final count is wrong.
(load-file (str (.getParent (java.io.File. ^String *file*)) "/../clj/common.clj"))

(ns peers.datalevin.write
  (:require [clojure.string :as str]
            [datalevin.client :as client]
            [datalevin.core :as d]
            [peers.common :as c])
  (:import [java.util UUID]
           [java.util.concurrent Semaphore]))

;; Datalog schema of workload W.
(def schema {:k {:db/valueType :db.type/long :db/unique :db.unique/identity}
             :v {:db/valueType :db.type/string}})

;; KV conditions write into this DBI with 8-byte long keys and string values.
(def kv-dbi "kv")

;; BENCHMARKS.md: at most 1000 calls in flight for the async conditions.
(def max-in-flight 1000)

;; Map size in MiB, sized up front so the run does not measure Datalevin's map resizing;
;; durability flags are left at Datalevin's defaults (durable, fsync per commit).
(def mapsize-mb 16384)


(defn- remote? [dir] (str/starts-with? (str dir) "dtlv://"))

(defn- open-store [condition dir]
  (when (not= (= condition "datalevin-remote") (remote? dir))
    (c/die! 64 "datalevin-remote, and only it, takes a dtlv:// URI as DB_DIR; got" condition dir))
  (case condition
    ("datalevin-default" "datalevin-async" "datalevin-remote")
    {:conn   (d/get-conn dir schema {:kv-opts {:mapsize mapsize-mb}})
     :remote (remote? dir)}
    ("datalevin-kv" "datalevin-kv-async")
    (let [kv (d/open-kv dir {:mapsize mapsize-mb})]
      (d/open-dbi kv kv-dbi)
      {:kv kv})
    (c/die! 64 "unknown condition" condition
            "(expected datalevin-default, datalevin-async, datalevin-kv, datalevin-kv-async,"
            "datalevin-remote)")))

(defn- count-store
  "Entities (Datalog: datoms of :k, one per entity) or KV entries now in the store. Over the
   server `(count ?e)` of `:k`, as dl-remote counts (the 1.2.8 client's `count-datoms` asks
   the server for `:a-size`, which this server lacks)."
  [{:keys [conn kv remote]}]
  (cond
    remote (or (d/q '[:find (count ?e) . :where [?e :k]] (d/db conn)) 0)
    conn   (d/count-datoms (d/db conn) nil :k nil)
    :else (d/entries kv kv-dbi)))

(defn- close-store [{:keys [conn kv]}]
  (when conn (d/close conn))
  (when kv (d/close-kv kv)))

(defn- drop-store!
  "Deletes a store: its directory, or over the server its database (through Datalevin's admin
   client; the server keeps a database open after its last connection, so closed first)."
  [dir]
  (if (remote? dir)
    (let [i   (str/last-index-of dir "/")
          cl  (client/new-client (subs dir 0 i))
          db  (subs dir (inc i))]
      (try
        (when (some #{db} (client/list-databases cl))
          (client/close-database cl db)
          (client/drop-database cl db))
        (catch Exception e (c/log! "datalevin-remote: drop-database" db "failed:" (.getMessage e)))
        (finally (client/disconnect cl))))
    (c/delete-tree! dir)))

(defn- batch-of
  "One transaction's data: `n` records with keys first-key, first-key+2, ..., values the next
   UUIDs of the seeded stream `vals`."
  [kv? vals first-key n]
  (let [ks (range first-key (+ first-key (* 2 n)) 2)]
    (if kv?
      (mapv (fn [k] [:put (long k) (c/splitmix-uuid! vals)]) ks)
      (mapv (fn [k] {:k (long k) :v (c/splitmix-uuid! vals)}) ks))))

(defn run-write
  "The pure write. With `report?` false (the warm-up) it prints nothing, writes no CSV and
   checks nothing."
  [condition dir total batch csv window max-secs report? seed]
  (let [store  (open-store condition dir)
        kv?    (some? (:kv store))
        async? (.endsWith ^String condition "-async")
        meter  (c/new-meter window)
        sem    (Semaphore. max-in-flight)
        failed (atom nil)
        vals   (c/splitmix seed)
        ;; Submits one call; for async the commit is recorded by the callback.
        submit (fn [txs]
                 (let [n  (count txs)
                       t0 (System/nanoTime)]
                   (if async?
                     (do
                       ;; waiting for a slot is not part of the call or commit latency
                       (.acquire sem)
                       (let [t0 (System/nanoTime)
                             cb (fn [res]
                                  (if (instance? Throwable res)
                                    (reset! failed res)
                                    (c/record-commit! meter n (- (System/nanoTime) t0)))
                                  (.release sem))]
                         (if kv?
                           (d/transact-kv-async (:kv store) kv-dbi txs :long :string cb)
                           (d/transact-async (:conn store) txs nil cb))
                         (c/record-call! meter (- (System/nanoTime) t0))))
                     (do
                       (if kv?
                         (d/transact-kv (:kv store) kv-dbi txs :long :string)
                         (d/transact! (:conn store) txs))
                       (let [dt (- (System/nanoTime) t0)]
                         (c/record-call! meter dt)
                         (c/record-commit! meter n dt))))))
        cpu0   (c/cpu-times)]
    (when report?
      (c/log! "datalevin write:" condition "dir" dir "total" total "batch" batch "window" window))
    (c/meter-start! meter)
    (let [t0      (System/nanoTime)
          cap-ns  (when (pos? max-secs) (long (* max-secs 1e9)))
          written (loop [written 0]
                    (if (and (< written total) (nil? @failed)
                             (or (nil? cap-ns) (< (- (System/nanoTime) t0) cap-ns)))
                      (let [n (min batch (- total written))]
                        ;; keys are the even integers 2, 4, ..., 2*total, ascending
                        (submit (batch-of kv? vals (* 2 (inc written)) n))
                        (recur (+ written n)))
                      written))]
      ;; wait until every async call has completed
      (.acquire sem max-in-flight)
      (.release sem max-in-flight)
      (when-let [e @failed] (c/die! 1 "transaction failed:" (str e)))
      (let [rows  (c/meter-finish! meter)
            cpu1  (c/cpu-times)
            last  (peek rows)
            n     (count-store store)
            calls (long (Math/ceil (/ (double written) batch)))]
        (close-store store)
        (when report?
        (c/write-csv! csv rows)
        (c/result! (array-map
                    :peer "datalevin" :workload "W" :phase "write" :condition condition
                    :batch batch :writes written :capped (< written total)
                    :seconds (:seconds last) :throughput_wps (:throughput_wps last)
                    :calls calls
                    :mean_call_latency_ms (when (seq rows) (/ (reduce + (map :call_latency_ms rows)) (count rows)))
                    :mean_commit_latency_ms (when (seq rows) (/ (reduce + (map :commit_latency_ms rows)) (count rows)))
                    :commit_p50_ms (:commit_p50_ms (c/commit-quantiles meter))
                    :commit_p99_ms (:commit_p99_ms (c/commit-quantiles meter))
                    :user_s (:user_s (c/cpu-delta cpu0 cpu1)) :sys_s (:sys_s (c/cpu-delta cpu0 cpu1))
                    :peak_rss_kb (c/peak-rss-kb)
                    :count n :expected_count written :csv csv))
        (when (not= n written)
          (c/die! 3 "count check failed: expected" written "found" n)))))))

(let [[condition dir total batch csv window max-secs warmup warmup-secs seed] *command-line-args*]
  (when-not (and condition dir total batch csv)
    (c/die! 64 "usage: write.clj CONDITION DB_DIR TOTAL BATCH CSV [WINDOW] [MAX_SECS] [WARMUP] [WARMUP_SECS] [SEED]"))
  (let [batch  (c/parse-long-arg "BATCH" batch)
        window (if window (c/parse-long-arg "WINDOW" window) 10000)
        warmup (if warmup (c/parse-long-arg "WARMUP" warmup) 0)
        seed   (if seed (c/parse-long-arg "SEED" seed) 20250402)]
    (when (pos? warmup)
      (let [wdir (str dir "-warmup")]
        (drop-store! wdir)
        (run-write condition wdir warmup batch "-" window
                   (if warmup-secs (c/parse-double-arg "WARMUP_SECS" warmup-secs) 10.0) false
                   (bit-xor seed 0x7761726d))
        (drop-store! wdir)
        (c/log! "datalevin write: warm-up of" warmup "writes done")))
    (run-write condition dir
               (c/parse-long-arg "TOTAL" total)
               batch
               csv
               window
               (if max-secs (Double/parseDouble max-secs) 0.0)
               true
               seed))
  (shutdown-agents)
  (System/exit 0))
