;; Shared helpers for the JVM peer harnesses (Datalevin, Datomic). Loaded with `load-file`
;; from each harness, so it must only use clojure.core and the JDK: the Datalevin runtime jar
;; and the Datomic classpath have different libraries. Output protocol: bench/peers/README.md.
(ns peers.common
  (:require [clojure.string :as str])
  (:import [java.lang.management ManagementFactory]
           [java.nio.file Files Path Paths]
           [java.io File]))

;; ---------------------------------------------------------------- output protocol

(defn- json-str [^String s]
  (let [sb (StringBuilder. "\"")]
    (doseq [c s]
      (case c
        \" (.append sb "\\\"")
        \\ (.append sb "\\\\")
        \newline (.append sb "\\n")
        \return (.append sb "\\r")
        \tab (.append sb "\\t")
        (if (< (int c) 0x20)
          (.append sb (format "\\u%04x" (int c)))
          (.append sb c))))
    (.append sb "\"")
    (str sb)))

(defn json
  "Minimal JSON writer for flat result maps: strings, keywords, integers, doubles, booleans, nil."
  [v]
  (cond
    (nil? v) "null"
    (boolean? v) (str v)
    (string? v) (json-str v)
    (keyword? v) (json-str (name v))
    (integer? v) (str v)
    (number? v) (let [d (double v)]
                  (if (or (Double/isNaN d) (Double/isInfinite d))
                    "null"
                    ;; Enough digits for sub-microsecond medians, no exponent noise.
                    (let [s (format "%.6f" d)]
                      (str/replace s #"\.?0+$" ""))))
    (map? v) (str "{" (str/join "," (map (fn [[k x]] (str (json-str (name k)) ":" (json x))) v)) "}")
    (sequential? v) (str "[" (str/join "," (map json v)) "]")
    :else (json-str (str v))))

(defn result!
  "Prints one `RESULT {json}` line on stdout (the only line the bench parses) and flushes."
  [m]
  ;; array-map keeps the field order we were given, for readable logs.
  (locking *out*
    (println (str "RESULT " (json m)))
    (flush)))

(defn log! [& xs]
  (locking *out*
    (println (str/join " " xs))
    (flush)))

(defn die!
  "Reports an error on stderr and exits the JVM with `code`."
  [code & xs]
  (binding [*out* *err*]
    (println (str "ERROR: " (str/join " " xs)))
    (flush))
  (shutdown-agents)
  (System/exit code))

;; ---------------------------------------------------------------- process accounting

(defn- read-proc
  "Reads a /proc file as text (`slurp` fails on them: they report a size of 0)."
  [path]
  (with-open [r (java.io.BufferedReader. (java.io.FileReader. ^String path))]
    (str/join "\n" (line-seq r))))

(defn cpu-times
  "User and system CPU seconds of this JVM process so far, from /proc/self/stat (Linux);
   falls back to the total from OperatingSystemMXBean as :user-s with :sys-s nil."
  []
  (try
    (let [stat  (read-proc "/proc/self/stat")
          ;; fields after the parenthesised command name; utime is field 14, stime 15 (1-based)
          rest  (subs stat (+ 2 (str/last-index-of stat ")")))
          parts (str/split rest #" ")
          hz    100.0]
      {:user-s (/ (Long/parseLong (nth parts 11)) hz)
       :sys-s  (/ (Long/parseLong (nth parts 12)) hz)})
    (catch Exception _
      (let [os (ManagementFactory/getOperatingSystemMXBean)]
        {:user-s (if (instance? com.sun.management.OperatingSystemMXBean os)
                   (/ (.getProcessCpuTime ^com.sun.management.OperatingSystemMXBean os) 1e9)
                   nil)
         :sys-s  nil}))))

(defn peak-rss-kb
  "Peak resident set size (VmHWM) of this process in KiB, or nil where /proc is missing."
  []
  (try
    (some->> (read-proc "/proc/self/status")
             str/split-lines
             (some #(when (str/starts-with? % "VmHWM:") %))
             (re-find #"\d+")
             Long/parseLong)
    (catch Exception _ nil)))

(defn cpu-delta
  "CPU seconds used between two `cpu-times` snapshots."
  [a b]
  {:user_s (when (and (:user-s a) (:user-s b)) (- (:user-s b) (:user-s a)))
   :sys_s  (when (and (:sys-s a) (:sys-s b)) (- (:sys-s b) (:sys-s a)))})

;; ---------------------------------------------------------------- small utilities

(defn now-ms ^double [] (/ (System/nanoTime) 1e6))

(defn median [xs]
  (let [v (vec (sort xs)) n (count v)]
    (cond
      (zero? n) nil
      (odd? n) (double (v (quot n 2)))
      :else (/ (+ (double (v (dec (quot n 2)))) (double (v (quot n 2)))) 2.0))))

(defn delete-tree!
  "Deletes a directory tree (used for per-run scratch databases)."
  [path]
  (let [f (File. (str path))]
    (when (.exists f)
      (doseq [^File c (reverse (file-seq f))]
        (.delete c)))))

(defn parse-long-arg [name s]
  (or (try (Long/parseLong (str s)) (catch Exception _ nil))
      (die! 64 (str "argument " name " must be an integer, got '" s "'"))))

(defn parse-double-arg [name s]
  (or (try (Double/parseDouble (str s)) (catch Exception _ nil))
      (die! 64 (str "argument " name " must be a number, got '" s "'"))))

;; ---------------------------------------------------------------- seeded data (SplitMix64)
;; The same stream as datalith-testdata's SplitMix64 (Rust), so Datalevin writes the values and
;; picks the mixed-phase keys that Datalith's conditions do, from the same printed seed.

(defn splitmix
  "A SplitMix64 stream of `seed` (a volatile holding its state)."
  [seed]
  (volatile! (long seed)))

(defn splitmix-next!
  "The next 64 bits of stream `st`, as a long."
  ^long [st]
  (let [z (vswap! st #(unchecked-add (long %) -7046029254386353131))
        z (unchecked-multiply (bit-xor z (unsigned-bit-shift-right z 30)) -4658895280553007687)
        z (unchecked-multiply (bit-xor z (unsigned-bit-shift-right z 27)) -7723592293110705685)]
    (bit-xor z (unsigned-bit-shift-right z 31))))

(defn splitmix-below!
  "Uniform in 0..n-1 by unsigned remainder (as the Rust side's `% n`)."
  ^long [st ^long n]
  (Long/remainderUnsigned (splitmix-next! st) n))

(defn splitmix-uuid!
  "The next version-4 UUID string of stream `st` (two draws; the Rust side's `uuid_bytes`)."
  [st]
  (let [hi (bit-or (bit-and (splitmix-next! st) (bit-not 0xF000)) 0x4000)
        lo (bit-or (bit-and (splitmix-next! st) 0x3FFFFFFFFFFFFFFF) Long/MIN_VALUE)]
    (str (java.util.UUID. hi lo))))

;; datalith-bench's MIXED_STREAM: the mixed keys of seed S come from the stream S ^ this.
(def mixed-stream 7883964999559768933)

(defn mixed-keys
  "A fn returning the next mixed-phase key, uniform in 1..key-max, for `seed`."
  [seed key-max]
  (let [st (splitmix (bit-xor (long seed) mixed-stream))]
    (fn [] (inc (splitmix-below! st (long key-max))))))

;; ---------------------------------------------------------------- write-run metrics

(defn new-meter
  "Accumulates the W metrics. `record-call!` runs on the submitting thread, `record-commit!`
   on whichever thread sees the durable completion (a callback thread for async); rows are
   emitted when the committed-write count crosses a multiple of `window`."
  [window]
  {:window     window
   :lock       (Object.)
   :start-ns   (atom (System/nanoTime))
   ;; all mutable state lives in one atom-free map guarded by :lock
   :state      (volatile! {:committed 0 :next-row window
                           :call-ns 0 :calls 0
                           :commit-ns 0 :commits 0
                           :rows []})
   ;; every call's commit latency (ns), for the run's percentiles: a growable long[]
   :samples    (volatile! (long-array 1024))
   :n-samples  (volatile! 0)})

(defn meter-start! [m] (reset! (:start-ns m) (System/nanoTime)))

(defn record-call! [m ^long dt]
  (locking (:lock m)
    (vswap! (:state m) #(-> % (update :call-ns + dt) (update :calls inc)))))

(defn- row [m s committed]
  (let [elapsed (/ (- (System/nanoTime) @(:start-ns m)) 1e9)]
    {:writes            committed
     :seconds           elapsed
     :throughput_wps    (if (pos? elapsed) (/ committed elapsed) 0.0)
     :call_latency_ms   (if (pos? (:calls s)) (/ (:call-ns s) (:calls s) 1e6) 0.0)
     :commit_latency_ms (if (pos? (:commits s)) (/ (:commit-ns s) (:commits s) 1e6) 0.0)}))

(defn record-commit!
  "One call of `n` writes became durable, `dt` ns after it was submitted."
  [m n ^long dt]
  (locking (:lock m)
    (let [^longs a @(:samples m)
          i        (long @(:n-samples m))
          ^longs a (if (< i (alength a)) a (java.util.Arrays/copyOf a (* 2 (alength a))))]
      (aset a i dt)
      (vreset! (:samples m) a)
      (vreset! (:n-samples m) (inc i)))
    (let [s (-> @(:state m)
                (update :committed + n)
                (update :commit-ns + dt)
                (update :commits inc))]
      (vreset! (:state m)
               (if (>= (:committed s) (:next-row s))
                 (let [r (row m s (:committed s))]
                   (-> s
                       (update :rows conj r)
                       (assoc :call-ns 0 :calls 0 :commit-ns 0 :commits 0)
                       (assoc :next-row (* (:window m) (inc (quot (:committed s) (:window m)))))))
                 s)))))

(defn meter-finish!
  "Adds a last row if writes were committed after the last full window; returns the rows."
  [m]
  (locking (:lock m)
    (let [s @(:state m)
          last-w (:writes (peek (:rows s)) 0)]
      (if (> (:committed s) last-w)
        (:rows (vswap! (:state m) update :rows conj (row m s (:committed s))))
        (:rows s)))))

(defn committed [m] (locking (:lock m) (:committed @(:state m))))

(defn commit-quantiles
  "The median and 99th percentile (nearest rank) of every recorded commit latency, in ms:
   {:commit_p50_ms .. :commit_p99_ms ..}, nils without samples."
  [m]
  (locking (:lock m)
    (let [n (long @(:n-samples m))]
      (if (zero? n)
        {:commit_p50_ms nil :commit_p99_ms nil}
        (let [^longs a (java.util.Arrays/copyOf ^longs @(:samples m) (int n))
              at       (fn [q] (/ (aget a (int (Math/round (* q (dec n))))) 1e6))]
          (java.util.Arrays/sort a)
          {:commit_p50_ms (at 0.5) :commit_p99_ms (at 0.99)})))))

(defn write-csv!
  "Writes the W CSV: header exactly `writes,seconds,throughput_wps,call_latency_ms,commit_latency_ms`."
  [path rows]
  (when (and path (not= path "-") (not= path ""))
    (let [f (File. (str path))]
      (some-> (.getParentFile f) (.mkdirs))
      (spit f
            (str "writes,seconds,throughput_wps,call_latency_ms,commit_latency_ms\n"
                 (apply str
                        (for [r rows]
                          (format "%d,%.3f,%.1f,%.4f,%.4f\n"
                                  (long (:writes r)) (double (:seconds r)) (double (:throughput_wps r))
                                  (double (:call_latency_ms r)) (double (:commit_latency_ms r))))))))))

;; ---------------------------------------------------------------- workload Q data

(def person-attrs [:name :last-name :sex :age :salary])

(defn- json-parser
  "Returns a fn parsing one JSON line into a map with keyword keys, using whichever JSON
   library is on the classpath (jsonista ships in the Datalevin jar, data.json with Datomic)."
  []
  (if-let [rv (try (requiring-resolve 'clojure.data.json/read-str) (catch Exception _ nil))]
    (fn [line] (rv line :key-fn keyword))
    (if-let [rv (try (requiring-resolve 'jsonista.core/read-value) (catch Exception _ nil))]
      (let [mapper ((requiring-resolve 'jsonista.core/object-mapper) {:decode-key-fn keyword})]
        (fn [line] (rv line mapper)))
      (die! 70 "no JSON library on the classpath (need clojure.data.json or jsonista)"))))

(defn read-people
  "Reads the workload Q data file: JSON lines, one person per line,
   {\"id\":N,\"name\":..,\"last-name\":..,\"sex\":\"male\"|\"female\",\"age\":N,\"salary\":N,\"follows\":[ids]}.
   Returns a vector of maps {:id :name :last-name :sex (keyword) :age :salary}, in file order.
   `follows` is accepted and ignored (workload Q uses the five scalar attributes only)."
  [path]
  (let [parse (json-parser)]
    (with-open [r (clojure.java.io/reader (str path))]
      (into []
            (comp (remove str/blank?)
                  (map parse)
                  (map (fn [p]
                         {:id        (long (:id p))
                          :name      (:name p)
                          :last-name (:last-name p)
                          :sex       (keyword (:sex p))
                          :age       (long (:age p))
                          :salary    (long (:salary p))})))
            (line-seq r)))))

;; ---------------------------------------------------------------- workload Q timing

(def query-tasks ["q1" "q2" "q2-switch" "q3" "q4" "q5" "qpred1" "qpred2" "lookup-q" "lookup-raw"])
(def write-tasks ["init" "add-1" "add-5" "add-all" "retract-5"])

(defn bench-query
  "Warms `f` up for two thirds of `seconds` (at least 3 calls; the same warm-up every peer of
   datalith-bench gets), then calls it repeatedly for `seconds`, timing each call. Returns
   {:median_ms :runs :count} where count is the size of the last result."
  [seconds f]
  (let [warm-end (+ (now-ms) (/ (* 2000.0 seconds) 3.0))]
    (loop [i 0]
      (f)
      (when (or (< i 2) (< (now-ms) warm-end)) (recur (inc i)))))
  (let [end (+ (now-ms) (* 1000.0 seconds))
        times (java.util.ArrayList.)]
    (loop [res nil]
      (let [t0 (System/nanoTime)
            r  (f)
            dt (/ (- (System/nanoTime) t0) 1e6)]
        (.add times dt)
        (if (< (now-ms) end)
          (recur r)
          {:median_ms (median times) :runs (.size times) :count (count r)})))))

(defn bench-write
  "Write tasks are expensive, so each run gets fresh state: `setup` builds it (untimed), `f`
   does the timed work on it and returns the state to inspect, `count-fn` gives the result
   count (untimed), `teardown` cleans up (untimed). One warm-up run, then runs until `seconds`
   have passed (at least one timed run)."
  [seconds setup f count-fn teardown]
  (let [once (fn []
               (let [st  (setup)
                     t0  (System/nanoTime)
                     st2 (f st)
                     dt  (/ (- (System/nanoTime) t0) 1e6)
                     c   (count-fn st2)]
                 (teardown st2)
                 [dt c]))]
    (once)
    (let [end (+ (now-ms) (* 1000.0 seconds))]
      (loop [times []]
        (let [[dt c] (once)
              times (conj times dt)]
          (if (< (now-ms) end)
            (recur times)
            {:median_ms (median times) :runs (count times) :count c}))))))

(defn parse-tasks [s all]
  (if (or (nil? s) (= s "") (= s "all"))
    all
    (let [ts (str/split s #",")]
      (doseq [t ts]
        (when-not (some #{t} all) (die! 64 (str "unknown task '" t "'; known: " (str/join "," all)))))
      ts)))
