;; Workload Q (queries and transactions, seed 003 / seed 001) on the Datomic peer 1.0.7075,
;; in memory (datomic:mem://).
;;
;; Usage (see bench/peers/README.md):
;;   query.clj DATA.jsonl WORK_DIR [SECONDS] [TASKS]
;;     WORK_DIR is accepted for a uniform command line and unused (in-memory databases).
;; Prints one `RESULT {json}` line per task; `init` is reported as skipped (Datomic has no
;; bulk load of prepared datoms).
(load-file (str (.getParent (java.io.File. ^String *file*)) "/../clj/common.clj"))

(ns peers.datomic.query
  (:require [datomic.api :as d]
            [peers.common :as c])
  (:import [java.util ArrayList Collections Random]))

(def schema
  [{:db/ident :name :db/valueType :db.type/string :db/cardinality :db.cardinality/one
    ;; indexed so lookup-raw can read AVET (seed 001)
    :db/index true}
   {:db/ident :last-name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
   {:db/ident :sex :db/valueType :db.type/keyword :db/cardinality :db.cardinality/one}
   {:db/ident :age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
   {:db/ident :salary :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
   {:db/ident :follows :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}])

(def queries
  {"q1"        ['[:find ?e :where [?e :name "Ivan"]]]
   "q2"        ['[:find ?e ?a :where [?e :name "Ivan"] [?e :age ?a]]]
   "q2-switch" ['[:find ?e ?a :where [?e :age ?a] [?e :name "Ivan"]]]
   "q3"        ['[:find ?e ?a :where [?e :name "Ivan"] [?e :age ?a] [?e :sex :male]]]
   "q4"        ['[:find ?e ?l ?a :where [?e :name "Ivan"] [?e :last-name ?l] [?e :age ?a] [?e :sex :male]]]
   "q5"        ['[:find ?e1 ?l ?a :where [?e :name "Ivan"] [?e :age ?a] [?e1 :age ?a] [?e1 :last-name ?l]]]
   "qpred1"    ['[:find ?e ?s :where [?e :salary ?s] [(> ?s 50000)]]]
   "qpred2"    ['[:find ?e ?s :in $ ?min_s :where [?e :salary ?s] [(> ?s ?min_s)]] 50000]
   "lookup-q"  ['[:find ?l :with ?e :where [?e :name "Ivan"] [?e :last-name ?l]]]})

(defn lookup-raw
  "Seed 001: the :last-name of every entity named Ivan through the indexes: AVET, then EAVT."
  [db]
  (into []
        (mapcat (fn [datom] (map :v (d/datoms db :eavt (:e datom) :last-name))))
        (d/datoms db :avet :name "Ivan")))

(defn person-datoms [db]
  (reduce + (map (fn [a] (reduce (fn [n _] (inc n)) 0 (d/datoms db :aevt a))) c/person-attrs)))

(defn entity-map [p]
  ;; string tempids: Datomic assigns the entity ids
  {:db/id (str "p" (:id p)) :name (:name p) :last-name (:last-name p) :sex (:sex p)
   :age (:age p) :salary (:salary p)})

(def run-id (atom 0))

(defn new-conn []
  (let [uri (str "datomic:mem://bench-" (swap! run-id inc))]
    (d/create-database uri)
    (let [conn (d/connect uri)]
      @(d/transact conn schema)
      {:uri uri :conn conn})))

(defn drop-conn [{:keys [uri conn]}]
  (d/release conn)
  (d/delete-database uri))

(defn run-task [task people seconds]
  (let [tx-all     (mapv entity-map people)
        conn-count (fn [{:keys [conn]}] (person-datoms (d/db conn)))]
    (case task
      "init"
      {:median_ms nil :runs 0 :count nil :skipped "no init in Datomic"}

      "add-1"
      (c/bench-write seconds new-conn
                     (fn [{:keys [conn] :as st}]
                       (doseq [p people]
                         (let [report @(d/transact conn [[:db/add "p" :name (:name p)]])
                               e      (get (:tempids report) "p")]
                           (doseq [a (rest c/person-attrs)]
                             @(d/transact conn [[:db/add e a (get p a)]]))))
                       st)
                     conn-count drop-conn)

      "add-5"
      (c/bench-write seconds new-conn
                     (fn [{:keys [conn] :as st}]
                       (doseq [m tx-all] @(d/transact conn [m]))
                       st)
                     conn-count drop-conn)

      "add-all"
      (c/bench-write seconds new-conn
                     (fn [{:keys [conn] :as st}] @(d/transact conn tx-all) st)
                     conn-count drop-conn)

      "retract-5"
      (c/bench-write seconds
                     (fn []
                       (let [{:keys [conn] :as st} (new-conn)
                             db   (:db-after @(d/transact conn tx-all))
                             eids (ArrayList. ^java.util.Collection
                                              (mapv :e (d/datoms db :aevt :name)))]
                         (Collections/shuffle eids (Random. 42))
                         (assoc st :eids eids)))
                     (fn [{:keys [conn eids] :as st}]
                       (doseq [e eids] @(d/transact conn [[:db/retractEntity e]]))
                       st)
                     conn-count drop-conn))))

(defn run-queries [tasks people seconds]
  (let [{:keys [conn] :as st} (new-conn)
        db (:db-after @(d/transact conn (mapv entity-map people)))]
    (c/log! "datomic: query db loaded," (person-datoms db) "person datoms")
    (doseq [t tasks]
      (let [r (if (= t "lookup-raw")
                (c/bench-query seconds #(lookup-raw db))
                (let [[q & in] (queries t)]
                  (c/bench-query seconds #(apply d/q q db in))))]
        (c/result! (merge (array-map :peer "datomic" :workload "Q" :task t) r))))
    (drop-conn st)))

(let [[data work seconds tasks] *command-line-args*]
  (when-not (and data work)
    (c/die! 64 "usage: query.clj DATA.jsonl WORK_DIR [SECONDS] [TASKS]"))
  (let [seconds (if seconds (c/parse-double-arg "SECONDS" seconds) 5.0)
        tasks   (c/parse-tasks tasks (into c/write-tasks c/query-tasks))
        people  (c/read-people data)]
    (c/log! "datomic query:" (count people) "people from" data "seconds" seconds)
    (doseq [t tasks :when (some #{t} c/write-tasks)]
      (c/result! (merge (array-map :peer "datomic" :workload "Q" :task t)
                        (run-task t people seconds))))
    (let [qs (filter (set c/query-tasks) tasks)]
      (when (seq qs) (run-queries qs people seconds))))
  (d/shutdown false)
  (shutdown-agents)
  (System/exit 0))
