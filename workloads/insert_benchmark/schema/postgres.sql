-- The insert benchmark's table as the published harness (iibench.py) creates it; {t} is the
-- table name. The secondary indexes come in step l.x, after the load.
CREATE TABLE {t} (
    transactionid bigserial PRIMARY KEY,
    dateandtime timestamp without time zone,
    cashregisterid integer NOT NULL,
    customerid integer NOT NULL,
    productid integer NOT NULL,
    price integer NOT NULL,
    data varchar(4000)
);
--
CREATE INDEX {t}_marketsegment ON {t} (productid, customerid, price);
CREATE INDEX {t}_registersegment ON {t} (cashregisterid, customerid, price);
CREATE INDEX {t}_pdc ON {t} (price, dateandtime, customerid);
