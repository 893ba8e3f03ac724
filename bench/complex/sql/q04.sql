-- TPC-H Q4, order priority checking. DATE = 1993-07-01 (plus 3 months: 1993-10-01).
select
    o_orderpriority,
    count(*) as order_count
from
    orders
where
    o_orderdate >= '1993-07-01'
    and o_orderdate < '1993-10-01'
    and exists (
        select
            *
        from
            lineitem
        where
            l_orderkey = o_orderkey
            and l_commitdate < l_receiptdate
    )
group by
    o_orderpriority
order by
    o_orderpriority;
