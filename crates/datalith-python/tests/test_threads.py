"""Threads, the GIL, asynchronous transactions and Ctrl-C."""

import _thread
import asyncio
import threading
import time

import datalith

SLOW = "[:find (count ?a) . :where [?a :n] [?b :n] [?c :n]]"


def slow_db(conn, n=1500):
    conn.transact('[{:db/ident :n :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]')
    conn.transact([{":n": i} for i in range(n)])
    return conn.db()


def test_many_threads_transact_and_read(conn):
    conn.transact('[{:db/ident :k :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}]')
    errors = []

    def work(t):
        try:
            for i in range(50):
                conn.transact([{":k": t * 1000 + i}])
                conn.db().q("[:find (count ?e) . :where [?e :k]]")
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert conn.db().q("[:find (count ?e) . :where [?e :k]]") == 400


def test_a_query_releases_the_gil(conn):
    db = slow_db(conn, 300)
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.005)

    t = threading.Thread(target=ticker)
    t.start()
    started = time.monotonic()
    db.q(SLOW)
    took = time.monotonic() - started
    stop.set()
    t.join()
    # The ticker kept running while the query ran (it would be stopped if the GIL were held).
    during = [x for x in ticks if started < x < started + took]
    assert took < 0.05 or len(during) >= took / 0.005 / 4, (took, len(during))


def test_transact_async_returns_futures_that_commit_together(conn):
    conn.transact('[{:db/ident :k :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]')
    futures = [datalith.transact_async(conn, [{":k": i}]) for i in range(100)]
    reports = [f.result(timeout=30) for f in futures]
    assert len({r.tx for r in reports}) == 100
    assert conn.db().q("[:find (count ?e) . :where [?e :k]]") == 100


def test_transact_async_is_awaitable(conn):
    conn.transact('[{:db/ident :k :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]')

    async def main():
        return await asyncio.wrap_future(datalith.transact_async(conn, [{":k": 1}]))

    assert asyncio.run(main()).tx > 0


def test_ctrl_c_cancels_a_running_query(conn):
    db = slow_db(conn)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    started = time.monotonic()
    try:
        db.q(SLOW)
        raise AssertionError("the query was not interrupted")
    except KeyboardInterrupt:
        pass
    finally:
        timer.cancel()
    # Interrupted within about the signal look (50 ms) and the query's own check.
    assert time.monotonic() - started < 3.0
    # The database keeps serving.
    assert db.q("[:find (count ?e) . :where [?e :n]]") == 1500
