;; Records the Datomic peer's answers to Datalith's conformance cases
;; (crates/datalith/tests/conformance/), so `cargo test` compares against them without a JVM.
;;
;; Usage (see bench/peers/README.md):
;;   bench/peers/run.sh datomic conformance CONFORMANCE_DIR OUT_FILE
;; CONFORMANCE_DIR holds datasets.edn and cases/*.edn; OUT_FILE is usually
;; CONFORMANCE_DIR/datomic-answers.edn.
;;
;; Each case runs on a fresh in-memory database holding its dataset. A case with :db (the time
;; group) first transacts its :txs, then runs its :query, :pull or :datoms on the time view :db
;; names (see time-view); basis k names the state after the k-th of the dataset's :txs and then
;; the case's (0: after the dataset's :data). A case with :report transacts its :txs, then
;; answers the report of transacting :report (see report-answer).
;; Answers are written as
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

(defn tx-t
  "Transacts `tx` and returns the basis t after it."
  [conn tx]
  (d/basis-t (:db-after @(d/transact conn tx))))

(defn fresh-conn-points
  "A new in-memory database holding `dataset` (schema, then data, as two transactions, then
  each of its :txs), and its bases: the t after the data, then after each of the :txs."
  [datasets dataset-name]
  (let [ds (or (get datasets dataset-name) (fail! "unknown dataset " dataset-name))
        uri (str "datomic:mem://conformance-" (swap! db-counter inc))]
    (d/create-database uri)
    (let [conn (d/connect uri)]
      @(d/transact conn (:schema ds))
      (when (seq (:data ds)) @(d/transact conn (:data ds)))
      [conn (reduce (fn [ps tx] (conj ps (tx-t conn tx)))
                    [(d/basis-t (d/db conn))]
                    (:txs ds []))])))

(defn fresh-conn
  "A new in-memory database holding `dataset`."
  [datasets dataset-name]
  (first (fresh-conn-points datasets dataset-name)))

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
  datoms now or in the past); small numbers are never taken for ids, so a count of 10 is not
  :db/ident's id."
  [db answer]
  (let [found (atom [])]
    (walk/postwalk
     (fn [v]
       (when (and (integer? v) (>= v 1000) (< v Long/MAX_VALUE)
                  (seq (d/datoms (d/history db) :eavt (long v))))
         (swap! found conj v))
       v)
     answer)
    @found))

(defn without-db-id
  "`answer` without its :db/id map entries (cases pulling a wildcard, whose ids differ)."
  [answer]
  (walk/postwalk (fn [v] (if (map? v) (dissoc v :db/id) v)) answer))

(defn ids-as-placeholders
  "`answer` with every entity id of `db` (as `entity-ids-in` finds them) replaced by
  :conformance/id: cases whose answers hold entities, compared by shape and count since ids
  differ between systems."
  [db answer]
  (let [ids (set (entity-ids-in db answer))]
    ;; Sets become vectors first: rows that differ only by their ids must stay apart.
    (->> answer
         (walk/prewalk (fn [v] (if (set? v) (vec v) v)))
         (walk/postwalk (fn [v] (if (contains? ids v) :conformance/id v))))))

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

;; --- time views (cases with :db) ----------------------------------------------------------

(defn view-steps
  "A time view as steps [op arg?]: :now (the database after the case's txs), :history, or a
  vector of steps applied in order, such as [:as-of 1], [:since 1 :history],
  [:as-of-instant #inst \"2020-02-15\"]."
  [spec]
  (cond
    (= spec :now) []
    (= spec :history) [[:history]]
    (vector? spec)
    (loop [s (seq spec) out []]
      (if-not s
        out
        (let [op (first s)]
          (case op
            :history (recur (next s) (conj out [:history]))
            (:as-of :since :as-of-instant :since-instant)
            (if (next s)
              (recur (nnext s) (conj out [op (second s)]))
              (fail! "time view step " op " without its argument in " (pr-str spec)))
            (fail! "unknown time view step " (pr-str op) " in " (pr-str spec))))))
    :else (fail! "a time view is :now, :history or a vector of steps, not " (pr-str spec))))

(defn basis
  "The t of basis k: 0 is the state after the dataset's :data, then one basis after each of
  the dataset's :txs and then of the case's :txs."
  [points k]
  (if (and (integer? k) (<= 0 k) (< k (count points)))
    (nth points k)
    (fail! "no basis " (pr-str k) " (there are " (count points) ": 0 to " (dec (count points)) ")")))

(defn time-view [db points spec]
  (reduce (fn [db [op arg]]
            (case op
              :history (d/history db)
              :as-of (d/as-of db (basis points arg))
              :since (d/since db (basis points arg))
              :as-of-instant (d/as-of db arg)
              :since-instant (d/since db arg)))
          db
          (view-steps spec)))

(defn placeholder [x k] (and (map? x) (contains? x k)))

(defn resolve-time-inputs
  "Inputs of a time case: {:conformance/db name} as for any case, {:conformance/time view} the
  case's database in that view, {:conformance/log true} the connection's log,
  {:conformance/tx k} the transaction entity id of basis k, {:conformance/t k} the t of basis k
  (what fulltext binds as its ?tx: Datomic's fulltext answers a t, not a transaction id)."
  [datasets conn db points inputs]
  (mapv (fn [x]
          (cond
            (db-placeholder? x) (d/db (fresh-conn datasets (:conformance/db x)))
            (placeholder x :conformance/time) (time-view db points (:conformance/time x))
            (placeholder x :conformance/log) (d/log conn)
            (placeholder x :conformance/tx) (d/t->tx (basis points (:conformance/tx x)))
            (placeholder x :conformance/t) (basis points (:conformance/t x))
            :else x))
        inputs))

(defn tx-position
  "The basis whose transaction wrote a datom of transaction `tx`: k for the k-th (see
  `basis`), 0 for the dataset's schema and data (or earlier)."
  [points tx]
  (let [t (d/tx->t tx)]
    (count (take-while #(< % t) points))))

(defn datom-rows
  "(d/datoms view index & components) as rows [attribute-ident value tx-position added]:
  entity and transaction ids differ between systems, so neither is in a row."
  [db view points [index & components]]
  (mapv (fn [datom]
          [(d/ident db (:a datom)) (:v datom) (tx-position points (:tx datom)) (:added datom)])
        (apply d/datoms view index components)))

(defn run-time-case
  "A case with :db: its :txs, then its :query, :pull or :datoms on the view."
  [datasets c conn points]
  (let [points (reduce (fn [ps tx] (conj ps (tx-t conn tx))) points (:txs c []))
        db (d/db conn)
        view (time-view db points (:db c))]
    [{:result
      (plain
       (cond
         (contains? c :query)
         (apply d/q (:query c) view
                (resolve-time-inputs datasets conn db points (:inputs c [])))
         (contains? c :pull) (d/pull view (:pull c) (:eid c))
         (contains? c :datoms) (datom-rows db view points (:datoms c))))}
     db]))

;; --- transaction reports ----------------------------------------------------------------

(defn report-answer
  "A transaction's report as data both systems can give: the tempid strings it resolved,
  sorted, and its datoms as rows [e attribute v added], the transaction entity as :conformance/tx
  (as e, or as a ref's value) and :db/txInstant's value as :conformance/instant (clocks
  differ); other entity ids are left for ids-as-placeholders, which every report case uses."
  [report]
  (let [db (:db-after report)
        tx (:tx (first (:tx-data report)))]
    {:tempids (vec (sort (filter string? (keys (:tempids report)))))
     :tx-data (mapv (fn [datom]
                      (let [a (d/ident db (:a datom))]
                        [(if (= (:e datom) tx) :conformance/tx (:e datom))
                         a
                         (cond (= a :db/txInstant) :conformance/instant
                               (and (= (:value-type (d/attribute db a)) :db.type/ref)
                                    (= (:v datom) tx)) :conformance/tx
                               :else (:v datom))
                         (:added datom)]))
                    (:tx-data report))}))

;; --- running a case --------------------------------------------------------------------

(defn run-query [datasets c db]
  (apply d/q (:query c) db (resolve-inputs datasets (:inputs c []))))

(defn run-case
  "The answer of one case, and the database its entity ids are checked against."
  [datasets c]
  (let [[conn points] (fresh-conn-points datasets (:dataset c))]
    (try
      (cond
        (contains? c :db) (run-time-case datasets c conn points)

        (contains? c :query)
        (let [db (d/db conn)] [{:result (plain (run-query datasets c db))} db])

        (contains? c :pull)
        (let [db (d/db conn)] [{:result (plain (d/pull db (:pull c) (:eid c)))} db])

        (contains? c :report)
        (do (doseq [tx (:txs c [])] @(d/transact conn tx))
            (let [report @(d/transact conn (:report c))]
              [{:result (plain (report-answer report))} (:db-after report)]))

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
  (if (contains? c :db)
    (do (view-steps (:db c))
        (when (:tx c) (fail! "time case " (:id c) " names its transactions :txs, not :tx"))
        (when-not (vector? (:txs c [])) (fail! "time case " (:id c) " has :txs that is not a vector"))
        (when-not (= 1 (count (filter #(contains? c %) [:query :pull :datoms])))
          (fail! "time case " (:id c) " needs exactly one of :query, :pull, :datoms"))
        (when (and (:pull c) (not (contains? c :eid))) (fail! "time case " (:id c) " pulls without :eid")))
    (do (when (:datoms c) (fail! "case " (:id c) " has :datoms without :db"))
        (when (and (:report c) (or (:tx c) (:then c) (not (:ids-as-placeholders c))))
          (fail! "report case " (:id c) " needs :ids-as-placeholders true, and no :tx or :then"))
        (when (and (or (:tx c) (:txs c)) (not (:then c)) (not (:report c)))
          (fail! "tx case " (:id c) " has no :then query (a time case needs :db)")))))

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

;; --- documented answers ----------------------------------------------------------------

(defn documented-cases
  "The cases of documented-answers.edn: their expected answers come from Datomic's
  documentation, because the in-memory peer cannot give them (noHistory and excision take
  effect at indexing, which a mem database does not do). Never written to OUT_FILE."
  [dir]
  (let [f (io/file dir "documented-answers.edn")]
    (if (.exists f) (read-edn-file f) [])))

(defn report-documented!
  "Runs each documented case on the mem peer and says whether it agrees with the documented
  answer (information only: the documented answer stands either way)."
  [datasets cases]
  (doseq [c cases]
    (let [[a _] (run-case datasets c)
          a (if (and (:without-db-id c) (contains? a :result)) (update a :result without-db-id) a)
          want (:expected c)
          agree (if (contains? want :error)
                  (contains? a :error)
                  (= (printable a) (printable want)))]
      (println "documented" (pr-str (:id c))
               (if agree
                 "(the mem peer agrees)"
                 (str "(the mem peer differs: it answers " (pr-str (printable a)) ")"))))))

(defn -main [dir out-file]
  (let [datasets (read-edn-file (io/file dir "datasets.edn"))
        case-files (->> (.listFiles (io/file dir "cases"))
                        (filter #(str/ends-with? (.getName ^java.io.File %) ".edn"))
                        (sort-by #(.getName ^java.io.File %)))
        cases (mapcat read-edn-file case-files)
        documented (documented-cases dir)
        dup (->> (concat cases documented) (map :id) frequencies (filter #(> (val %) 1)) (map key))]
    (when (seq dup) (fail! "duplicate case ids: " (pr-str dup)))
    (doseq [c (concat cases documented)] (check-case-shape! c))
    (doseq [c documented]
      (when-not (contains? c :expected) (fail! "documented case " (:id c) " has no :expected answer"))
      (when-not (string? (:source c)) (fail! "documented case " (:id c) " has no :source")))
    (let [answers (into {}
                        (for [c cases]
                          (let [[a db] (run-case datasets c)
                                a (if (and (:without-db-id c) (contains? a :result))
                                    (update a :result without-db-id)
                                    a)
                                a (if (and (:ids-as-placeholders c) db (contains? a :result))
                                    (update a :result (partial ids-as-placeholders db))
                                    a)
                                ids (when db (entity-ids-in db (:result a)))]
                            (when (seq ids)
                              (fail! "case " (:id c) " answers with entity ids " (pr-str ids)
                                     ": return attribute values or pull an identifying attribute"))
                            [(:id c) a])))]
      (write-answers out-file (datomic-version) answers)
      (println "wrote" (count answers) "answers ("
               (count (filter :error (vals answers))) "errors) to" out-file)
      (report-documented! datasets documented))))

(apply -main *command-line-args*)
(shutdown-agents)
(System/exit 0)
