-- sbtest{n} exactly as sysbench 1.0/1.1 creates it (oltp_common.lua, auto_inc on); the k
-- index is built after the rows are in, as sysbench's --create-secondary does.
CREATE TABLE sbtest{n}(
  id INTEGER NOT NULL AUTO_INCREMENT,
  k INTEGER DEFAULT '0' NOT NULL,
  c CHAR(120) DEFAULT '' NOT NULL,
  pad CHAR(60) DEFAULT '' NOT NULL,
  PRIMARY KEY (id)
) /*! ENGINE = innodb */;
--
CREATE INDEX k_{n} ON sbtest{n}(k);
