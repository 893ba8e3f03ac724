;; Workload S (datalith-bench search) on Datalevin's full-text search engine (datalevin.core's
;; search API), on disk.
;;
;; Usage: search.clj DOCS.tsv QUERIES.tsv WORK_DIR OUT.tsv BATCH ROUNDS WARM
;; Protocol: crates/datalith-bench/src/search/external.rs. Indexes the first WARM documents
;; into WORK_DIR/warmup (untimed, then deleted: the JIT), then the documents into
;; WORK_DIR/nosync (KV flags #{:nordahead :notls :nosync}) then WORK_DIR/durable (Datalevin's
;; default flags: durable), BATCH documents per `search-index-writer` + `commit` (its bulk
;; API); then queries the durable index: one untimed round, then ROUNDS timed rounds.
;; The analyzer: runs of letters and digits, lower-cased, as SQLite FTS5's unicode61 (the
;; JDK's word BreakIterator is no UAX #29: it keeps `Ab"di` one word); no stop words
;; (Datalevin's default analyzer drops English stop words). Positions are indexed (phrases need them). Datalevin caches search results:
;; the engine's cache is cleared before every timed call (untimed), so each call searches.
;; Datalevin has no count call: a count is the length of `search` with :top the number of
;; documents.
(load-file (str (.getParent (java.io.File. ^String *file*)) "/../clj/common.clj"))

(ns peers.datalevin.search
  (:require [datalevin.core :as d]
            [clojure.edn :as edn]
            [clojure.java.io :as io]
            [clojure.string :as str]
            [peers.common :as c])
  (:import [java.util Locale]))

(def mapsize-mb 16384)

(def ^java.util.regex.Pattern word #"[\p{IsAlphabetic}\p{N}]+")

(defn analyzer
  "[term position offset] of each run of letters and digits of `text`, lower-cased."
  [^String text]
  (let [m (.matcher word text)]
    (loop [pos 0 acc (transient [])]
      (if (.find m)
        (recur (inc pos) (conj! acc [(.toLowerCase (.group m) Locale/ROOT) pos (.start m)]))
        (persistent! acc)))))

(def engine-opts {:analyzer analyzer :index-position? true})

(defn- read-tsv [path]
  (with-open [r (io/reader path)]
    (mapv #(str/split % #"\t") (line-seq r))))

(defn- open-kv [dir durable?]
  (if durable?
    (d/open-kv dir {:mapsize mapsize-mb})
    (d/open-kv dir {:mapsize mapsize-mb :flags #{:nordahead :notls :nosync}})))

(defn- index! [dir docs batch durable?]
  (let [kv (open-kv dir durable?)]
    (doseq [chunk (partition-all batch docs)]
      (let [w (d/search-index-writer kv engine-opts)]
        (doseq [[id text] chunk]
          (d/write w (Long/parseLong id) text))
        (d/commit w)))
    (d/close-kv kv)))

(defn- clear-cache! [engine]
  (.clear ^datalevin.utl.LRUCache (.-cache ^datalevin.search.SearchEngine engine)))

(defn- run-queries [engine queries ndocs rounds out]
  (let [qs     (mapv (fn [[id _ _ edn-text]] [id (edn/read-string edn-text)]) queries)
        top10  (fn [q] (vec (d/search engine q {:top 10})))
        cnt    (fn [q] (count (d/search engine q {:top ndocs})))
        first* (mapv (fn [[_ q]] (clear-cache! engine) [(cnt q) (top10 q)]) qs)
        timed  (fn [f q] (clear-cache! engine)
                 (let [t0 (System/nanoTime) v (f q)] [(- (System/nanoTime) t0) v]))
        times  (vec (for [_ (range rounds)]
                      (mapv (fn [[id q] [c t]]
                              (let [[tn top] (timed top10 q)
                                    [cn n] (timed cnt q)]
                                (when (or (not= top t) (not= n c))
                                  (throw (ex-info (str "query " id " answered differently") {})))
                                [tn cn]))
                            qs first*)))]
    (with-open [w (io/writer out)]
      (doseq [[i [id _]] (map-indexed vector qs)]
        (let [[c t] (first* i)]
          (.write w (str id "\t" c "\t" (str/join "," t) "\t\t"
                         (str/join "," (map #(first (nth % i)) times)) "\t"
                         (str/join "," (map #(second (nth % i)) times)) "\n")))))))

(defn -main [docs-tsv queries-tsv work out batch rounds warm]
  (try
    (let [docs    (read-tsv docs-tsv)
          batch   (c/parse-long-arg "BATCH" batch)
          rounds  (c/parse-long-arg "ROUNDS" rounds)
          warm    (c/parse-long-arg "WARM" warm)]
      (index! (str work "/warmup") (take warm docs) batch false)
      (c/delete-tree! (str work "/warmup"))
      (doseq [mode ["nosync" "durable"]]
        (let [dir (str work "/" mode)
              t0  (System/nanoTime)]
          (c/delete-tree! dir)
          (index! dir docs batch (= mode "durable"))
          (c/result! (array-map :task "index" :mode mode
                                :seconds (/ (- (System/nanoTime) t0) 1e9)
                                :docs (count docs)))))
      (let [kv     (open-kv (str work "/durable") true)
            engine (d/new-search-engine kv engine-opts)
            n      (d/doc-count engine)]
        (when (not= n (count docs))
          (throw (ex-info (str "doc-count " n ", want " (count docs)) {})))
        (run-queries engine (read-tsv queries-tsv) n rounds out)
        (d/close-kv kv)))
    (catch Throwable e
      (.printStackTrace e)
      (c/result! (array-map :task "error" :message (str e)))
      (shutdown-agents)
      (System/exit 1)))
  (shutdown-agents)
  (System/exit 0))

(apply -main *command-line-args*)
