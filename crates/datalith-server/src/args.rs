//! The command line of `datalith serve`, defined here so that the `datalith` command only
//! names it (`Serve(ServeArgs)`) and the server owns its options.

use std::path::PathBuf;

/// Default address: loopback only, so a server started to try something is reachable from
/// this machine alone.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7171";

/// `datalith serve DIR [DIR...] [--listen ADDR] [--tokens FILE] ...`.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Database directories to serve (created if missing); each is named by its directory's
    /// name in URLs (`/db/NAME/q`). None needed with --create-in.
    #[arg(required_unless_present = "create_in")]
    pub dirs: Vec<PathBuf>,
    /// Address to listen on, HOST:PORT (port 0: any free port, printed at start). Beyond
    /// loopback only with --tokens, and with TLS (--tls-cert, --tls-key) or --insecure.
    #[arg(long, default_value = DEFAULT_LISTEN)]
    pub listen: String,
    /// Let admins create databases as directories of DIR (`POST /dbs`) and delete them
    /// (`DELETE /db/NAME`); the databases in DIR are served too.
    #[arg(long, value_name = "DIR")]
    pub create_in: Option<PathBuf>,
    /// Bearer tokens: lines `NAME ROLE DB-OR-* SHA256-HEX-OF-TOKEN`, ROLE read, write or
    /// admin. Without it every request is allowed, so the server listens on loopback only.
    #[arg(long, value_name = "FILE")]
    pub tokens: Option<PathBuf>,
    /// Listen beyond loopback without TLS (tokens and data travel in clear text: a private
    /// network, or a TLS proxy in front); still needs --tokens.
    #[arg(long)]
    pub insecure: bool,
    /// The server's certificate chain (PEM), for TLS: clients then connect with https://
    /// (HTTP/1.1 or HTTP/2 by ALPN). `datalith cert` makes a self-signed one to try.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM: PKCS#8, RSA or EC).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Certificates (PEM) a client's certificate must chain to: with it, every TLS
    /// connection presents a client certificate (mutual TLS), and one without is refused in
    /// the handshake. A CA's, or a client's own self-signed one from `datalith cert`.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_client_ca: Option<PathBuf>,
    /// Certificate revocation lists (PEM, -----BEGIN X509 CRL-----) of the --tls-client-ca
    /// issuers: a client certificate one of them revokes is refused in the handshake, and so
    /// is one whose issuer has no list in the file. Read again on SIGHUP, as the
    /// certificate is.
    #[arg(long, value_name = "FILE", requires = "tls_client_ca")]
    pub tls_client_crl: Option<PathBuf>,
    /// How long a request body may take to arrive (later: 408).
    #[arg(long, default_value_t = 30_000, value_name = "MS")]
    pub body_timeout_ms: u64,
    /// The largest request body, in bytes (larger: 413).
    #[arg(long, default_value_t = 16 << 20, value_name = "BYTES")]
    pub max_body_bytes: usize,
    /// Requests that run at once; more wait up to --queue-timeout-ms, then get 503.
    #[arg(long, default_value_t = 64, value_name = "N")]
    pub max_concurrent: usize,
    /// Connections open at once; more wait, unaccepted, until one closes.
    #[arg(long, default_value_t = 1024, value_name = "N")]
    pub max_connections: usize,
    /// Connections one client address may hold at once; past them its new connections are
    /// closed as soon as accepted (so one host's idle connections cannot take every place).
    /// 0: no limit (behind a proxy, every client has the proxy's address).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub max_connections_per_address: usize,
    /// How long a client may take to send a request's headers before its connection is
    /// closed (slow clients hold a connection otherwise).
    #[arg(long, default_value_t = 10_000, value_name = "MS")]
    pub header_timeout_ms: u64,
    /// How long a write of an answer may wait for the client to take any of it before the
    /// connection is closed (a client that stops reading holds its connection, and a
    /// streamed answer's rest, otherwise). Only waiting counts: a slow, steady reader is
    /// kept.
    #[arg(long, default_value_t = 30_000, value_name = "MS")]
    pub send_timeout_ms: u64,
    /// How long a request waits for one of the --max-concurrent places.
    #[arg(long, default_value_t = 5_000, value_name = "MS")]
    pub queue_timeout_ms: u64,
    /// A query's timeout when the request names none, and the most a request may ask for.
    #[arg(long, default_value_t = 30_000, value_name = "MS")]
    pub query_timeout_ms: u64,
    /// Requests a second each token may send (in bursts of as many); past it, 429. 0: no
    /// limit.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub token_rate: u32,
    /// Requests a second each client address may send (in bursts of as many), counted
    /// before tokens are read; past it, 429. `/health` is not counted. 0: no limit.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub address_rate: u32,
    /// A proxy in front of the server (repeatable): for a request from it, the client's
    /// address for --address-rate is the last one in its `X-Forwarded-For` that is not a
    /// trusted proxy. Without it the header is ignored (anyone can write one).
    #[arg(long = "trusted-proxy", value_name = "IP")]
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// Log every request on standard error, one EDN map a line (time, operation, database,
    /// status, milliseconds, token name).
    #[arg(long)]
    pub log_requests: bool,
    /// The longest a read may ask the server to keep the database value it answered from
    /// (`:lease-ms`), so that later requests read the same value (`:basis-t`); 0: never.
    #[arg(long, default_value_t = 60_000, value_name = "MS")]
    pub max_lease_ms: u64,
    /// The most values of one database kept leased at once; past them the lease that would
    /// end first ends early (each is an open snapshot: one of the database's 4096 LMDB reader
    /// slots).
    #[arg(long, default_value_t = crate::ops::leases::DEFAULT_MAX_LEASES, value_name = "N")]
    pub max_leases: usize,
    /// The memory each database may spend keeping the results of paged queries (`q` with
    /// `:limit`/`:offset`), so that the pages after the first are slices of one result
    /// instead of each running the query again; each is kept until unused for
    /// --max-lease-ms (a minute at least). 0: keep none.
    #[arg(long, default_value_t = 64 << 20, value_name = "BYTES")]
    pub page_cache_bytes: usize,
    /// Which datoms a database this server creates keeps in AVE: `declared` (the default:
    /// only those of `:db/index`, `:db/unique` and ref attributes, Datomic's choice) or `all`
    /// (every datom, Datalevin's choice). An existing database keeps its own.
    #[arg(long, value_enum, default_value_t = ValueIndexArg::Declared, value_name = "WHICH")]
    pub value_index: ValueIndexArg,
    /// The most memory one query may hold, in bytes (default: the library's, a quarter of
    /// physical memory); a request may ask for less.
    #[arg(long, value_name = "BYTES")]
    pub query_memory_limit: Option<u64>,
    /// The most threads one query may run on (default: the library's, the machine's cores
    /// up to 4). A large query spreads its later steps over them; under many concurrent
    /// requests, 1 keeps each on its own thread.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub query_threads: Option<u16>,
    /// Threads that read requests and run short work in place (default: one per core, or
    /// `TOKIO_WORKER_THREADS`). With one, a lone client's requests never move between threads
    /// (with two, each request's own wake-up during its read makes the runtime wake the
    /// other thread, which often takes the request over: batch-100 writes over loopback ~7%
    /// faster a call with one here), and short queries run in place only while nothing else
    /// runs, so that under load the blocking threads answer them on every core.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub workers: Option<u16>,
    /// Keep the database's transaction log on Apache Kafka, shared by every node started
    /// with the same address: kafka://HOST:PORT[,HOST:PORT...]/TOPIC[?replication=N]. Every
    /// node applies the topic to its own files and answers reads from them; one database
    /// per server.
    #[arg(long, value_name = "URL")]
    pub log: Option<String>,
}

/// `--value-index`: which datoms a new database keeps in AVE (`datalith::ValueIndex`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ValueIndexArg {
    /// Every datom (Datalevin's choice).
    All,
    /// Only those of `:db/index`, `:db/unique` and ref attributes (Datomic's choice; the
    /// default).
    Declared,
}

impl From<ValueIndexArg> for datalith::ValueIndex {
    fn from(a: ValueIndexArg) -> datalith::ValueIndex {
        match a {
            ValueIndexArg::All => datalith::ValueIndex::All,
            ValueIndexArg::Declared => datalith::ValueIndex::Declared,
        }
    }
}
