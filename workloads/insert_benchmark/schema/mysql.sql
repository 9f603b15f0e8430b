-- The insert benchmark's table as the published harness (iibench.py) creates it; {t} is the
-- table name. The secondary indexes come in step l.x, after the load, in one ALTER TABLE.
CREATE TABLE {t} (
    transactionid bigint NOT NULL AUTO_INCREMENT,
    dateandtime datetime,
    cashregisterid int NOT NULL,
    customerid int NOT NULL,
    productid int NOT NULL,
    price int NOT NULL,
    data varchar(4000),
    PRIMARY KEY (transactionid)
) ENGINE=InnoDB;
--
ALTER TABLE {t} ADD INDEX {t}_marketsegment (productid, customerid, price),
    ADD INDEX {t}_registersegment (cashregisterid, customerid, price),
    ADD INDEX {t}_pdc (price, dateandtime, customerid);
