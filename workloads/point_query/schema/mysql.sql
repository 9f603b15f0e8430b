-- sysbench-compatible table; {n} is the table number. The k index is built after the load.
CREATE TABLE sbtest{n} (
    id integer NOT NULL,
    k integer NOT NULL DEFAULT 0,
    c char(120) NOT NULL DEFAULT '',
    pad char(60) NOT NULL DEFAULT '',
    PRIMARY KEY (id)
) ENGINE=InnoDB;
--
CREATE INDEX k_{n} ON sbtest{n} (k);
