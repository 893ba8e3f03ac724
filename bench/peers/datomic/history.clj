;; Workload H (history: as-of, history, log) on the Datomic peer 1.0.7075, in memory
;; (datomic:mem://, as the other Datomic harnesses).
;;
;; Usage (see bench/peers/README.md):
;;   history.clj DATA.jsonl WORK_DIR [SECONDS] [ROWS] [MIN_RUNS]
;;     DATA.jsonl: written by `datalith-bench history`: line 1 the spec (sizes, schema, query
;;     texts, checkpoints, the history entity's id, the lookup ids), then one transaction a
;;     line, {"i":1,"instant":ms,"items":[[id,value],...]}.
;;     WORK_DIR is accepted for a uniform command line and unused (in-memory database).
;;     ROWS: comma-separated, default all (current-agg asof25-agg ... entity-history tx-range
;;     tx-data-q); MIN_RUNS: timed calls at least (default 3).
;; Prints `RESULT {"task":"load",...}` after loading, then one `RESULT` line per row:
;;   {"peer":"datomic","workload":"H","task":"asof25-agg","median_ms":..,"min_ms":..,
;;    "runs":..,"count":..,"checksum":..}
;; (`"error":"..."` for a row that failed; the other rows still run). The answers are checked
;; by datalith-bench against the generator's.
(load-file (str (.getParent (java.io.File. ^String *file*)) "/../clj/common.clj"))

(ns peers.datomic.history
  (:require [clojure.data.json :as json]
            [clojure.edn :as edn]
            [clojure.string :as str]
            [datomic.api :as d]
            [peers.common :as c])
  (:import [java.util Date]))

(def all-rows ["current-agg" "asof25-agg" "asof50-agg" "asof75-agg"
               "current-lookup" "asof25-lookup" "asof50-lookup" "asof75-lookup"
               "entity-history" "tx-range" "tx-data-q"])

;; ------------------------------------------------------------------ loading

(defn tx-instant [ms]
  {:db/id "datomic.tx" :db/txInstant (Date. (long ms))})

(defn load!
  "Transacts the schema, then each transaction line of the file as read (entity maps without
  :db/id: the unique :item/id upserts; the previous :item/value is retracted). Returns the
  entity id of each data transaction, in order."
  [conn spec lines]
  @(d/transact conn (conj (edn/read-string (:schema spec)) (tx-instant (:schema_instant spec))))
  (let [txs (java.util.ArrayList.)]
    (doseq [line lines :when (not (str/blank? line))]
      (let [{:keys [instant items]} (json/read-str line :key-fn keyword)
            data (conj (mapv (fn [[id v]] {:item/id (long id) :item/value (long v)}) items)
                       (tx-instant instant))
            r @(d/transact conn data)]
        (.add txs (d/t->tx (d/basis-t (:db-after r))))))
    (vec txs)))

;; ------------------------------------------------------------------ answers

(defn agg-answer
  "A one-tuple aggregate as [count checksum]; `sum-first` for [sum count] tuples."
  [res sum-first]
  (if (empty? res)
    [0 0]
    (let [[a b] (first res)]
      (if sum-first [(long b) (long a)] [(long a) (long b)]))))

(defn rows-answer
  "A relation as [rows, sum of column col]."
  [res col]
  [(count res) (reduce (fn [^long s t] (+ s (long (nth t col)))) 0 res)])

(defn tx-range-answer
  "Every datom of attribute `attr` in the log range, counted and its values summed."
  [log t1 t2 attr]
  (let [acc (long-array 2)]
    (doseq [tx (d/tx-range log t1 t2)
            ^datomic.Datom dt (:data tx)]
      (when (= attr (.a dt))
        (aset acc 0 (inc (aget acc 0)))
        (aset acc 1 (+ (aget acc 1) (long (.v dt))))))
    [(aget acc 0) (aget acc 1)]))

;; ------------------------------------------------------------------ timing

(defn bench
  "Warms `f` up for two thirds of `seconds` (at least 3 calls), then calls it for `seconds` and
  at least `min-runs` times, each call timed; `answer` (untimed) turns a result into [count
  checksum], which must not change between calls."
  [seconds min-runs f answer]
  (let [first-answer (volatile! nil)
        once (fn []
               (let [t0 (System/nanoTime)
                     r (f)
                     dt (/ (- (System/nanoTime) t0) 1e6)
                     a (answer r)]
                 (if-let [a0 @first-answer]
                   (when (not= a0 a)
                     (throw (ex-info (str "the answer changed between calls: " a0 " then " a) {})))
                   (vreset! first-answer a))
                 dt))
        warm-end (+ (c/now-ms) (/ (* 2000.0 seconds) 3.0))]
    (loop [i 0]
      (once)
      (when (or (< i 2) (< (c/now-ms) warm-end)) (recur (inc i))))
    (let [end (+ (c/now-ms) (* 1000.0 seconds))
          times (java.util.ArrayList.)]
      (loop []
        (.add times (once))
        (when (or (< (.size times) min-runs) (< (c/now-ms) end)) (recur)))
      (let [[n s] @first-answer]
        {:median_ms (c/median times) :min_ms (apply min times) :runs (.size times)
         :count n :checksum s}))))

;; ------------------------------------------------------------------ rows

(defn checkpoint-tx
  "The entity id of the last transaction of the checkpoint `percent` (e.g. 25)."
  [spec txs percent]
  (let [cp (first (filter #(= percent (long (:percent %))) (:checkpoints spec)))]
    (when-not cp (throw (ex-info (str "no checkpoint at " percent "%") {})))
    (nth txs (dec (long (:after cp))))))

(defn row-fn
  "[f answer] of a row: f is the timed call."
  [row {:keys [spec txs conn db log]}]
  (let [qs (:queries spec)
        agg (edn/read-string (get qs :agg))
        lookup (edn/read-string (get qs :lookup))
        ids (mapv long (:lookup_ids spec))
        t1 (first txs)
        t2 (inc (long (peek txs)))
        attr (d/entid db :item/value)]
    (if-let [[_ basis q] (re-matches #"(current|asof\d+)-(agg|lookup)" row)]
      (let [as-of (if (= basis "current")
                    nil
                    (checkpoint-tx spec txs (Long/parseLong (subs basis 4))))
            value (fn [] (if as-of (d/as-of db as-of) db))]
        (case q
          "agg" [#(d/q agg (value)) #(agg-answer % true)]
          "lookup" [#(d/q lookup (value) ids) #(rows-answer % 1)]))
      (case row
        "entity-history"
        (let [eh (edn/read-string (get qs :entity-history))
              e (d/entid db [:item/id (long (:history_id spec))])]
          (when-not e (throw (ex-info "no entity with the history id" {})))
          [#(d/q eh (d/history db) e) #(rows-answer % 0)])
        "tx-range"
        [#(tx-range-answer log t1 t2 attr) identity]
        "tx-data-q"
        (let [q (edn/read-string (get qs :tx-data-q))]
          [#(d/q q db log t1 t2 attr) #(agg-answer % false)])))))

(defn message [^Throwable t]
  (let [t (loop [t t] (if (and (.getCause t) (nil? (ex-data t))) (recur (.getCause t)) t))]
    (str (.getSimpleName (class t)) ": " (or (.getMessage t) "no message"))))

(let [[data _work seconds rows min-runs] *command-line-args*]
  (when-not data
    (c/die! 64 "usage: history.clj DATA.jsonl WORK_DIR [SECONDS] [ROWS] [MIN_RUNS]"))
  (let [seconds (if seconds (c/parse-double-arg "SECONDS" seconds) 3.0)
        min-runs (if min-runs (c/parse-long-arg "MIN_RUNS" min-runs) 3)
        rows (c/parse-tasks rows all-rows)
        uri "datomic:mem://history"
        _ (d/create-database uri)
        conn (d/connect uri)
        t0 (System/nanoTime)
        [spec txs] (with-open [r (clojure.java.io/reader data)]
                     (let [[head & lines] (line-seq r)
                           spec (json/read-str head :key-fn keyword)]
                       [spec (load! conn spec lines)]))
        load-s (/ (- (System/nanoTime) t0) 1e9)
        db0 (d/db conn)
        ;; Queries read indexed segments, as a peer's would after the transactor's indexing
        ;; job, not a log tail the memory index holds.
        _ (d/request-index conn)
        indexed (deref (d/sync-index conn (d/basis-t db0)) 600000 ::timeout)
        _ (System/gc)
        db (d/db conn)
        st {:spec spec :txs txs :conn conn :db db :log (d/log conn)}
        datoms (reduce (fn [n _] (inc n)) 0 (d/datoms db :aevt :item/value))]
    (when (= indexed ::timeout) (c/log! "datomic history: sync-index timed out"))
    (c/log! "datomic history:" (count txs) "transactions loaded in" (format "%.1f" load-s) "s;"
            datoms ":item/value datoms now; log" (if (:log st) "present" "absent"))
    (c/result! (array-map :peer "datomic" :workload "H" :task "load" :seconds load-s
                          :transactions (count txs) :count datoms))
    (when (not= (count txs) (long (:transactions spec)))
      (c/die! 3 "loaded" (count txs) "transactions, the spec says" (:transactions spec)))
    (doseq [row rows]
      (let [r (try
                (let [[f answer] (row-fn row st)]
                  (bench seconds min-runs f answer))
                (catch Throwable t {:error (message t)}))]
        (c/result! (merge (array-map :peer "datomic" :workload "H" :task row) r))))
    (d/release conn)
    (d/delete-database uri))
  (d/shutdown false)
  (shutdown-agents)
  (System/exit 0))
