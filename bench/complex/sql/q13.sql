-- TPC-H Q13, customer distribution. WORD1 = special, WORD2 = requests. The derived table's
-- column list `as c_orders (c_custkey, c_count)` is written as column aliases inside it
-- (SQLite has no column list on a derived table).
select
    c_count,
    count(*) as custdist
from
    (
        select
            c_custkey,
            count(o_orderkey) as c_count
        from
            customer left outer join orders on
                c_custkey = o_custkey
                and o_comment not like '%special%requests%'
        group by
            c_custkey
    ) as c_orders
group by
    c_count
order by
    custdist desc,
    c_count desc;
