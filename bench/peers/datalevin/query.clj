;; Workload Q (queries and transactions, seed 003 / seed 001) on the real Datalevin, on disk,
;; or through Datalevin's server (the `datalevin-remote` peer of `datalith-bench query --remote`).
;;
;; Usage (see bench/peers/README.md):
;;   query.clj DATA.jsonl WORK_DIR [SECONDS] [TASKS] [SERVER]
;;     DATA.jsonl  people, one JSON object per line
;;     WORK_DIR    scratch directory for the databases (created; each run uses a fresh subdir)
;;     SECONDS     timed duration per task, default 5
;;     TASKS       comma-separated subset of init,add-1,add-5,add-all,retract-5,q1,q2,q2-switch,
;;                 q3,q4,q5,qpred1,qpred2,lookup-q,lookup-raw (default: all)
;;     SERVER      `dtlv://USER:PASSWORD@HOST:PORT` of a running Datalevin server: every database
;;                 is then one of that server's (`d/get-conn` of `SERVER/NAME`, Datalevin's default
;;                 durable flags), each write run a fresh one dropped after it, the peer is
;;                 `datalevin-remote`, and `init` and `lookup-raw` are reported skipped (as for
;;                 datalith-remote). WORK_DIR is then unused.
;; Prints one `RESULT {json}` line per task.
(load-file (str (.getParent (java.io.File. ^String *file*)) "/../clj/common.clj"))

(ns peers.datalevin.query
  (:require [clojure.string :as str]
            [datalevin.client :as client]
            [datalevin.core :as d]
            [datalevin.query]
            [datalevin.query.cache]
            [peers.common :as c])
  (:import [java.util ArrayList Collections Random]))

;; Seed 003: without this Datalevin answers repeated queries from its result cache.
(alter-var-root #'datalevin.query/*cache?* (constantly false))
(alter-var-root #'datalevin.query.cache/*cache?* (constantly false))

(def schema
  {:follows   {:db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
   :name      {:db/valueType :db.type/string}
   :last-name {:db/valueType :db.type/string}
   :sex       {:db/valueType :db.type/keyword}
   :age       {:db/valueType :db.type/long}
   :salary    {:db/valueType :db.type/long}})

;; `dtlv://USER:PASSWORD@HOST:PORT` when the databases are a server's (SERVER argument).
(def server (atom nil))

(defn peer [] (if @server "datalevin-remote" "datalevin"))

;; Seed 003's flags: on disk, but no fsync (Datomic and Datascript run in memory). Over the
;; server, Datalevin's defaults (durable: fsync per commit), as datalith-remote is durable.
(defn opts [] (if @server {} {:kv-opts {:flags #{:nordahead :notls :writemap :nosync}}}))

;; Why a task does not run over the server: the same two as datalith-remote's.
(def not-remote
  {"init"       "no bulk loader over the server (as datalith-remote: init_db writes the files)"
   "lookup-raw" "no raw index access over the server (as datalith-remote: its client has none)"})

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
  "Seed 001: the :last-name of every entity named Ivan through the indexes: AVE, then EAV."
  [db]
  (into []
        (mapcat (fn [datom] (map :v (d/datoms db :eav (:e datom) :last-name))))
        (d/datoms db :ave :name "Ivan")))

(defn person-datoms
  "Number of person datoms (the five scalar attributes) in `db`. Over the server a
   `(count ?e)` query per attribute (each of cardinality one), as datalith-remote counts: the
   1.2.8 client's `count-datoms` asks the server for `:a-size`, which this server lacks."
  [db]
  (if @server
    (reduce + (map #(or (d/q '[:find (count ?e) . :in $ ?a :where [?e ?a]] db %) 0)
                   c/person-attrs))
    (reduce + (map #(d/count-datoms db nil % nil) c/person-attrs))))

(defn entity-map [p]
  {:db/id (:id p) :name (:name p) :last-name (:last-name p) :sex (:sex p)
   :age (:age p) :salary (:salary p)})

(def run-id (atom 0))

(defn fresh-dir
  "A new database: a subdirectory of `work`, or over the server a new database name on it."
  [work task]
  (if-let [srv @server]
    (str srv "/" task "-" (swap! run-id inc))
    (str work "/" task "-" (swap! run-id inc))))

(defn drop-db!
  "Deletes a database: its directory, or over the server the database (through Datalevin's
   admin client, untimed)."
  [dir]
  (if-let [srv @server]
    (let [cl (client/new-client srv)]
      (try
        ;; The server keeps a database open after its last connection closes.
        (client/close-database cl (subs dir (inc (count srv))))
        (client/drop-database cl (subs dir (inc (count srv))))
        (catch Exception e (c/log! "datalevin-remote: drop-database" dir "failed:" (.getMessage e)))
        (finally (client/disconnect cl))))
    (c/delete-tree! dir)))

(defn run-task [task people work seconds]
  (let [tx-all (mapv entity-map people)
        setup  (fn [] (let [dir (fresh-dir work task)]
                        {:dir dir :conn (d/get-conn dir schema (opts))}))
        done   (fn [{:keys [conn dir db]}]
                 (when conn (d/close conn))
                 (when db (d/close-db db))
                 (drop-db! dir))
        conn-count (fn [{:keys [conn] :as st}] (assoc st :count (person-datoms (d/db conn))))
        cnt    :count]
    (case task
      "init"
      (let [datoms (into [] (for [p people a c/person-attrs] (d/datom (:id p) a (get p a))))]
        (c/bench-write seconds
                       (fn [] {:dir (fresh-dir work task)})
                       (fn [{:keys [dir] :as st}] (assoc st :db (d/init-db datoms dir schema (opts))))
                       (fn [{:keys [db]}] (person-datoms db))
                       done))

      "add-1"
      (c/bench-write seconds setup
                     (fn [{:keys [conn] :as st}]
                       (doseq [p people a c/person-attrs]
                         (d/transact! conn [[:db/add (:id p) a (get p a)]]))
                       st)
                     (comp cnt conn-count) done)

      "add-5"
      (c/bench-write seconds setup
                     (fn [{:keys [conn] :as st}]
                       (doseq [m tx-all] (d/transact! conn [m]))
                       st)
                     (comp cnt conn-count) done)

      "add-all"
      (c/bench-write seconds setup
                     (fn [{:keys [conn] :as st}] (d/transact! conn tx-all) st)
                     (comp cnt conn-count) done)

      "retract-5"
      (c/bench-write seconds
                     (fn []
                       (let [{:keys [conn] :as st} (setup)
                             _    (d/transact! conn tx-all)
                             eids (ArrayList. ^java.util.Collection
                                              (mapv :e (d/datoms (d/db conn) :ave :name)))]
                         (Collections/shuffle eids (Random. 42))
                         (assoc st :eids eids)))
                     (fn [{:keys [conn eids] :as st}]
                       (doseq [e eids] (d/transact! conn [[:db/retractEntity e]]))
                       st)
                     (comp cnt conn-count) done))))

(defn run-queries [tasks people work seconds]
  (let [dir  (fresh-dir work "query")
        conn (d/get-conn dir schema (opts))]
    (d/transact! conn (mapv entity-map people))
    (let [db (d/db conn)]
      (c/log! (str (peer) ": query db loaded,") (person-datoms db) "person datoms")
      (doseq [t tasks]
        (let [r (if (= t "lookup-raw")
                  (c/bench-query seconds #(lookup-raw db))
                  (let [[q & in] (queries t)]
                    (c/bench-query seconds #(apply d/q q db in))))]
          (c/result! (merge (array-map :peer (peer) :workload "Q" :task t) r)))))
    (d/close conn)
    (drop-db! dir)))

(let [[data work seconds tasks srv] *command-line-args*]
  (when-not (and data work)
    (c/die! 64 "usage: query.clj DATA.jsonl WORK_DIR [SECONDS] [TASKS] [SERVER]"))
  (when (seq srv)
    (when-not (str/starts-with? srv "dtlv://")
      (c/die! 64 (str "SERVER must be dtlv://USER:PASSWORD@HOST:PORT, got '" srv "'")))
    (reset! server (str/replace srv #"/+$" "")))
  (let [seconds (if seconds (c/parse-double-arg "SECONDS" seconds) 5.0)
        tasks   (c/parse-tasks tasks (into c/write-tasks c/query-tasks))
        skipped (if @server (filter not-remote tasks) [])
        tasks   (remove (set skipped) tasks)
        people  (c/read-people data)]
    (when-not @server (.mkdirs (java.io.File. ^String work)))
    (c/log! (peer) "query:" (count people) "people from" data "seconds" seconds
            (if @server (str "server " (str/replace @server #"//[^@]*@" "//")) ""))
    (doseq [t skipped]
      (c/result! (array-map :peer (peer) :workload "Q" :task t :median_ms nil :runs 0
                            :count nil :skipped (not-remote t))))
    (doseq [t tasks :when (some #{t} c/write-tasks)]
      (c/result! (merge (array-map :peer (peer) :workload "Q" :task t)
                        (run-task t people work seconds))))
    (let [qs (filter (set c/query-tasks) tasks)]
      (when (seq qs) (run-queries qs people work seconds))))
  (shutdown-agents)
  (System/exit 0))
