;; Whether Datalevin's server (`dtlv serv`, the namespace `datalevin.server`) can run from the
;; Datalevin install.sh installs (the PyPI wheel's datalevin-runtime jar), for the
;; `datalevin-remote` peer of `datalith-bench query --remote` and `write --remote`.
;;
;; Usage: server-check.clj
;; Exits 0 when `datalevin.server` loads; otherwise prints `SKIP <why>` (with the loader's
;; error text) on stderr and exits 69, which the bench reports as a skipped peer.
(try
  (require 'datalevin.server)
  (println "datalevin.server loads")
  (shutdown-agents)
  (System/exit 0)
  (catch Throwable e
    (binding [*out* *err*]
      (println (str "SKIP Datalevin's server cannot run from datalevin-runtime-1.2.8.jar "
                    "(the PyPI wheel ships the client, not `dtlv serv`): "
                    "(require 'datalevin.server) failed: "
                    (.getMessage (or (.getCause e) e)))))
    (System/exit 69)))
