;; The complex workload (TPC-H's 22 queries as Datalog ports) on the real Datalevin, on disk.
;;
;; Usage (see bench/peers/README.md; the protocol is crates/datalith-bench/src/complex/external.rs):
;;   complex.clj DATA_DIR WORK_DIR QUERIES_DIR SECS TIMEOUT_SECS QUERIES OUT_DIR
;;     DATA_DIR     dbgen's .tbl files and their MARKER (generator and scale factor)
;;     WORK_DIR     the database (WORK_DIR/db) and its LOADED marker: a load is reused when the
;;                  marker names the same data, this layout and Datalevin's version
;;     QUERIES_DIR  qNN.edn, the Datalog ports (one query, or {:steps [...]}: steps.rs)
;;     SECS         timed seconds per query after one warm-up run (at least one timed run)
;;     TIMEOUT_SECS a run (all its steps) past this is stopped and reported "timeout":true
;;     QUERIES      q1,q2,...
;;     OUT_DIR      the answers, OUT_DIR/qN.tsv (the warm-up run's)
;; Prints `RESULT {json}` lines: one for the load when it loads, one per query.
;;
;; The schema and the data are Datalith's (src/complex/datalith_peer.rs): one entity per row,
;; attributes :table/column, each table's key :x/key a unique identity long, foreign keys refs,
;; money and quantities doubles, dates instants at midnight UTC, text strings.
(load-file (str (.getParent (java.io.File. ^String *file*)) "/../clj/common.clj"))

(ns peers.datalevin.complex
  (:require [clojure.java.io :as io]
            [clojure.set :as set]
            [clojure.string :as str]
            [datalevin.constants]
            [datalevin.core :as d]
            [datalevin.query]
            [datalevin.query.cache]
            [datalevin.timeout]
            [peers.common :as c])
  (:import [java.time LocalDate ZoneOffset]
           [java.util Date]))

;; Repeated runs measure the query, not Datalevin's result cache (as workload Q's harness).
(alter-var-root #'datalevin.query/*cache?* (constantly false))
(alter-var-root #'datalevin.query.cache/*cache?* (constantly false))

(def layout "datalevin-complex 1")

;; The eight tables in load order, their columns in the .tbl files' order
;; (crates/datalith-bench/src/complex/tables.rs): [file namespace [[attr kind ref-target]...]].
(def tables
  [["region" "region" [["key" :key] ["name" :text] ["comment" :text]]]
   ["nation" "nation" [["key" :key] ["name" :text] ["region" :ref "region"] ["comment" :text]]]
   ["part" "part" [["key" :key] ["name" :text] ["mfgr" :text] ["brand" :text] ["type" :text]
                   ["size" :int] ["container" :text] ["retailprice" :decimal] ["comment" :text]]]
   ["supplier" "supplier" [["key" :key] ["name" :text] ["address" :text] ["nation" :ref "nation"]
                           ["phone" :text] ["acctbal" :decimal] ["comment" :text]]]
   ["partsupp" "partsupp" [["part" :ref "part"] ["supplier" :ref "supplier"] ["availqty" :int]
                           ["supplycost" :decimal] ["comment" :text]]]
   ["customer" "customer" [["key" :key] ["name" :text] ["address" :text] ["nation" :ref "nation"]
                           ["phone" :text] ["acctbal" :decimal] ["mktsegment" :text]
                           ["comment" :text]]]
   ["orders" "order" [["key" :key] ["customer" :ref "customer"] ["orderstatus" :text]
                      ["totalprice" :decimal] ["orderdate" :date] ["orderpriority" :text]
                      ["clerk" :text] ["shippriority" :int] ["comment" :text]]]
   ["lineitem" "lineitem" [["order" :ref "orders"] ["part" :ref "part"] ["supplier" :ref "supplier"]
                           ["linenumber" :int] ["quantity" :decimal] ["extendedprice" :decimal]
                           ["discount" :decimal] ["tax" :decimal] ["returnflag" :text]
                           ["linestatus" :text] ["shipdate" :date] ["commitdate" :date]
                           ["receiptdate" :date] ["shipinstruct" :text] ["shipmode" :text]
                           ["comment" :text]]]])

(def value-type {:key :db.type/long :ref :db.type/ref :int :db.type/long
                 :decimal :db.type/double :date :db.type/instant :text :db.type/string})

(def schema
  (into {}
        (for [[_ ns cols] tables [attr kind] cols]
          [(keyword ns attr)
           (cond-> {:db/valueType (value-type kind) :db/cardinality :db.cardinality/one}
             (= kind :key) (assoc :db/unique :db.unique/identity))])))

;; Entity ids as Datalith's: table number t owns t * 2^36 + k (k the key, or the line number
;; for partsupp and lineitem), so a ref is computed from the key it names.
(def table-no (into {} (map-indexed (fn [i [file]] [file i]) tables)))
(defn eid ^long [^long t ^long k] (+ (bit-shift-left (inc t) 36) k))

(defn date-ms ^long [^String s]
  (* 86400000 (.toEpochDay (LocalDate/parse s))))

(defn row-datoms
  "The datoms of one .tbl line (line number `n`) of table number `t`."
  [t cols ns-attrs ^String line n]
  (let [fields (.split line "\\|" -1)           ; the trailing '|' leaves one empty field
        key-i  (first (keep-indexed (fn [i [_ kind]] (when (= kind :key) i)) cols))
        e      (eid t (if key-i (Long/parseLong (aget fields key-i)) n))]
    (when (< (dec (alength fields)) (count cols))
      (throw (ex-info (str "line " n ": " (dec (alength fields)) " fields, expected " (count cols)) {})))
    (map-indexed
     (fn [i [_ kind target]]
       (let [^String f (aget fields i)
             v (case kind
                 (:key :int) (Long/parseLong f)
                 :ref        (eid (table-no target) (Long/parseLong f))
                 :decimal    (Double/parseDouble f)
                 :date       (Date. (date-ms f))
                 :text       f)]
         (d/datom e (nth ns-attrs i) v)))
     cols)))

(def chunk-datoms 1000000)

(defn load-db!
  "Loads every table into a new database in `dir`; returns the seconds it took."
  [dir data]
  (let [start (c/now-ms)
        db0   (d/init-db [] dir schema)]
    (loop [db db0 [[file ns cols] & more] tables total 0]
      (if-not file
        (do (d/close-db db)
            (c/log! "datalevin: loaded" total "datoms")
            (/ (- (c/now-ms) start) 1000.0))
        (let [t0       (c/now-ms)
              t        (table-no file)
              ns-attrs (mapv #(keyword ns (first %)) cols)
              [db n]   (with-open [r (io/reader (io/file data (str file ".tbl")))]
                         (reduce (fn [[db n] chunk] [(d/fill-db db chunk) (+ n (count chunk))])
                                 [db 0]
                                 (partition-all chunk-datoms
                                                (mapcat (fn [line n] (row-datoms t cols ns-attrs line n))
                                                        (line-seq r) (iterate inc 1)))))]
          (c/log! "datalevin: loaded" file (str "(" n " datoms)") "in"
                  (format "%.1f s" (/ (- (c/now-ms) t0) 1000.0)))
          (recur db more (+ total n)))))))

(defn datalevin-version [] (str datalevin.constants/version))

(defn open-or-load
  "A connection to the database in WORK_DIR, loaded now unless a complete load of the same
   data is there; and the load's seconds (nil when reused)."
  [data work]
  (let [data-marker (try (slurp (io/file data "MARKER"))
                         (catch Exception e
                           (c/die! 1 (str data ": no MARKER (" (.getMessage e) ")"))))
        want   (str (str/trim data-marker) " " layout " datalevin " (datalevin-version) "\n")
        marker (io/file work "LOADED")
        dir    (str (io/file work "db"))]
    (if (= want (try (slurp marker) (catch Exception _ nil)))
      (do (c/log! "datalevin: reusing" dir)
          [(d/get-conn dir schema) nil])
      (do (c/delete-tree! work)
          (.mkdirs (io/file work))
          (let [secs (load-db! dir data)]
            (spit marker want)
            [(d/get-conn dir schema) secs])))))

;; ---------------------------------------------------------------- ports (steps.rs)

(defn- section
  "The elements of vector query `q` after keyword `k`, up to the next keyword."
  [q k]
  (->> q (drop-while #(not= % k)) rest (take-while #(not (keyword? %)))))

(defn adapt
  "The one change Datalevin needs: it refuses a variable both aggregated in :find and named
   in :with (\"`:find and :with should not use same variables`\"; Q1's `(count ?l)` with
   `:with ?l`). Such a variable is already part of the tuples the aggregates run over (an
   aggregate's variable is projected with the :find), so dropping it from :with changes
   nothing: the set is over the same variables. An empty :with is dropped."
  [q]
  (if-not (vector? q)
    q
    (let [aggregated (set (for [f (section q :find) :when (seq? f)
                                x (flatten f) :when (and (symbol? x) (str/starts-with? (name x) "?"))]
                            x))
          with       (set (section q :with))
          drop?      (set/intersection aggregated with)]
      (if (empty? drop?)
        q
        (let [keep (remove drop? (section q :with))
              [before after] (split-with #(not= % :with) q)
              rest-after     (drop-while #(not (keyword? %)) (rest after))]
          (vec (concat before (when (seq keep) (cons :with keep)) rest-after)))))))

(defn read-port
  "A port file: one query (a vector) or {:steps [...]}, as a vector of steps
   {:name :query :args} / {:name :union}. Read with Clojure's reader (not EDN's): the ports
   hold regex literals #\"...\", which EDN has not; #inst reads as java.util.Date."
  [text]
  (let [form (binding [*read-eval* false] (read-string text))]
    (cond
      (vector? form) [{:name "answer" :query (adapt form)}]
      (and (map? form) (vector? (:steps form)))
      (vec (map-indexed (fn [i s] (-> s
                                      (update :name #(if % (name %) (str "step" (inc i))))
                                      (update :args #(mapv name %))
                                      (update :union #(when % (mapv name %)))
                                      (update :query adapt)))
                        (:steps form)))
      :else (throw (ex-info "a port is a query or a map of :steps" {})))))

(defn run-port
  "Runs the steps on one database value as steps.rs does: a step's :args are the results of
   the earlier steps named, its inputs after $; a :union is the rows of its parts together.
   The last step's result."
  [db steps]
  (loop [done {} [s & more] steps last-result nil]
    (if-not s
      last-result
      (let [r (if-let [parts (:union s)]
                (vec (mapcat (fn [p] (let [v (get done p)]
                                       (cond (nil? v) []
                                             (coll? v) v
                                             :else [v])))
                             parts))
                (apply d/q (:query s) db (map done (:args s))))
            ;; Passed on as it came, but realized: Datalevin returns an aggregate's relation
            ;; as a lazy seq, and binding one through :in reads it by index (nth), which on
            ;; a lazy seq walks from the head each time (quadratic: Q18's 150,000 orders).
            r (if (and (sequential? r) (not (vector? r))) (vec r) r)]
        (recur (assoc done (:name s) r) more r)))))

;; ---------------------------------------------------------------- answers (answer.rs)

(defn row? [x] (or (sequential? x) (instance? java.util.List x)
                   (and (some? x) (.isArray (class x)))))

(defn rows
  "A result as rows, as Answer::from_edn: nil no rows; a collection of tuples a relation; a
   collection of values one value a row; a scalar one row."
  [r]
  (cond
    (nil? r) []
    (and (or (coll? r) (instance? java.util.Collection r)) (every? row? r)) (map seq r)
    (or (coll? r) (instance? java.util.Collection r)) (map vector r)
    :else [[r]]))

(defn cell [v]
  (cond
    (nil? v) "\\N"
    (instance? Date v) (str (LocalDate/ofInstant (.toInstant ^Date v) ZoneOffset/UTC))
    ;; Plain digits (no exponent), the shortest text that reads back as the same double.
    (instance? Double v) (if (or (Double/isNaN v) (Double/isInfinite v))
                           (str v)
                           (.toPlainString (BigDecimal/valueOf ^double v)))
    (instance? Float v) (recur (double v))
    (keyword? v) (str v)
    :else (str v)))

(defn write-answer! [file r]
  (with-open [w (io/writer file)]
    (doseq [row (rows r)]
      (.write w (str (str/join "\t" (map cell row)) "\n")))))

;; ---------------------------------------------------------------- runs

(defn timed-run
  "One run of the port within `timeout-ms`: [ms result], or :timeout. Datalevin checks its
   query deadline (datalevin.timeout/*deadline*, the `:timeout` of a query) as it goes; the
   future's deref is the backstop."
  [db steps timeout-ms]
  (let [fut (future
              (binding [datalevin.timeout/*deadline* (+ (System/currentTimeMillis) (long timeout-ms))]
                (let [t0 (System/nanoTime)
                      r  (run-port db steps)]
                  [(/ (- (System/nanoTime) t0) 1e6) r])))
        v (try (deref fut (+ (long timeout-ms) 2000) ::late)
               (catch java.util.concurrent.ExecutionException e
                 ;; Datalevin's deadline error, possibly wrapped again by its own
                 ;; parallel parts (an ExecutionException in the chain).
                 (if (some #(= :query/timeout (:type (ex-data %)))
                           (take-while some? (iterate #(.getCause ^Throwable %) e)))
                   ::late
                   (throw (.getCause e)))))]
    (if (= v ::late)
      (do (future-cancel fut) :timeout)
      v)))

(defn stem [q] (format "q%02d" (Long/parseLong (subs q 1))))

(defn run-query [db qdir out q secs timeout-ms]
  (let [steps (read-port (slurp (io/file qdir (str (stem q) ".edn"))))
        warm  (timed-run db steps timeout-ms)]
    (if (= warm :timeout)
      {:timeout true}
      (let [[_ answer] warm
            n (count (rows answer))]
        (write-answer! (io/file out (str q ".tsv")) answer)
        (let [start (c/now-ms)]
          (loop [times []]
            (if (and (seq times) (>= (- (c/now-ms) start) (* 1000.0 secs)))
              {:median_ms (c/median times) :runs (count times) :rows n}
              (let [r (timed-run db steps timeout-ms)]
                (cond
                  (= r :timeout) {:timeout true}
                  (not= n (count (rows (second r))))
                  {:error (str "a timed run gave " (count (rows (second r)))
                               " rows, the warm-up run " n)}
                  :else (recur (conj times (first r))))))))))))

(let [[data work qdir secs timeout queries out] *command-line-args*]
  (when-not out
    (c/die! 64 "usage: complex.clj DATA_DIR WORK_DIR QUERIES_DIR SECS TIMEOUT_SECS QUERIES OUT_DIR"))
  (let [secs       (c/parse-double-arg "SECS" secs)
        timeout-ms (long (* 1000 (c/parse-double-arg "TIMEOUT_SECS" timeout)))
        [conn load-secs] (open-or-load data work)
        db         (d/db conn)]
    (.mkdirs (io/file out))
    (when load-secs
      (c/result! (array-map :peer "datalevin" :workload "complex" :query "load" :seconds load-secs)))
    (doseq [q (remove str/blank? (str/split queries #","))]
      (let [r (try (run-query db qdir out q secs timeout-ms)
                   (catch Throwable e
                     {:error (first (str/split-lines (str (.getName (class e)) ": " (.getMessage e))))}))]
        (c/result! (merge (array-map :peer "datalevin" :workload "complex" :query q) r))))
    (d/close conn))
  (shutdown-agents)
  (System/exit 0))
