;; Records the Datomic peer's answers to Datalith's conformance cases
;; (crates/datalith/tests/conformance/), so `cargo test` compares against them without a JVM.
;;
;; Usage (see bench/peers/README.md):
;;   bench/peers/run.sh datomic conformance CONFORMANCE_DIR OUT_FILE
;; CONFORMANCE_DIR holds datasets.edn and cases/*.edn; OUT_FILE is usually
;; CONFORMANCE_DIR/datomic-answers.edn.
;;
;; Each case runs on a fresh in-memory database holding its dataset. Answers are written as
;; {id {:result value}} or {id {:error {:db/error kw :anomaly kw :message str}}}, one case a
;; line, sorted by id. Java collections become Clojure data; a ratio is written as the tagged
;; #conformance/ratio [numerator denominator] (not every EDN reader reads 31/5). The run
;; fails when an answer holds an entity id of the case's database (ids differ between
;; systems, so no case may answer with one) or when a case is malformed.
(ns peers.datomic.conformance
  (:require [clojure.edn :as edn]
            [clojure.java.io :as io]
            [clojure.string :as str]
            [clojure.walk :as walk]
            [datomic.api :as d]))

(defn fail! [& msg]
  (binding [*out* *err*] (println "ERROR:" (apply str msg)))
  (System/exit 1))

(defn read-edn-file [f]
  (edn/read-string {:readers {}} (slurp f)))

(defn datomic-version []
  (or (some #(second (re-find #"/peer-([0-9.]+)\.jar$" %))
            (str/split (System/getProperty "java.class.path") #":"))
      "unknown"))

;; --- databases --------------------------------------------------------------------------

(def db-counter (atom 0))

(defn fresh-conn
  "A new in-memory database holding `dataset` (schema, then data, as two transactions)."
  [datasets dataset-name]
  (let [ds (or (get datasets dataset-name) (fail! "unknown dataset " dataset-name))
        uri (str "datomic:mem://conformance-" (swap! db-counter inc))]
    (d/create-database uri)
    (let [conn (d/connect uri)]
      @(d/transact conn (:schema ds))
      (when (seq (:data ds)) @(d/transact conn (:data ds)))
      conn)))

(defn db-placeholder? [x]
  (and (map? x) (contains? x :conformance/db)))

(defn resolve-inputs
  "Replaces every {:conformance/db name} input by a database value of that dataset."
  [datasets inputs]
  (mapv (fn [x] (if (db-placeholder? x) (d/db (fresh-conn datasets (:conformance/db x))) x))
        inputs))

;; --- answers as plain data ----------------------------------------------------------------

(defn plain
  "Java collections and Datomic's result types as Clojure data."
  [x]
  (walk/prewalk
   (fn [v]
     (cond
       (instance? clojure.lang.Ratio v) (tagged-literal 'conformance/ratio
                                                        [(numerator v) (denominator v)])
       (instance? java.util.Set v) (if (set? v) v (set v))
       (instance? java.util.Map v) (if (map? v) v (into {} v))
       (and (instance? java.util.List v) (not (vector? v)) (not (seq? v))) (vec v)
       (seq? v) (vec v)
       :else v))
   x))

(defn entity-ids-in
  "Numbers in `answer` that are entity ids of `db` (user, transaction or schema entities with
  datoms); small numbers are never taken for ids, so a count of 10 is not :db/ident's id."
  [db answer]
  (let [found (atom [])]
    (walk/postwalk
     (fn [v]
       (when (and (integer? v) (>= v 1000) (< v Long/MAX_VALUE)
                  (seq (d/datoms db :eavt (long v))))
         (swap! found conj v))
       v)
     answer)
    @found))

(defn without-db-id
  "`answer` without its :db/id map entries (cases pulling a wildcard, whose ids differ)."
  [answer]
  (walk/postwalk (fn [v] (if (map? v) (dissoc v :db/id) v)) answer))

(defn error-answer [^Throwable t]
  (let [t (loop [t t]
            (if (and (or (instance? java.util.concurrent.ExecutionException t)
                         (instance? clojure.lang.Compiler$CompilerException t)
                         (and (nil? (ex-data t)) (.getCause t)))
                     (.getCause t))
              (recur (.getCause t))
              t))
        data (ex-data t)]
    {:error {:db/error (:db/error data)
             :anomaly (:cognitect.anomalies/category data)
             :message (or (.getMessage t) (str (class t)))}}))

;; --- running a case --------------------------------------------------------------------

(defn run-query [datasets c db]
  (apply d/q (:query c) db (resolve-inputs datasets (:inputs c []))))

(defn run-case
  "The answer of one case, and the database its entity ids are checked against."
  [datasets c]
  (let [conn (fresh-conn datasets (:dataset c))]
    (try
      (cond
        (contains? c :query)
        (let [db (d/db conn)] [{:result (plain (run-query datasets c db))} db])

        (contains? c :pull)
        (let [db (d/db conn)] [{:result (plain (d/pull db (:pull c) (:eid c)))} db])

        (or (contains? c :tx) (contains? c :txs))
        (do (doseq [tx (or (:txs c) [(:tx c)])] @(d/transact conn tx))
            (let [db (d/db conn)]
              [{:result (plain (apply d/q (:then c) db
                                      (resolve-inputs datasets (:then-inputs c []))))}
               db]))

        :else (fail! "case " (:id c) " has no :query, :pull, :tx or :txs"))
      (catch Throwable e
        [(error-answer e) nil]))))

(defn check-case-shape! [c]
  (when-not (keyword? (:id c)) (fail! "case without a keyword :id: " (pr-str c)))
  (when-not (:dataset c) (fail! "case " (:id c) " has no :dataset"))
  (when (and (or (:tx c) (:txs c)) (not (:then c)))
    (fail! "tx case " (:id c) " has no :then query")))

;; --- output ------------------------------------------------------------------------------

(defn by-printed [a b] (compare (pr-str a) (pr-str b)))

(defn printable
  "Sets and maps in printed order, so a regenerated file differs only where answers do."
  [x]
  (walk/postwalk
   (fn [v]
     (cond
       (set? v) (into (sorted-set-by by-printed) v)
       (and (map? v) (not (record? v))) (into (sorted-map-by by-printed) v)
       :else v))
   x))

(defn write-answers [out-file version answers]
  (with-open [w (io/writer out-file)]
    (binding [*out* w *print-length* nil *print-level* nil *print-namespace-maps* false]
      (println ";; Datomic's answers to the conformance cases, written by")
      (println ";; bench/peers/datomic/conformance.clj; regenerate, do not edit.")
      (println "{:conformance/datomic-version" (pr-str version))
      (doseq [[id a] (sort-by (comp str key) answers)]
        (println (pr-str id) (pr-str (printable a))))
      (println "}"))))

(defn -main [dir out-file]
  (let [datasets (read-edn-file (io/file dir "datasets.edn"))
        case-files (->> (.listFiles (io/file dir "cases"))
                        (filter #(str/ends-with? (.getName ^java.io.File %) ".edn"))
                        (sort-by #(.getName ^java.io.File %)))
        cases (mapcat read-edn-file case-files)
        dup (->> cases (map :id) frequencies (filter #(> (val %) 1)) (map key))]
    (when (seq dup) (fail! "duplicate case ids: " (pr-str dup)))
    (doseq [c cases] (check-case-shape! c))
    (let [answers (into {}
                        (for [c cases]
                          (let [[a db] (run-case datasets c)
                                a (if (and (:without-db-id c) (contains? a :result))
                                    (update a :result without-db-id)
                                    a)
                                ids (when db (entity-ids-in db (:result a)))]
                            (when (seq ids)
                              (fail! "case " (:id c) " answers with entity ids " (pr-str ids)
                                     ": return attribute values or pull an identifying attribute"))
                            [(:id c) a])))]
      (write-answers out-file (datomic-version) answers)
      (println "wrote" (count answers) "answers ("
               (count (filter :error (vals answers))) "errors) to" out-file))))

(apply -main *command-line-args*)
(shutdown-agents)
(System/exit 0)
