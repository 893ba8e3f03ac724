-- TPC-H Q6, forecasting revenue change. DATE = 1994-01-01, DISCOUNT = 0.06, QUANTITY = 24.
-- The discount bounds 0.06 - 0.01 and 0.06 + 0.01 are written out: computed in doubles
-- (SQLite) 0.06 + 0.01 is 0.06999999999999999 and would leave out the discounts of 0.07.
select
    sum(l_extendedprice * l_discount) as revenue
from
    lineitem
where
    l_shipdate >= '1994-01-01'
    and l_shipdate < '1995-01-01'
    and l_discount between 0.05 and 0.07
    and l_quantity < 24;
